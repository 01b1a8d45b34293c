import { scrypt as scryptCallback, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Password hashing, with its parameters stored beside each hash (PHC string format) so they can be
 * raised later: a hash made with weaker parameters is re-hashed at the next successful login.
 *
 * Chosen: scrypt, N=2^14, r=8, p=5, 32-byte key, 16-byte salt: one of the parameter sets the OWASP
 * Password Storage Cheat Sheet lists as equivalent (16 MiB of memory, well inside a Worker's 128 MB).
 * It runs natively through `node:crypto` (`nodejs_compat`), about 200 ms of CPU per hash; login and
 * refresh are rate limited, so that cost cannot be turned into a flood.
 *
 * Not chosen: PBKDF2 through WebCrypto, because production Workers refuse more than 100,000 iterations,
 * a sixth of OWASP's 600,000 for PBKDF2-HMAC-SHA256; pure-JS scrypt or argon2 exceed the CPU limits.
 * PBKDF2-SHA256 hashes (at most the production cap, `PBKDF2_ITERATIONS`) are still verified, so users
 * imported with such hashes can log in, and are upgraded to scrypt on that login.
 */
export const SCRYPT_PARAMS = { logN: 14, r: 8, p: 5, keyLength: 32, saltLength: 16 } as const;
export const PBKDF2_ITERATIONS = 100_000;
/** WebCrypto in production Workers throws for PBKDF2 above this count; local workerd does not. */
export const PRODUCTION_PBKDF2_MAX_ITERATIONS = 100_000;

const SCRYPT_MAX_MEMORY = 64 * 1024 * 1024;

function scrypt(password: string, salt: Buffer, keyLength: number, N: number, r: number, p: number): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scryptCallback(password.normalize('NFKC'), salt, keyLength, { N, r, p, maxmem: SCRYPT_MAX_MEMORY }, (err, key) =>
      err ? reject(err) : resolve(key),
    ),
  );
}

async function pbkdf2(password: string, salt: Uint8Array, iterations: number, keyLength: number): Promise<Uint8Array> {
  const key = await crypto.subtle.importKey(
    'raw',
    new TextEncoder().encode(password.normalize('NFKC')),
    'PBKDF2',
    false,
    ['deriveBits'],
  );
  const bits = await crypto.subtle.deriveBits(
    { name: 'PBKDF2', hash: 'SHA-256', salt, iterations },
    key,
    keyLength * 8,
  );
  return new Uint8Array(bits);
}

const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64').replace(/=+$/, '');
const unb64 = (text: string) => Buffer.from(text, 'base64');

export async function hashPassword(password: string): Promise<string> {
  const { logN, r, p, keyLength, saltLength } = SCRYPT_PARAMS;
  const salt = randomBytes(saltLength);
  const key = await scrypt(password, salt, keyLength, 2 ** logN, r, p);
  return `$scrypt$ln=${logN},r=${r},p=${p}$${b64(salt)}$${b64(key)}`;
}

/** PBKDF2-SHA256 hash in the same format; used for hashes coming from systems limited to WebCrypto. */
export async function hashPasswordPbkdf2(password: string, iterations = PBKDF2_ITERATIONS): Promise<string> {
  const salt = randomBytes(16);
  const key = await pbkdf2(password, salt, iterations, 32);
  return `$pbkdf2-sha256$i=${iterations}$${b64(salt)}$${b64(key)}`;
}

interface ParsedHash {
  algorithm: 'scrypt' | 'pbkdf2-sha256';
  params: Record<string, number>;
  salt: Buffer;
  key: Buffer;
}

function parse(encoded: string): ParsedHash | null {
  const parts = encoded.split('$');
  if (parts.length !== 5 || parts[0] !== '') return null;
  const [, algorithm, paramText, saltText, keyText] = parts as [string, string, string, string, string];
  if (algorithm !== 'scrypt' && algorithm !== 'pbkdf2-sha256') return null;
  const params: Record<string, number> = {};
  for (const pair of paramText.split(',')) {
    const [name, value] = pair.split('=');
    if (!name || !value || !/^\d+$/.test(value)) return null;
    params[name] = Number(value);
  }
  return { algorithm, params, salt: unb64(saltText), key: unb64(keyText) };
}

export interface VerifyResult {
  valid: boolean;
  /** True when the hash was made with weaker parameters than today's: store a fresh hash. */
  needsRehash: boolean;
}

/** A stored key shorter than this is corrupt: an empty one would compare equal to any password's. */
const MIN_KEY_LENGTH = 16;

export async function verifyPassword(password: string, encoded: string): Promise<VerifyResult> {
  const parsed = parse(encoded);
  if (!parsed || parsed.key.length < MIN_KEY_LENGTH) return { valid: false, needsRehash: false };
  let candidate: Uint8Array;
  try {
    if (parsed.algorithm === 'scrypt') {
      const { ln, r, p } = parsed.params;
      if (!ln || !r || !p || ln > 20 || r > 16 || p > 16) return { valid: false, needsRehash: false };
      candidate = await scrypt(password, parsed.salt, parsed.key.length, 2 ** ln, r, p);
    } else {
      const iterations = parsed.params.i;
      if (!iterations || iterations > PRODUCTION_PBKDF2_MAX_ITERATIONS) return { valid: false, needsRehash: false };
      candidate = await pbkdf2(password, parsed.salt, iterations, parsed.key.length);
    }
  } catch {
    // Parameters the runtime refuses to compute (scrypt memory over `maxmem`, workerd's cost cap)
    // can never verify; refusing them keeps a bad stored hash from turning a login into a 500.
    return { valid: false, needsRehash: false };
  }
  const valid = candidate.length === parsed.key.length && timingSafeEqual(candidate, parsed.key);
  const current =
    parsed.algorithm === 'scrypt' &&
    parsed.params.ln! >= SCRYPT_PARAMS.logN &&
    parsed.params.r! >= SCRYPT_PARAMS.r &&
    parsed.params.p! >= SCRYPT_PARAMS.p;
  return { valid, needsRehash: valid && !current };
}

/**
 * The scrypt hash of a random password nobody knows, verified against when the email is unknown so that
 * a login for a missing user costs the same time as one for an existing user (no enumeration by timing).
 */
export const DUMMY_PASSWORD_HASH =
  '$scrypt$ln=14,r=8,p=5$hxL/C1YyuM4DMBh9H3UVqQ$QrVPw3uAtbcp4t9JFFruBYLOVmu/m9Bx+H6W1qZyAGk';
