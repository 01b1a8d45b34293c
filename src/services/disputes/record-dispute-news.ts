import { and, eq, sql } from 'drizzle-orm';
import type { ProcessorDispute } from '../../connectors/types.ts';
import { preparedInsertIf, preparedUpdates } from '../../db/prepared.ts';
import { disputes, type DisputeRow, type PaymentRow } from '../../db/schema/index.ts';
import type { Deps } from '../../deps.ts';
import { OPEN_DISPUTE_CHECK_GAP_MS } from '../../domain/dispute-checks.ts';
import { applyDisputeNews, isDisputeClosed, type DisputeRecord } from '../../domain/disputes.ts';
import { chargeback, nextUpdatedAt, type PaymentStatus } from '../../domain/payment-state.ts';
import { newId } from '../../lib/ids.ts';
import { toDisputeResource } from '../payments/resources.ts';
import { atVersion, mutatePayment, type NamedEvent } from '../payments/store.ts';

/** The dispute's own writes, only inside its payment's compare-and-set (built once per isolate). */
const disputeIfAtVersion = preparedInsertIf(disputes, atVersion);
const disputeUpdateIfAtVersion = preparedUpdates(
  disputes,
  and(eq(disputes.id, sql.placeholder('disputeId')), atVersion)!,
);

/** Payments that never collected: nothing of them can be disputed, so news of a dispute there is ignored. */
const NEVER_COLLECTED: readonly PaymentStatus[] = ['declined', 'failed', 'expired', 'canceled'];

/**
 * Applies trusted news of one of a payment's disputes (a verified notification, or the processor's answer to
 * our read) through `applyDisputeNews`: the dispute row, its events (`dispute.created`, `.updated`,
 * `.closed`, payload the dispute and the payment) and, when the dispute is lost, the payment's chargeback
 * summary (`charged_back_at`, with `payment.charged_back` as before) are one compare-and-set of the payment,
 * so each change is written and announced exactly once however often the news comes. The payment's
 * `updated_at` moves with every change: its events carry it and receivers order by it. Returns the dispute
 * as recorded, or null when the news changes nothing (repeated, stale, or about a payment never collected).
 */
export async function recordDisputeNews(
  deps: Deps,
  paymentId: string,
  news: ProcessorDispute,
): Promise<DisputeRow | null> {
  const { result } = await mutatePayment<DisputeRow | null>(deps, paymentId, async (payment) => {
    if (NEVER_COLLECTED.includes(payment.status)) return { none: null };
    // Read after the payment (mutatePayment): a dispute written meanwhile moved the payment's version too.
    const current = await findDisputeOfPayment(deps, payment, news.processorDisputeId);
    const now = Date.now();
    const applied = applyDisputeNews(current ? recordOf(current) : null, factsOf(news), now);
    if (!applied.ok) return { none: null };
    const { dispute } = applied;
    const next: DisputeRow = {
      id: current?.id ?? newId('dsp'),
      paymentId: payment.id,
      ownerId: payment.ownerId,
      environment: payment.environment,
      processorDisputeId: news.processorDisputeId,
      status: dispute.status,
      amountMinor: dispute.amount.minor,
      currency: dispute.amount.currency,
      reason: dispute.reason,
      evidenceDueBy: dispute.evidenceDueBy,
      fundsWithdrawnAt: dispute.fundsWithdrawnAt,
      fundsReinstatedAt: dispute.fundsReinstatedAt,
      processorStatus: news.processorStatus,
      createdAt: dispute.createdAt,
      updatedAt: dispute.updatedAt,
    };
    // A lost dispute is the chargeback: recorded once (`chargeback` is null when it already is).
    const charged = applied.lost ? chargeback(payment, now) : null;
    const events: NamedEvent[] = applied.events.map((type) => ({
      type,
      data: { dispute: toDisputeResource(next) },
    }));
    if (charged) events.push({ type: 'payment.charged_back', data: {} });
    // An open dispute is read again until it closes, in case the news of its next move is lost (docs/dispute-checks.md).
    const openCheck = now + OPEN_DISPUTE_CHECK_GAP_MS;
    const recheck =
      !isDisputeClosed(dispute.status) && (payment.disputeCheckAt === null || payment.disputeCheckAt > openCheck)
        ? { disputeCheckAt: openCheck }
        : {};
    return {
      change: { ...(charged ?? { updatedAt: nextUpdatedAt(payment.updatedAt, now) }), ...recheck },
      companions: (readVersion) => {
        const at = { paymentId: payment.id, version: readVersion };
        return [
          current
            ? disputeUpdateIfAtVersion(
                deps.d1,
                {
                  status: next.status,
                  amountMinor: next.amountMinor,
                  currency: next.currency,
                  reason: next.reason,
                  evidenceDueBy: next.evidenceDueBy,
                  fundsWithdrawnAt: next.fundsWithdrawnAt,
                  fundsReinstatedAt: next.fundsReinstatedAt,
                  processorStatus: next.processorStatus,
                  updatedAt: next.updatedAt,
                },
                { disputeId: next.id, ...at },
              )
            : disputeIfAtVersion.bind(deps.d1, next, at),
        ];
      },
      event: events,
      result: next,
    };
  });
  return result;
}

/** The payment's dispute the processor knows by `processorDisputeId`, if recorded. */
export function findDisputeOfPayment(
  { db }: Deps,
  payment: Pick<PaymentRow, 'id' | 'ownerId' | 'environment'>,
  processorDisputeId: string,
) {
  return db
    .select()
    .from(disputes)
    .where(
      and(
        eq(disputes.paymentId, payment.id),
        eq(disputes.processorDisputeId, processorDisputeId),
        eq(disputes.ownerId, payment.ownerId),
        eq(disputes.environment, payment.environment),
      ),
    )
    .get();
}

const factsOf = (news: ProcessorDispute) => ({
  status: news.status,
  amount: news.amount,
  reason: news.reason,
  evidenceDueBy: news.evidenceDueBy,
  fundsWithdrawnAt: news.fundsWithdrawnAt,
  fundsReinstatedAt: news.fundsReinstatedAt,
});

const recordOf = (row: DisputeRow): DisputeRecord => ({
  status: row.status,
  amount: { minor: row.amountMinor, currency: row.currency },
  reason: row.reason,
  evidenceDueBy: row.evidenceDueBy,
  fundsWithdrawnAt: row.fundsWithdrawnAt,
  fundsReinstatedAt: row.fundsReinstatedAt,
  createdAt: row.createdAt,
  updatedAt: row.updatedAt,
});
