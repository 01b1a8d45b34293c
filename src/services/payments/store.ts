import { and, asc, eq, sql } from 'drizzle-orm';
import {
  paymentEvents,
  payments,
  refunds,
  webhookDeliveries,
  type PaymentRow,
  type RefundRow,
} from '../../db/schema/index.ts';
import {
  type BatchStatement,
  type D1Handle,
  preparedInsertIf,
  preparedSelect,
  preparedUpdates,
  runBatch,
} from '../../db/prepared.ts';
import type { Deps } from '../../deps.ts';
import type { OwnerScope } from '../../domain/caller.ts';
import {
  actionEventType,
  applyTransition,
  chargeback,
  COLLECTED_STATUSES,
  eventTypeFor,
  nextUpdatedAt,
  type PaymentEventType,
  type TransitionGuards,
} from '../../domain/payment-state.ts';
import { settlementChange } from '../../domain/settlement.ts';
import type { PaymentAction, PaymentOutcome, ProcessorPaymentStatus } from '../../connectors/types.ts';
import { terminalWaitChange } from '../../domain/terminal-checks.ts';
import { DISPUTABLE_STATUSES, firstDisputeCheck } from '../../domain/dispute-checks.ts';
import { ServiceError } from '../../lib/errors.ts';
import { newId } from '../../lib/ids.ts';
import { toIso } from '../../lib/time.ts';
import { PAYMENT_URL_DESTINATION } from '../../domain/webhook-endpoints.ts';
import { endpointDeliveriesStatement } from '../webhooks/endpoints/deliveries.ts';
import { enqueueDeliveries, pendingDeliveryOf, type PendingDelivery } from '../webhooks/enqueue.ts';
import { toPaymentResource } from './resources.ts';

/** Reads and compare-and-set writes of payments; see the `version` column in db/schema/payments.ts. */

// The hot reads: built once per isolate (db/prepared.ts), bound per request.
const ownedPayment = preparedSelect(
  payments,
  and(
    eq(payments.id, sql.placeholder('id')),
    eq(payments.ownerId, sql.placeholder('owner')),
    eq(payments.environment, sql.placeholder('environment')),
  )!,
);
const paymentById = preparedSelect(payments, eq(payments.id, sql.placeholder('id')));
const ledgerOf = preparedSelect(refunds, eq(refunds.paymentId, sql.placeholder('id')), [asc(refunds.createdAt)]);

// The writes of every payment change, built once per isolate too (the update once per set of columns it changes).
/**
 * The condition of every companion write (`commitPaymentChange`): true only while the payment is at the version
 * read. Its values are the placeholders `paymentId` and `version`, bound per request.
 */
export const atVersion = sql`exists (select 1 from ${payments} where ${payments.id} = ${sql.placeholder('paymentId')} and ${payments.version} = ${sql.placeholder('version')})`;
const eventIfAtVersion = preparedInsertIf(paymentEvents, atVersion);
const deliveryIfAtVersion = preparedInsertIf(webhookDeliveries, atVersion);
const endpointDeliveriesAtVersion = endpointDeliveriesStatement(atVersion);
/** A companion row written only while the payment is at the version read (the refund a reservation writes). */
export const refundIfAtVersion = preparedInsertIf(refunds, atVersion);
/** A refund's move, written only inside its payment's compare-and-set; `refundId` names the refund. */
export const refundUpdateIfAtVersion = preparedUpdates(
  refunds,
  and(eq(refunds.id, sql.placeholder('refundId')), atVersion)!,
);
const paymentUpdate = preparedUpdates(
  payments,
  and(eq(payments.id, sql.placeholder('id')), eq(payments.version, sql.placeholder('version')))!,
);

export async function findPayment({ d1 }: Deps, scope: OwnerScope, id: string): Promise<PaymentRow | undefined> {
  const raw = await ownedPayment.bind(d1, id, scope.ownerId, scope.environment).first<Record<string, unknown>>();
  return raw ? ownedPayment.decode(raw) : undefined;
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

/** `findPayment` with the payment's refund ledger, in one round trip (null when not the caller's). */
export function findPaymentWithRefunds({ d1 }: Deps, scope: OwnerScope, id: string) {
  return withLedger(d1, ownedPayment.bind(d1, id, scope.ownerId, scope.environment), id);
}

export async function loadPayment({ d1 }: Deps, id: string): Promise<PaymentRow | undefined> {
  const raw = await paymentById.bind(d1, id).first<Record<string, unknown>>();
  return raw ? paymentById.decode(raw) : undefined;
}

/** The payment by id alone, with its ledger (for the compare-and-set loop: the caller checked the owner). */
export function loadPaymentWithRefunds({ d1 }: Deps, id: string) {
  return withLedger(d1, paymentById.bind(d1, id), id);
}

async function withLedger(
  d1: D1Handle,
  payment: D1PreparedStatement,
  id: string,
): Promise<{ payment: PaymentRow; refunds: RefundRow[] } | null> {
  const [paymentRows, refundRows] = await d1.batch<Record<string, unknown>>([payment, ledgerOf.bind(d1, id)]);
  const raw = paymentRows?.results[0];
  if (!raw) return null;
  return { payment: ownedPayment.decode(raw), refunds: (refundRows?.results ?? []).map(ledgerOf.decode) };
}

export type PaymentChange = Partial<Omit<PaymentRow, 'id' | 'version' | 'ownerId' | 'environment' | 'createdAt'>>;

/**
 * Writes `change` if the payment is still at the version read, bumping the version; `companions` run
 * in the same D1 batch (one transaction), before the update, and must be conditioned with
 * `atVersion` bound to (id, v), v being the version read. Not `v + 1` after the update: a writer that lost
 * the race to another writer of `v` would find the payment at `v + 1` and write its companions anyway
 * (phantom refund reservations, refund updates without their payment change).
 * A status change also writes its event (and a webhook delivery per destination: the payment's URL, the
 * owner's subscribed endpoints, read just before) in that batch: the outbox, so a change never exists
 * without its event, nor an event without its change.
 * Returns the new row, or null when someone else changed the payment first (read again and retry).
 */
export async function commitPaymentChange(
  deps: Deps,
  current: PaymentRow,
  change: PaymentChange,
  companions: (readVersion: number) => BatchStatement[] = () => [],
  named?: NamedEvent | readonly NamedEvent[],
): Promise<{ payment: PaymentRow; deliveries: PendingDelivery[] } | null> {
  const nextVersion = current.version + 1;
  // Collected now, by whichever path: its disputes start being read again (docs/dispute-checks.md).
  if (
    change.status !== undefined &&
    DISPUTABLE_STATUSES.includes(change.status) &&
    !DISPUTABLE_STATUSES.includes(current.status) &&
    current.disputeCheckAt === null &&
    change.disputeCheckAt === undefined
  )
    change = { ...change, disputeCheckAt: firstDisputeCheck(change.updatedAt ?? Date.now()) };
  const next: PaymentRow = { ...current, ...change, version: nextVersion };
  // Events a decision names are the whole news (a refund reversal's status change is not a new collection
  // or refund; a dispute says what happened in its own events). Otherwise a payment that starts waiting on
  // an action says so (instead of `payment.pending`), a chargeback says so (also when it is the first news
  // of the approval), and a status change sends its own event.
  const namedEvents = named === undefined ? [] : Array.isArray(named) ? named : [named as NamedEvent];
  const own = change.requiredAction
    ? eventFor(next, actionEventType(change.requiredAction))
    : change.chargedBackAt
      ? eventFor(next, 'payment.charged_back')
      : change.status !== undefined
        ? eventFor(next, eventTypeFor(next.status))
        : null;
  const events = (named === undefined ? [own] : namedEvents.map((e) => eventFor(next, e.type, e.data))).filter(
    (e) => e !== null,
  );
  const outbox: BatchStatement[] = [];
  const deliveries: PendingDelivery[] = [];
  const endpointsAt: { index: number; eventId: string }[] = [];
  const at = { paymentId: next.id, version: current.version };
  for (const event of events) {
    outbox.push(
      eventIfAtVersion.bind(
        deps.d1,
        { ...event, paymentId: next.id, ownerId: next.ownerId, environment: next.environment },
        at,
      ),
    );
    // One delivery per destination, all with the same event id: the payment's own URL, and each enabled
    // endpoint of the owner that subscribes to this type (chosen inside the batch, services/webhooks/endpoints.ts).
    if (next.webhookUrl) {
      const delivery = {
        eventId: event.id,
        destination: PAYMENT_URL_DESTINATION,
        paymentId: next.id,
        ownerId: next.ownerId,
        url: next.webhookUrl,
        status: 'pending' as const,
        attempts: 0,
        nextAttemptAt: event.createdAt,
        createdAt: event.createdAt,
        updatedAt: event.createdAt,
      };
      outbox.push(deliveryIfAtVersion.bind(deps.d1, delivery, at));
      deliveries.push(pendingDeliveryOf(event.id, next.ownerId, PAYMENT_URL_DESTINATION));
    }
    endpointsAt.push({ index: outbox.length, eventId: event.id });
    outbox.push(endpointDeliveriesAtVersion(deps.d1, next, event, next.id, at));
  }
  const update = paymentUpdate(
    deps.d1,
    { ...change, version: nextVersion },
    { id: current.id, version: current.version },
  );
  const before = companions(current.version);
  const statements: BatchStatement[] = [...before, ...outbox, update];
  const results = await runBatch(deps.d1, statements);
  if (results[statements.length - 1]!.meta.changes !== 1) return null;
  for (const { index, eventId } of endpointsAt) {
    for (const { destination } of (results[before.length + index] as D1Result<{ destination: string }>).results)
      deliveries.push(pendingDeliveryOf(eventId, next.ownerId, destination));
  }
  return { payment: next, deliveries };
}

/**
 * An event a decision sends instead of the one its payment change would: `data` is what the event is about
 * besides the payment (e.g. `{ refund }`, `{ dispute }`), placed before it in the body's `data`. A decision
 * may name several, written in order (a dispute opened and closed by one piece of news).
 */
export interface NamedEvent {
  type: PaymentEventType;
  data: Record<string, unknown>;
}

/** The event of a payment change (Standard Webhooks body), or null for internal steps. */
function eventFor(payment: PaymentRow, type: PaymentEventType | null, data: Record<string, unknown> = {}) {
  if (!type) return null;
  const id = newId('evt');
  // Events of one change share its moment: lists order them by (created_at, id), receivers by `updated_at`.
  const createdAt = payment.updatedAt;
  const payload = JSON.stringify({
    id,
    type,
    created_at: toIso(createdAt),
    data: { ...data, payment: toPaymentResource(payment) },
  });
  return { id, type, payload, createdAt };
}

/**
 * What the processor's account of a payment (its status, an action it waits on, and what it kept of the money)
 * changes, through the state machine: a new status, and/or the action it starts waiting on (`check_terminal`
 * while `pending`, which moves `updated_at` and sends `payment.action_required` once), or a chargeback
 * (`charged_back_at`, sent once as `payment.charged_back`); null when nothing. The one place a payment's
 * settlement is recorded, on every path that hears the processor (a create, a notification, a terminal
 * re-read, reconciliation, a cancel, the settlement re-reads): the first settlement the processor reports while
 * the payment is collected (`settlementChange`), which moves `updated_at` by itself when nothing else changes.
 * A void (`approved` → `canceled`) is dated (`voided_at`), with the refund that carried it out when the processor
 * named it (`void_refund_reference`): that refund may still fail at the processor.
 */
export function processorAccountChange(
  current: PaymentRow,
  account: {
    status: ProcessorPaymentStatus;
    action?: PaymentAction;
    voidRefundReference?: string;
  } & ReportedSettlement,
  now: number,
  guards: TransitionGuards,
): PaymentChange | null {
  if (account.status === 'charged_back') {
    // The chargeback (once), and what the processor kept of the money it collected, which the answer may report
    // for the first time: a settlement read that finds the payment charged back must not drop it.
    const back = chargeback(current, now);
    const status = back?.status ?? current.status;
    const settlement = COLLECTED_STATUSES.includes(status) ? settlementChange(current, account) : null;
    if (!back && !settlement) return null;
    return { ...(back ?? { updatedAt: nextUpdatedAt(current.updatedAt, now) }), ...settlement };
  }
  const move = applyTransition(current, account.status, now, {
    ...guards,
    chargedBack: current.chargedBackAt !== null,
  });
  const status = move.ok ? move.status : current.status;
  const required = status === 'pending' && account.action?.type === 'check_terminal' ? 'check_terminal' : null;
  const newAction = required !== null && current.requiredAction !== required;
  // Whether it waits at its terminal (shown as `at_terminal`, re-read on the terminal schedule): docs/terminal-checks.md.
  const terminal = terminalWaitChange(
    current,
    { status, ...(account.action ? { action: account.action.type } : {}) },
    now,
  );
  // Only collected money has a settlement.
  const settlement = COLLECTED_STATUSES.includes(status) ? settlementChange(current, account) : null;
  if (!move.ok && !newAction && !terminal && !settlement) return null;
  const voided = move.ok && current.status === 'approved' && move.status === 'canceled';
  return {
    ...(move.ok
      ? { status: move.status, updatedAt: move.updatedAt }
      : { updatedAt: nextUpdatedAt(current.updatedAt, now) }),
    ...(newAction ? { requiredAction: required } : {}),
    ...terminal,
    ...settlement,
    ...(voided ? { voidedAt: now, voidRefundReference: account.voidRefundReference ?? null } : {}),
  };
}

/** What a processor's answer said it kept of the money (`PaymentOutcome`, `RefundOutcome`); absent when it did not say. */
export type ReportedSettlement = Pick<PaymentOutcome, 'settlement' | 'settlementNullReason'>;

/** Only the settlement of an answer or a notification (which carries much else). */
export const pickSettlement = (from: ReportedSettlement): ReportedSettlement => ({
  ...(from.settlement !== undefined ? { settlement: from.settlement } : {}),
  ...(from.settlementNullReason !== undefined ? { settlementNullReason: from.settlementNullReason } : {}),
});

export interface PaymentDecision<T> {
  change: PaymentChange;
  companions?: (readVersion: number) => BatchStatement[];
  /** The events this change sends, when not the one the payment change itself calls for (`commitPaymentChange`). */
  event?: NamedEvent | readonly NamedEvent[];
  /** Returned to the caller once the change is committed. */
  result: T;
}

/**
 * Tries of one compare-and-set before giving up. Each lost try means another writer of the same payment
 * won, so N concurrent writers cost the unluckiest at most N - 1 losses; 50 concurrent refunds of one
 * payment (test/routes/payments-refunds.test.ts) need 6 to 11 tries in practice. With the jittered wait below
 * (at most 50 ms), giving up holds the idempotency object about 1.5 s at worst instead of ten.
 */
export const MUTATE_MAX_ATTEMPTS = 64;

export interface MutateOptions {
  maxAttempts?: number;
  /**
   * The payment and its ledger as the caller last wrote or read them (e.g. the row it just inserted):
   * the first attempt decides from them instead of reading again. Safe because the write is a
   * compare-and-set on their `version`: if anything changed since, it fails and the row is read.
   */
  known?: { payment: PaymentRow; refunds: RefundRow[] };
}

/**
 * The one way a payment changes: decide from the current row and its refund ledger (through the state
 * machines), then compare-and-set. On a conflict the row is read again and the decision re-made, so
 * contention only delays; it never loses or overwrites a change. `decide` returning null writes nothing.
 */
export async function mutatePayment<T>(
  deps: Deps,
  paymentId: string,
  decide: (
    payment: PaymentRow,
    refunds: RefundRow[],
  ) => PaymentDecision<T> | { none: T } | Promise<PaymentDecision<T> | { none: T }>,
  { maxAttempts = MUTATE_MAX_ATTEMPTS, known }: MutateOptions = {},
): Promise<{ payment: PaymentRow; result: T }> {
  for (let attempt = 0; attempt < maxAttempts; attempt++) {
    const fromKnown = attempt === 0 && known?.payment.id === paymentId;
    const loaded = fromKnown ? known : await loadPaymentWithRefunds(deps, paymentId);
    if (!loaded) throw new Error('payment vanished');
    // A decision that reads more (a dispute) reads it after the payment: anything written meanwhile moved
    // the payment's version too, so the compare-and-set below fails and the decision is made again.
    const decision = await decide(loaded.payment, loaded.refunds);
    // Writing nothing checks nothing: a "no change" is only answered from a fresh read.
    if ('none' in decision && fromKnown) continue;
    if ('none' in decision) return { payment: loaded.payment, result: decision.none };
    const saved = await commitPaymentChange(deps, loaded.payment, decision.change, decision.companions, decision.event);
    if (saved) {
      await enqueueDeliveries(deps, saved.deliveries);
      return { payment: saved.payment, result: decision.result };
    }
    await new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(50, 2 ** Math.min(attempt, 5))));
  }
  // Nothing of this change was written (every try lost its compare-and-set), and a retryable error is
  // never the idempotent result: the same request again resumes where this one stood.
  throw new ServiceError('concurrent_update', undefined, { details: {} });
}
