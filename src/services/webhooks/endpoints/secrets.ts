import { and, eq } from 'drizzle-orm';
import { webhookEndpoints, type WebhookEndpointRow } from '../../../db/schema/index.ts';
import type { Deps } from '../../../deps.ts';
import { generateWebhookSecret } from '../../../domain/webhook-signature.ts';
import { openSecretPair, ROTATION_OVERLAP_MS, secretBox, type WebhookSecrets } from '../secrets.ts';

/** An endpoint's signing secrets: sealed per endpoint, shown once, rotated with a 24-hour overlap. */

const SECRET_PURPOSE = 'webhook_endpoint_secret';

export const box = (deps: Deps, endpointId: string) => secretBox(deps, SECRET_PURPOSE, endpointId);

export function endpointSecrets(deps: Deps, row: WebhookEndpointRow, now: number): Promise<WebhookSecrets> {
  return openSecretPair(
    box(deps, row.id).open,
    {
      current: row.secretCiphertext,
      previous: row.previousSecretCiphertext,
      previousExpiresAt: row.previousSecretExpiresAt,
    },
    now,
  );
}

/**
 * A new secret; the one it replaces keeps signing for 24 hours (as the account secret does). Null when
 * the endpoint was deleted meanwhile.
 */
export async function rotateEndpointSecret(
  deps: Deps,
  row: WebhookEndpointRow,
  now = Date.now(),
): Promise<{ row: WebhookEndpointRow; secrets: WebhookSecrets } | null> {
  const { db } = deps;
  const next = generateWebhookSecret();
  const updated = await db
    .update(webhookEndpoints)
    .set({
      secretCiphertext: await box(deps, row.id).seal(next),
      previousSecretCiphertext: row.secretCiphertext,
      previousSecretExpiresAt: now + ROTATION_OVERLAP_MS,
      updatedAt: Math.max(now, row.updatedAt + 1),
    })
    .where(and(eq(webhookEndpoints.id, row.id), eq(webhookEndpoints.secretCiphertext, row.secretCiphertext)))
    .returning()
    .get();
  if (updated)
    return {
      row: updated,
      secrets: {
        current: next,
        previous: await box(deps, row.id).open(row.secretCiphertext),
        previousExpiresAt: now + ROTATION_OVERLAP_MS,
      },
    };
  // A concurrent rotation won: answer with what is stored, never with a secret that was not saved.
  const stored = await db.select().from(webhookEndpoints).where(eq(webhookEndpoints.id, row.id)).get();
  return stored ? { row: stored, secrets: await endpointSecrets(deps, stored, now) } : null;
}
