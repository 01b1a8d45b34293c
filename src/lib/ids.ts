const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz'; // Crockford base32, lower case

/** Random opaque identifier with a type prefix, e.g. `usr_8f3k...`. 20 chars = 100 bits of randomness. */
export function newId(prefix: string, length = 20): string {
  const bytes = crypto.getRandomValues(new Uint8Array(length));
  let out = '';
  for (const byte of bytes) out += ALPHABET[byte & 31];
  return `${prefix}_${out}`;
}

export const newRequestId = () => newId('req');
