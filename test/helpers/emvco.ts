/**
 * EMVCo merchant-presented QR payloads for the simulators and tests: written apart from the sandbox's own
 * (src/connectors/sandbox/transformers.ts), so a wrong checksum there cannot agree with itself here.
 */

/** CRC-16/CCITT-FALSE (polynomial 0x1021, initial 0xFFFF), as EMVCo requires for tag 63. */
export function crc16(text: string): string {
  let crc = 0xffff;
  for (const byte of new TextEncoder().encode(text)) {
    crc ^= byte << 8;
    for (let i = 0; i < 8; i++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc.toString(16).toUpperCase().padStart(4, '0');
}

/** One tag-length-value field. */
export const tlv = (tag: string, value: string) => `${tag}${String(value.length).padStart(2, '0')}${value}`;

/** The payload of `fields`, closed by tag 63 with the checksum of everything before it (its own tag included). */
export function emvPayload(fields: string): string {
  const body = `${fields}6304`;
  return body + crc16(body);
}
