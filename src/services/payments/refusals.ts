import type { PaymentRow } from '../../db/schema/index.ts';
import type { Refusal } from '../../domain/ledger/index.ts';
import { formatAmount } from '../../domain/money.ts';
import { type ErrorCode, ServiceError } from '../../lib/errors.ts';
import { toIso } from '../../lib/time.ts';

interface RefusalSpec {
  code: ErrorCode;
  message: (payment: PaymentRow) => string;
  details: (payment: PaymentRow, balance: number | undefined) => Record<string, unknown>;
}

const status = (payment: PaymentRow) => ({ status: payment.status });

/** The error each refusal of the ledger (domain/ledger) is answered with. */
const REFUSALS: Record<Refusal, RefusalSpec> = {
  awaits_terminal_check: {
    code: 'invalid_state_transition',
    message: () => 'The payment awaits a check at the terminal: its outcome is settled there, not by a cancel.',
    details: (p) => ({ status: p.status, action: p.requiredAction }),
  },
  charged_back: {
    code: 'invalid_state_transition',
    message: () => 'The payment was charged back: the payer’s bank took the money back, nothing is left to return.',
    details: (p) => ({ status: p.status, charged_back_at: p.chargedBackAt === null ? null : toIso(p.chargedBackAt) }),
  },
  cancellation_in_progress: {
    code: 'invalid_state_transition',
    message: () => 'A cancellation of this payment is in progress.',
    details: status,
  },
  not_cancelable: {
    code: 'invalid_state_transition',
    message: (p) => `A ${p.status} payment cannot be canceled.`,
    details: status,
  },
  payment_disputed: {
    code: 'payment_disputed',
    message: () => 'A dispute of this payment is open: no refund or void until it closes.',
    details: (p) => ({ status: p.status, dispute_id: p.openDisputeId }),
  },
  not_refundable: {
    code: 'invalid_state_transition',
    message: (p) => `A ${p.status} payment cannot be refunded.`,
    details: status,
  },
  // Amounts leave the service as decimal strings, never as minor units a client could misread.
  refund_exceeds_balance: {
    code: 'refund_exceeds_balance',
    message: () => 'The refund exceeds the refundable balance.',
    details: (p, balance) => ({
      refundable_balance: { value: formatAmount(balance ?? 0, p.currency), currency: p.currency },
    }),
  },
};

export function refusalError(reason: Refusal, payment: PaymentRow, balance?: number): ServiceError {
  const spec = REFUSALS[reason];
  return new ServiceError(spec.code, spec.message(payment), { details: spec.details(payment, balance) });
}
