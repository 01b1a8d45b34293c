import { and, eq, type SQL, sql } from 'drizzle-orm';
import type { SQLiteColumn } from 'drizzle-orm/sqlite-core';
import { insertRowIf } from '../../db/conditional-insert.ts';
import {
  disputeCounters,
  disputes,
  eventCounters,
  paymentCounters,
  paymentEvents,
  payments,
  refunds,
  webhookDeliveries,
  type DisputeRow,
  type PaymentRow,
  type RefundRow,
} from '../../db/schema/index.ts';
import type { Deps } from '../../deps.ts';
import type { OwnerScope } from '../../domain/caller.ts';
import { bucketOf, COUNTER_SPANS, type CountDelta, countsOf, createdCounts } from '../../domain/ledger/counts.ts';
import {
  type Change,
  type Command,
  decide,
  type LedgerEvent,
  type LedgerState,
  needs,
  type OutcomeOf,
} from '../../domain/ledger/index.ts';
import { PAYMENT_URL_DESTINATION } from '../../domain/webhook-endpoints.ts';
import { ServiceError } from '../../lib/errors.ts';
import { newId } from '../../lib/ids.ts';
import { toIso } from '../../lib/time.ts';
import { endpointDeliveries } from '../webhooks/endpoints/deliveries.ts';
import { enqueueDeliveries, pendingDeliveryOf, type PendingDelivery } from '../webhooks/enqueue.ts';
import { refusalError } from './refusals.ts';
import { toDisputeResource, toPaymentResource, toRefundResource } from './resources.ts';

/**
 * A payment's reads, and the one way it changes: `mutate` loads the payment with what a command is about, asks the
 * ledger (domain/ledger) what changes, and `commit`s that change in one compare-and-set. The store decides nothing.
 */

const owned = (scope: OwnerScope, id: string) =>
  and(eq(payments.id, id), eq(payments.ownerId, scope.ownerId), eq(payments.environment, scope.environment));

/** The caller's payment, or undefined (another owner's answers as a random id does). */
export function findPayment({ db }: Deps, scope: OwnerScope, id: string): Promise<PaymentRow | undefined> {
  return db.select().from(payments).where(owned(scope, id)).get();
}

/** The payment holding `externalReference` in a reference scope (unique: payments_reference_idx). */
export function findPaymentByReference(
  { db }: Deps,
  key: Pick<PaymentRow, 'ownerId' | 'environment' | 'referenceScope' | 'externalReference'>,
) {
  return db
    .select()
    .from(payments)
    .where(
      and(
        eq(payments.referenceScope, key.referenceScope),
        eq(payments.externalReference, key.externalReference),
        eq(payments.ownerId, key.ownerId),
        eq(payments.environment, key.environment),
      ),
    )
    .get();
}

/**
 * The caller's payment with the refund an attempt reserved on it, if any (refunds_attempt_idx), in one round trip: a
 * refund reads these two rows, never the payment's refund history.
 */
export async function findPaymentWithAttempt(
  { db }: Deps,
  scope: OwnerScope,
  id: string,
  attemptKey: string,
): Promise<{ payment: PaymentRow; attempt: RefundRow | null } | null> {
  const [found, attempt] = await db.batch([
    db.select().from(payments).where(owned(scope, id)),
    db
      .select()
      .from(refunds)
      .where(and(eq(refunds.paymentId, id), eq(refunds.attemptKey, attemptKey))),
  ]);
  return found[0] ? { payment: found[0], attempt: attempt[0] ?? null } : null;
}

/** The payment by id alone (the caller checked the owner). */
export function loadPayment({ db }: Deps, id: string): Promise<PaymentRow | undefined> {
  return db.select().from(payments).where(eq(payments.id, id)).get();
}

/** The payment and the refund or dispute a command is about, in one round trip. */
async function loadState(
  { db }: Deps,
  paymentId: string,
  need: { refundId?: string; processorDisputeId?: string },
): Promise<LedgerState | null> {
  const [found, refund, dispute] = await db.batch([
    db.select().from(payments).where(eq(payments.id, paymentId)),
    db
      .select()
      .from(refunds)
      .where(and(eq(refunds.id, need.refundId ?? ''), eq(refunds.paymentId, paymentId))),
    db
      .select()
      .from(disputes)
      .where(and(eq(disputes.paymentId, paymentId), eq(disputes.processorDisputeId, need.processorDisputeId ?? ''))),
  ]);
  if (!found[0]) return null;
  return {
    payment: found[0],
    ...(refund[0] ? { refund: refund[0] } : {}),
    ...(need.processorDisputeId !== undefined ? { dispute: dispute[0] ?? null } : {}),
  };
}

/**
 * True only while the payment is at the version read: the condition of every row a change writes besides the payment
 * itself. Not `v + 1` after the update: a writer that lost the race to another writer of `v` would find the payment at
 * `v + 1` and write its rows anyway.
 */
const atVersion = (payment: PaymentRow): SQL =>
  sql`exists (select 1 from ${payments} where ${payments.id} = ${payment.id} and ${payments.version} = ${payment.version})`;

/**
 * Writes `change` if the payment is still at the version read, raising the version, in one D1 batch (one
 * transaction): the refund and dispute rows, each event with a delivery per destination (the payment's URL, the
 * owner's subscribed endpoints: the outbox, so a change never exists without its events, nor an event without its
 * change), then the payment itself. Null when someone else changed the payment first (read again and retry).
 */
export async function commit(
  deps: Deps,
  current: PaymentRow,
  change: Change,
  disputeBefore: DisputeRow | null = null,
): Promise<{ payment: PaymentRow; deliveries: PendingDelivery[] } | null> {
  const { db } = deps;
  const next: PaymentRow = { ...current, ...change.payment, version: current.version + 1 };
  const written = atVersion(current);
  const refund = change.refund ? ('insert' in change.refund ? change.refund.insert : change.refund.update) : null;
  const dispute = change.dispute ? ('insert' in change.dispute ? change.dispute.insert : change.dispute.update) : null;
  const statements = [];
  if (change.refund && 'insert' in change.refund)
    statements.push(insertRowIf(db, refunds, change.refund.insert, written));
  else if (refund)
    statements.push(
      db
        .update(refunds)
        .set(refund)
        .where(and(eq(refunds.id, refund.id), written)),
    );
  if (change.dispute && 'insert' in change.dispute)
    statements.push(insertRowIf(db, disputes, change.dispute.insert, written));
  else if (dispute)
    statements.push(
      db
        .update(disputes)
        .set(dispute)
        .where(and(eq(disputes.id, dispute.id), written)),
    );

  const deliveries: PendingDelivery[] = [];
  const fanOuts: { index: number; eventId: string }[] = [];
  for (const event of change.events) {
    const row = eventRow(next, event, refund, dispute);
    statements.push(insertRowIf(db, paymentEvents, row, written));
    if (next.webhookUrl) {
      statements.push(
        insertRowIf(
          db,
          webhookDeliveries,
          {
            eventId: row.id,
            destination: PAYMENT_URL_DESTINATION,
            paymentId: next.id,
            ownerId: next.ownerId,
            url: next.webhookUrl,
            status: 'pending',
            attempts: 0,
            nextAttemptAt: row.createdAt,
            createdAt: row.createdAt,
            updatedAt: row.createdAt,
          },
          written,
        ),
      );
      deliveries.push(pendingDeliveryOf(row.id, next.ownerId, PAYMENT_URL_DESTINATION));
    }
    fanOuts.push({ index: statements.length, eventId: row.id });
    statements.push(endpointDeliveries(deps, next, row, next.id, written));
  }
  statements.push(...counterWrites(deps, current, countsOf(current, change, disputeBefore, next.updatedAt), written));
  statements.push(
    db
      .update(payments)
      .set({ ...change.payment, version: next.version })
      .where(and(eq(payments.id, current.id), eq(payments.version, current.version))),
  );
  // biome-ignore lint/suspicious/noExplicitAny: a batch of statements of several kinds; each result is read by its kind below.
  const results: any[] = await db.batch(statements as [any, ...any[]]);
  if (results.at(-1).meta.changes !== 1) return null;
  for (const { index, eventId } of fanOuts) {
    for (const { destination } of results[index] as { destination: string }[])
      deliveries.push(pendingDeliveryOf(eventId, next.ownerId, destination));
  }
  return { payment: next, deliveries };
}

/** Counter values bound per statement: D1's limit is 100, and `written` binds a few of its own. */
const COUNTER_VALUES_PER_STATEMENT = 90;

/**
 * The owner's counters a change moves (domain/ledger/counts.ts), as a few statements (payments, events, disputes),
 * each adding its deltas to every span's bucket only while `written` holds: the counters move with the rows
 * they count or not at all.
 */
function counterWrites(
  deps: Deps,
  owner: Pick<PaymentRow, 'ownerId' | 'environment'>,
  deltas: CountDelta[],
  written: SQL,
) {
  const { db } = deps;
  const rows = <T>(kind: CountDelta['kind'], each: (d: Extract<CountDelta, { kind: typeof kind }>) => T[]) =>
    deltas.filter((d) => d.kind === kind).flatMap((d) => each(d as never));
  // `insert ... select * from (values ...) where <written> on conflict do update`: the rows only while the payment is
  // at the version read, each added to its bucket's count. D1 binds at most 100 values per statement: the rows go in
  // as many statements as that takes (a status change's two deltas in every span: two).
  const upsert = <T extends typeof paymentCounters | typeof eventCounters | typeof disputeCounters>(
    table: T,
    key: SQLiteColumn[],
    values: SQL[],
    sums: { count: SQLiteColumn; amountMinor?: SQLiteColumn },
  ) => {
    const perStatement = Math.floor(COUNTER_VALUES_PER_STATEMENT / (key.length + Object.keys(sums).length));
    const chunks = Array.from({ length: Math.ceil(values.length / perStatement) }, (_, i) =>
      values.slice(i * perStatement, (i + 1) * perStatement),
    );
    return chunks.map((chunk) =>
      db
        .insert(table)
        .select(sql`select * from (values ${sql.join(chunk, sql`, `)}) where ${written}`)
        .onConflictDoUpdate({
          target: key,
          // Each sum column of this counter table: its count plus the row's.
          set: Object.fromEntries(
            Object.entries(sums).map(([field, column]) => [
              field,
              sql`${column} + excluded.${sql.identifier(column!.name)}`,
            ]),
          ) as never,
        }),
    );
  };
  const { ownerId, environment } = owner;
  const paymentRows = rows('payment', (d) =>
    d.kind !== 'payment'
      ? []
      : COUNTER_SPANS.map(
          (span) =>
            sql`(${ownerId}, ${environment}, ${span}, ${bucketOf(span, d.at)}, ${d.status}, ${d.paymentMethodId}, ${d.currency}, ${d.count}, ${d.amountMinor})`,
        ),
  );
  const eventRows = rows('event', (d) =>
    d.kind !== 'event'
      ? []
      : COUNTER_SPANS.map(
          (span) => sql`(${ownerId}, ${environment}, ${span}, ${bucketOf(span, d.at)}, ${d.type}, ${d.count})`,
        ),
  );
  const disputeRows = rows('dispute', (d) =>
    d.kind !== 'dispute' ? [] : [sql`(${ownerId}, ${environment}, ${d.status}, ${d.count})`],
  );
  const p = paymentCounters;
  const e = eventCounters;
  const d = disputeCounters;
  return [
    ...upsert(p, [p.ownerId, p.environment, p.span, p.bucket, p.status, p.paymentMethodId, p.currency], paymentRows, {
      count: p.count,
      amountMinor: p.amountMinor,
    }),
    ...upsert(e, [e.ownerId, e.environment, e.span, e.bucket, e.type], eventRows, { count: e.count }),
    ...upsert(d, [d.ownerId, d.environment, d.status], disputeRows, { count: d.count }),
  ];
}

/** Records a new payment with its counters, in one batch (create-payment's `record` phase). */
export async function recordPayment(deps: Deps, row: PaymentRow): Promise<void> {
  await deps.db.batch([
    deps.db.insert(payments).values(row),
    ...counterWrites(deps, row, createdCounts(row), sql`true`),
  ]);
}

/** The event row of a change (its Standard Webhooks body as payload); events of one change share its moment. */
function eventRow(payment: PaymentRow, event: LedgerEvent, refund: RefundRow | null, dispute: DisputeRow | null) {
  const id = newId('evt');
  const createdAt = payment.updatedAt;
  const about =
    event.about === 'refund' && refund
      ? { refund: toRefundResource(refund) }
      : event.about === 'dispute' && dispute
        ? { dispute: toDisputeResource(dispute) }
        : {};
  const payload = JSON.stringify({
    id,
    type: event.type,
    created_at: toIso(createdAt),
    data: { ...about, payment: toPaymentResource(payment) },
  });
  return {
    id,
    type: event.type,
    payload,
    createdAt,
    paymentId: payment.id,
    ownerId: payment.ownerId,
    environment: payment.environment,
  };
}

/**
 * Tries of one compare-and-set before giving up. Each lost try means another writer of the same payment won, so N
 * concurrent writers cost the unluckiest at most N - 1 losses; 50 concurrent refunds of one payment
 * (test/routes/payments-refunds.test.ts) need 6 to 11 tries in practice. With the jittered wait below (at most 50 ms),
 * giving up holds the idempotency object about 1.5 s at worst.
 */
export const MUTATE_MAX_ATTEMPTS = 64;

export interface MutateOptions {
  maxAttempts?: number;
  /**
   * The state as the caller just wrote it (the payment it inserted, the refund it reserved): the first try decides from
   * it instead of reading again. Safe because the write is a compare-and-set on its version: if anything changed
   * since, it fails and the state is read.
   */
  known?: LedgerState;
  /** The moment the ledger decides at: a job's run time (its tests run jobs at a time of their choosing). */
  now?: number;
}

/**
 * The one way a payment changes: load its state, ask the ledger, commit. On a lost compare-and-set the state is read
 * again and the ledger asked again, so contention only delays; it never loses or overwrites a change. A refusal is
 * thrown as its error (refusals.ts); `change` is null when the ledger decided nothing changes.
 */
export async function mutate<C extends Command>(
  deps: Deps,
  paymentId: string,
  command: C,
  { maxAttempts = MUTATE_MAX_ATTEMPTS, known, now }: MutateOptions = {},
): Promise<{ payment: PaymentRow; outcome: OutcomeOf<C>; change: Change | null }> {
  for (let attempt = 0; attempt < maxAttempts; attempt++) {
    const fromKnown = attempt === 0 && known?.payment.id === paymentId;
    const state = fromKnown ? known : await loadState(deps, paymentId, needs(command));
    if (!state) throw new Error('payment vanished');
    const decision = decide(state, command, now ?? Date.now());
    // A refusal or a "no change" is only answered from a fresh read.
    if (decision.kind !== 'change' && fromKnown) continue;
    if (decision.kind === 'refused') throw refusalError(decision.refusal, state.payment, decision.balance);
    if (decision.kind === 'none') return { payment: state.payment, outcome: decision.outcome, change: null };
    const saved = await commit(deps, state.payment, decision.change, state.dispute ?? null);
    if (saved) {
      await enqueueDeliveries(deps, saved.deliveries);
      return { payment: saved.payment, outcome: decision.outcome, change: decision.change };
    }
    await new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(50, 2 ** Math.min(attempt, 5))));
  }
  // Nothing of this change was written (every try lost its compare-and-set), and a retryable error is never the
  // idempotent result: the same request again resumes where this one stood.
  throw new ServiceError('concurrent_update', undefined, { details: {} });
}
