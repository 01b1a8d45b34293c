import { z } from 'zod';
// Type-only: nothing of the SDK is bundled; its types are the oracle the schemas below are held to.
import type Stripe from 'stripe';

/**
 * The Stripe objects the connector reads, as zod schemas (runtime parsing) held at compile time to the
 * official SDK's types (`stripe` 16.12.0, API version 2024-06-20): `sdkShape<Sdk>()` accepts a shape only
 * when every field it names exists on `Sdk` and every value `Sdk` allows there parses. A misspelt field,
 * or one read with another type, fails `npm run typecheck` at that field. Nested objects go through
 * `sdkShape` too, so the check holds at every level. Only the fields the connector reads are declared
 * (a field it does not read cannot make a good answer unreadable); Stripe's other fields are dropped.
 */

/** The fields of `Shape` the SDK type does not know, or types differently (values it allows would not parse). */
type Disagreeing<Shape extends z.ZodRawShape, Sdk> = {
  [K in keyof Shape]-?: K extends keyof Sdk ? ([Sdk[K]] extends [z.input<Shape[K]>] ? never : K) : K;
}[keyof Shape];

const DISAGREES = 'This field is not in the Stripe SDK type, or the SDK types it differently' as const;

export function sdkShape<Sdk>() {
  return <Shape extends z.ZodRawShape>(shape: Shape & { [K in Disagreeing<Shape, Sdk>]: typeof DISAGREES }): Shape =>
    shape;
}

/** An expandable reference (`string | Object`): the id either way. */
const expandable = <T extends z.ZodType>(object: T) => z.union([z.string().min(1), object]);
const idOnly = z.object({ id: z.string().min(1) });
export const referenceId = (value: string | { id: string } | null | undefined): string | null =>
  typeof value === 'string' ? value : (value?.id ?? null);

// ---------------------------------------------------------------------------------------------------------
// Errors (the `error` object of every error body; `last_payment_error` has the same shape)

/** `Stripe.StripeRawError['type']` (the four of the API reference, plus the SDK's rate-limit, authentication and OAuth types). */
export type StripeErrorType = Stripe.RawErrorType;
/** The `code` values the 2024-06-20 API enumerates (`api_errors.code` in the spec). */
export type StripeErrorCode = Stripe.PaymentIntent.LastPaymentError.Code;

export const StripeErrorObject = z.object(
  sdkShape<Stripe.StripeRawError>()({
    // A string, not the SDK's union: a type Stripe adds later must still parse (and map by HTTP status).
    type: z.string().optional(),
    code: z.string().nullish(),
    decline_code: z.string().nullish(),
  }),
);
export type StripeErrorObject = z.infer<typeof StripeErrorObject>;
// `last_payment_error` is the same object on a PaymentIntent.
sdkShape<Stripe.PaymentIntent.LastPaymentError>()(StripeErrorObject.shape);

// ---------------------------------------------------------------------------------------------------------
// Balance transaction (what Stripe booked: the gross amount, its fee, the net and when it is available)

export const StripeBalanceTransaction = z.object(
  sdkShape<Stripe.BalanceTransaction>()({
    id: z.string().min(1),
    object: z.literal('balance_transaction'),
    amount: z.number().int(),
    fee: z.number().int(),
    net: z.number().int(),
    currency: z.string().regex(/^[a-z]{3}$/),
    available_on: z.number().int(),
  }),
);
export type StripeBalanceTransaction = z.infer<typeof StripeBalanceTransaction>;

// ---------------------------------------------------------------------------------------------------------
// PaymentIntent

export const StripeNextAction = z.object(
  sdkShape<Stripe.PaymentIntent.NextAction>()({
    type: z.string(),
    promptpay_display_qr_code: z
      .object(sdkShape<Stripe.PaymentIntent.NextAction.PromptpayDisplayQrCode>()({ data: z.string() }))
      .optional(),
    paynow_display_qr_code: z
      .object(sdkShape<Stripe.PaymentIntent.NextAction.PaynowDisplayQrCode>()({ data: z.string() }))
      .optional(),
  }),
);

export const StripePaymentIntent = z.object(
  sdkShape<Stripe.PaymentIntent>()({
    id: z.string().min(1),
    object: z.literal('payment_intent'),
    // A string, not the SDK's union: a status Stripe adds later must parse, and map to pending.
    status: z.string(),
    metadata: z.record(z.string(), z.string()),
    last_payment_error: StripeErrorObject.nullable(),
    next_action: StripeNextAction.nullable(),
    // Expanded by the lookups (`expand[]=latest_charge.balance_transaction`) to learn whether the charge is
    // disputed and what Stripe booked for it; an id elsewhere. Optional: a PaymentIntent that does not say
    // is read as one without a dispute.
    latest_charge: expandable(
      z.object(
        sdkShape<Stripe.Charge>()({
          id: z.string().min(1),
          disputed: z.boolean(),
          // Null until Stripe books the charge; an id when not expanded.
          balance_transaction: expandable(StripeBalanceTransaction).nullish(),
        }),
      ),
    ).nullish(),
  }),
);
export type StripePaymentIntent = z.infer<typeof StripePaymentIntent>;

// ---------------------------------------------------------------------------------------------------------
// Refund

export const StripeRefund = z.object(
  sdkShape<Stripe.Refund>()({
    id: z.string().min(1),
    object: z.literal('refund'),
    status: z.string().nullable(),
    failure_reason: z.string().optional(),
    metadata: z.record(z.string(), z.string()).nullable(),
    // Read for a void's refund (`metadata.purpose: void`), whose news is about its PaymentIntent.
    payment_intent: expandable(idOnly).nullish(),
    // Expanded by the refund requests (`expand[]=balance_transaction`): the money that left the balance.
    balance_transaction: expandable(StripeBalanceTransaction).nullish(),
  }),
);
export type StripeRefund = z.infer<typeof StripeRefund>;

// ---------------------------------------------------------------------------------------------------------
// Terminal reader

export const StripeReaderAction = z.object(
  sdkShape<Stripe.Terminal.Reader.Action>()({
    // Strings, not the SDK's unions: a type or status of a later API version must still parse.
    type: z.string().optional(),
    status: z.string(),
    failure_code: z.string().nullable(),
    process_payment_intent: z
      .object(sdkShape<Stripe.Terminal.Reader.Action.ProcessPaymentIntent>()({ payment_intent: expandable(idOnly) }))
      .optional(),
  }),
);

export const StripeReader = z.object(
  sdkShape<Stripe.Terminal.Reader>()({
    id: z.string().min(1),
    object: z.literal('terminal.reader'),
    action: StripeReaderAction.nullable(),
    // "The networking status of the reader" (`Reader.Status | null`); read for the terminal's state only,
    // as the SDK advises against it "in flows that may block taking payments".
    status: z.string().nullish(),
  }),
);
export type StripeReader = z.infer<typeof StripeReader>;

/**
 * `terminal.reader.action_updated` is not an event of the pinned SDK (16.12.0, API 2024-06-20): stripe-node
 * 18.3.0 added it with API 2025-06-30.basil ("Occurs whenever an action sent to a Terminal reader is
 * updated", `TerminalReaderActionUpdatedEvent`, types/EventTypes.d.ts:3548 at tag v18.3.0), with a
 * `Stripe.Terminal.Reader` as its object, as the other two reader events. Typed here from that declaration.
 */
export type StripeReaderEventType =
  | Extract<Stripe.Event, { data: { object: Stripe.Terminal.Reader } }>['type']
  | 'terminal.reader.action_updated';

// ---------------------------------------------------------------------------------------------------------
// Charge (only in events: it names its PaymentIntent)

export const StripeCharge = z.object(
  sdkShape<Stripe.Charge>()({
    id: z.string().min(1),
    object: z.literal('charge'),
    payment_intent: expandable(idOnly).nullable(),
  }),
);

// ---------------------------------------------------------------------------------------------------------
// Dispute (a chargeback, or an inquiry before one: the PaymentIntent stays `succeeded` meanwhile)

export const StripeDispute = z.object(
  sdkShape<Stripe.Dispute>()({
    id: z.string().min(1),
    object: z.literal('dispute'),
    // A string, not the SDK's union: a status Stripe adds later must parse (and change nothing).
    status: z.string(),
    charge: expandable(idOnly),
    payment_intent: expandable(idOnly).nullable(),
  }),
);
export type StripeDispute = z.infer<typeof StripeDispute>;

/**
 * The rest of a Dispute, read to report it as a dispute of its own (its amount, reason, deadline and the
 * balance transactions that withdrew and reinstated its funds). Apart from `StripeDispute` so that a
 * dispute whose details do not parse still says whether it is lost (the chargeback summary).
 */
export const StripeDisputeDetail = StripeDispute.extend(
  sdkShape<Stripe.Dispute>()({
    amount: z.number().int(),
    currency: z.string().regex(/^[a-z]{3}$/),
    // A string, not an enumeration (the SDK types it `string`; its doc comment lists the values).
    reason: z.string(),
    evidence_details: z.object(sdkShape<Stripe.Dispute.EvidenceDetails>()({ due_by: z.number().int().nullable() })),
    // "zero, one, or two balance transactions that show funds withdrawn and reinstated".
    balance_transactions: z.array(
      z.object(sdkShape<Stripe.BalanceTransaction>()({ amount: z.number().int(), created: z.number().int() })),
    ),
  }),
);
export type StripeDisputeDetail = z.infer<typeof StripeDisputeDetail>;

/** The event types whose object is a Dispute (`Stripe.Event` narrowed by its object). */
export type StripeDisputeEventType = Extract<Stripe.Event, { data: { object: Stripe.Dispute } }>['type'];

// ---------------------------------------------------------------------------------------------------------
// Lists

export const StripeSearchResult = <T extends z.ZodType>(item: T) =>
  z.object(
    sdkShape<Stripe.ApiSearchResult<z.input<T>>>()({
      object: z.literal('search_result'),
      data: z.array(item),
      has_more: z.boolean(),
    }),
  );

export const StripeList = <T extends z.ZodType>(item: T) =>
  z.object(
    sdkShape<Stripe.ApiList<z.input<T>>>()({ object: z.literal('list'), data: z.array(item), has_more: z.boolean() }),
  );

// ---------------------------------------------------------------------------------------------------------
// Events

/**
 * The envelope of an event. Of its object only what says which object it is; the connector parses the
 * object again with the schema of its kind. Some objects have no `id` (`balance.available` carries a
 * Balance): such events are still events.
 */
const EventObject = z.object({ id: z.string().min(1).max(255).optional(), object: z.string() });

export const StripeEvent = z.object(
  sdkShape<Stripe.Event>()({
    id: z.string().min(1).max(255),
    object: z.literal('event'),
    type: z.string().min(1).max(255),
    // Required on every event type (EventBase.livemode): an event without it is not one Stripe sent.
    livemode: z.boolean(),
    data: z.object({ object: EventObject }),
  }),
);
export type StripeEvent = z.infer<typeof StripeEvent>;

/** The event types this connector reads, as the 2024-06-20 API names them (`Stripe.Event.Type`). */
export type StripeEventType = Stripe.Event.Type;
