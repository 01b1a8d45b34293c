import { z } from '@hono/zod-openapi';
import { DISPUTE_REASONS, DISPUTE_STATUSES } from '../../domain/disputes.ts';
import { filteredListQuery, opaqueId, Timestamp } from '../../lib/openapi.ts';
import { AmountSchema } from '../../services/payments/inputs.ts';

export const DisputeSchema = z
  .object({
    id: z.string().openapi({ example: 'dsp_6m1q9x3k7v0c2b8n4z5w' }),
    payment_id: z.string().openapi({ example: 'pay_3kqz7w1v0c9m2x8bq4n6' }),
    status: z.enum(DISPUTE_STATUSES).openapi({
      description:
        'Stripe’s seven dispute statuses, every processor mapped into them (docs/states.md, "Disputes"). An inquiry (`warning_needs_response`, `warning_under_review`) may escalate to a chargeback or close unescalated (`warning_closed`); a chargeback (`needs_response`, `under_review`) is decided `won` (the funds are reinstated) or `lost` (the payment’s `charged_back_at` is set). `won`, `lost` and `warning_closed` are final. Statuses only move forward.',
      example: 'needs_response',
    }),
    amount: AmountSchema.openapi({
      description:
        'The disputed amount, in the dispute’s currency (processors dispute in the payment’s; any ISO 4217 currency is shown in its own minor digits); usually the payment’s amount, a dispute may be partial. News of a dispute in a currency outside ISO 4217 is not recorded (docs/states.md, "Disputes").',
    }),
    reason: z.enum(DISPUTE_REASONS).openapi({
      description:
        'Why the payer disputed, normalized to Stripe’s reasons; `general` when the processor gives another. Tolerate future values.',
      example: 'fraudulent',
    }),
    evidence_due_by: Timestamp.nullable().openapi({
      description: 'When your evidence is due at the processor; null when it gives no deadline.',
    }),
    funds_withdrawn_at: Timestamp.nullable().openapi({
      description: 'When the disputed amount left your balance; null while it has not (an inquiry).',
    }),
    funds_reinstated_at: Timestamp.nullable().openapi({
      description: 'When it came back (a won chargeback); null otherwise.',
      example: null,
    }),
    created_at: Timestamp,
    updated_at: Timestamp.openapi({ description: 'Strictly increases with every change of the dispute.' }),
  })
  .openapi('Dispute');

export const DisputeParams = z.object({
  dispute_id: opaqueId('dispute_id', 'dsp_6m1q9x3k7v0c2b8n4z5w', 'The dispute (`dsp_...`).'),
});

export const ListDisputesQuery = filteredListQuery({
  status: z.enum(DISPUTE_STATUSES).optional().openapi({ description: 'Only disputes in this status.' }),
});
