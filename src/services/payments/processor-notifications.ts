import { and, eq } from 'drizzle-orm';
import type {
  ConnectorContext,
  ConnectorVersion,
  InboundNotification,
  PaymentAction,
  ProcessorDispute,
  ProcessorNotification,
  ProcessorPaymentStatus,
} from '../../connectors/types.ts';
import {
  paymentMethods,
  payments,
  processorNotifications,
  refunds,
  type PaymentMethodRow,
} from '../../db/schema/index.ts';
import type { Deps } from '../../deps.ts';
import { ownerDeps } from '../shards/owner-deps.ts';
import { ServiceError } from '../../lib/errors.ts';
import { log } from '../../lib/log.ts';
import { type ReportedSettlement, voidedAfterCollection } from '../../domain/ledger/index.ts';
import { isReserving } from '../../domain/refund-state.ts';
import { recordDisputeNews } from '../disputes/record-dispute-news.ts';
import { enforceRateLimit, firstInWindow, type RateLimit } from '../rate-limit.ts';
import {
  callConnector,
  connectorFor,
  forPayment,
  pickSettlement,
  processorLookup,
  readVoidRefund,
} from './processor.ts';
import { mutate } from './store.ts';

/**
 * Asynchronous notifications from a processor about a payment or refund. Verified by the method's connector
 * (failing closed), deduplicated by the processor's event id, and applied only through the state
 * machines: a late or repeated notification that would move a payment backwards changes nothing.
 *
 * News the connector cannot verify (Mercado Pago's unsigned QR notifications, or a signature that fails)
 * can be sent by anyone who knows a method id, so it must cost nothing (docs/limits.md): about a payment
 * or refund we do not know it is answered and forgotten; about one we know, the processor is read at most
 * once per resource per window, later news within it being a duplicate of that read; and beyond a rate
 * per method it is refused with 429, which the processor retries later.
 */
export type NotificationOutcome = 'applied' | 'ignored' | 'duplicate' | 'unknown_resource';

/** Unverifiable notifications accepted per payment method (docs/limits.md). */
export const UNVERIFIED_NOTIFICATION_RATE_LIMIT = { limit: 60, windowMs: 60_000 } as const satisfies RateLimit;
/**
 * One read of a resource at the processor answers the unverifiable news about it for this long. Short,
 * because news of a real change that arrives within it, after a read that saw the state before, is taken
 * only by the next notification or by reconciliation (jobs/reconcile.ts).
 */
export const UNVERIFIED_REREAD_WINDOW_MS = 10_000;

export async function receiveProcessorNotification(
  edgeDeps: Deps,
  paymentMethodId: string,
  input: InboundNotification,
): Promise<NotificationOutcome> {
  const method = await edgeDeps.control
    .select()
    .from(paymentMethods)
    .where(and(eq(paymentMethods.id, paymentMethodId), eq(paymentMethods.environment, edgeDeps.environment)))
    .get();
  if (!method || method.secretsCiphertext === null) throw new ServiceError('payment_method_not_found');
  // The method's owner's shard holds the payment and the record of notifications seen (a move answers 503, and
  // processors deliver again later).
  const deps = await ownerDeps(edgeDeps, method.userId, 'POST');
  const { version, ctx } = await connectorFor(deps, method);
  const parsed = await callConnector(() => version.adapter.parseNotification(ctx, input));
  if (!parsed.ok) throw new ServiceError('unauthorized', 'The notification could not be verified.');
  if (!parsed.value.trusted) {
    await enforceRateLimit(deps, [`notifications:unverified:${method.id}`], UNVERIFIED_NOTIFICATION_RATE_LIMIT);
  }
  return applyNotification(deps, method, version, ctx, parsed.value);
}

export async function applyNotification(
  deps: Deps,
  method: PaymentMethodRow,
  version: ConnectorVersion,
  ctx: ConnectorContext,
  notification: ProcessorNotification,
): Promise<NotificationOutcome> {
  const { db } = deps;
  const key = and(
    eq(processorNotifications.paymentMethodId, method.id),
    eq(processorNotifications.eventId, notification.eventId),
  );
  if (await db.select().from(processorNotifications).where(key).get()) return 'duplicate';

  const outcome =
    notification.resource === 'payment'
      ? await applyPaymentNotification(deps, method, version, ctx, notification)
      : await applyRefundNotification(deps, method, version, ctx, notification);
  // Unverifiable news that read nothing leaves no trace: nobody vouches for its event id, so a row would
  // deduplicate nothing and only let anyone fill the table.
  if (!notification.trusted && (outcome === 'unknown_resource' || outcome === 'duplicate')) return outcome;
  await db
    .insert(processorNotifications)
    .values({
      paymentMethodId: method.id,
      eventId: notification.eventId,
      resource: notification.resource,
      processorReference: notification.processorReference,
      outcome,
      receivedAt: Date.now(),
    })
    .onConflictDoNothing()
    .run();
  log('info', 'processor_notification', {
    payment_method_id: method.id,
    event_id: notification.eventId,
    resource: notification.resource,
    outcome,
  });
  return outcome;
}

async function applyPaymentNotification(
  deps: Deps,
  method: PaymentMethodRow,
  version: ConnectorVersion,
  methodCtx: ConnectorContext,
  notification: ProcessorNotification & { resource: 'payment' },
): Promise<NotificationOutcome> {
  const payment = await deps.db
    .select()
    .from(payments)
    .where(
      and(eq(payments.paymentMethodId, method.id), eq(payments.processorReference, notification.processorReference)),
    )
    .get();
  if (!payment) return 'unknown_resource';
  // Reads of the payment run as its other calls do: at its own terminal.
  const ctx = forPayment(methodCtx, payment);
  if (!notification.trusted && !(await firstReadInWindow(deps, payment.id))) return 'duplicate';
  if (notification.trusted && notification.dispute) {
    // Verified news of a dispute: the dispute itself, and through it the chargeback summary when lost.
    return (await recordDisputeNews(deps, payment.id, notification.dispute)) ? 'applied' : 'ignored';
  }
  const voided = voidedAfterCollection(payment);
  if (notification.voidReversal || (voided && (!notification.trusted || notification.status === null))) {
    // News of a voided payment: verified news that its void's refund failed is believed when it names the refund
    // kept with the void (`void_refund_reference`): a late retry about the refund of an earlier void, reversed
    // already and followed by a new cancel, says nothing of the current one. Any other news of it (unsigned,
    // content-free, or naming a refund we cannot tie to the void) is answered by reading the void's refund at the
    // processor, which must be that named refund. Either makes the payment collected again only if the service
    // itself voided it after collection (`reverseVoid`).
    const named = notification.trusted ? notification.voidReversal?.processorRefundReference : undefined;
    const evidence =
      named !== undefined && payment.voidRefundReference !== null
        ? ({ kind: 'named', refundReference: named } as const)
        : await readVoidRefund(version, ctx, payment, named);
    if (evidence) {
      const { outcome } = await mutate(deps, payment.id, { type: 'void_reversal', evidence });
      if (outcome !== 'not_failed') return outcome === 'reversed' ? 'applied' : 'ignored';
    }
    if (notification.voidReversal) return 'ignored';
  }
  let account: { status: ProcessorPaymentStatus; action?: PaymentAction; processorPaymentId?: string } | null =
    notification.status === null
      ? null
      : {
          status: notification.status,
          ...(notification.trusted && notification.processorPaymentId
            ? { processorPaymentId: notification.processorPaymentId }
            : {}),
        };
  let disputes: ProcessorDispute[] = [];
  let settled: ReportedSettlement = notification.trusted ? notification : {};
  // Verified news of a collection that does not say what the processor kept (Stripe's
  // `payment_intent.succeeded` carries no balance transaction) is completed by one read of the payment,
  // once: while no settlement, nor a reason for none, is recorded.
  const settlementUnknown =
    notification.trusted &&
    notification.status === 'approved' &&
    notification.settlement === undefined &&
    payment.settlementFeeMinor === null &&
    payment.settlementNullReason === null;
  if (!notification.trusted || account === null || settlementUnknown) {
    // An unsigned or content-free notification: ask the processor instead of believing the body.
    const read = await callConnector(() => version.adapter.getPayment(ctx, processorLookup(payment)));
    if (!read.ok && !settlementUnknown) return 'ignored';
    if (read.ok) {
      // Verified news keeps its own status; the read adds what it lacked.
      if (!settlementUnknown) account = read.value;
      disputes = read.value.disputes ?? [];
      settled = read.value;
    }
  }
  // The processor's own answer is trusted news of the payment's disputes; first, so that a lost one is the
  // chargeback with its dispute's events (the account's `charged_back` then finds it recorded).
  let applied = false;
  for (const dispute of disputes) {
    if (await recordDisputeNews(deps, payment.id, dispute)) applied = true;
  }
  if (account === null) return 'ignored';
  const { outcome } = await mutate(deps, payment.id, {
    type: 'processor_news',
    account: { ...account, ...pickSettlement(settled) },
  });
  return applied ? 'applied' : outcome;
}

async function applyRefundNotification(
  deps: Deps,
  method: PaymentMethodRow,
  version: ConnectorVersion,
  methodCtx: ConnectorContext,
  notification: ProcessorNotification & { resource: 'refund' },
): Promise<NotificationOutcome> {
  const found = await deps.db
    .select({ refund: refunds, payment: payments })
    .from(refunds)
    .innerJoin(payments, eq(payments.id, refunds.paymentId))
    .where(
      and(eq(refunds.processorReference, notification.processorReference), eq(payments.paymentMethodId, method.id)),
    )
    .get();
  if (!found) return 'unknown_resource';
  const ctx = forPayment(methodCtx, found.payment);
  if (!notification.trusted && !(await firstReadInWindow(deps, found.refund.id))) return 'duplicate';
  const readRefund = () =>
    callConnector(() => version.adapter.getRefund(ctx, processorLookup(found.payment, found.refund)));
  const before = found.refund.status;
  let status = notification.status;
  let failureReason = notification.failureReason;
  let settled: ReportedSettlement = {};
  if (!notification.trusted || status === null) {
    const read = await readRefund();
    if (!read.ok) return 'ignored';
    status = read.value.status;
    failureReason = read.value.failureReason;
    settled = pickSettlement(read.value);
  } else if (status === 'approved' && isReserving(before)) {
    // Verified news of an approval does not say what the processor booked (Stripe's refund events carry the
    // balance transaction unexpanded): one read for it, as for a payment's collection. Its status stays the news'.
    const read = await readRefund();
    if (read.ok && read.value.status === 'approved') settled = pickSettlement(read.value);
  }
  // Past this point the news is trusted: verified, or the processor's own answer to our read. The ledger decides:
  // an approved refund reported failed is reversed, any other moves only where its state machine allows.
  const { outcome } = await mutate(deps, found.payment.id, {
    type: 'refund_news',
    refundId: found.refund.id,
    status,
    failureReason: failureReason ?? null,
    reported: settled,
  });
  return outcome;
}

/** Whether unverifiable news about this payment or refund may read it at the processor now. */
const firstReadInWindow = (deps: Deps, resourceId: string) =>
  firstInWindow(deps, `notifications:reread:${resourceId}`, UNVERIFIED_REREAD_WINDOW_MS);
