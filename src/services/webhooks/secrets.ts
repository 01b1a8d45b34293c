import { and, eq } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
import { webhookSecrets } from '../../db/schema/index.ts';
import type { Env } from '../../env.ts';
import { decryptJson, encryptJson, parseKeyRing } from '../../domain/credential-crypto.ts';
import { generateWebhookSecret } from '../../domain/webhook-signature.ts';

/** After a rotation the previous secret keeps signing this long, so receivers can switch over. */
export const ROTATION_OVERLAP_MS = 24 * 3600 * 1000;
const PURPOSE = 'webhook_secret';

export interface WebhookSecrets {
  current: string;
  previous: string | null;
  previousExpiresAt: number | null;
}

const context = (env: Env, ownerId: string) => ({ purpose: PURPOSE, resourceId: ownerId, environment: env.ENVIRONMENT });
const seal = (env: Env, ownerId: string, secret: string) => encryptJson(parseKeyRing(env.CREDENTIALS_ENCRYPTION_KEYS), secret, context(env, ownerId));
const open = (env: Env, ownerId: string, ciphertext: string) => decryptJson<string>(parseKeyRing(env.CREDENTIALS_ENCRYPTION_KEYS), ciphertext, context(env, ownerId));

/** The owner's secrets in this environment, created on first use. */
export async function getWebhookSecrets(env: Env, db: Db, ownerId: string, now = Date.now()): Promise<WebhookSecrets> {
  const where = and(eq(webhookSecrets.ownerId, ownerId), eq(webhookSecrets.environment, env.ENVIRONMENT));
  let row = await db.select().from(webhookSecrets).where(where).get();
  if (!row) {
    // Two first uses at once: the primary key keeps one, and both read that one back.
    await db
      .insert(webhookSecrets)
      .values({ ownerId, environment: env.ENVIRONMENT, currentCiphertext: await seal(env, ownerId, generateWebhookSecret()), createdAt: now })
      .onConflictDoNothing()
      .run();
    row = (await db.select().from(webhookSecrets).where(where).get())!;
  }
  const previousLive = row.previousCiphertext !== null && row.previousExpiresAt !== null && row.previousExpiresAt > now;
  return {
    current: await open(env, ownerId, row.currentCiphertext),
    previous: previousLive ? await open(env, ownerId, row.previousCiphertext!) : null,
    previousExpiresAt: previousLive ? row.previousExpiresAt : null,
  };
}

/** Replaces the secret; the one it replaces signs alongside for 24 hours. */
export async function rotateWebhookSecret(env: Env, db: Db, ownerId: string, now = Date.now()): Promise<WebhookSecrets> {
  const existing = await getWebhookSecrets(env, db, ownerId, now);
  const row = (await db.select().from(webhookSecrets).where(and(eq(webhookSecrets.ownerId, ownerId), eq(webhookSecrets.environment, env.ENVIRONMENT))).get())!;
  const next = generateWebhookSecret();
  const result = await db
    .update(webhookSecrets)
    .set({
      currentCiphertext: await seal(env, ownerId, next),
      previousCiphertext: row.currentCiphertext,
      previousExpiresAt: now + ROTATION_OVERLAP_MS,
      rotatedAt: now,
    })
    .where(and(eq(webhookSecrets.ownerId, ownerId), eq(webhookSecrets.environment, env.ENVIRONMENT), eq(webhookSecrets.currentCiphertext, row.currentCiphertext)))
    .run();
  // A concurrent rotation won: answer with what is stored, never with a secret that was not saved.
  if (result.meta.changes !== 1) return getWebhookSecrets(env, db, ownerId, now);
  return { current: next, previous: existing.current, previousExpiresAt: now + ROTATION_OVERLAP_MS };
}

/** The secrets that sign a delivery now: the current one, and the previous one during the overlap. */
export async function signingSecrets(env: Env, db: Db, ownerId: string, now = Date.now()): Promise<string[]> {
  const secrets = await getWebhookSecrets(env, db, ownerId, now);
  return secrets.previous ? [secrets.current, secrets.previous] : [secrets.current];
}
