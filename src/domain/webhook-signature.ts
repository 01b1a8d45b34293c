import { base64ToBytes, bytesToBase64, hmacSha256 } from '../lib/encoding.ts';

/**
 * Standard Webhooks signatures: `v1,` + base64(HMAC-SHA256(key, "{id}.{timestamp}.{body}")), where
 * the key is the base64 part of a `whsec_` secret. Several signatures (during a rotation, one per
 * live secret) are separated by spaces; a receiver accepts the message if any one verifies.
 */
export const SECRET_PREFIX = 'whsec_';

export function generateWebhookSecret(): string {
  return SECRET_PREFIX + bytesToBase64(crypto.getRandomValues(new Uint8Array(32)));
}

export async function signWebhook(
  secrets: readonly string[],
  messageId: string,
  timestampSeconds: number,
  body: string,
): Promise<string> {
  const signatures = await Promise.all(
    secrets.map(async (secret) => {
      const key = base64ToBytes(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret);
      return `v1,${bytesToBase64(await hmacSha256(key, `${messageId}.${timestampSeconds}.${body}`))}`;
    }),
  );
  return signatures.join(' ');
}
