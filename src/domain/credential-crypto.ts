import type { Environment } from './environment.ts';
import { base64ToBytes, bytesToBase64Url, utf8 } from '../lib/encoding.ts';

/**
 * Encryption at rest for processor credentials and sensitive configuration: AES-256-GCM through
 * WebCrypto, stored as one compact string per value:
 *
 *     v1.<kid>.<base64url 12-byte nonce>.<base64url ciphertext || 16-byte tag>
 *
 * - The nonce is 96 random bits per encryption. With random nonces GCM stays within its bounds for
 *   about 2^32 encryptions under one key (NIST SP 800-38D, 8.3), far beyond the writes of payment
 *   methods; rotating the current key resets the count.
 * - The key id travels with the ciphertext so keys can rotate: new writes use the first key of the
 *   ring, older kids still decrypt for as long as they stay in the ring.
 * - The additional authenticated data binds the ciphertext to the format version, the kid, what it is
 *   (`purpose`), the environment and the owning resource, so a value copied into another row, another
 *   field or the other environment's database fails authentication instead of decrypting.
 */

const VERSION = 'v1';
const AAD_PREFIX = `payment-service/${VERSION}`;
const KEY_BYTES = 32;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
const KID_PATTERN = /^[A-Za-z0-9_-]{1,32}$/;
const ENVIRONMENTS: readonly Environment[] = ['test', 'live'];

export interface EncryptionContext {
  /** What the value is, e.g. `payment_method.credentials`; a value of one purpose never opens as another. */
  purpose: string;
  /** The row the value belongs to, e.g. the payment method id. */
  resourceId: string;
  environment: Environment;
}

/**
 * The keys of one deployment. The object itself carries only key ids: the key bytes live in a
 * module-private map, so logging or serialising a ring cannot print them.
 */
export interface KeyRing {
  readonly currentKid: string;
  readonly kids: readonly string[];
}

interface RingState {
  raw: Map<string, Uint8Array>;
  imported: Map<string, Promise<CryptoKey>>;
}

const ringState = new WeakMap<KeyRing, RingState>();

/**
 * Every decryption failure looks the same to the caller (and to anyone reading its logs): which check
 * failed, the envelope and the plaintext are never part of it.
 */
export class CredentialDecryptionError extends Error {
  constructor() {
    super('Stored credentials could not be decrypted');
    this.name = 'CredentialDecryptionError';
  }
}

/**
 * Parses `CREDENTIALS_ENCRYPTION_KEYS`: `kid:base64key[,kid:base64key...]`, current key first.
 * Errors name the entry by position only: a malformed entry may be a key pasted without its kid.
 */
export function parseKeyRing(secret: string): KeyRing {
  const fail = (reason: string): never => {
    throw new Error(`CREDENTIALS_ENCRYPTION_KEYS is invalid: ${reason}`);
  };
  if (typeof secret !== 'string' || secret.trim() === '') fail('it is empty');
  const raw = new Map<string, Uint8Array>();
  secret.split(',').forEach((part, index) => {
    const entry = part.trim();
    const position = `entry ${index + 1}`;
    const colon = entry.indexOf(':');
    if (colon < 0) fail(`${position} is not kid:base64key`);
    const kid = entry.slice(0, colon).trim();
    if (!KID_PATTERN.test(kid)) fail(`${position} has a key id that is not 1 to 32 of A-Z a-z 0-9 _ -`);
    if (raw.has(kid)) fail(`${position} repeats a key id`);
    const key = decodeKey(entry.slice(colon + 1).trim());
    if (!key || key.length !== KEY_BYTES) fail(`${position} is not base64 of exactly ${KEY_BYTES} bytes`);
    raw.set(kid, key!);
  });
  const kids = Object.freeze([...raw.keys()]);
  const ring: KeyRing = Object.freeze({ currentKid: kids[0]!, kids });
  ringState.set(ring, { raw, imported: new Map() });
  return ring;
}

/** Standard or URL-safe base64, padding optional; null when it is neither. */
function decodeKey(text: string): Uint8Array | null {
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(text)) return null;
  const std = text.replace(/=+$/, '').replace(/-/g, '+').replace(/_/g, '/');
  if (std.length % 4 === 1) return null;
  try {
    return base64ToBytes(std + '='.repeat((4 - (std.length % 4)) % 4));
  } catch {
    return null;
  }
}

/**
 * Strict base64url without padding. Only the canonical spelling is accepted, so one stored value has
 * exactly one envelope (no alternative encodings of the same bytes).
 */
function decodeBase64Url(text: string): Uint8Array | null {
  if (!/^[A-Za-z0-9_-]*$/.test(text) || text.length % 4 === 1) return null;
  const bytes = base64ToBytes(text.replace(/-/g, '+').replace(/_/g, '/') + '='.repeat((4 - (text.length % 4)) % 4));
  return bytesToBase64Url(bytes) === text ? bytes : null;
}

/**
 * Keys are imported on first use and cached per ring, non-extractable; only the current key may
 * encrypt, so a retired key cannot be used for a new write by mistake. WebCrypto copies the bytes on
 * import, so the ring's own copy is wiped once the import has succeeded.
 */
function cryptoKey(ring: KeyRing, kid: string): Promise<CryptoKey> | null {
  const state = ringState.get(ring);
  if (!state) return null;
  let key = state.imported.get(kid);
  if (!key) {
    const raw = state.raw.get(kid);
    if (!raw) return null;
    const usages: ('encrypt' | 'decrypt')[] = kid === ring.currentKid ? ['encrypt', 'decrypt'] : ['decrypt'];
    key = crypto.subtle.importKey('raw', raw, { name: 'AES-GCM' }, false, usages).then((imported) => {
      raw.fill(0);
      return imported;
    });
    state.imported.set(kid, key);
  }
  return key;
}

/**
 * `|` separates the AAD fields, so it may not occur inside one: otherwise two different contexts could
 * spell the same AAD. The environment is checked at run time too, as it usually comes from a binding.
 */
function additionalData(kid: string, context: EncryptionContext): Uint8Array | null {
  const { purpose, resourceId, environment } = context ?? ({} as EncryptionContext);
  const field = (value: unknown) => typeof value === 'string' && value.length > 0 && !value.includes('|');
  if (!field(purpose) || !field(resourceId) || !ENVIRONMENTS.includes(environment)) return null;
  return utf8(`${AAD_PREFIX}|${kid}|${purpose}|${environment}|${resourceId}`);
}

/** Encrypts `value` as JSON with the ring's current key. */
export async function encryptJson(ring: KeyRing, value: unknown, context: EncryptionContext): Promise<string> {
  const kid = ring.currentKid;
  const aad = additionalData(kid, context);
  if (!aad)
    throw new Error(
      'Invalid encryption context: purpose and resourceId must be non-empty without "|", environment test or live',
    );
  const key = cryptoKey(ring, kid);
  if (!key) throw new Error('Key ring was not created by parseKeyRing');
  let json: string | undefined;
  try {
    json = JSON.stringify(value);
  } catch {
    json = undefined;
  }
  // The engine's own message can quote parts of the value (e.g. a circular path); never pass it on.
  if (json === undefined) throw new Error('Value to encrypt is not JSON-serialisable');
  const nonce = crypto.getRandomValues(new Uint8Array(NONCE_BYTES));
  const sealed = await crypto.subtle.encrypt(
    { name: 'AES-GCM', iv: nonce, additionalData: aad, tagLength: TAG_BYTES * 8 },
    await key,
    utf8(json),
  );
  return [VERSION, kid, bytesToBase64Url(nonce), bytesToBase64Url(new Uint8Array(sealed))].join('.');
}

/** Without `stream`, every `decode` is whole: one decoder serves every call. */
const plainDecoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * Decrypts an envelope written by `encryptJson` under the same context. The result is whatever JSON
 * was stored; callers validate its shape before use.
 */
export async function decryptJson<T = unknown>(
  ring: KeyRing,
  envelope: string,
  context: EncryptionContext,
): Promise<T> {
  try {
    if (typeof envelope !== 'string') throw new CredentialDecryptionError();
    const parts = envelope.split('.');
    if (parts.length !== 4 || parts[0] !== VERSION) throw new CredentialDecryptionError();
    const [, kid, nonceText, sealedText] = parts as [string, string, string, string];
    if (!KID_PATTERN.test(kid)) throw new CredentialDecryptionError();
    const nonce = decodeBase64Url(nonceText);
    const sealed = decodeBase64Url(sealedText);
    if (!nonce || nonce.length !== NONCE_BYTES || !sealed || sealed.length < TAG_BYTES)
      throw new CredentialDecryptionError();
    const aad = additionalData(kid, context);
    const key = cryptoKey(ring, kid);
    if (!aad || !key) throw new CredentialDecryptionError();
    const plain = await crypto.subtle.decrypt(
      { name: 'AES-GCM', iv: nonce, additionalData: aad, tagLength: TAG_BYTES * 8 },
      await key,
      sealed,
    );
    return JSON.parse(plainDecoder.decode(plain)) as T;
  } catch {
    // Whatever failed (format, unknown kid, tag, JSON), the caller learns only that it failed.
    throw new CredentialDecryptionError();
  }
}
