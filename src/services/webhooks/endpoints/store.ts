import { and, eq, sql } from 'drizzle-orm';
import { insertRowIf } from '../../../db/conditional-insert.ts';
import { fetchPage, newestFirstPage, ownedBy, type Page } from '../../../db/paging.ts';
import { webhookEndpoints, type EndpointDisabledReason, type WebhookEndpointRow } from '../../../db/schema/index.ts';
import type { Deps } from '../../../deps.ts';
import { ownerDeps } from '../../shards/owner-deps.ts';
import type { OwnerScope } from '../../../domain/caller.ts';
import { MAX_ENDPOINTS_PER_OWNER, normalizeEnabledEvents } from '../../../domain/webhook-endpoints.ts';
import { generateWebhookSecret } from '../../../domain/webhook-signature.ts';
import { validateWebhookUrl } from '../../../domain/webhook-url.ts';
import { ServiceError, invalidRequest } from '../../../lib/errors.ts';
import { newId } from '../../../lib/ids.ts';
import { toIso, toIsoOrNull } from '../../../lib/time.ts';
import type { WebhookSecrets } from '../secrets.ts';
import { closePendingDeliveries } from './deliveries.ts';
import { box } from './secrets.ts';

/**
 * Account webhook endpoints: create, list, read, change and delete them. Every query is scoped by owner and
 * environment, except the admin's reads by id (as for payment methods).
 */

export function toWebhookEndpoint(row: WebhookEndpointRow) {
  return {
    id: row.id,
    user_id: row.ownerId,
    environment: row.environment,
    url: row.url,
    enabled_events: row.enabledEvents,
    description: row.description,
    status: row.disabledAt === null ? ('enabled' as const) : ('disabled' as const),
    disabled_reason: row.disabledReason,
    disabled_at: toIsoOrNull(row.disabledAt),
    failing_since: toIsoOrNull(row.failingSince),
    created_at: toIso(row.createdAt),
    updated_at: toIso(row.updatedAt),
  };
}

function checkedUrl(deps: Deps, url: string): string {
  const checked = validateWebhookUrl(url, { allowInsecureLocal: deps.allowInsecureWebhooks });
  if (!checked.ok) throw invalidRequest('Invalid url.', [{ field: 'url', issue: checked.reason }]);
  return checked.url;
}

function checkedEvents(requested: string[]): string[] {
  const result = normalizeEnabledEvents(requested);
  if (!result.ok) throw invalidRequest('Invalid enabled_events.', [{ field: 'enabled_events', issue: result.issue }]);
  return result.events;
}

export interface NewEndpoint {
  url: string;
  enabled_events: string[];
  description?: string;
}

/** Creates an endpoint with a fresh secret; the secret is returned here and never again. */
export async function createEndpoint(deps: Deps, ownerId: string, input: NewEndpoint, now = Date.now()) {
  const { db, environment } = deps;
  const url = checkedUrl(deps, input.url);
  const enabledEvents = checkedEvents(input.enabled_events);
  const id = newId('we');
  const secret = generateWebhookSecret();
  const row: WebhookEndpointRow = {
    id,
    ownerId,
    environment,
    url,
    enabledEvents,
    description: input.description ?? null,
    disabledAt: null,
    disabledReason: null,
    failingSince: null,
    secretCiphertext: await box(deps, id).seal(secret),
    previousSecretCiphertext: null,
    previousSecretExpiresAt: null,
    createdAt: now,
    updatedAt: now,
  };
  // The count and the insert are one statement: two creations at 15 cannot both pass.
  const underLimit = sql`(select count(*) from ${webhookEndpoints} where ${webhookEndpoints.ownerId} = ${ownerId} and ${webhookEndpoints.environment} = ${environment}) < ${MAX_ENDPOINTS_PER_OWNER}`;
  const inserted = await insertRowIf(db, webhookEndpoints, row, underLimit).run();
  if (inserted.meta.changes !== 1) {
    throw new ServiceError(
      'webhook_endpoint_limit_reached',
      `At most ${MAX_ENDPOINTS_PER_OWNER} webhook endpoints per user and environment; delete one first.`,
      {
        details: { limit: MAX_ENDPOINTS_PER_OWNER },
      },
    );
  }
  return { row, secret: { current: secret, previous: null, previousExpiresAt: null } satisfies WebhookSecrets };
}

/** The statements of a page of the owner's endpoints; exported so a test can explain their query plans. */
export function endpointListStatements({ db, environment }: Deps, ownerId: string, page: Page) {
  const owned = ownedBy(webhookEndpoints, { ownerId, environment });
  return newestFirstPage(db, webhookEndpoints, owned, undefined, page);
}

export function listEndpoints(deps: Deps, ownerId: string, page: Page) {
  return fetchPage(deps.db, endpointListStatements(deps, ownerId, page));
}

/**
 * An endpoint the caller may manage, with the invocation on its owner's shard: its own, on its shard; for an admin,
 * any owner's, found on its own shard first and then on the others in turn (the one request path that may look
 * at more than one shard: an admin's, by an id it holds; docs/SCALE.md). Unknown and foreign endpoints are both
 * `undefined`, so they answer alike.
 */
export async function findEndpoint(
  deps: Deps,
  viewer: { ownerId: string; isAdmin: boolean },
  id: string,
  method: string,
): Promise<{ row: WebhookEndpointRow; deps: Deps } | undefined> {
  const mine = await endpointOnShard(deps, id, viewer.isAdmin ? null : viewer.ownerId);
  if (mine) return { row: mine, deps };
  if (!viewer.isAdmin) return undefined;
  for (const shard of deps.shards) {
    if (shard.name === deps.shard) continue;
    const row = await endpointOnShard(deps.withShard(shard.name), id, null);
    // Where the directory says its owner lives (a copy left behind by a move is not it).
    if (row) {
      const ownerShard = await ownerDeps(deps, row.ownerId, method);
      return ownerShard.shard === shard.name ? { row, deps: ownerShard } : undefined;
    }
  }
  return undefined;
}

function endpointOnShard({ db, environment }: Deps, id: string, ownerId: string | null) {
  const conditions = [eq(webhookEndpoints.id, id), eq(webhookEndpoints.environment, environment)];
  if (ownerId !== null) conditions.push(eq(webhookEndpoints.ownerId, ownerId));
  return db
    .select()
    .from(webhookEndpoints)
    .where(and(...conditions))
    .get();
}

export interface EndpointPatch {
  url?: string;
  enabled_events?: string[];
  description?: string | null;
  disabled?: boolean;
}

export async function updateEndpoint(
  deps: Deps,
  row: WebhookEndpointRow,
  patch: EndpointPatch,
  now = Date.now(),
): Promise<WebhookEndpointRow | undefined> {
  const { db } = deps;
  const change: Partial<WebhookEndpointRow> = { updatedAt: Math.max(now, row.updatedAt + 1) };
  if (patch.url !== undefined) change.url = checkedUrl(deps, patch.url);
  if (patch.enabled_events !== undefined) change.enabledEvents = checkedEvents(patch.enabled_events);
  if (patch.description !== undefined) change.description = patch.description;
  const disabling = patch.disabled === true && row.disabledAt === null;
  if (disabling)
    Object.assign(change, { disabledAt: now, disabledReason: 'requested' satisfies EndpointDisabledReason });
  // Enabled again: a fresh start, so its failure streak (the auto-disable clock) starts over too.
  if (patch.disabled === false) Object.assign(change, { disabledAt: null, disabledReason: null, failingSince: null });
  const update = db.update(webhookEndpoints).set(change).where(eq(webhookEndpoints.id, row.id)).returning();
  if (!disabling) return update.get();
  const [updated] = await db.batch([update, closePendingDeliveries(deps, row.id, 'endpoint_disabled', now)]);
  return updated[0];
}

/** Deletes the endpoint; its pending deliveries are closed, its past deliveries stay listed. */
export async function deleteEndpoint(deps: Deps, row: WebhookEndpointRow, now = Date.now()) {
  const { db } = deps;
  await db.batch([
    db.delete(webhookEndpoints).where(eq(webhookEndpoints.id, row.id)),
    closePendingDeliveries(deps, row.id, 'endpoint_deleted', now),
  ]);
}

/** The endpoint a delivery goes to, if it still exists in the delivery's owner and environment. */
export function findDeliveryEndpoint({ db }: Deps, scope: OwnerScope, endpointId: string) {
  return db
    .select()
    .from(webhookEndpoints)
    .where(
      and(
        eq(webhookEndpoints.id, endpointId),
        eq(webhookEndpoints.ownerId, scope.ownerId),
        eq(webhookEndpoints.environment, scope.environment),
      ),
    )
    .get();
}
