import { and, eq, isNull, type SQL, sql } from 'drizzle-orm';
import type { BatchItem } from 'drizzle-orm/batch';
import { insertRowIf, insertRowsFrom } from '../../db/conditional-insert.ts';
import { fetchPage, newestFirstPage, type Page } from '../../db/paging.ts';
import {
  webhookDeliveries,
  webhookEndpoints,
  type EndpointDisabledReason,
  type WebhookEndpointRow,
} from '../../db/schema/index.ts';
import type { Deps } from '../../deps.ts';
import type { Environment } from '../../domain/environment.ts';
import {
  ALL_EVENTS,
  afterAttempt,
  MAX_ENDPOINTS_PER_OWNER,
  normalizeEnabledEvents,
} from '../../domain/webhook-endpoints.ts';
import { generateWebhookSecret } from '../../domain/webhook-signature.ts';
import { validateWebhookUrl } from '../../domain/webhook-url.ts';
import { ServiceError, invalidRequest } from '../../lib/errors.ts';
import { newId } from '../../lib/ids.ts';
import { log } from '../../lib/log.ts';
import { toIso, toIsoOrNull } from '../../lib/time.ts';
import { postSignedWebhook, type AttemptResult } from './send.ts';
import { openSecretPair, ROTATION_OVERLAP_MS, secretBox, signingList, type WebhookSecrets } from './secrets.ts';

/**
 * Account webhook endpoints: CRUD, their signing secrets, the ping, and what a delivery
 * attempt does to an endpoint's health. Every query is scoped by owner and environment, except the
 * admin's reads by id (as for payment methods).
 */

const SECRET_PURPOSE = 'webhook_endpoint_secret';
const box = (deps: Deps, endpointId: string) => secretBox(deps, SECRET_PURPOSE, endpointId);

export interface EndpointScope {
  ownerId: string;
  environment: Environment;
}

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

export function listEndpoints({ db, environment }: Deps, ownerId: string, page: Page) {
  const where = and(eq(webhookEndpoints.ownerId, ownerId), eq(webhookEndpoints.environment, environment));
  return fetchPage(db, newestFirstPage(db, webhookEndpoints, where, page));
}

/**
 * An endpoint the caller may manage: its own (any owner's for an admin), in this environment. Unknown
 * and foreign endpoints are both `undefined`, so they answer alike.
 */
export function findEndpoint({ db, environment }: Deps, viewer: { ownerId: string; isAdmin: boolean }, id: string) {
  const conditions = [eq(webhookEndpoints.id, id), eq(webhookEndpoints.environment, environment)];
  if (!viewer.isAdmin) conditions.push(eq(webhookEndpoints.ownerId, viewer.ownerId));
  return db
    .select()
    .from(webhookEndpoints)
    .where(and(...conditions))
    .get();
}

/**
 * Closes an endpoint's pending deliveries (dead, with the reason as `last_error`): once disabled or
 * deleted it receives nothing more, and enabling it again starts from new events. `onlyIfDisabled`
 * makes it a companion of a conditional disable in the same batch.
 */
function closePendingDeliveries(
  { db }: Deps,
  endpointId: string,
  reason: 'endpoint_disabled' | 'endpoint_deleted',
  now: number,
  onlyIfDisabled = false,
) {
  return db
    .update(webhookDeliveries)
    .set({ status: 'dead', nextAttemptAt: null, lastError: reason, updatedAt: now })
    .where(
      and(
        eq(webhookDeliveries.destination, endpointId),
        eq(webhookDeliveries.status, 'pending'),
        onlyIfDisabled
          ? sql`exists (select 1 from ${webhookEndpoints} where ${webhookEndpoints.id} = ${endpointId} and ${webhookEndpoints.disabledAt} is not null)`
          : undefined,
      ),
    );
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

/**
 * `POST /{id}/test`: a signed `ping` sent now, through the same URL checks, timeout and signing as a
 * delivery. Not an event: nothing is stored, and the endpoint's health (auto-disable) is not touched.
 */
export async function pingEndpoint(deps: Deps, row: WebhookEndpointRow, now = Date.now()) {
  const id = newId('evt');
  const payload = JSON.stringify({
    id,
    type: 'ping',
    created_at: toIso(now),
    data: { webhook_endpoint: { id: row.id } },
  });
  const attempt = await postSignedWebhook(
    deps,
    row.url,
    signingList(await endpointSecrets(deps, row, now)),
    id,
    payload,
    now,
  );
  return { id, attempt };
}

/**
 * The deliveries of a new event to every enabled endpoint of its owner that takes its type, written by the
 * event's own batch (no read before it: the subscription rule of domain/webhook-endpoints.ts `subscribes`,
 * a type listed or `*`, is evaluated by SQLite over `enabled_events`), each returning its destination for
 * the queue. `written`: the condition that ties the rows to the payment change (store.ts).
 */
export function endpointDeliveriesStatement(
  { db }: Deps,
  scope: EndpointScope,
  event: { id: string; type: string; createdAt: number },
  delivery: { paymentId: string; ownerId: string },
  written: SQL,
) {
  const subscribed = sql`exists (select 1 from json_each(${webhookEndpoints.enabledEvents}) where json_each.value in (${event.type}, ${ALL_EVENTS}))`;
  return insertRowsFrom(
    db,
    webhookDeliveries,
    {
      eventId: event.id,
      ...delivery,
      status: 'pending',
      attempts: 0,
      nextAttemptAt: event.createdAt,
      createdAt: event.createdAt,
      updatedAt: event.createdAt,
    },
    { destination: sql`${webhookEndpoints.id}`, url: sql`${webhookEndpoints.url}` },
    sql`${webhookEndpoints}`,
    and(
      eq(webhookEndpoints.ownerId, scope.ownerId),
      eq(webhookEndpoints.environment, scope.environment),
      isNull(webhookEndpoints.disabledAt),
      subscribed,
      written,
    )!,
  ).returning({ destination: webhookDeliveries.destination });
}

/**
 * What one delivery attempt does to its endpoint (domain/webhook-endpoints.ts): a success ends the
 * failure streak; a failure starts one, or, three days into it, disables the endpoint and closes its
 * pending deliveries. Statements for the attempt's batch; the disable is a compare-and-set on the streak
 * read, so a success recorded meanwhile keeps the endpoint enabled. `disableAt`: the index of the disabling
 * statement (its `changes` tell whether it took), or null.
 */
export function endpointHealthStatements(
  deps: Deps,
  endpoint: WebhookEndpointRow,
  attempt: AttemptResult,
  now: number,
) {
  const { db } = deps;
  const streak = afterAttempt(endpoint.failingSince, attempt.succeeded, now);
  const statements: BatchItem<'sqlite'>[] = [];
  if (streak.failingSince === null) {
    if (endpoint.failingSince !== null)
      statements.push(
        db.update(webhookEndpoints).set({ failingSince: null }).where(eq(webhookEndpoints.id, endpoint.id)),
      );
    return { statements, disableAt: null };
  }
  if (endpoint.failingSince === null) {
    statements.push(
      db
        .update(webhookEndpoints)
        .set({ failingSince: now })
        .where(and(eq(webhookEndpoints.id, endpoint.id), isNull(webhookEndpoints.failingSince))),
    );
  }
  if (!streak.disable) return { statements, disableAt: null };
  const disableAt = statements.length;
  statements.push(
    db
      .update(webhookEndpoints)
      .set({ disabledAt: now, disabledReason: 'failing', updatedAt: Math.max(now, endpoint.updatedAt + 1) })
      .where(
        and(
          eq(webhookEndpoints.id, endpoint.id),
          isNull(webhookEndpoints.disabledAt),
          eq(webhookEndpoints.failingSince, streak.failingSince),
        ),
      ),
    closePendingDeliveries(deps, endpoint.id, 'endpoint_disabled', now, true),
  );
  return { statements, disableAt };
}

/** The operator's record of an automatic disable (identifiers and times only). */
export function logAutoDisabled(endpoint: WebhookEndpointRow, now: number) {
  log('warn', 'webhook_endpoint_disabled', {
    endpoint_id: endpoint.id,
    owner_id: endpoint.ownerId,
    environment: endpoint.environment,
    reason: 'failing',
    failing_since: toIsoOrNull(endpoint.failingSince ?? now),
    disabled_at: toIso(now),
  });
}

/** The endpoint a delivery goes to, if it still exists in the delivery's owner and environment. */
export function findDeliveryEndpoint({ db }: Deps, scope: EndpointScope, endpointId: string) {
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
