import { and, eq } from 'drizzle-orm';
import { webhookSecrets } from '../../db/schema/index.ts';
import type { Deps } from '../../deps.ts';
import { decryptJson, encryptJson } from '../../domain/credential-crypto.ts';
import { generateWebhookSecret } from '../../domain/webhook-signature.ts';

/** After a rotation the previous secret keeps signing this long, so receivers can switch over. */
export const ROTATION_OVERLAP_MS = 24 * 3600 * 1000;
const PURPOSE = 'webhook_secret';

export interface WebhookSecrets {
  current: string;
  previous: string | null;
  previousExpiresAt: number | null;
}

/**
 * Seals and opens signing secrets of one resource (`purpose` and `resourceId` bind each ciphertext to it:
 * one owner's, or one endpoint's, cannot be opened as another's).
 */
export function secretBox(deps: Deps, purpose: string, resourceId: string) {
  const context = { purpose, resourceId, environment: deps.environment };
  return {
    seal: (secret: string) => encryptJson(deps.keyRing, secret, context),
    open: (ciphertext: string) => decryptJson<string>(deps.keyRing, ciphertext, context),
  };
}

/** Stored ciphertexts as secrets at `now`: the previous one only while its overlap lasts. */
export async function openSecretPair(
  open: (ciphertext: string) => Promise<string>,
  stored: { current: string; previous: string | null; previousExpiresAt: number | null },
  now: number,
): Promise<WebhookSecrets> {
  const previousLive = stored.previous !== null && stored.previousExpiresAt !== null && stored.previousExpiresAt > now;
  return {
    current: await open(stored.current),
    previous: previousLive ? await open(stored.previous!) : null,
    previousExpiresAt: previousLive ? stored.previousExpiresAt : null,
  };
}

/** Every live secret signs (Standard Webhooks: one `v1,` signature each). */
export const signingList = (secrets: WebhookSecrets) =>
  secrets.previous ? [secrets.current, secrets.previous] : [secrets.current];

/** The owner's secrets in this environment, created on first use. */
export async function getWebhookSecrets(deps: Deps, ownerId: string, now = Date.now()): Promise<WebhookSecrets> {
  const { db, environment } = deps;
  const box = secretBox(deps, PURPOSE, ownerId);
  const where = and(eq(webhookSecrets.ownerId, ownerId), eq(webhookSecrets.environment, environment));
  let row = await db.select().from(webhookSecrets).where(where).get();
  if (!row) {
    // Two first uses at once: the primary key keeps one, and both read that one back.
    await db
      .insert(webhookSecrets)
      .values({ ownerId, environment, currentCiphertext: await box.seal(generateWebhookSecret()), createdAt: now })
      .onConflictDoNothing()
      .run();
    row = (await db.select().from(webhookSecrets).where(where).get())!;
  }
  return openSecretPair(
    box.open,
    { current: row.currentCiphertext, previous: row.previousCiphertext, previousExpiresAt: row.previousExpiresAt },
    now,
  );
}

/** Replaces the secret; the one it replaces signs alongside for 24 hours. */
export async function rotateWebhookSecret(deps: Deps, ownerId: string, now = Date.now()): Promise<WebhookSecrets> {
  const { db, environment } = deps;
  const existing = await getWebhookSecrets(deps, ownerId, now);
  const row = (await db
    .select()
    .from(webhookSecrets)
    .where(and(eq(webhookSecrets.ownerId, ownerId), eq(webhookSecrets.environment, environment)))
    .get())!;
  const next = generateWebhookSecret();
  const result = await db
    .update(webhookSecrets)
    .set({
      currentCiphertext: await secretBox(deps, PURPOSE, ownerId).seal(next),
      previousCiphertext: row.currentCiphertext,
      previousExpiresAt: now + ROTATION_OVERLAP_MS,
      rotatedAt: now,
    })
    .where(
      and(
        eq(webhookSecrets.ownerId, ownerId),
        eq(webhookSecrets.environment, environment),
        eq(webhookSecrets.currentCiphertext, row.currentCiphertext),
      ),
    )
    .run();
  // A concurrent rotation won: answer with what is stored, never with a secret that was not saved.
  if (result.meta.changes !== 1) return getWebhookSecrets(deps, ownerId, now);
  return { current: next, previous: existing.current, previousExpiresAt: now + ROTATION_OVERLAP_MS };
}

/** The secrets that sign a delivery now: the current one, and the previous one during the overlap. */
export async function signingSecrets(deps: Deps, ownerId: string, now = Date.now()): Promise<string[]> {
  return signingList(await getWebhookSecrets(deps, ownerId, now));
}
