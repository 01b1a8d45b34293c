import type { Environment } from './environment.ts';
import { bytesToBase64Url, bytesToHex, utf8 } from '../lib/encoding.ts';

/**
 * API key secrets: `sk_<environment>_` + 32 random bytes (base64url). Only HMAC-SHA256(pepper, secret)
 * is stored; a lookup is by that keyed hash through a unique index, so no stored value can be used as a
 * key, and no comparison runs over the secret character by character.
 */
export const secretPrefix = (environment: Environment) => `sk_${environment}_`;

export function generateApiKeySecret(environment: Environment): string {
  return secretPrefix(environment) + bytesToBase64Url(crypto.getRandomValues(new Uint8Array(32)));
}

let pepperKey: { pepper: string; key: Promise<CryptoKey> } | undefined;

/**
 * The pepper imported once per isolate (and again only if the deployment's pepper changes): importing it
 * for every request was about 4% of an authenticated read's CPU (bench/RESULTS.md, the profile).
 */
function hmacKeyOf(pepper: string): Promise<CryptoKey> {
  if (pepperKey?.pepper !== pepper) {
    const key = crypto.subtle.importKey('raw', utf8(pepper), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
    pepperKey = { pepper, key };
    // A failed import is not kept: the next call tries again.
    key.catch(() => {
      if (pepperKey?.key === key) pepperKey = undefined;
    });
  }
  return pepperKey.key;
}

export async function hashApiKeySecret(pepper: string, secret: string): Promise<string> {
  return bytesToHex(new Uint8Array(await crypto.subtle.sign('HMAC', await hmacKeyOf(pepper), utf8(secret))));
}

/** Shape check before any lookup: right prefix for this deployment, right length and alphabet. */
export function looksLikeApiKey(secret: string, environment: Environment): boolean {
  const prefix = secretPrefix(environment);
  return secret.startsWith(prefix) && /^[A-Za-z0-9_-]{43}$/.test(secret.slice(prefix.length));
}

/** The first characters of a secret, safe to show so an owner can tell its keys apart. */
export const displayPrefix = (secret: string) => secret.slice(0, secretPrefix('test').length + 4);
