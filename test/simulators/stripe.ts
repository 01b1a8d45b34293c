// The official library, at test time only: its types make every object below complete, and its webhook
// helper signs every delivery (the connector's verifier is not asked to agree with our own signing code).
import Stripe from 'stripe';
import { emvPayload, tlv } from '../helpers/emvco.ts';

/**
 * A local simulator of the parts of Stripe's HTTP API (https://docs.stripe.com/api, version 2024-06-20)
 * the Stripe connector uses: a `fetch`-compatible function with all state in memory.
 *
 * Held to the publisher's material, not to the connector:
 * - Every object it answers is a complete object of the official SDK's type (`Stripe.PaymentIntent`,
 *   `Stripe.Refund`, `Stripe.Terminal.Reader`, `Stripe.Event`), shaped after Stripe's own fixtures
 *   (stripe/openapi `fixtures3.json`); typecheck fails if a required field is missing or mistyped.
 * - Every status the SDK enumerates can be produced: `setPaymentIntentStatus` (all seven
 *   `PaymentIntent.Status` values), `settleRefund` (the five refund statuses), reader actions
 *   (`in_progress`, `succeeded`, `failed`).
 * - Every error type (`Stripe.RawErrorType`) and the documented HTTP errors (400, 401, 402, 403, 404, 409,
 *   429, 500, 503) can be injected (`inject`), as can timeouts and network failures; `Stripe-Should-Retry`
 *   is sent where the preset says.
 * - Event names are the 2024-06-20 ones (`Stripe.Event.Type`: no `refund.failed` on this version).
 * - Deliveries are signed by `Stripe.webhooks.generateTestHeaderStringAsync` (the SDK's web crypto
 *   provider: its synchronous helper needs Node's crypto, which the SDK's workerd build does not use).
 *
 * Simulated: Bearer authentication and 401s; form bodies; idempotent replay with `Idempotent-Replayed`,
 * 400 `idempotency_error` for a key reused with other parameters, no stored result for validation errors
 * or requests that never executed; amounts checked as Stripe documents (integers in the currency's
 * smallest unit, at most eight digits, a minimum per currency).
 *
 * Outcomes follow the sandbox's amount rules, by the last two digits of the minor units: 51 → a POS card
 * is declined at the reader (QR: pending, decline later with `declineQr`); 52 → the first create with an
 * idempotency key is executed but its answer is lost (a timeout); 53 → the first create with a key answers
 * 503 without executing; 54 → the payment attempt fails; a refund ending 61 fails with
 * `failure_reason: declined`.
 *
 * Money after the sale, as Stripe documents it:
 * - Balance transactions (`Stripe.BalanceTransaction`): a succeeded charge is booked when first read, with
 *   the simulator's fee (`SIM_FEE`: 2.9 % + 30 minor units, the simulator's rule, not Stripe's pricing),
 *   available two days later at 00:00 UTC; a succeeded refund books its amount leaving the balance (no
 *   fee returned: "Stripe doesn't return processing fees", docs.stripe.com/refunds); a refund that fails
 *   after it succeeded books the money coming back (`failure_balance_transaction`). `expand[]` of
 *   `latest_charge.balance_transaction` and of a refund's `balance_transaction` is served.
 * - The asynchronous refund failure of Terminal's test card 4000 0000 0000 5126 (`refund_fail`): "Charge
 *   succeeds but refunding a captured charge fails asynchronously with a failure_reason of
 *   expired_or_canceled_card ... the refund appears successful at first" (docs.stripe.com/terminal/references/testing,
 *   "Test cards for specific error cases"). Present it (`useTestCard`, or `card_present[number]` on
 *   `present_payment_method`); its refunds succeed, and `failAsyncRefunds` is the "later": they fail, with
 *   `refund.updated` and `charge.refund.updated` (2024-06-20 has no `refund.failed`).
 * - Disputes: opened (a chargeback withdrawing the funds, or an inquiry), an inquiry escalated, reviewed,
 *   closed won (funds reinstated) or lost, with their five events.
 */

export const STRIPE_ORIGIN = 'https://api.stripe.com';
export const SIM_API_VERSION = '2024-06-20';

type Json = Record<string, any>;
type EventType = Stripe.Event.Type;
type EventOf<T extends EventType> = Extract<Stripe.Event, { type: T }>;

export interface RecordedRequest {
  method: string;
  path: string;
  query: string;
  params: Json;
  rawBody: string;
  headers: Record<string, string>;
  idempotencyKey: string | null;
}

/** The error a Stripe API answer carries, as the SDK types it (`Stripe.StripeRawError`, less the SDK's own fields). */
type RawError = Pick<Stripe.StripeRawError, 'type' | 'code' | 'decline_code' | 'message' | 'param'> & {
  payment_intent?: Stripe.PaymentIntent;
};

interface ErrorPreset {
  status: number;
  error: RawError;
  headers?: Record<string, string>;
}

/**
 * Every error type the SDK knows (`Stripe.RawErrorType`) with the HTTP status Stripe answers it with, and
 * the other documented HTTP errors. A type added to the SDK fails typecheck here until it has a preset.
 */
export const STRIPE_ERROR_TYPE_PRESETS = {
  card_error: {
    status: 402,
    error: {
      type: 'card_error',
      code: 'card_declined',
      decline_code: 'insufficient_funds',
      message: 'Your card has insufficient funds.',
    },
  },
  invalid_request_error: {
    status: 400,
    error: {
      type: 'invalid_request_error',
      code: 'parameter_invalid_integer',
      param: 'amount',
      message: 'Invalid integer: abc',
    },
  },
  api_error: {
    status: 500,
    error: { type: 'api_error', message: 'Something went wrong on Stripe’s end.' },
    headers: { 'Stripe-Should-Retry': 'false' },
  },
  idempotency_error: {
    status: 400,
    error: {
      type: 'idempotency_error',
      message: 'Keys for idempotent requests can only be used with the same parameters they were first used with.',
    },
  },
  rate_limit_error: {
    status: 429,
    error: { type: 'rate_limit_error', message: 'Too many requests hit the API too quickly.' },
  },
  authentication_error: {
    status: 401,
    error: { type: 'authentication_error', message: 'Invalid API Key provided: sk_test_********' },
  },
  invalid_grant: { status: 400, error: { type: 'invalid_grant', message: 'Authorization code does not exist.' } },
} as const satisfies Record<Stripe.RawErrorType, ErrorPreset>;

export const STRIPE_HTTP_ERROR_PRESETS = {
  server_error: { status: 500, error: { type: 'api_error', message: 'Something went wrong on Stripe’s end.' } },
  unavailable: { status: 503, error: { type: 'api_error', message: 'Stripe is temporarily unavailable.' } },
  // What Stripe answers a bad key with: 401 and an invalid_request_error (the SDK calls it an authentication error).
  invalid_key: {
    status: 401,
    error: { type: 'invalid_request_error', message: 'Invalid API Key provided: sk_test_********' },
  },
  forbidden: {
    status: 403,
    error: {
      type: 'invalid_request_error',
      code: 'secret_key_required',
      message: 'The provided key does not have the required permissions.',
    },
  },
  rate_limited: {
    status: 429,
    error: { type: 'invalid_request_error', code: 'rate_limit', message: 'Too many requests hit the API too quickly.' },
  },
  decline: {
    status: 402,
    error: {
      type: 'card_error',
      code: 'card_declined',
      decline_code: 'insufficient_funds',
      message: 'Your card has insufficient funds.',
    },
  },
  idempotency_conflict: {
    status: 409,
    error: {
      type: 'idempotency_error',
      code: 'idempotency_key_in_use',
      message: 'There is currently another in-progress request using this Stripe-Idempotency-Key.',
    },
  },
  idempotency_conflict_invalid_request: {
    status: 409,
    error: {
      type: 'invalid_request_error',
      code: 'idempotency_key_in_use',
      message: 'There is currently another in-progress request using this Idempotent Key.',
    },
  },
  lock_timeout: {
    status: 400,
    error: {
      type: 'invalid_request_error',
      code: 'lock_timeout',
      message: 'This object cannot be accessed right now because another API request is accessing it.',
    },
    headers: { 'Stripe-Should-Retry': 'true' },
  },
  reader_timeout: {
    status: 400,
    error: {
      type: 'invalid_request_error',
      code: 'terminal_reader_timeout',
      message: 'The reader did not respond in time.',
    },
  },
} as const satisfies Record<string, ErrorPreset>;

export type InjectionKind =
  /** Throws a DOMException `TimeoutError` before anything executes (the adapter's abort signal fired). */
  | 'timeout'
  /** Executes (and stores the idempotent result), then throws `TimeoutError`: the answer is lost. */
  | 'timeout_after'
  /** Throws a TypeError, as fetch does when the network fails. */
  | 'network'
  | keyof typeof STRIPE_ERROR_TYPE_PRESETS
  | keyof typeof STRIPE_HTTP_ERROR_PRESETS;

interface Injection {
  kind: InjectionKind;
  times: number;
  method?: string;
  path?: string | RegExp;
}

export interface StripeSimulatorOptions {
  webhookSecret?: string;
  /** `auto` (default): a reader reads a test card as soon as it gets a PaymentIntent. `manual`: it waits for `presentCard`. */
  readerMode?: 'auto' | 'manual';
  /** `auto` (default): refunds settle at once. `pending`: they stay pending until `settleRefund`. */
  refundMode?: 'auto' | 'pending';
}

interface HandlerResult {
  status: number;
  body: object;
  headers?: Record<string, string>;
  /** Whether the idempotency layer stores this result (false for validation errors). */
  save?: boolean;
  /** Executed, but the answer is lost on the way back (amount rule 52). */
  loseAnswer?: boolean;
}

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
export function stripeId(prefix: string, length = 24): string {
  const bytes = crypto.getRandomValues(new Uint8Array(length));
  return `${prefix}_${Array.from(bytes, (b) => ALPHABET[b % ALPHABET.length]).join('')}`;
}

const nowSeconds = () => Math.floor(Date.now() / 1000);
const DAY_SECONDS = 86_400;

/** The simulator's processing fee (its own rule, so fees can be checked; not Stripe's price list). */
export const SIM_FEE = { basisPoints: 290, fixedMinor: 30 } as const;
export const simFee = (amount: number) =>
  Math.min(amount, Math.floor((amount * SIM_FEE.basisPoints + 5_000) / 10_000) + SIM_FEE.fixedMinor);

/** Terminal's simulated test card whose refunds fail after they succeeded (`refund_fail`). */
export const REFUND_FAIL_CARD = '4000000000005126';
const clone = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;
const lastTwo = (amount: number) => amount % 100;

/**
 * Minimum charge amounts in the smallest unit (https://docs.stripe.com/currencies#minimum-and-maximum-charge-amounts)
 * for the currencies the connector sends, and the maximum: "up to eight digits" (`PaymentIntentCreateParams.amount`).
 */
export const STRIPE_MINIMUM_AMOUNTS: Record<string, number> = { usd: 50, eur: 50, sgd: 50, thb: 1000 };
export const STRIPE_MAXIMUM_AMOUNT = 99_999_999;

export function timeoutError(): DOMException {
  return new DOMException('The operation was aborted due to timeout', 'TimeoutError');
}

function stripeError(status: number, error: RawError, save = true, headers?: Record<string, string>): HandlerResult {
  return {
    status,
    body: { error: { message: 'An error occurred.', ...error } },
    save,
    ...(headers ? { headers } : {}),
  };
}

const invalid = (
  message: string,
  param?: string,
  code: Stripe.PaymentIntent.LastPaymentError.Code = 'parameter_invalid_empty',
) => stripeError(400, { type: 'invalid_request_error', code, message, ...(param ? { param } : {}) }, false);

const missing = (kind: string, id: string, param?: string) =>
  stripeError(404, {
    type: 'invalid_request_error',
    code: 'resource_missing',
    message: `No such ${kind}: '${id}'`,
    ...(param ? { param } : {}),
  });

/** Objects whose keys are exactly 0..n-1 (indexed arrays, `a[0][b]=`), back to arrays, at any depth. */
function indexedToArrays(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(indexedToArrays);
  if (value === null || typeof value !== 'object') return value;
  const entries = Object.entries(value).map(([k, v]) => [k, indexedToArrays(v)] as const);
  const indexed = entries.length > 0 && entries.every(([k], i) => k === String(i));
  return indexed ? entries.map(([, v]) => v) : Object.fromEntries(entries);
}

/** Decodes bracket notation (`a[b][]=x`, `a[0][b]=x`) into nested objects and arrays. */
export function parseForm(text: string): Json {
  return indexedToArrays(parseBrackets(text)) as Json;
}

function parseBrackets(text: string): Json {
  const out: Json = {};
  for (const [key, value] of new URLSearchParams(text)) {
    const match = /^([^[\]]+)((?:\[[^[\]]*\])*)$/.exec(key);
    if (!match) continue;
    const segments = [match[1]!, ...[...match[2]!.matchAll(/\[([^[\]]*)\]/g)].map((m) => m[1]!)];
    if (segments.some((s) => s === '__proto__' || s === 'constructor' || s === 'prototype')) continue;
    let node: any = out;
    for (let i = 0; i < segments.length; i++) {
      const segment = segments[i]!;
      const last = i === segments.length - 1;
      const nextIsArray = segments[i + 1] === '';
      if (segment === '') {
        if (!Array.isArray(node)) break;
        if (last) node.push(value);
        else {
          const child = nextIsArray ? [] : {};
          node.push(child);
          node = child;
        }
        continue;
      }
      if (last) node[segment] = value;
      else {
        node[segment] ??= nextIsArray ? [] : {};
        node = node[segment];
      }
    }
  }
  return out;
}

/** A PromptPay/PayNow-like EMVCo payload with a CRC, including characters a careless client would mangle. */
function qrPayload(pi: Stripe.PaymentIntent, type: string): string {
  const value = `${Math.floor(pi.amount / 100)}.${String(pi.amount % 100).padStart(2, '0')}`;
  return emvPayload(
    tlv('00', '01') +
      tlv('01', '12') +
      tlv('29', tlv('00', type === 'paynow' ? 'SG.PAYNOW' : 'A000000677010111') + tlv('01', pi.id.slice(3, 19))) +
      tlv('53', type === 'paynow' ? '702' : '764') +
      tlv('54', value) +
      tlv('58', type === 'paynow' ? 'SG' : 'TH') +
      tlv('59', 'SIM SHOP & CO=1+2%') +
      tlv('62', tlv('05', pi.id)),
  );
}

const cryptoProvider = Stripe.createSubtleCryptoProvider();

/** `Stripe-Signature` for `rawBody` at `timestamp`, one `v1` per secret (two during a secret rotation), by the SDK. */
export async function stripeSignatureHeader(
  rawBody: string,
  secrets: readonly string[],
  timestamp = nowSeconds(),
): Promise<string> {
  const headers = await Promise.all(
    secrets.map((secret) =>
      Stripe.webhooks.generateTestHeaderStringAsync({ payload: rawBody, secret, timestamp, cryptoProvider }),
    ),
  );
  // Each is `t=<timestamp>,v1=<signature>`; Stripe sends one `t` and every signature.
  return [`t=${timestamp}`, ...headers.map((h) => h.slice(h.indexOf(',') + 1))].join(',');
}

export interface SignedDelivery {
  rawBody: string;
  signature: string;
  headers: Record<string, string>;
}

type ReaderOutcome = 'succeed' | 'decline' | 'fail' | 'authorize' | 'customer_cancel';

/**
 * Why a reader cannot take a new action now: offline, or busy with one in progress. A cart on the screen is
 * set "before processing the payment" (the cart display page), so it gives way to whatever comes next.
 */
function readerRefusal(reader: Stripe.Terminal.Reader): HandlerResult | null {
  if (reader.status === 'offline')
    return stripeError(400, {
      type: 'invalid_request_error',
      code: 'terminal_reader_offline',
      message: 'Reader is currently offline.',
    });
  if (reader.action?.status === 'in_progress' && reader.action.type !== 'set_reader_display')
    return stripeError(400, {
      type: 'invalid_request_error',
      code: 'terminal_reader_busy',
      message: 'Reader is currently busy processing another request.',
    });
  return null;
}

/** stripe-node 18.3.0 `TerminalReaderActionUpdatedEvent` (types/EventTypes.d.ts:3548 at tag v18.3.0). */
export type ReaderActionUpdatedEvent = Omit<Stripe.EventBase, 'type'> & {
  type: 'terminal.reader.action_updated';
  data: { object: Stripe.Terminal.Reader; previous_attributes?: Partial<Stripe.Terminal.Reader> };
};

export class StripeSimulator {
  readonly paymentIntents = new Map<string, Stripe.PaymentIntent>();
  readonly refunds = new Map<string, Stripe.Refund>();
  readonly readers = new Map<string, Stripe.Terminal.Reader>();
  readonly disputes = new Map<string, Stripe.Dispute>();
  readonly balanceTransactions = new Map<string, Stripe.BalanceTransaction>();
  /** Charges whose booking Stripe has not made yet (their `balance_transaction` stays null). */
  readonly unbookedCharges = new Set<string>();
  /**
   * Refunds whose booking Stripe has not made yet: answered with `balance_transaction` null, as the field allows
   * (`Refund.balance_transaction: string | BalanceTransaction | null`); with `bookRefundsLater`, every new refund
   * starts so. Deleting one from the set books it.
   */
  readonly unbookedRefunds = new Set<string>();
  bookRefundsLater = false;
  /**
   * The account's settlement currency, when it is not the charge's: Stripe books a charge converted into it ("If the
   * charge currency differs from your settlement currency, Stripe converts the charge", docs.stripe.com/currencies),
   * `rate` units of it (in Stripe's unit) per unit of the charge's, with `exchange_rate` set.
   */
  settlementCurrency: { currency: string; rate: number } | null = null;
  readonly events: Stripe.Event[] = [];
  readonly requests: RecordedRequest[] = [];
  readonly rejectedKeys = new Set<string>();
  readonly offlineReaders = new Set<string>();
  readonly webhookSecret: string;
  readerMode: 'auto' | 'manual';
  refundMode: 'auto' | 'pending';

  private readonly idempotency = new Map<
    string,
    { fingerprint: string; status: number; body: string; headers?: Record<string, string> }
  >();
  private readonly unavailableOnce = new Set<string>();
  private readonly injections: Injection[] = [];
  private livemode = false;
  /** The test card each reader presents next (`useTestCard`). */
  private readonly testCards = new Map<string, string>();
  /** PaymentIntents paid with `REFUND_FAIL_CARD`, and their refunds waiting to fail. */
  private readonly refundFailPayments = new Set<string>();
  private readonly asyncRefundFailures = new Set<string>();

  constructor(options: StripeSimulatorOptions = {}) {
    this.webhookSecret = options.webhookSecret ?? `whsec_${stripeId('sim', 32).slice(4)}`;
    this.readerMode = options.readerMode ?? 'auto';
    this.refundMode = options.refundMode ?? 'auto';
  }

  /** The simulator as `fetch`: hand it to the adapter as `ctx.fetch`, or spy `globalThis.fetch` with it. */
  readonly fetch: typeof fetch = async (input: RequestInfo | URL, init?: RequestInit) => {
    const request = new Request(input as RequestInfo, init);
    return this.handle(request);
  };

  // -------------------------------------------------------------------------------------------------------
  // Switches

  /** The next `times` matching requests fail with `kind`. */
  inject(kind: InjectionKind, options: { times?: number; method?: string; path?: string | RegExp } = {}) {
    this.injections.push({
      kind,
      times: options.times ?? 1,
      ...(options.method ? { method: options.method } : {}),
      ...(options.path ? { path: options.path } : {}),
    });
  }

  clearInjections() {
    this.injections.length = 0;
  }

  rejectKey(secretKey: string) {
    this.rejectedKeys.add(secretKey);
  }

  /** PaymentIntents created, optionally only those of one of our payments (by metadata). */
  paymentIntentCount(paymentId?: string): number {
    return [...this.paymentIntents.values()].filter(
      (pi) => paymentId === undefined || pi.metadata.payment_id === paymentId,
    ).length;
  }

  paymentIntentFor(paymentId: string): Stripe.PaymentIntent | undefined {
    return [...this.paymentIntents.values()].find((pi) => pi.metadata.payment_id === paymentId);
  }

  requestsTo(method: string, path: string | RegExp): RecordedRequest[] {
    return this.requests.filter(
      (r) => r.method === method && (typeof path === 'string' ? r.path === path : path.test(r.path)),
    );
  }

  // -------------------------------------------------------------------------------------------------------
  // What happens away from the API (the buyer, the reader, the bank)

  /**
   * The card is presented to the reader: the outcome follows the amount rules unless given. `authorize`:
   * the PaymentIntent was switched to manual capture, so the reader leaves it in `requires_capture`;
   * `customer_cancel`: the customer cancels on the reader (the action fails, the PaymentIntent has no error).
   */
  presentCard(readerId: string, outcome?: ReaderOutcome, cardNumber?: string) {
    const reader = this.readers.get(readerId);
    const action = reader?.action;
    if (!reader || !action || action.status !== 'in_progress' || !action.process_payment_intent)
      throw new Error(`reader ${readerId} has no action in progress`);
    const pi = this.paymentIntents.get(action.process_payment_intent.payment_intent as string)!;
    const decided = outcome ?? (lastTwo(pi.amount) === 51 ? 'decline' : lastTwo(pi.amount) === 54 ? 'fail' : 'succeed');
    if (decided === 'customer_cancel') {
      this.failReaderAction(reader, 'customer_canceled', 'The customer canceled the payment on the reader.');
      return;
    }
    pi.payment_method = stripeId('pm');
    const card = cardNumber ?? this.testCards.get(readerId);
    this.testCards.delete(readerId);
    if (card === REFUND_FAIL_CARD) this.refundFailPayments.add(pi.id);
    if (decided === 'succeed' || decided === 'authorize') {
      if (decided === 'authorize') pi.capture_method = 'manual';
      this.setPaymentIntentStatus(pi.id, decided === 'authorize' ? 'requires_capture' : 'succeeded');
      action.status = 'succeeded';
      this.emit('terminal.reader.action_succeeded', reader);
      return;
    }
    const error: RawError =
      decided === 'decline'
        ? {
            type: 'card_error',
            code: 'card_declined',
            decline_code: 'generic_decline',
            message: 'Your card was declined.',
          }
        : {
            type: 'invalid_request_error',
            code: 'payment_intent_payment_attempt_failed',
            message: 'The latest payment attempt of this PaymentIntent has failed.',
          };
    this.failAttempt(pi, error);
    this.failReaderAction(reader, error.code!, error.message!);
  }

  /**
   * The reader starts an action of another integration (a refund on the reader, saving a card, another
   * PaymentIntent): it is busy until the action ends.
   */
  occupyReader(readerId: string, type: 'refund_payment' | 'process_setup_intent' | 'process_payment_intent') {
    this.withReader(readerId, (reader) => {
      const base = { status: 'in_progress' as const, failure_code: null, failure_message: null };
      reader.action =
        type === 'refund_payment'
          ? { ...base, type, refund_payment: { payment_intent: stripeId('pi'), amount: 500 } }
          : type === 'process_setup_intent'
            ? { ...base, type, process_setup_intent: { setup_intent: stripeId('seti') } }
            : { ...base, type, process_payment_intent: { payment_intent: stripeId('pi') } };
      return { status: 200, body: {} };
    });
  }

  /**
   * `terminal.reader.action_updated` about a reader, as Stripe sends it from API 2025-06-30.basil on ("Sent
   * when a payment updates with the payment method", server-driven guide): not an event of the pinned SDK
   * (16.12.0), so typed from stripe-node 18.3.0's `TerminalReaderActionUpdatedEvent` (an EventBase whose
   * object is a `Terminal.Reader`). Returned, not recorded: `events` holds the SDK's types only.
   */
  readerActionUpdated(readerId: string): ReaderActionUpdatedEvent {
    const reader = this.readers.get(readerId);
    if (!reader) throw new Error(`no reader ${readerId}`);
    // The envelope of the SDK's other reader events, under the newer name.
    return { ...this.makeEvent('terminal.reader.action_succeeded', reader), type: 'terminal.reader.action_updated' };
  }

  /** The reader presents this test card next (Terminal's simulated test cards: "configure the simulated reader"). */
  useTestCard(readerId: string, cardNumber: string) {
    this.testCards.set(readerId, cardNumber);
  }

  /**
   * "Some time later": every refund of a `REFUND_FAIL_CARD` payment that succeeded fails now, with
   * `expired_or_canceled_card`, and its events are recorded. Returns them as they now are.
   */
  failAsyncRefunds(): Stripe.Refund[] {
    const failed = [...this.asyncRefundFailures].map((id) => {
      this.settleRefund(id, 'failed', 'expired_or_canceled_card');
      return clone(this.refunds.get(id)!);
    });
    this.asyncRefundFailures.clear();
    return failed;
  }

  /**
   * A day later: Stripe prunes idempotency keys once they are at least 24 hours old, and a request with a pruned key
   * is a new request (https://docs.stripe.com/api/idempotent_requests).
   */
  forgetIdempotencyKeys() {
    this.idempotency.clear();
  }

  /** The buyer pays the QR code. */
  payQr(paymentIntentId: string) {
    this.mustQr(paymentIntentId);
    this.setPaymentIntentStatus(paymentIntentId, 'succeeded');
  }

  /** The buyer's bank refuses the QR payment. */
  declineQr(paymentIntentId: string) {
    const pi = this.mustQr(paymentIntentId);
    this.failAttempt(pi, {
      type: 'card_error',
      code: 'payment_method_provider_decline',
      decline_code: 'generic_decline',
      message: 'The payment was declined.',
    });
  }

  /**
   * Puts a PaymentIntent in any status of `Stripe.PaymentIntent.Status`, with the fields Stripe sets in
   * that status, and records the event Stripe sends for it (none for `requires_payment_method` and
   * `requires_confirmation`, which have no event of their own).
   */
  setPaymentIntentStatus(id: string, status: Stripe.PaymentIntent.Status) {
    const pi = this.paymentIntents.get(id);
    if (!pi) throw new Error(`no PaymentIntent ${id}`);
    const transitions: Record<Stripe.PaymentIntent.Status, () => void> = {
      requires_payment_method: () => Object.assign(pi, { status, payment_method: null, next_action: null }),
      requires_confirmation: () =>
        Object.assign(pi, { status, payment_method: pi.payment_method ?? stripeId('pm'), next_action: null }),
      requires_action: () => {
        const type = pi.payment_method_types[0]!;
        pi.status = status;
        pi.payment_method ??= stripeId('pm');
        pi.next_action = this.qrAction(pi, type);
        this.emit('payment_intent.requires_action', pi);
      },
      processing: () => {
        Object.assign(pi, { status, next_action: null, payment_method: pi.payment_method ?? stripeId('pm') });
        this.emit('payment_intent.processing', pi);
      },
      requires_capture: () => {
        Object.assign(pi, {
          status,
          capture_method: 'manual',
          amount_capturable: pi.amount,
          latest_charge: pi.latest_charge ?? stripeId('ch'),
          next_action: null,
          last_payment_error: null,
        });
        this.emit('payment_intent.amount_capturable_updated', pi);
      },
      succeeded: () => {
        Object.assign(pi, {
          status,
          amount_received: pi.amount,
          amount_capturable: 0,
          latest_charge: pi.latest_charge ?? stripeId('ch'),
          next_action: null,
          last_payment_error: null,
        });
        this.emit('payment_intent.succeeded', pi);
      },
      canceled: () => {
        Object.assign(pi, {
          status,
          canceled_at: nowSeconds(),
          cancellation_reason: pi.cancellation_reason ?? 'abandoned',
          next_action: null,
          amount_capturable: 0,
        });
        this.emit('payment_intent.canceled', pi);
      },
    };
    transitions[status]();
  }

  /**
   * The processor's asynchronous news for a waiting PaymentIntent, whatever its channel (a card at the
   * reader, a QR scan, an abandonment), returned as the signed delivery of the event it causes: what a
   * behavioural suite sends to POST /v1/processor-notifications/{method} where the sandbox has test helpers.
   */
  async settlePayment(
    paymentIntentId: string,
    outcome: 'succeed' | 'decline' | 'fail' | 'cancel',
  ): Promise<SignedDelivery> {
    const pi = this.paymentIntents.get(paymentIntentId);
    if (!pi) throw new Error(`no PaymentIntent ${paymentIntentId}`);
    const reader = [...this.readers.values()].find(
      (r) => r.action?.status === 'in_progress' && r.action.process_payment_intent?.payment_intent === pi.id,
    );
    if (outcome === 'cancel') {
      if (reader) this.failReaderAction(reader, 'canceled', 'The action was canceled.', false);
      this.setPaymentIntentStatus(pi.id, 'canceled');
      return this.deliver(this.eventFor('payment_intent.canceled', pi.id));
    }
    if (reader) this.presentCard(reader.id, outcome);
    else if (outcome === 'succeed') this.payQr(pi.id);
    else if (outcome === 'decline') this.declineQr(pi.id);
    else {
      this.mustQr(pi.id);
      this.failAttempt(pi, {
        type: 'api_error',
        code: 'payment_method_provider_timeout',
        message: 'The payment method provider failed.',
      });
    }
    return this.deliver(
      this.eventFor(outcome === 'succeed' ? 'payment_intent.succeeded' : 'payment_intent.payment_failed', pi.id),
    );
  }

  /** Moves a refund to any of the five documented statuses; Stripe sends `refund.updated` and `charge.refund.updated`. */
  settleRefund(
    refundId: string,
    status: 'succeeded' | 'failed' | 'canceled' | 'pending' | 'requires_action',
    failureReason: string | null = status === 'failed' ? 'unknown' : null,
  ) {
    const refund = this.refunds.get(refundId);
    if (!refund) throw new Error(`no refund ${refundId}`);
    const booked = refund.status === 'succeeded';
    refund.status = status;
    if (failureReason) refund.failure_reason = failureReason;
    else delete refund.failure_reason;
    if (status === 'succeeded') this.bookRefund(refund);
    // The bank returned the money: booked back into the balance ("failure_balance_transaction").
    if ((status === 'failed' || status === 'canceled') && booked)
      refund.failure_balance_transaction = this.book({
        amount: refund.amount,
        fee: 0,
        currency: refund.currency,
        type: 'refund_failure',
        reporting_category: 'refund_failure',
        source: refund.id,
        description: `REFUND FAILURE FOR ${refund.id}`,
      }).id;
    if (status === 'requires_action') {
      refund.next_action = {
        type: 'display_details',
        display_details: {
          email_sent: { email_sent_at: nowSeconds(), email_sent_to: 'buyer@example.com' },
          expires_at: nowSeconds() + 86_400,
        },
      };
    } else delete refund.next_action;
    this.emit('refund.updated', refund);
    this.emit('charge.refund.updated', refund);
  }

  // -------------------------------------------------------------------------------------------------------
  // Webhooks

  /**
   * `Stripe-Signature` for `rawBody`, made by the official library. `secret` signs with another secret (a
   * forgery, or a wrong configuration); `secrets` signs with each (a secret rotation: two `v1`);
   * `timestamp` backdates it (stale).
   */
  async signatureHeader(
    rawBody: string,
    options: { secret?: string; secrets?: string[]; timestamp?: number } = {},
  ): Promise<string> {
    return stripeSignatureHeader(rawBody, options.secrets ?? [options.secret ?? this.webhookSecret], options.timestamp);
  }

  /** A delivery of `event` as Stripe sends it (pretty-printed JSON); `tamper` changes the body after signing. */
  async deliver(
    event: Stripe.Event | Json,
    options: { secret?: string; secrets?: string[]; timestamp?: number; tamper?: (raw: string) => string } = {},
  ): Promise<SignedDelivery> {
    const signed = JSON.stringify(event, null, 2);
    const signature = await this.signatureHeader(signed, options);
    const rawBody = options.tamper ? options.tamper(signed) : signed;
    return {
      rawBody,
      signature,
      headers: {
        'Content-Type': 'application/json; charset=utf-8',
        'Stripe-Signature': signature,
        'User-Agent': 'Stripe/1.0 (+https://stripe.com/docs/webhooks)',
      },
    };
  }

  /** The latest event of `type` about object `objectId`. */
  eventFor<T extends EventType>(type: T, objectId: string): EventOf<T> {
    const found = [...this.events]
      .reverse()
      .find((e): e is EventOf<T> => e.type === type && (e.data.object as { id?: string }).id === objectId);
    if (!found) throw new Error(`no ${type} event for ${objectId}; have ${this.events.map((e) => e.type).join(', ')}`);
    return found;
  }

  /** A complete event of a 2024-06-20 type about `object`. */
  makeEvent<T extends EventType>(type: T, object: EventOf<T>['data']['object']): EventOf<T> {
    const event = {
      id: stripeId('evt'),
      object: 'event',
      api_version: SIM_API_VERSION,
      created: nowSeconds(),
      data: { object: clone(object) },
      livemode: this.livemode,
      pending_webhooks: 1,
      request: { id: null, idempotency_key: null },
      type,
    } satisfies Stripe.EventBase & { type: T };
    // The envelope is checked above; TypeScript cannot pair a generic `type` with its object by itself.
    return event as unknown as EventOf<T>;
  }

  /** The charge of a PaymentIntent that has one (complete, as the `charge.*` events carry it). */
  chargeOf(paymentIntentId: string): Stripe.Charge {
    const pi = this.paymentIntents.get(paymentIntentId);
    if (!pi || typeof pi.latest_charge !== 'string') throw new Error(`PaymentIntent ${paymentIntentId} has no charge`);
    const refunded = [...this.refunds.values()]
      .filter((r) => r.payment_intent === pi.id && r.status === 'succeeded')
      .reduce((sum, r) => sum + r.amount, 0);
    return {
      id: pi.latest_charge,
      object: 'charge',
      amount: pi.amount,
      amount_captured: pi.amount_received,
      amount_refunded: refunded,
      application: null,
      application_fee: null,
      application_fee_amount: null,
      balance_transaction: this.bookCharge(pi),
      billing_details: { address: null, email: null, name: null, phone: null },
      calculated_statement_descriptor: 'SIM SHOP',
      captured: pi.status === 'succeeded',
      created: pi.created,
      currency: pi.currency,
      customer: null,
      description: pi.description,
      disputed: [...this.disputes.values()].some((d) => d.charge === pi.latest_charge),
      failure_balance_transaction: null,
      failure_code: null,
      failure_message: null,
      fraud_details: {},
      invoice: null,
      livemode: pi.livemode,
      metadata: { ...pi.metadata },
      on_behalf_of: null,
      outcome: null,
      paid: pi.status === 'succeeded' || pi.status === 'requires_capture',
      payment_intent: pi.id,
      payment_method: typeof pi.payment_method === 'string' ? pi.payment_method : null,
      payment_method_details: null,
      receipt_email: null,
      receipt_number: null,
      receipt_url: null,
      refunded: refunded === pi.amount_received && refunded > 0,
      review: null,
      shipping: null,
      source: null,
      source_transfer: null,
      statement_descriptor: null,
      statement_descriptor_suffix: null,
      status: 'succeeded',
      transfer_data: null,
      transfer_group: null,
    };
  }

  /** An event outside the SDK's types (an unknown type, an odd object): for the connector's hostile-input tests. */
  rawEvent(type: string, object: Json): Json {
    return {
      ...this.makeEvent('payment_intent.created', {} as Stripe.PaymentIntent),
      type,
      data: { object: clone(object) },
    };
  }

  // -------------------------------------------------------------------------------------------------------
  // The HTTP layer

  private async handle(request: Request): Promise<Response> {
    const url = new URL(request.url);
    if (url.origin !== STRIPE_ORIGIN)
      throw new TypeError(`The Stripe simulator refuses network access to ${url.origin}`);
    const method = request.method.toUpperCase();
    // Read as bytes: workerd warns when .text() is called on a form body, which Stripe's bodies are.
    const rawBody = method === 'POST' ? new TextDecoder().decode(await request.arrayBuffer()) : '';
    const params = parseForm(method === 'POST' ? rawBody : url.search.slice(1));
    const idempotencyKey = request.headers.get('idempotency-key');
    const headers: Record<string, string> = {};
    request.headers.forEach((value, name) => (headers[name] = value));
    this.requests.push({ method, path: url.pathname, query: url.search, params, rawBody, headers, idempotencyKey });

    const injection = this.takeInjection(method, url.pathname);
    if (injection?.kind === 'timeout') throw timeoutError();
    if (injection?.kind === 'network') throw new TypeError('fetch failed');
    if (injection && injection.kind !== 'timeout_after') {
      const preset: ErrorPreset =
        (STRIPE_ERROR_TYPE_PRESETS as Record<string, ErrorPreset>)[injection.kind] ??
        (STRIPE_HTTP_ERROR_PRESETS as Record<string, ErrorPreset>)[injection.kind]!;
      return this.respond(stripeError(preset.status, preset.error, false, preset.headers));
    }

    const secretKey = /^Bearer (\S+)$/.exec(request.headers.get('authorization') ?? '')?.[1] ?? '';
    if (!/^(sk|rk)_(test|live)_[A-Za-z0-9]+$/.test(secretKey) || this.rejectedKeys.has(secretKey)) {
      return this.respond(
        stripeError(401, {
          type: 'invalid_request_error',
          message: `Invalid API Key provided: ${secretKey.slice(0, 8)}********`,
        }),
      );
    }
    this.livemode = /_live_/.test(secretKey);
    if (
      method === 'POST' &&
      !(request.headers.get('content-type') ?? '').startsWith('application/x-www-form-urlencoded')
    ) {
      return this.respond(invalid('Invalid request: the body must be application/x-www-form-urlencoded.'));
    }

    const fingerprint = `${method} ${url.pathname} ${rawBody}`;
    if (method === 'POST' && idempotencyKey) {
      const stored = this.idempotency.get(idempotencyKey);
      if (stored) {
        if (stored.fingerprint !== fingerprint) {
          return this.respond(
            stripeError(
              400,
              {
                type: 'idempotency_error',
                message: `Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than '${idempotencyKey}' if you meant to execute a different request.`,
              },
              false,
            ),
          );
        }
        return this.json(stored.status, stored.body, { ...stored.headers, 'Idempotent-Replayed': 'true' });
      }
    }

    const result = this.route(method, url.pathname, params, idempotencyKey);
    if (method === 'POST' && idempotencyKey && result.save !== false) {
      this.idempotency.set(idempotencyKey, {
        fingerprint,
        status: result.status,
        body: JSON.stringify(result.body),
        ...(result.headers ? { headers: result.headers } : {}),
      });
    }
    if (injection?.kind === 'timeout_after' || result.loseAnswer) throw timeoutError();
    return this.respond(result);
  }

  private takeInjection(method: string, path: string): Injection | undefined {
    const index = this.injections.findIndex(
      (i) =>
        (!i.method || i.method === method) &&
        (!i.path || (typeof i.path === 'string' ? i.path === path : i.path.test(path))),
    );
    if (index < 0) return undefined;
    const injection = this.injections[index]!;
    if (--injection.times <= 0) this.injections.splice(index, 1);
    return injection;
  }

  private respond(result: HandlerResult): Response {
    return this.json(result.status, JSON.stringify(result.body), result.headers);
  }

  private json(status: number, body: string, extra: Record<string, string> = {}): Response {
    return new Response(body, {
      status,
      headers: {
        'Content-Type': 'application/json',
        'Request-Id': stripeId('req', 14),
        'Stripe-Version': SIM_API_VERSION,
        ...extra,
      },
    });
  }

  private route(method: string, path: string, params: Json, idempotencyKey: string | null): HandlerResult {
    const parts = path.split('/').filter(Boolean).map(decodeURIComponent);
    const [v1, resource, id, action, extra] = parts;
    if (v1 !== 'v1') return this.unknownRoute(method, path);
    if (resource === 'payment_intents') {
      if (method === 'POST' && parts.length === 2) return this.createPaymentIntent(params, idempotencyKey);
      if (method === 'GET' && id === 'search' && parts.length === 3) return this.searchPaymentIntents(params);
      if (method === 'GET' && parts.length === 3) return this.retrievePaymentIntent(id!, params);
      if (method === 'POST' && action === 'cancel' && parts.length === 4) return this.cancelPaymentIntent(id!, params);
      if (method === 'POST' && action === 'capture' && parts.length === 4)
        return this.capturePaymentIntent(id!, params);
    }
    if (resource === 'refunds') {
      if (method === 'POST' && parts.length === 2) return this.createRefund(params);
      if (method === 'GET' && parts.length === 2) return this.listRefunds(params);
      if (method === 'GET' && parts.length === 3)
        return this.refunds.has(id!)
          ? { status: 200, body: this.refundView(this.refunds.get(id!)!, params.expand, '') }
          : missing('refund', id!);
    }
    if (resource === 'disputes' && method === 'GET') {
      if (parts.length === 2) return this.listDisputes(params);
      if (parts.length === 3)
        return this.disputes.has(id!) ? { status: 200, body: clone(this.disputes.get(id!)!) } : missing('dispute', id!);
    }
    if (resource === 'terminal' && id === 'readers') {
      const readerId = action!;
      if (method === 'GET' && parts.length === 4)
        return this.withReader(readerId, (reader) => ({ status: 200, body: clone(reader) }));
      if (method === 'POST' && extra === 'process_payment_intent' && parts.length === 5)
        return this.processPaymentIntent(readerId, params);
      if (method === 'POST' && extra === 'cancel_action' && parts.length === 5) return this.cancelAction(readerId);
      if (method === 'POST' && extra === 'set_reader_display' && parts.length === 5)
        return this.setReaderDisplay(readerId, params);
    }
    if (
      resource === 'test_helpers' &&
      id === 'terminal' &&
      action === 'readers' &&
      method === 'POST' &&
      parts[5] === 'present_payment_method'
    ) {
      return this.withReader(extra!, (reader) => {
        if (reader.action?.status !== 'in_progress')
          return stripeError(
            400,
            { type: 'invalid_request_error', message: 'The reader has no action in progress.' },
            false,
          );
        this.presentCard(reader.id, undefined, params.card_present?.number);
        return { status: 200, body: clone(reader) };
      });
    }
    return this.unknownRoute(method, path);
  }

  private unknownRoute(method: string, path: string): HandlerResult {
    return stripeError(
      404,
      { type: 'invalid_request_error', message: `Unrecognized request URL (${method}: ${path}).` },
      false,
    );
  }

  // -------------------------------------------------------------------------------------------------------
  // PaymentIntents

  private qrAction(pi: Stripe.PaymentIntent, type: string): Stripe.PaymentIntent.NextAction {
    const code = {
      data: qrPayload(pi, type),
      hosted_instructions_url: `https://payments.stripe.com/qr/instructions/${pi.id}`,
      image_url_png: `https://qr.stripe.com/${pi.id}.png`,
      image_url_svg: `https://qr.stripe.com/${pi.id}.svg`,
    };
    if (type === 'paynow') return { type: 'paynow_display_qr_code', paynow_display_qr_code: code };
    if (type === 'promptpay') return { type: 'promptpay_display_qr_code', promptpay_display_qr_code: code };
    return { type: 'use_stripe_sdk', use_stripe_sdk: {} };
  }

  /** A complete new PaymentIntent (`requires_payment_method`), not yet stored: what POST /v1/payment_intents makes. */
  buildPaymentIntent(
    fields: Pick<
      Stripe.PaymentIntent,
      'amount' | 'currency' | 'capture_method' | 'description' | 'metadata' | 'payment_method_types'
    >,
  ): Stripe.PaymentIntent {
    const id = stripeId('pi');
    return {
      id,
      object: 'payment_intent',
      amount: fields.amount,
      amount_capturable: 0,
      amount_details: { tip: {} },
      amount_received: 0,
      application: null,
      application_fee_amount: null,
      automatic_payment_methods: null,
      canceled_at: null,
      cancellation_reason: null,
      capture_method: fields.capture_method,
      client_secret: `${id}_secret_${stripeId('cs').slice(3)}`,
      confirmation_method: 'automatic',
      created: nowSeconds(),
      currency: fields.currency,
      customer: null,
      description: fields.description,
      invoice: null,
      last_payment_error: null,
      latest_charge: null,
      livemode: this.livemode,
      metadata: fields.metadata,
      next_action: null,
      on_behalf_of: null,
      payment_method: null,
      payment_method_configuration_details: null,
      payment_method_options: {},
      payment_method_types: fields.payment_method_types,
      processing: null,
      receipt_email: null,
      review: null,
      setup_future_usage: null,
      shipping: null,
      source: null,
      statement_descriptor: null,
      statement_descriptor_suffix: null,
      status: 'requires_payment_method',
      transfer_data: null,
      transfer_group: null,
    };
  }

  /** A complete new Refund of `pi`, not yet stored: what POST /v1/refunds makes. */
  buildRefund(
    pi: Stripe.PaymentIntent,
    fields: Pick<Stripe.Refund, 'amount' | 'metadata' | 'reason' | 'status'> & { failure_reason?: string },
  ): Stripe.Refund {
    return {
      id: stripeId('re'),
      object: 'refund',
      amount: fields.amount,
      balance_transaction: null,
      charge: typeof pi.latest_charge === 'string' ? pi.latest_charge : null,
      created: nowSeconds(),
      currency: pi.currency,
      destination_details: pi.payment_method_types.includes('card_present')
        ? { type: 'card', card: { type: 'refund' } }
        : { type: pi.payment_method_types[0]! },
      metadata: fields.metadata,
      payment_intent: pi.id,
      reason: fields.reason,
      receipt_number: null,
      source_transfer_reversal: null,
      status: fields.status,
      transfer_reversal: null,
      ...(fields.failure_reason ? { failure_reason: fields.failure_reason } : {}),
    };
  }

  private createPaymentIntent(params: Json, idempotencyKey: string | null): HandlerResult {
    const amount = Number(params.amount);
    if (!/^\d+$/.test(params.amount ?? ''))
      return invalid('Invalid positive integer', 'amount', 'parameter_invalid_integer');
    if (!/^[a-z]{3}$/.test(params.currency ?? ''))
      return invalid('Invalid currency', 'currency', 'parameter_invalid_empty');
    if (amount > STRIPE_MAXIMUM_AMOUNT)
      return invalid('Amount must be no more than $999,999.99', 'amount', 'amount_too_large');
    if (amount < (STRIPE_MINIMUM_AMOUNTS[params.currency] ?? 1))
      return invalid('Amount must be at least the minimum charge amount.', 'amount', 'amount_too_small');
    const types: string[] = Array.isArray(params.payment_method_types) ? params.payment_method_types : [];
    if (types.length === 0)
      return invalid('payment_method_types is required.', 'payment_method_types', 'parameter_missing');
    const type = types[0]!;
    const currencyOf: Record<string, string> = { promptpay: 'thb', paynow: 'sgd' };
    if (currencyOf[type] && currencyOf[type] !== params.currency) {
      return invalid(
        `The currency provided (${params.currency}) is invalid for ${type}.`,
        'currency',
        'payment_intent_invalid_parameter',
      );
    }
    if (!['card_present', 'promptpay', 'paynow'].includes(type))
      return invalid(
        `The payment method type "${type}" is invalid.`,
        'payment_method_types',
        'payment_intent_invalid_parameter',
      );
    const captureMethods: Stripe.PaymentIntent.CaptureMethod[] = ['automatic', 'automatic_async', 'manual'];
    if (params.capture_method !== undefined && !captureMethods.includes(params.capture_method))
      return invalid('Invalid capture_method.', 'capture_method', 'parameter_invalid_empty');

    // Amount rule 53: the first try with a key never reaches an API server.
    const key = idempotencyKey ?? `${params.amount}:${JSON.stringify(params.metadata ?? {})}`;
    if (lastTwo(amount) === 53 && !this.unavailableOnce.has(key)) {
      this.unavailableOnce.add(key);
      return stripeError(503, { type: 'api_error', message: 'Stripe is temporarily unavailable.' }, false);
    }

    const pi = this.buildPaymentIntent({
      amount,
      currency: params.currency,
      capture_method: params.capture_method ?? 'automatic_async',
      description: params.description ?? null,
      metadata: { ...(params.metadata ?? {}) },
      payment_method_types: types,
    });
    const id = pi.id;
    this.paymentIntents.set(id, pi);
    this.emit('payment_intent.created', pi);
    // Amount rule 52: executed, and the answer is lost.
    const loseAnswer = lastTwo(amount) === 52;

    if (params.confirm === 'true') {
      if (type === 'card_present')
        return { ...invalid('card_present PaymentIntents are confirmed by a reader.', 'confirm'), save: true };
      const data = params.payment_method_data ?? {};
      if (data.type !== type)
        return {
          ...invalid('payment_method_data[type] must match payment_method_types.', 'payment_method_data[type]'),
          save: true,
        };
      pi.payment_method = stripeId('pm');
      if (lastTwo(amount) === 54) {
        const error: RawError = {
          type: 'invalid_request_error',
          code: 'payment_intent_payment_attempt_failed',
          message: 'The latest payment attempt of this PaymentIntent has failed.',
        };
        this.failAttempt(pi, error);
        return { status: 400, body: { error: { ...error, payment_intent: clone(pi) } }, loseAnswer };
      }
      this.setPaymentIntentStatus(id, 'requires_action');
    }
    return { status: 200, body: clone(pi), loseAnswer };
  }

  private retrievePaymentIntent(id: string, params: Json): HandlerResult {
    const pi = this.paymentIntents.get(id);
    return pi ? { status: 200, body: this.expanded(pi, params.expand, '') } : missing('payment_intent', id);
  }

  /** A copy of the PaymentIntent with `latest_charge` expanded when `expand` asks for it (at `prefix`). */
  private expanded(pi: Stripe.PaymentIntent, expand: unknown, prefix: string): Stripe.PaymentIntent {
    const copy = clone(pi);
    const paths = Array.isArray(expand) ? expand : [];
    const withBalance = paths.includes(`${prefix}latest_charge.balance_transaction`);
    if ((withBalance || paths.includes(`${prefix}latest_charge`)) && typeof pi.latest_charge === 'string') {
      const charge = this.chargeOf(pi.id);
      if (withBalance && typeof charge.balance_transaction === 'string')
        charge.balance_transaction = clone(this.balanceTransactions.get(charge.balance_transaction)!);
      copy.latest_charge = charge;
    }
    return copy;
  }

  private searchPaymentIntents(params: Json): HandlerResult {
    const match = /^metadata\['([^']+)'\]:'((?:[^'\\]|\\.)*)'$/.exec(params.query ?? '');
    if (!match) return invalid('Invalid search query.', 'query', 'parameter_invalid_string_empty');
    const value = match[2]!.replace(/\\(.)/g, '$1');
    const data = [...this.paymentIntents.values()]
      .filter((pi) => pi.metadata[match[1]!] === value)
      .map((pi) => this.expanded(pi, params.expand, 'data.'));
    const result: Stripe.ApiSearchResult<Stripe.PaymentIntent> = {
      object: 'search_result',
      data,
      has_more: false,
      next_page: null,
      url: '/v1/payment_intents/search',
    };
    return { status: 200, body: result };
  }

  private cancelPaymentIntent(id: string, params: Json): HandlerResult {
    const pi = this.paymentIntents.get(id);
    if (!pi) return missing('payment_intent', id);
    const cancelable: Stripe.PaymentIntent.Status[] = [
      'requires_payment_method',
      'requires_capture',
      'requires_confirmation',
      'requires_action',
      'processing',
    ];
    if (!cancelable.includes(pi.status)) {
      return stripeError(400, {
        type: 'invalid_request_error',
        code: 'payment_intent_unexpected_state',
        message: `You cannot cancel this PaymentIntent because it has a status of ${pi.status}.`,
        payment_intent: clone(pi),
      });
    }
    // Assumed, not documented: a PaymentIntent a reader is still collecting for is refused until the
    // reader's action is canceled (the connector cancels the action first either way).
    const busy = [...this.readers.values()].find(
      (r) => r.action?.status === 'in_progress' && r.action.process_payment_intent?.payment_intent === id,
    );
    if (busy)
      return stripeError(400, {
        type: 'invalid_request_error',
        code: 'terminal_reader_busy',
        message: 'A reader is processing this PaymentIntent.',
      });
    pi.cancellation_reason = params.cancellation_reason ?? null;
    this.setPaymentIntentStatus(id, 'canceled');
    return { status: 200, body: clone(pi) };
  }

  private capturePaymentIntent(id: string, params: Json): HandlerResult {
    const pi = this.paymentIntents.get(id);
    if (!pi) return missing('payment_intent', id);
    if (pi.status !== 'requires_capture') {
      return stripeError(400, {
        type: 'invalid_request_error',
        code: 'payment_intent_unexpected_state',
        message: `This PaymentIntent could not be captured because it has a status of ${pi.status}. Only a PaymentIntent with one of the following statuses may be captured: requires_capture.`,
        payment_intent: clone(pi),
      });
    }
    const amount = params.amount_to_capture === undefined ? pi.amount_capturable : Number(params.amount_to_capture);
    if (!Number.isSafeInteger(amount) || amount < 1 || amount > pi.amount_capturable)
      return invalid('Invalid amount_to_capture.', 'amount_to_capture', 'amount_too_large');
    this.setPaymentIntentStatus(id, 'succeeded');
    pi.amount_received = amount;
    return { status: 200, body: clone(pi) };
  }

  private failAttempt(pi: Stripe.PaymentIntent, error: RawError) {
    Object.assign(pi, { status: 'requires_payment_method', next_action: null });
    pi.last_payment_error = {
      ...error,
      type: error.type as Stripe.PaymentIntent.LastPaymentError.Type,
      code: error.code as Stripe.PaymentIntent.LastPaymentError.Code,
    };
    this.emit('payment_intent.payment_failed', pi);
  }

  private mustQr(id: string): Stripe.PaymentIntent {
    const pi = this.paymentIntents.get(id);
    if (pi?.status !== 'requires_action') throw new Error(`PaymentIntent ${id} is not waiting for a QR payment`);
    return pi;
  }

  // -------------------------------------------------------------------------------------------------------
  // Refunds

  private createRefund(params: Json): HandlerResult {
    const piId = params.payment_intent;
    if (typeof piId !== 'string' || !piId)
      return invalid('One of charge or payment_intent is required.', 'payment_intent', 'parameter_missing');
    const pi = this.paymentIntents.get(piId);
    if (!pi)
      return stripeError(
        400,
        {
          type: 'invalid_request_error',
          code: 'resource_missing',
          message: `No such payment_intent: '${piId}'`,
          param: 'payment_intent',
        },
        false,
      );
    if (pi.status !== 'succeeded') {
      return stripeError(400, {
        type: 'invalid_request_error',
        code: 'payment_intent_unexpected_state',
        message: 'This PaymentIntent does not have a successful charge to refund.',
      });
    }
    // A disputed charge is refunded only while its dispute allows it (`is_charge_refundable`: an inquiry).
    if ([...this.disputes.values()].some((d) => d.charge === pi.latest_charge && !d.is_charge_refundable)) {
      return stripeError(400, {
        type: 'invalid_request_error',
        code: 'charge_disputed',
        message: `Charge ${pi.latest_charge} has been charged back; cannot issue a refund.`,
      });
    }
    const refunded = [...this.refunds.values()]
      .filter(
        (r) =>
          r.payment_intent === piId &&
          (r.status === 'succeeded' || r.status === 'pending' || r.status === 'requires_action'),
      )
      .reduce((sum, r) => sum + r.amount, 0);
    const remaining = pi.amount_received - refunded;
    if (remaining <= 0)
      return stripeError(400, {
        type: 'invalid_request_error',
        code: 'charge_already_refunded',
        message: `Charge ${pi.latest_charge} has already been refunded.`,
      });
    const amount = params.amount === undefined ? remaining : Number(params.amount);
    if (!Number.isSafeInteger(amount) || amount < 1)
      return invalid('Invalid positive integer', 'amount', 'parameter_invalid_integer');
    if (amount > remaining) {
      return stripeError(400, {
        type: 'invalid_request_error',
        code: 'amount_too_large',
        param: 'amount',
        message: `Refund amount is greater than unrefunded amount on charge.`,
      });
    }
    const declined = lastTwo(amount) === 61;
    const refund = this.buildRefund(pi, {
      amount,
      metadata: { ...(params.metadata ?? {}) },
      reason: params.reason ?? null,
      status: declined ? 'failed' : this.refundMode === 'pending' ? 'pending' : 'succeeded',
      ...(declined ? { failure_reason: 'declined' } : {}),
    });
    this.refunds.set(refund.id, refund);
    if (this.bookRefundsLater) this.unbookedRefunds.add(refund.id);
    if (refund.status === 'succeeded') {
      this.bookRefund(refund);
      if (this.refundFailPayments.has(pi.id)) this.asyncRefundFailures.add(refund.id);
    }
    this.emit('refund.created', refund);
    if (declined) this.emit('refund.updated', refund);
    return { status: 200, body: this.refundView(refund, params.expand, '') };
  }

  private listRefunds(params: Json): HandlerResult {
    const limit = Math.min(Math.max(Number(params.limit ?? 10) || 10, 1), 100);
    const all = [...this.refunds.values()]
      .filter((r) => !params.payment_intent || r.payment_intent === params.payment_intent)
      .reverse();
    const list: Stripe.ApiList<Stripe.Refund> = {
      object: 'list',
      data: all.slice(0, limit).map((r) => this.refundView(r, params.expand, 'data.')),
      has_more: all.length > limit,
      url: '/v1/refunds',
    };
    return { status: 200, body: list };
  }

  /** A copy of the refund with its `balance_transaction` expanded when `expand` asks for it (at `prefix`). */
  private refundView(refund: Stripe.Refund, expand: unknown, prefix: string): Stripe.Refund {
    const copy = clone(refund);
    if (this.unbookedRefunds.has(refund.id)) return { ...copy, balance_transaction: null };
    const paths = Array.isArray(expand) ? expand : [];
    if (paths.includes(`${prefix}balance_transaction`) && typeof refund.balance_transaction === 'string')
      copy.balance_transaction = clone(this.balanceTransactions.get(refund.balance_transaction)!);
    return copy;
  }

  // -------------------------------------------------------------------------------------------------------
  // Balance transactions

  /** A complete balance transaction, stored: `net` = `amount` − `fee`, available two days later at 00:00 UTC. */
  private book(
    fields: Pick<
      Stripe.BalanceTransaction,
      'amount' | 'fee' | 'currency' | 'type' | 'reporting_category' | 'description'
    > & {
      source: string;
      exchange_rate?: number | null;
    },
  ): Stripe.BalanceTransaction {
    const created = nowSeconds();
    const bt: Stripe.BalanceTransaction = {
      id: stripeId('txn'),
      object: 'balance_transaction',
      amount: fields.amount,
      available_on: (Math.floor(created / DAY_SECONDS) + 2) * DAY_SECONDS,
      created,
      currency: fields.currency,
      description: fields.description,
      exchange_rate: fields.exchange_rate ?? null,
      fee: fields.fee,
      fee_details: fields.fee
        ? [
            {
              amount: fields.fee,
              application: null,
              currency: fields.currency,
              description: 'Stripe processing fees',
              type: 'stripe_fee',
            },
          ]
        : [],
      net: fields.amount - fields.fee,
      reporting_category: fields.reporting_category,
      source: fields.source,
      status: 'pending',
      type: fields.type,
    };
    this.balanceTransactions.set(bt.id, bt);
    return bt;
  }

  /** The id of a succeeded charge's balance transaction, booked on first need; null before (or while unbooked). */
  private bookCharge(pi: Stripe.PaymentIntent): string | null {
    const chargeId = pi.latest_charge;
    if (pi.status !== 'succeeded' || typeof chargeId !== 'string' || this.unbookedCharges.has(chargeId)) return null;
    const existing = [...this.balanceTransactions.values()].find(
      (bt) => bt.source === chargeId && bt.type === 'charge',
    );
    if (existing) return existing.id;
    const settled = this.settlementCurrency;
    const amount = settled ? Math.round(pi.amount_received * settled.rate) : pi.amount_received;
    return this.book({
      amount,
      fee: simFee(amount),
      currency: settled?.currency ?? pi.currency,
      exchange_rate: settled?.rate ?? null,
      type: 'charge',
      reporting_category: 'charge',
      source: chargeId,
      description: pi.description,
    }).id;
  }

  private bookRefund(refund: Stripe.Refund) {
    if (refund.balance_transaction) return;
    refund.balance_transaction = this.book({
      amount: -refund.amount,
      fee: 0,
      currency: refund.currency,
      type: 'refund',
      reporting_category: 'refund',
      source: refund.id,
      description: 'REFUND FOR CHARGE',
    }).id;
  }

  // -------------------------------------------------------------------------------------------------------
  // Disputes

  private listDisputes(params: Json): HandlerResult {
    const limit = Math.min(Math.max(Number(params.limit ?? 10) || 10, 1), 100);
    const all = [...this.disputes.values()]
      .filter(
        (d) =>
          (!params.payment_intent || d.payment_intent === params.payment_intent) &&
          (!params.charge || d.charge === params.charge),
      )
      .reverse();
    const list: Stripe.ApiList<Stripe.Dispute> = {
      object: 'list',
      data: all.slice(0, limit).map(clone),
      has_more: all.length > limit,
      url: '/v1/disputes',
    };
    return { status: 200, body: list };
  }

  /** A balance transaction of a dispute: the funds withdrawn (with the dispute fee) or reinstated. */
  private disputeBalance(dispute: Stripe.Dispute, direction: 'withdrawn' | 'reinstated'): Stripe.BalanceTransaction {
    const amount = direction === 'withdrawn' ? -dispute.amount : dispute.amount;
    const fee = direction === 'withdrawn' ? 1500 : 0;
    return {
      id: stripeId('txn'),
      object: 'balance_transaction',
      amount,
      available_on: nowSeconds() + 86_400,
      created: nowSeconds(),
      currency: dispute.currency,
      description: `Chargeback ${direction === 'withdrawn' ? 'withdrawal' : 'reversal'} for ${dispute.charge as string}`,
      exchange_rate: null,
      fee,
      fee_details: fee
        ? [
            {
              amount: fee,
              application: null,
              currency: dispute.currency,
              description: 'Dispute fee',
              type: 'stripe_fee',
            },
          ]
        : [],
      net: amount - fee,
      reporting_category: direction === 'withdrawn' ? 'dispute' : 'dispute_reversal',
      source: dispute.id,
      status: 'pending',
      type: 'adjustment',
    };
  }

  /**
   * The payer disputes a succeeded PaymentIntent's charge. A chargeback (`needs_response`) withdraws the
   * funds at once (`charge.dispute.created`, then `charge.dispute.funds_withdrawn`); an inquiry
   * (`warning_needs_response`) withdraws nothing. The PaymentIntent stays `succeeded` throughout.
   */
  openDispute(
    paymentIntentId: string,
    options: { inquiry?: boolean; amount?: number; reason?: string } = {},
  ): Stripe.Dispute {
    const pi = this.paymentIntents.get(paymentIntentId);
    if (pi?.status !== 'succeeded' || typeof pi.latest_charge !== 'string')
      throw new Error(`PaymentIntent ${paymentIntentId} has no succeeded charge to dispute`);
    const dispute: Stripe.Dispute = {
      id: stripeId('du'),
      object: 'dispute',
      amount: options.amount ?? pi.amount_received,
      balance_transactions: [],
      charge: pi.latest_charge,
      created: nowSeconds(),
      currency: pi.currency,
      evidence: {
        access_activity_log: null,
        billing_address: null,
        cancellation_policy: null,
        cancellation_policy_disclosure: null,
        cancellation_rebuttal: null,
        customer_communication: null,
        customer_email_address: null,
        customer_name: null,
        customer_purchase_ip: null,
        customer_signature: null,
        duplicate_charge_documentation: null,
        duplicate_charge_explanation: null,
        duplicate_charge_id: null,
        product_description: null,
        receipt: null,
        refund_policy: null,
        refund_policy_disclosure: null,
        refund_refusal_explanation: null,
        service_date: null,
        service_documentation: null,
        shipping_address: null,
        shipping_carrier: null,
        shipping_date: null,
        shipping_documentation: null,
        shipping_tracking_number: null,
        uncategorized_file: null,
        uncategorized_text: null,
      },
      evidence_details: {
        due_by: nowSeconds() + 7 * 86_400,
        has_evidence: false,
        past_due: false,
        submission_count: 0,
      },
      is_charge_refundable: !!options.inquiry,
      livemode: pi.livemode,
      metadata: {},
      network_reason_code: null,
      payment_intent: pi.id,
      payment_method_details: {
        type: 'card',
        card: {
          brand: 'visa',
          case_type: options.inquiry ? 'inquiry' : 'chargeback',
          network_reason_code: options.inquiry ? null : '10.4',
        },
      },
      reason: options.reason ?? 'fraudulent',
      status: options.inquiry ? 'warning_needs_response' : 'needs_response',
    };
    this.disputes.set(dispute.id, dispute);
    this.emit('charge.dispute.created', dispute);
    if (!options.inquiry) {
      dispute.balance_transactions.push(this.disputeBalance(dispute, 'withdrawn'));
      this.emit('charge.dispute.funds_withdrawn', dispute);
    }
    return clone(dispute);
  }

  /**
   * An inquiry becomes a chargeback ("an inquiry that escalated", docs.stripe.com/disputes/how-disputes-work):
   * `needs_response`, the funds withdrawn now; `charge.dispute.updated`, then `charge.dispute.funds_withdrawn`.
   */
  escalateInquiry(disputeId: string) {
    const dispute = this.mustDispute(disputeId);
    if (!dispute.status.startsWith('warning_')) throw new Error(`dispute ${disputeId} is no inquiry`);
    Object.assign(dispute, { status: 'needs_response', is_charge_refundable: false });
    this.emit('charge.dispute.updated', dispute);
    dispute.balance_transactions.push(this.disputeBalance(dispute, 'withdrawn'));
    this.emit('charge.dispute.funds_withdrawn', dispute);
  }

  /** The merchant submits evidence: `under_review` (or `warning_under_review`), `charge.dispute.updated`. */
  reviewDispute(disputeId: string) {
    const dispute = this.mustDispute(disputeId);
    Object.assign(dispute, {
      status: dispute.status.startsWith('warning_') ? 'warning_under_review' : 'under_review',
      is_charge_refundable: false,
    });
    Object.assign(dispute.evidence_details, {
      has_evidence: true,
      submission_count: dispute.evidence_details.submission_count + 1,
    });
    this.emit('charge.dispute.updated', dispute);
  }

  /**
   * The issuer decides: `won` reinstates the funds (`charge.dispute.funds_reinstated`), `lost` keeps them
   * withdrawn; an inquiry closes as `warning_closed`. `charge.dispute.closed` either way; final.
   */
  closeDispute(disputeId: string, outcome: 'won' | 'lost') {
    const dispute = this.mustDispute(disputeId);
    const inquiry = dispute.status.startsWith('warning_');
    dispute.status = inquiry ? 'warning_closed' : outcome;
    dispute.is_charge_refundable = false;
    if (!inquiry && outcome === 'won') {
      dispute.balance_transactions.push(this.disputeBalance(dispute, 'reinstated'));
      this.emit('charge.dispute.funds_reinstated', dispute);
    }
    this.emit('charge.dispute.closed', dispute);
  }

  private mustDispute(id: string): Stripe.Dispute {
    const dispute = this.disputes.get(id);
    if (!dispute) throw new Error(`no dispute ${id}`);
    if (dispute.status === 'won' || dispute.status === 'lost' || dispute.status === 'warning_closed')
      throw new Error(`dispute ${id} is closed (${dispute.status})`);
    return dispute;
  }

  // -------------------------------------------------------------------------------------------------------
  // Terminal readers

  private withReader(id: string, run: (reader: Stripe.Terminal.Reader) => HandlerResult): HandlerResult {
    if (!/^tmr_[A-Za-z0-9]+$/.test(id)) return missing('terminal.reader', id);
    let reader = this.readers.get(id);
    if (!reader) {
      reader = {
        id,
        object: 'terminal.reader',
        action: null,
        device_sw_version: null,
        device_type: 'simulated_wisepos_e',
        ip_address: null,
        label: 'Simulated reader',
        livemode: this.livemode,
        location: null,
        metadata: {},
        serial_number: `SIM-${id.slice(4, 12)}`,
        status: 'online',
      };
      this.readers.set(id, reader);
    }
    reader.status = this.offlineReaders.has(id) ? 'offline' : 'online';
    return run(reader);
  }

  private processPaymentIntent(readerId: string, params: Json): HandlerResult {
    return this.withReader(readerId, (reader) => {
      const refused = readerRefusal(reader);
      if (refused) return refused;
      const pi = this.paymentIntents.get(params.payment_intent ?? '');
      if (!pi)
        return stripeError(
          400,
          {
            type: 'invalid_request_error',
            code: 'resource_missing',
            param: 'payment_intent',
            message: `No such payment_intent: '${params.payment_intent}'`,
          },
          false,
        );
      if (!pi.payment_method_types.includes('card_present') || pi.status !== 'requires_payment_method') {
        return stripeError(400, {
          type: 'invalid_request_error',
          code: 'payment_intent_unexpected_state',
          message: `This PaymentIntent's status is ${pi.status}.`,
        });
      }
      const config = params.process_config ?? {};
      reader.action = {
        type: 'process_payment_intent',
        status: 'in_progress',
        failure_code: null,
        failure_message: null,
        process_payment_intent: {
          payment_intent: pi.id,
          ...(Object.keys(config).length > 0
            ? {
                process_config: {
                  ...(config.skip_tipping !== undefined ? { skip_tipping: config.skip_tipping === 'true' } : {}),
                },
              }
            : {}),
        },
      };
      const answer = clone(reader);
      if (this.readerMode === 'auto') this.presentCard(reader.id);
      return { status: 200, body: answer };
    });
  }

  /**
   * POST /v1/terminal/readers/{id}/set_reader_display (`ReaderSetReaderDisplayParams`): the reader answers
   * with its action `set_reader_display` in progress, as the API reference's example does; it refuses as
   * process_payment_intent does when offline or busy with another action.
   */
  private setReaderDisplay(readerId: string, params: Json): HandlerResult {
    return this.withReader(readerId, (reader) => {
      const refused = readerRefusal(reader);
      if (refused) return refused;
      const cart = params.cart;
      const integer = (value: unknown) => typeof value === 'string' && /^\d+$/.test(value);
      const lines: Json[] = Array.isArray(cart?.line_items) ? cart.line_items : [];
      if (
        params.type !== 'cart' ||
        typeof cart?.currency !== 'string' ||
        !integer(cart.total) ||
        (cart.tax !== undefined && !integer(cart.tax)) ||
        lines.length === 0 ||
        !lines.every((l) => integer(l.amount) && integer(l.quantity) && typeof l.description === 'string')
      )
        return invalid('Invalid cart: type, cart[currency], cart[line_items] and cart[total] are required.', 'cart');
      reader.action = {
        type: 'set_reader_display',
        status: 'in_progress',
        failure_code: null,
        failure_message: null,
        set_reader_display: {
          type: 'cart',
          cart: {
            currency: cart.currency,
            line_items: lines.map((l) => ({
              amount: Number(l.amount),
              description: l.description,
              quantity: Number(l.quantity),
            })),
            tax: cart.tax === undefined ? null : Number(cart.tax),
            total: Number(cart.total),
          },
        },
      };
      return { status: 200, body: clone(reader) };
    });
  }

  private cancelAction(readerId: string): HandlerResult {
    return this.withReader(readerId, (reader) => {
      // The code Stripe gives this refusal is not documented; the connector only needs it not to be 5xx.
      if (reader.action?.status !== 'in_progress')
        return stripeError(400, { type: 'invalid_request_error', message: 'The reader has no action to cancel.' });
      this.failReaderAction(reader, 'canceled', 'The action was canceled.');
      return { status: 200, body: clone(reader) };
    });
  }

  private failReaderAction(reader: Stripe.Terminal.Reader, code: string, message: string, emit = true) {
    if (!reader.action) return;
    Object.assign(reader.action, { status: 'failed', failure_code: code, failure_message: message });
    if (emit) this.emit('terminal.reader.action_failed', reader);
  }

  private emit<T extends EventType>(type: T, object: EventOf<T>['data']['object']) {
    this.events.push(this.makeEvent(type, object));
  }
}
