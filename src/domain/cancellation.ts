/**
 * A cancellation claims its payment (`cancel_claimed_at`) before the processor is asked, so no refund
 * can be reserved meanwhile: a refund sent to the processor on a voided charge would fail or, worse, pay
 * out twice. The claim lasts this long at most; a crashed cancellation stops blocking refunds after it.
 */
export const CANCELLATION_CLAIM_MS = 5 * 60 * 1000;

export const cancellationInProgress = (payment: { cancelClaimedAt: number | null }, now: number) =>
  payment.cancelClaimedAt !== null && now - payment.cancelClaimedAt < CANCELLATION_CLAIM_MS;

/**
 * A void (an approved payment's cancel) the processor accepted and carries out later (Adyen's `/reversals`, answered
 * `received` and completed by its CANCEL_OR_REFUND news) holds off refunds as a claim does, for this long: the news
 * comes within minutes; a void never reported (refused, or its news lost) stops blocking refunds after a day, and a
 * cancel then asks the processor again.
 */
export const VOID_AWAIT_MS = 24 * 60 * 60 * 1000;

/** An approved payment whose void the processor accepted less than `VOID_AWAIT_MS` ago. */
export const voidAwaited = (payment: { status: string; cancelRequestedAt: number | null }, now: number) =>
  payment.status === 'approved' &&
  payment.cancelRequestedAt !== null &&
  now - payment.cancelRequestedAt < VOID_AWAIT_MS;
