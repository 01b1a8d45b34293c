import type { Environment } from './environment.ts';
import { bytesToBase64Url, bytesToHex, hmacSha256 } from '../lib/encoding.ts';

/**
 * API key secrets: `sk_<environment>_` + 32 random bytes (base64url). Only HMAC-SHA256(pepper, secret)
 * is stored; a lookup is by that keyed hash through a unique index, so no stored value can be used as a
 * key, and no comparison runs over the secret character by character.
 */
export const secretPrefix = (environment: Environment) => `sk_${environment}_`;

export function generateApiKeySecret(environment: Environment): string {
  return secretPrefix(environment) + bytesToBase64Url(crypto.getRandomValues(new Uint8Array(32)));
}

export async function hashApiKeySecret(pepper: string, secret: string): Promise<string> {
  return bytesToHex(await hmacSha256(pepper, secret));
}

/** Shape check before any lookup: right prefix for this deployment, right length and alphabet. */
export function looksLikeApiKey(secret: string, environment: Environment): boolean {
  const prefix = secretPrefix(environment);
  return secret.startsWith(prefix) && /^[A-Za-z0-9_-]{43}$/.test(secret.slice(prefix.length));
}

/** The first characters of a secret, safe to show so an owner can tell its keys apart. */
export const displayPrefix = (secret: string) => secret.slice(0, secretPrefix('test').length + 4);
