/**
 * A cancellation claims its payment (`cancel_claimed_at`) before the processor is asked, so no refund
 * can be reserved meanwhile: a refund sent to the processor on a voided charge would fail or, worse, pay
 * out twice. The claim lasts this long at most; a crashed cancellation stops blocking refunds after it.
 */
export const CANCELLATION_CLAIM_MS = 5 * 60 * 1000;

export const cancellationInProgress = (payment: { cancelClaimedAt: number | null }, now: number) =>
  payment.cancelClaimedAt !== null && now - payment.cancelClaimedAt < CANCELLATION_CLAIM_MS;
