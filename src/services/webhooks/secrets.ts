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

const context = (deps: Deps, ownerId: string) => ({ purpose: PURPOSE, resourceId: ownerId, environment: deps.environment });
const seal = (deps: Deps, ownerId: string, secret: string) => encryptJson(deps.keyRing, secret, context(deps, ownerId));
const open = (deps: Deps, ownerId: string, ciphertext: string) => decryptJson<string>(deps.keyRing, ciphertext, context(deps, ownerId));

/** The owner's secrets in this environment, created on first use. */
export async function getWebhookSecrets(deps: Deps, ownerId: string, now = Date.now()): Promise<WebhookSecrets> {
  const { db, environment } = deps;
  const where = and(eq(webhookSecrets.ownerId, ownerId), eq(webhookSecrets.environment, environment));
  let row = await db.select().from(webhookSecrets).where(where).get();
  if (!row) {
    // Two first uses at once: the primary key keeps one, and both read that one back.
    await db
      .insert(webhookSecrets)
      .values({ ownerId, environment, currentCiphertext: await seal(deps, ownerId, generateWebhookSecret()), createdAt: now })
      .onConflictDoNothing()
      .run();
    row = (await db.select().from(webhookSecrets).where(where).get())!;
  }
  const previousLive = row.previousCiphertext !== null && row.previousExpiresAt !== null && row.previousExpiresAt > now;
  return {
    current: await open(deps, ownerId, row.currentCiphertext),
    previous: previousLive ? await open(deps, ownerId, row.previousCiphertext!) : null,
    previousExpiresAt: previousLive ? row.previousExpiresAt : null,
  };
}

/** Replaces the secret; the one it replaces signs alongside for 24 hours. */
export async function rotateWebhookSecret(deps: Deps, ownerId: string, now = Date.now()): Promise<WebhookSecrets> {
  const { db, environment } = deps;
  const existing = await getWebhookSecrets(deps, ownerId, now);
  const row = (await db.select().from(webhookSecrets).where(and(eq(webhookSecrets.ownerId, ownerId), eq(webhookSecrets.environment, environment))).get())!;
  const next = generateWebhookSecret();
  const result = await db
    .update(webhookSecrets)
    .set({
      currentCiphertext: await seal(deps, ownerId, next),
      previousCiphertext: row.currentCiphertext,
      previousExpiresAt: now + ROTATION_OVERLAP_MS,
      rotatedAt: now,
    })
    .where(and(eq(webhookSecrets.ownerId, ownerId), eq(webhookSecrets.environment, environment), eq(webhookSecrets.currentCiphertext, row.currentCiphertext)))
    .run();
  // A concurrent rotation won: answer with what is stored, never with a secret that was not saved.
  if (result.meta.changes !== 1) return getWebhookSecrets(deps, ownerId, now);
  return { current: next, previous: existing.current, previousExpiresAt: now + ROTATION_OVERLAP_MS };
}

/** The secrets that sign a delivery now: the current one, and the previous one during the overlap. */
export async function signingSecrets(deps: Deps, ownerId: string, now = Date.now()): Promise<string[]> {
  const secrets = await getWebhookSecrets(deps, ownerId, now);
  return secrets.previous ? [secrets.current, secrets.previous] : [secrets.current];
}
