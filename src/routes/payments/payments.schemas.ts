import { z } from '@hono/zod-openapi';
import { IDEMPOTENCY_KEY_PATTERN } from '../../domain/idempotency.ts';
import { PAYMENT_STATUSES } from '../../domain/payment-state.ts';
import { REFUND_STATUSES } from '../../domain/refund-state.ts';
import { REFUND_FAILURE_REASONS } from '../../domain/reversals.ts';
import { SETTLEMENT_NULL_REASONS } from '../../domain/settlement.ts';
import { CreatedRangeQuery, filteredListQuery, opaqueId, Timestamp } from '../../lib/openapi.ts';
import { AmountSchema } from '../../services/payments/inputs.ts';

export { AmountSchema, CreatePaymentBody, CreateRefundBody } from '../../services/payments/inputs.ts';

export const ActionSchema = z
  .object({
    type: z.string().openapi({
      description:
        '`none`; `display_qr` (show `qr_data`); `at_terminal`: a POS payment handed to the terminal, waiting for the customer to present a card (or the cashier to cancel it: the cancel may complete later, see `cancel_requested_at`); or `check_terminal`: the terminal could not settle the payment and the processor will not settle it by itself (Mercado Pago Point `action_required`), so someone must check the terminal’s activity for whether the card was charged. The payment stays `pending` until the processor reports the terminal’s outcome; it cannot be canceled meanwhile (409). A payment at the terminal is read again from its processor on a short schedule (seconds to minutes). Tolerate future values. An action never implies approval.',
      example: 'display_qr',
    }),
    qr_data: z.string().optional().openapi({ description: 'With `display_qr`: show it unaltered as a QR code.' }),
    expires_at: Timestamp.nullable().optional().openapi({
      description:
        'With `display_qr`: the moment the QR stops being payable (the payment method’s `qr_ttl_seconds` after the QR was made); the payment becomes `expired` soon after. Count down to it, and offer a new payment once it has passed. Null when the service sets no expiry (the processor’s own applies).',
      example: '2026-11-21T10:30:30.123Z',
    }),
  })
  .openapi('PaymentAction');

/** What the processor kept and when the rest is yours (docs/states.md, "Settlement"). */
export const SettlementSchema = z
  .object({
    fee: AmountSchema.openapi({
      description:
        'What the processor kept, in the currency it settles in (which may differ from the payment’s: Stripe converts to your account’s currency). Any ISO 4217 currency, in its own minor digits (JPY `"73"`, GBP `"0.75"`, BHD `"0.250"`).',
    }),
    net: AmountSchema.openapi({
      description:
        'For a payment: what reaches your balance (the amount less `fee`; in the sandbox `fee` + `net` is the amount). For a refund: what left your balance.',
    }),
    available_on: Timestamp.openapi({
      description:
        'When the processor makes `net` available to pay out (Stripe: the balance transaction’s `available_on`).',
    }),
  })
  .openapi('Settlement');

const settlementFields = (what: string) => ({
  settlement: SettlementSchema.nullable().openapi({
    description: `What the processor reported it kept of ${what}, as it booked it; null until it does, with \`settlement_null_reason\`. Recorded once: processors do not change a booking.`,
  }),
  settlement_null_reason: z.enum(SETTLEMENT_NULL_REASONS).nullable().openapi({
    description:
      'Why `settlement` is null: `not_collected` (no money moved: not collected, or the refund is not approved), `pending_at_processor` (the money moved, the processor has not booked it yet: read again later), `not_reported` (the processor reports no fee for it, e.g. Mercado Pago; its connector notes say where), `unrepresentable_amount` (the processor reported it in a form no `Amount` can show: a currency outside ISO 4217, or without a minor unit such as gold `XAU`, or a fraction of the currency’s minor unit; the rest of the payment reads as ever). Null when `settlement` is set. Tolerate future values.',
    example: null,
  }),
});

export const PaymentSchema = z
  .object({
    id: z.string().openapi({ example: 'pay_3kqz7w1v0c9m2x8bq4n6' }),
    status: z.enum(PAYMENT_STATUSES).openapi({
      description:
        'Always read it: a 2xx is not an approval. A chargeback does not change it: see `charged_back_at`. `canceled` and `refunded` are final but for money the processor reports never returned: an approved refund that fails later recomputes the status from the refunds still approved (`refund.failed`), and a void the processor carried out by a refund (Stripe) whose refund fails later makes a `canceled` payment `approved` again, its whole amount refundable (event `payment.void_failed`, not `payment.approved`: nothing was collected anew). Only the processor’s verified news or the service’s own read of it does this. A payment canceled before it was collected is never reopened.',
    }),
    amount: AmountSchema,
    external_reference: z.string(),
    payment_method: z.string().uuid(),
    processor_reference: z.string().nullable(),
    action: ActionSchema.optional().openapi({
      description:
        'In the create response; in reads only while a `pending` payment waits on something: a QR to show (so a reloaded checkout can show it again), the customer at the terminal, or a check at the terminal.',
    }),
    description: z.string().nullable(),
    metadata: z
      .record(z.string(), z.unknown())
      .nullable()
      .openapi({ example: { order_id: '1042' } }),
    webhook_url: z.string().nullable(),
    charged_back_at: Timestamp.nullable().openapi({
      description:
        'Set when the processor reported a chargeback: the payer’s bank took the collected money back (event `payment.charged_back`). The status stays as it was (`approved`, `partially_refunded` or `refunded`; an open payment becomes `approved`, as the chargeback proves it was collected); from then on refunds and cancels answer `409 invalid_state_transition`. It is the summary of a lost dispute: the disputes themselves, open, won or lost, are at `GET /v1/payments/{payment_id}/disputes` (events `dispute.*`); evidence is submitted at the processor. Null otherwise.',
      example: null,
    }),
    ...settlementFields('the collected payment'),
    cancel_requested_at: Timestamp.nullable().openapi({
      description:
        'Set when the processor accepted a cancel that it completes later (a POS payment already on the terminal, e.g. a Mercado Pago Point order `at_terminal`; or the void of an approved payment, e.g. Adyen’s reversal, during which refunds are refused): the cancel answered `202` and the payment kept its status. It completes by the processor’s notification or the service’s own read: the payment becomes `canceled` (`payment.canceled`; this field stays, dating the request), or `approved` if the customer paid first (`payment.approved`; this field is cleared: no cancel is awaited any more). Also set on a pending QR payment past its expiry whose withdrawal the processor accepted to carry out later (Adyen’s `/cancels`): its completion makes the payment `expired` (`payment.expired`). Null when no cancel is awaited or was requested this way.',
      example: null,
    }),
    created_at: Timestamp,
    updated_at: Timestamp.openapi({ description: 'Strictly increases with every change; order updates by it.' }),
  })
  .openapi('Payment');

export const RefundSchema = z
  .object({
    id: z.string().openapi({ example: 'ref_8d2k7q1x9m3v5b0c6z4n' }),
    payment_id: z.string(),
    status: z.enum(REFUND_STATUSES).openapi({
      description:
        '`approved` is final but for one move: the processor may report an approved refund failed later (Stripe: up to 30 days after; the card was closed, lost or stolen...). The refund then becomes `failed` with its `failure_reason` (event `refund.failed`), its amount is refundable again and the payment’s status is recomputed from its approved refunds (`refunded` becomes `partially_refunded` or `approved`): the money never reached the customer.',
    }),
    amount: AmountSchema,
    reason: z.string().nullable(),
    failure_reason: z.enum(REFUND_FAILURE_REASONS).nullable().openapi({
      description:
        'Why a `failed` or `declined` refund failed, when the processor said: `lost_or_stolen_card`, `expired_or_canceled_card` (the customer’s card cannot receive the money), `charge_for_pending_refund_disputed` (the payment was disputed while the refund was pending), `insufficient_funds` (your processor balance could not cover it), `declined`, `merchant_request` (canceled at your request) or `unknown`. Null otherwise. Tolerate future values.',
      example: null,
    }),
    processor_reference: z.string().nullable(),
    ...settlementFields('the approved refund (a reversed refund has none: nothing moved in the end)'),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .openapi('Refund');

export const IdempotencyHeaders = z.object({
  'idempotency-key': z
    .string()
    .optional()
    // Checked by requireIdempotencyKey (domain/idempotency.ts); the limits here describe that check.
    .openapi({
      param: { in: 'header', required: true },
      minLength: 1,
      maxLength: 255,
      pattern: IDEMPOTENCY_KEY_PATTERN.source,
      description:
        'Required (`Idempotency-Key`). 1 to 255 printable ASCII characters; one logical attempt; reuse it when retrying.',
      example: '7c1d7f0e-checkout-1042',
    }),
});

export const ListPaymentsQuery = filteredListQuery({
  external_reference: z.string().min(1).max(128).optional().openapi({
    description: 'Exactly this reference (your own, e.g. from a `409 external_reference_conflict`).',
    example: 'order-1042',
  }),
  status: z.enum(PAYMENT_STATUSES).optional().openapi({ description: 'Only payments in this status.' }),
  payment_method: z
    .string()
    .uuid()
    .max(36)
    .optional()
    .openapi({ description: 'Only payments taken with this method.', example: '5b0e7c52-3f57-4b8e-9a55-0e4d7c1b2a91' }),
  ...CreatedRangeQuery,
});

export const PaymentParams = z.object({
  payment_id: opaqueId('payment_id', 'pay_3kqz7w1v0c9m2x8bq4n6', 'The payment (`pay_...`).'),
});
export const RefundParams = PaymentParams.extend({
  refund_id: opaqueId('refund_id', 'ref_8d2k7q1x9m3v5b0c6z4n', 'The refund (`ref_...`).'),
});
