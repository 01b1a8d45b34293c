import { and, eq } from 'drizzle-orm';
import type { ConnectorContext, ConnectorVersion, InboundNotification, PaymentAction, ProcessorNotification, ProcessorPaymentStatus, ProcessorRefundStatus } from '../../connectors/types.ts';
import { createDb, type Db } from '../../db/client.ts';
import { paymentMethods, payments, processorNotifications, refunds, type PaymentMethodRow } from '../../db/schema/index.ts';
import type { Env } from '../../env.ts';
import { canRefundTransition } from '../../domain/refund-state.ts';
import { ApiError } from '../../lib/errors.ts';
import { log } from '../../lib/log.ts';
import { settleRefund } from './create-refund.ts';
import { callConnector, connectorFor } from './processor.ts';
import { mutatePayment, processorAccountChange } from './store.ts';

/**
 * Asynchronous news from a processor about a payment or refund. Verified by the method's connector
 * (failing closed), deduplicated by the processor's event id, and applied only through the state
 * machines: a late or repeated notification that would move a payment backwards changes nothing.
 */
export type NewsOutcome = 'applied' | 'ignored' | 'duplicate' | 'unknown_resource';

export async function receiveProcessorNotification(env: Env, paymentMethodId: string, input: InboundNotification): Promise<NewsOutcome> {
  const db = createDb(env);
  const method = await db
    .select()
    .from(paymentMethods)
    .where(and(eq(paymentMethods.id, paymentMethodId), eq(paymentMethods.environment, env.ENVIRONMENT)))
    .get();
  if (!method || method.secretsCiphertext === null) throw new ApiError('payment_method_not_found');
  const { version, ctx } = await connectorFor(env, method);
  const parsed = await callConnector(() => version.adapter.parseNotification(ctx, input));
  if (!parsed.ok) throw new ApiError('unauthorized', 'The notification could not be verified.');
  return applyNews(env, db, method, version, ctx, parsed.value);
}

export async function applyNews(env: Env, db: Db, method: PaymentMethodRow, version: ConnectorVersion, ctx: ConnectorContext, news: ProcessorNotification): Promise<NewsOutcome> {
  const key = and(eq(processorNotifications.paymentMethodId, method.id), eq(processorNotifications.eventId, news.eventId));
  if (await db.select().from(processorNotifications).where(key).get()) return 'duplicate';

  const outcome = news.resource === 'payment' ? await applyPaymentNews(env, db, method, version, ctx, news) : await applyRefundNews(env, db, method, version, ctx, news);
  await db
    .insert(processorNotifications)
    .values({ paymentMethodId: method.id, eventId: news.eventId, resource: news.resource, processorReference: news.processorReference, outcome, receivedAt: Date.now() })
    .onConflictDoNothing()
    .run();
  log('info', 'processor_notification', { payment_method_id: method.id, event_id: news.eventId, resource: news.resource, outcome });
  return outcome;
}

async function applyPaymentNews(env: Env, db: Db, method: PaymentMethodRow, version: ConnectorVersion, ctx: ConnectorContext, news: ProcessorNotification): Promise<NewsOutcome> {
  const payment = await db
    .select()
    .from(payments)
    .where(and(eq(payments.paymentMethodId, method.id), eq(payments.processorReference, news.processorReference)))
    .get();
  if (!payment) return 'unknown_resource';
  let account: { status: ProcessorPaymentStatus; action?: PaymentAction } | null = news.status === null ? null : { status: news.status as ProcessorPaymentStatus };
  if (!news.trusted || account === null) {
    // Unsigned or content-free news: ask the processor instead of believing the body.
    const read = await callConnector(() =>
      version.adapter.getPayment(ctx, {
        paymentId: payment.id,
        processorReference: payment.processorReference,
        processorIdempotencyKey: payment.processorIdempotencyKey,
        amount: { minor: payment.amountMinor, currency: payment.currency },
      }),
    );
    if (!read.ok) return 'ignored';
    account = read.value;
  }
  const told = account;
  const { result } = await mutatePayment<NewsOutcome>(env, payment.id, (current, ledger) => {
    const change = processorAccountChange(current, told, Date.now(), { hasRefunds: ledger.length > 0 });
    return change ? { change, result: 'applied' } : { none: 'ignored' };
  });
  return result;
}

async function applyRefundNews(env: Env, db: Db, method: PaymentMethodRow, version: ConnectorVersion, ctx: ConnectorContext, news: ProcessorNotification): Promise<NewsOutcome> {
  const found = await db
    .select({ refund: refunds, payment: payments })
    .from(refunds)
    .innerJoin(payments, eq(payments.id, refunds.paymentId))
    .where(and(eq(refunds.processorReference, news.processorReference), eq(payments.paymentMethodId, method.id)))
    .get();
  if (!found) return 'unknown_resource';
  let status = news.status as ProcessorRefundStatus | null;
  if (!news.trusted || status === null) {
    const read = await callConnector(() =>
      version.adapter.getRefund(ctx, {
        refundId: found.refund.id,
        amount: { minor: found.refund.amountMinor, currency: found.refund.currency },
        processorReference: found.refund.processorReference,
        processorIdempotencyKey: found.refund.processorIdempotencyKey,
        paymentProcessorReference: found.payment.processorReference ?? '',
      }),
    );
    if (!read.ok) return 'ignored';
    status = read.value.status;
  }
  const before = found.refund.status;
  // settleRefund writes even when the state machine refuses (bumping the payment's version), and news
  // that is refused must change nothing, as for payments. A refund that moves meanwhile is re-judged there.
  if (!canRefundTransition(before, status)) return 'ignored';
  const after = await settleRefund(env, db, found.refund.id, found.payment.id, status, {});
  return after.status !== before ? 'applied' : 'ignored';
}
