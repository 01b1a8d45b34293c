const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz'; // Crockford base32, lower case

function encode(prefix: string, bytes: Uint8Array): string {
  let out = `${prefix}_`;
  for (const byte of bytes) out += ALPHABET[byte & 31];
  return out;
}

/** Random opaque identifier with a type prefix, e.g. `usr_8f3k...`. 20 chars = 100 bits of randomness. */
export function newId(prefix: string, length = 20): string {
  return encode(prefix, crypto.getRandomValues(new Uint8Array(length)));
}

const REQUEST_ID_LENGTH = 20;
/** Request ids drawn from this many random bytes at a time (204 ids per call to the CSPRNG). */
const REQUEST_ID_POOL_BYTES = 4096;
let requestIdPool = new Uint8Array(0);
let requestIdAt = 0;

/**
 * A request's `req_` id: as random as `newId`, but its bytes come from a pool filled by one call to the CSPRNG
 * per 204 requests, instead of one call per request (a request id is on every request's path; it names a
 * request in the logs and is no secret: every response shows its own). Every other id keeps `newId`.
 */
export function newRequestId(): string {
  if (requestIdAt + REQUEST_ID_LENGTH > requestIdPool.length) {
    requestIdPool = crypto.getRandomValues(new Uint8Array(REQUEST_ID_POOL_BYTES));
    requestIdAt = 0;
  }
  const bytes = requestIdPool.subarray(requestIdAt, requestIdAt + REQUEST_ID_LENGTH);
  requestIdAt += REQUEST_ID_LENGTH;
  return encode('req', bytes);
}
