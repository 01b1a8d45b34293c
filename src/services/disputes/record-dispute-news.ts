import { and, eq } from 'drizzle-orm';
import type { ProcessorDispute } from '../../connectors/types.ts';
import { disputes, type DisputeRow, type PaymentRow } from '../../db/schema/index.ts';
import type { Deps } from '../../deps.ts';
import { formatRecordedAmount } from '../../domain/money.ts';
import { newId } from '../../lib/ids.ts';
import { log } from '../../lib/log.ts';
import { mutate } from '../payments/store.ts';

/**
 * Applies trusted news of one of a payment's disputes (a verified notification, or the processor's answer to our
 * read) through the ledger (domain/ledger/disputes.ts): the dispute row, its events and, when lost, the chargeback are
 * one compare-and-set of the payment, so each change is written and announced exactly once however often the news
 * comes. Returns the dispute as recorded, or null when the news changes nothing.
 */
export async function recordDisputeNews(
  deps: Deps,
  paymentId: string,
  news: ProcessorDispute,
): Promise<DisputeRow | null> {
  // Processors dispute in the charge's currency, always one of ISO 4217; news in any other cannot be shown as a
  // dispute (its `amount` is required): it is left unrecorded, and said so.
  if (formatRecordedAmount(news.amount.minor, news.amount.currency) === null) {
    log('warn', 'dispute_news_unrepresentable', {
      payment_id: paymentId,
      processor_dispute_id: news.processorDisputeId,
      reason: 'unrepresentable_amount',
    });
    return null;
  }
  const { outcome } = await mutate(deps, paymentId, {
    type: 'dispute_news',
    newId: newId('dsp'),
    processorDisputeId: news.processorDisputeId,
    processorStatus: news.processorStatus,
    facts: {
      status: news.status,
      amount: news.amount,
      reason: news.reason,
      evidenceDueBy: news.evidenceDueBy,
      fundsWithdrawnAt: news.fundsWithdrawnAt,
      fundsReinstatedAt: news.fundsReinstatedAt,
    },
  });
  return outcome;
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
