import { z } from 'zod';
import { sha256Hex } from '../../lib/encoding.ts';
import { safeCode, sendRequest } from '../http.ts';
import type {
  Channel,
  ConnectorAdapter,
  ConnectorContext,
  CreatePaymentInput,
  PaymentOutcome,
  ProcessorDispute,
  ProcessorNotification,
  RefundOutcome,
  TerminalState,
} from '../types.ts';
import { ConnectorError, TerminalUnavailableError } from '../types.ts';
import { defineVersion, firstPublishedVersion, qrTtlSeconds } from '../version.ts';
import type {
  CheckoutCancel,
  CheckoutPayment,
  CheckoutQrMethod,
  CheckoutRefund,
  CheckoutReversal,
  TerminalRequest,
} from './sdk.ts';
import {
  ADYEN_HTTP,
  CHECKOUT_TEST_BASE,
  checkoutLiveBase,
  checkoutStatus,
  CLOUD_DEVICE_LIVE_BASES,
  CLOUD_DEVICE_TEST_BASE,
  DEVICE_STATUS,
  disputeReason,
  eventRule,
  fromCheckoutAmount,
  fromTerminalAmount,
  hmacPayload,
  messageOf,
  normalizeHttpError,
  paymentServiceId,
  pspReferenceOf,
  QR_METHOD_CURRENCIES,
  qrMethodFor,
  readServiceId,
  REFUND_FAILURE_REASONS,
  serviceIdOf,
  terminalStatus,
  terminalUnavailability,
  timeOf,
  toCheckoutAmount,
  toTerminalAmount,
  verifyHmac,
  type AdyenOperation,
} from './transformers.ts';

/**
 * Adyen on both channels, written from its OpenAPI descriptions (specs/adyen) and its SDK's types:
 * - POS: a Terminal API PaymentRequest sent to the terminal through the Cloud device API's asynchronous endpoint,
 *   its result read with a TransactionStatusRequest (synchronous endpoint); a cancel at the terminal is an
 *   AbortRequest, carried out by the terminal later.
 * - QR: Checkout `/payments` with Pix, PayNow, PromptPay, DuitNow or WeChat Pay; the code is `action.qrCodeData`.
 * Checkout has no read of a payment or refund: its modifications (`/cancels`, `/reversals`, `/refunds`) are
 * answered `received` and completed by the standard webhooks, verified with HMAC-SHA256. NOTES.md has the rest.
 */

export const ADYEN_POS_CURRENCIES = ['USD', 'EUR', 'BRL', 'MXN', 'SGD', 'THB', 'MYR'];
export const ADYEN_QR_CURRENCIES = [...new Set(Object.values(QR_METHOD_CURRENCIES).flat())].sort();

// Field descriptions use `.describe()`: GET /v1/connectors serves these schemas through z.toJSONSchema.
export const AdyenCredentials = z.strictObject({
  api_key: z
    .string()
    .min(16)
    .max(512)
    .regex(/^[A-Za-z0-9+/=_.:-]+$/)
    .describe(
      'An API key of the company or merchant account (Customer Area → Developers → API credentials), with the Checkout webhooks and, for POS, the Cloud Device API role; a test key in the test environment, a live key in live.',
    ),
  merchant_account: z
    .string()
    .min(1)
    .max(80)
    .regex(/^[A-Za-z0-9_.-]+$/)
    .describe('The merchant account that processes the payments (`merchantAccount`).'),
  hmac_key: z
    .string()
    .regex(/^[0-9A-Fa-f]{64}$/)
    .describe(
      'The HMAC key (64 hexadecimal characters) of the standard webhook pointing at /v1/processor-notifications/{payment_method_id}.',
    ),
  live_url_prefix: z
    .string()
    .regex(/^[A-Za-z0-9-]{1,100}$/)
    .optional()
    .describe(
      'Live only: the prefix of the live Checkout endpoint (Customer Area → Developers → API URLs → Prefix). Required in live, refused in test.',
    ),
  cloud_device_region: z
    .enum(['eu', 'us', 'au', 'apse'])
    .optional()
    .describe(
      'Live POS only: the data centre of the Cloud device API (Europe by default; United States, Australia, East Asia).',
    ),
});
export type AdyenCredentials = z.infer<typeof AdyenCredentials>;

export const AdyenPosConfiguration = z.strictObject({
  poiid: z
    .string()
    .max(64)
    .regex(/^[A-Za-z0-9]+-[A-Za-z0-9]+$/)
    .optional()
    .describe(
      'The terminal (POIID, `[terminal model]-[serial number]`, e.g. `S1F2-000158215131748`) that takes the payment. Required to take a payment; may be given per payment.',
    ),
  sale_id: z
    .string()
    .min(1)
    .max(32)
    .regex(/^[A-Za-z0-9_-]+$/)
    .default('payment-service')
    .describe('The `SaleID` the terminal sees: which cash register sent the request.'),
});
export type AdyenPosConfiguration = z.infer<typeof AdyenPosConfiguration>;

const QR_METHODS = Object.keys(QR_METHOD_CURRENCIES) as [CheckoutQrMethod, ...CheckoutQrMethod[]];
export const AdyenQrConfiguration = z.strictObject({
  qr_method: z
    .enum(QR_METHODS)
    .optional()
    .describe(
      'The QR method: `pix` (BRL), `paynow` (SGD), `promptpay` (THB), `duitnow` (MYR) or `wechatpayQR` (USD, EUR). When absent, chosen by the payment’s currency (WeChat Pay only when named).',
    ),
  qr_ttl_seconds: qrTtlSeconds(),
  return_url: z
    .url({ protocol: /^https$/ })
    .max(1024)
    .optional()
    .describe(
      'Where a shopper paying on the same device returns (Checkout requires one, `returnUrl`). Required to take a payment; may be given per payment.',
    ),
});
export type AdyenQrConfiguration = z.infer<typeof AdyenQrConfiguration>;

type Configuration = Partial<AdyenPosConfiguration & AdyenQrConfiguration>;
type Ctx = ConnectorContext<AdyenCredentials, Configuration>;

// ---------------------------------------------------------------------------------------------------------
// Environments and HTTP

/**
 * Adyen's test and live are told apart by the endpoint, not the key: live needs the company's live URL prefix, so
 * credentials without one are test credentials (refused in live), and credentials with one are live (refused in
 * test, as Stripe's live keys are).
 */
function checkEnvironment(ctx: Ctx) {
  const live = ctx.credentials.live_url_prefix !== undefined;
  if (live !== (ctx.environment === 'live')) {
    throw new ConnectorError(
      'configuration_invalid',
      ctx.environment === 'live'
        ? 'Adyen test credentials (no live_url_prefix) cannot be used in live.'
        : 'Adyen live credentials (with a live_url_prefix) cannot be used in test.',
      'adyen_environment_mismatch',
    );
  }
}

const checkoutBase = (ctx: Ctx) =>
  ctx.credentials.live_url_prefix ? checkoutLiveBase(ctx.credentials.live_url_prefix) : CHECKOUT_TEST_BASE;
const cloudBase = (ctx: Ctx) =>
  ctx.environment === 'live'
    ? CLOUD_DEVICE_LIVE_BASES[ctx.credentials.cloud_device_region ?? 'eu']
    : CLOUD_DEVICE_TEST_BASE;

async function adyenCall(
  ctx: Ctx,
  operation: AdyenOperation,
  request: { method: 'GET' | 'POST'; url: string; body?: unknown; idempotencyKey?: string },
): Promise<unknown> {
  checkEnvironment(ctx);
  const headers: Record<string, string> = { 'X-API-Key': ctx.credentials.api_key, Accept: 'application/json' };
  if (request.body !== undefined) headers['Content-Type'] = 'application/json';
  if (request.idempotencyKey) headers['Idempotency-Key'] = request.idempotencyKey;
  const answer = await sendRequest(ctx.fetch, ADYEN_HTTP, {
    method: request.method,
    url: request.url,
    headers,
    ...(request.body !== undefined ? { body: JSON.stringify(request.body) } : {}),
  });
  if (!answer.ok) throw normalizeHttpError(operation, answer.status, answer.json);
  return answer.json;
}

/** Checkout's `Idempotency-Key` ("a maximum of 64 characters"), derived from ours and the operation. */
const checkoutKey = async (purpose: string, ourKey: string) =>
  `adyen-${purpose}-${(await sha256Hex(`adyen:${purpose}:${ourKey}`)).slice(0, 40)}`;

const unexpected = () =>
  new ConnectorError('unavailable', 'Adyen answered with a body that is not understood.', 'unexpected_response');

function parse<T extends z.ZodType>(schema: T, body: unknown): z.infer<T> {
  const parsed = schema.safeParse(body);
  if (!parsed.success) throw unexpected();
  return parsed.data;
}

const PspReference = z.string().regex(/^[A-Za-z0-9]{1,64}$/);

// ---------------------------------------------------------------------------------------------------------
// Checkout (QR payments, and the modifications of every payment)

const CheckoutPaymentAnswer = z.object({
  pspReference: PspReference.optional(),
  resultCode: z.string().max(64).optional(),
  refusalReasonCode: z.string().max(64).optional(),
  action: z
    .object({
      type: z.string().max(64),
      qrCodeData: z.string().max(4096).optional(),
      expiresAt: z.string().max(64).optional(),
    })
    .nullish(),
});
const ModificationAnswer = z.object({ pspReference: PspReference, status: z.literal('received') });

const paymentPath = (psp: string, modification: 'refunds' | 'cancels' | 'reversals') =>
  `/payments/${encodeURIComponent(psp)}/${modification}`;

async function createQrPayment(ctx: Ctx, input: CreatePaymentInput): Promise<PaymentOutcome> {
  const method = qrMethodFor(input.amount.currency, ctx.configuration?.qr_method);
  const returnUrl = ctx.configuration?.return_url;
  if (!returnUrl)
    throw new ConnectorError(
      'configuration_invalid',
      'An Adyen QR payment needs configuration.return_url.',
      'adyen_return_url_missing',
    );
  const body = {
    amount: toCheckoutAmount(input.amount),
    merchantAccount: ctx.credentials.merchant_account,
    paymentMethod: { type: method },
    reference: input.paymentId,
    returnUrl,
    ...(input.description
      ? { shopperStatement: input.description.slice(0, 22).replace(/[^A-Za-z0-9 .,-]/g, ' ') }
      : {}),
  } satisfies CheckoutPayment;
  const answer = parse(
    CheckoutPaymentAnswer,
    await adyenCall(ctx, 'create', {
      method: 'POST',
      url: `${checkoutBase(ctx)}/payments`,
      body,
      idempotencyKey: await checkoutKey('payment', input.processorIdempotencyKey),
    }),
  );
  const status = checkoutStatus(answer.resultCode);
  if (!answer.pspReference) throw unexpected();
  const qr = answer.action?.type === 'qrCode' ? answer.action.qrCodeData : undefined;
  const expiresAt = timeOf(answer.action?.expiresAt);
  return {
    status,
    processorReference: answer.pspReference,
    // Shown exactly as Adyen produced it: the payer's app reads it byte for byte.
    action:
      status === 'pending' && qr
        ? { type: 'display_qr', qrData: qr, ...(expiresAt !== null ? { expiresAt } : {}) }
        : { type: 'none' },
    processorStatus: answer.resultCode ?? 'unknown',
    ...(status === 'declined' ? { declineCode: safeCode(answer.refusalReasonCode) ?? 'refused' } : {}),
    ...(status === 'approved' ? { settlement: null, settlementNullReason: 'not_reported' as const } : {}),
  };
}

/** A modification Adyen accepted: answered `received`, carried out later and told by a webhook. */
async function modify(
  ctx: Ctx,
  psp: string,
  modification: 'cancels' | 'reversals',
  ourKey: string,
  reference: string,
): Promise<void> {
  const body = { merchantAccount: ctx.credentials.merchant_account, reference } satisfies CheckoutCancel &
    CheckoutReversal;
  parse(
    ModificationAnswer,
    await adyenCall(ctx, 'modify', {
      method: 'POST',
      url: `${checkoutBase(ctx)}${paymentPath(psp, modification)}`,
      body,
      idempotencyKey: await checkoutKey(modification, ourKey),
    }),
  );
}

const requested = (
  input: { processorReference: string | null },
  status: 'pending' | 'approved',
  processorStatus: string,
): PaymentOutcome => ({
  status,
  processorReference: input.processorReference,
  action: { type: 'none' },
  processorStatus,
  cancellation: 'requested',
});

const noRead = (what: string) =>
  new ConnectorError(
    'unavailable',
    `Adyen Checkout has no read of a ${what}: its webhooks carry the outcome.`,
    'adyen_no_read',
  );

// ---------------------------------------------------------------------------------------------------------
// Terminal API over the Cloud device API (POS)

function poiidOf(ctx: Ctx): string {
  const poiid = ctx.configuration?.poiid;
  if (!poiid)
    throw new ConnectorError(
      'configuration_invalid',
      'An Adyen POS payment needs configuration.poiid (the terminal).',
      'adyen_poiid_missing',
    );
  return poiid;
}

const devicePath = (ctx: Ctx, poiid: string, endpoint: 'async' | 'sync' | 'status') =>
  `${cloudBase(ctx)}/merchants/${encodeURIComponent(ctx.credentials.merchant_account)}/devices/${encodeURIComponent(poiid)}/${endpoint}`;

const header = (
  ctx: Ctx,
  category: 'Payment' | 'TransactionStatus' | 'Abort',
  serviceId: string,
): TerminalRequest['SaleToPOIRequest']['MessageHeader'] => ({
  ProtocolVersion: '3.0',
  MessageClass: 'Service',
  MessageCategory: category,
  MessageType: 'Request',
  ServiceID: serviceId,
  SaleID: ctx.configuration?.sale_id ?? 'payment-service',
  POIID: poiidOf(ctx),
});

export async function buildTerminalPayment(
  ctx: Ctx,
  input: CreatePaymentInput,
  serviceId: string,
): Promise<TerminalRequest> {
  return {
    SaleToPOIRequest: {
      MessageHeader: header(ctx, 'Payment', serviceId),
      PaymentRequest: {
        SaleData: {
          // Adyen keeps it as the payment's merchantReference: its webhooks name the payment by it.
          SaleTransactionID: { TransactionID: input.paymentId, TimeStamp: new Date().toISOString() },
          SaleReferenceID: input.externalReference.slice(0, 64),
        },
        PaymentTransaction: {
          AmountsReq: { Currency: input.amount.currency, RequestedAmount: toTerminalAmount(input.amount) },
        },
      },
    },
  };
}

const TerminalResponseBody = z.object({
  Result: z.string().max(32),
  ErrorCondition: z.string().max(32).optional(),
  AdditionalResponse: z.string().max(4096).optional(),
});
const TerminalPaymentResponse = z.object({
  Response: TerminalResponseBody,
  SaleData: z.object({ SaleTransactionID: z.object({ TransactionID: z.string().max(128) }) }),
  POIData: z.object({ POITransactionID: z.object({ TransactionID: z.string().max(128) }) }).optional(),
  PaymentResult: z
    .object({
      AmountsResp: z.object({ Currency: z.string().max(3).optional(), AuthorizedAmount: z.number() }).nullish(),
    })
    .nullish(),
});
type TerminalPaymentResponse = z.infer<typeof TerminalPaymentResponse>;
const TransactionStatusAnswer = z.object({
  SaleToPOIResponse: z.object({
    TransactionStatusResponse: z.object({
      Response: TerminalResponseBody,
      RepeatedMessageResponse: z
        .object({ RepeatedResponseMessageBody: z.object({ PaymentResponse: TerminalPaymentResponse.nullish() }) })
        .nullish(),
    }),
  }),
});

type TransactionRead =
  | { kind: 'found'; response: TerminalPaymentResponse }
  | { kind: 'in_progress' }
  | { kind: 'not_found' };

/**
 * How many PaymentRequests of one payment its terminal may refuse at once (busy, out of service) before the payment
 * fails as the last refusal says: each retry of the create sends one more, and every read walks past them.
 */
export const TERMINAL_REQUESTS_PER_PAYMENT = 10;

/**
 * The payment as its terminal has it, its requests read in the order they were sent: past those the terminal refused
 * at once (they never started) to the one it took (`found`, `in_progress`, with its ServiceID), or to the first it has
 * not seen (`not_found`, `next`: the request a create may send). `exhausted`: it refused every request it may.
 */
type PaymentRead =
  | { kind: 'found'; response: TerminalPaymentResponse; serviceId: string }
  | { kind: 'in_progress'; serviceId: string }
  | { kind: 'not_found'; next: number }
  | { kind: 'exhausted'; response: TerminalPaymentResponse };

/** Whether the terminal refused the request at once (busy, out of service): it never started. */
const refusedAtOnce = (response: TerminalPaymentResponse) =>
  response.Response.Result === 'Failure' && terminalUnavailability(response.Response.ErrorCondition) !== null;

async function readPayment(ctx: Ctx, paymentId: string): Promise<PaymentRead> {
  let refused: TerminalPaymentResponse | undefined;
  for (let request = 1; request <= TERMINAL_REQUESTS_PER_PAYMENT; request++) {
    const serviceId = await paymentServiceId(paymentId, request);
    const read = await readTransaction(ctx, paymentId, serviceId);
    if (read.kind === 'not_found') return { kind: 'not_found', next: request };
    if (read.kind === 'in_progress') return { kind: 'in_progress', serviceId };
    if (!refusedAtOnce(read.response)) return { kind: 'found', response: read.response, serviceId };
    refused = read.response;
  }
  return { kind: 'exhausted', response: refused! };
}

/** Refuses at once when the terminal cannot take a request (busy, out of service), as the service's 409. */
function refuseIfUnavailable(condition: string | undefined) {
  const terminal = terminalUnavailability(condition);
  if (terminal)
    throw new TerminalUnavailableError(
      terminal,
      terminal === 'busy' ? 'The Adyen terminal is busy.' : 'The Adyen terminal is out of service.',
      condition,
    );
}

/** One PaymentRequest's result from the terminal: TransactionStatusRequest through the synchronous endpoint. */
async function readTransaction(ctx: Ctx, transactionId: string, serviceId: string): Promise<TransactionRead> {
  const poiid = poiidOf(ctx);
  const body: TerminalRequest = {
    SaleToPOIRequest: {
      MessageHeader: header(ctx, 'TransactionStatus', readServiceId()),
      TransactionStatusRequest: {
        MessageReference: {
          MessageCategory: 'Payment',
          ServiceID: serviceId,
          SaleID: ctx.configuration?.sale_id ?? 'payment-service',
          POIID: poiid,
        },
        ReceiptReprintFlag: false,
      },
    },
  };
  const answer = parse(
    TransactionStatusAnswer,
    await adyenCall(ctx, 'lookup', { method: 'POST', url: devicePath(ctx, poiid, 'sync'), body }),
  ).SaleToPOIResponse.TransactionStatusResponse;
  if (answer.Response.Result === 'Success') {
    const response = answer.RepeatedMessageResponse?.RepeatedResponseMessageBody.PaymentResponse;
    // Another transaction's result is never taken for this one's.
    if (!response || response.SaleData.SaleTransactionID.TransactionID !== transactionId) throw unexpected();
    return { kind: 'found', response };
  }
  if (answer.Response.ErrorCondition === 'InProgress') return { kind: 'in_progress' };
  if (answer.Response.ErrorCondition === 'NotFound') return { kind: 'not_found' };
  refuseIfUnavailable(answer.Response.ErrorCondition);
  throw new ConnectorError('unavailable', messageOf('unavailable'), safeCode(answer.Response.ErrorCondition));
}

function terminalOutcome(
  response: TerminalPaymentResponse,
  expected: { minor: number; currency: string },
): PaymentOutcome {
  let status = terminalStatus(response.Response);
  const authorized = response.PaymentResult?.AmountsResp;
  if (status === 'approved' && authorized) {
    const amount = fromTerminalAmount(authorized.AuthorizedAmount, authorized.Currency ?? expected.currency);
    // Approved for another amount than asked (a partial approval, a tip): never an approval of ours.
    if (!amount || amount.minor !== expected.minor || amount.currency !== expected.currency) status = 'pending';
  }
  const condition = response.Response.ErrorCondition;
  const psp = pspReferenceOf(response);
  return {
    status,
    processorReference: response.SaleData.SaleTransactionID.TransactionID,
    // Kept with the payment by the core: its refunds and voids address it without asking the terminal again.
    ...(psp ? { processorPaymentId: psp } : {}),
    action: { type: status === 'pending' && condition === 'InProgress' ? 'at_terminal' : 'none' },
    processorStatus: condition ? `${response.Response.Result}/${condition}` : response.Response.Result,
    ...(status === 'declined' ? { declineCode: safeCode(condition) ?? 'refused' } : {}),
    // Adyen reports fees only in its reports (NOTES.md, "Settlement").
    ...(status === 'approved' ? { settlement: null, settlementNullReason: 'not_reported' as const } : {}),
  };
}

const atTerminal = (transactionId: string, processorStatus: string): PaymentOutcome => ({
  status: 'pending',
  processorReference: transactionId,
  action: { type: 'at_terminal' },
  processorStatus,
});

const DeviceStatusAnswer = z.object({ deviceId: z.string().max(64).optional(), status: z.string().max(16).optional() });

async function deviceStatus(ctx: Ctx): Promise<TerminalState> {
  const poiid = poiidOf(ctx);
  const answer = parse(
    DeviceStatusAnswer,
    await adyenCall(ctx, 'lookup', { method: 'GET', url: devicePath(ctx, poiid, 'status') }),
  );
  const status =
    answer.status === 'ONLINE' ? DEVICE_STATUS.ONLINE : answer.status === 'OFFLINE' ? DEVICE_STATUS.OFFLINE : 'unknown';
  return { processorId: poiid, status, processorStatus: answer.status ?? 'unknown' };
}

async function createPosPayment(ctx: Ctx, input: CreatePaymentInput): Promise<PaymentOutcome> {
  const poiid = poiidOf(ctx);
  let next = 1;
  if (input.attemptNumber > 1) {
    // A retry: an earlier request may have reached the terminal although its answer was lost. Never a second one;
    // only past requests the terminal refused at once.
    const read = await readPayment(ctx, input.paymentId);
    if (read.kind === 'found' || read.kind === 'exhausted') return terminalOutcome(read.response, input.amount);
    if (read.kind === 'in_progress') return atTerminal(input.paymentId, 'Failure/InProgress');
    next = read.next;
  }
  // An offline terminal is refused at once rather than after the terminal's timeout.
  if ((await deviceStatus(ctx)).status === 'offline')
    throw new TerminalUnavailableError('offline', 'The Adyen terminal has no cloud connection.', 'OFFLINE');
  const serviceId = await paymentServiceId(input.paymentId, next);
  const request = await buildTerminalPayment(ctx, input, serviceId);
  await adyenCall(ctx, 'create', { method: 'POST', url: devicePath(ctx, poiid, 'async'), body: request });
  // The terminal's answer arrives as an event notification; reading it once tells a payment settled at once.
  // Sent: whatever the read answers now, the payment is at the terminal, never failed by a read that did not work.
  const read = await readTransaction(ctx, input.paymentId, serviceId).catch((error: unknown) => {
    if (error instanceof ConnectorError) return { kind: 'in_progress' } as const;
    throw error;
  });
  if (read.kind !== 'found') return atTerminal(input.paymentId, 'sent');
  // Refused at once (busy, out of service): nothing started, the service's 409; a retry sends the next request.
  if (refusedAtOnce(read.response) && next < TERMINAL_REQUESTS_PER_PAYMENT)
    refuseIfUnavailable(read.response.Response.ErrorCondition);
  return terminalOutcome(read.response, input.amount);
}

// ---------------------------------------------------------------------------------------------------------
// Notifications

const NotificationItemSchema = z.object({
  pspReference: z.string().min(1).max(64),
  originalReference: z.string().max(64).optional(),
  merchantAccountCode: z.string().max(80),
  merchantReference: z.string().max(256),
  amount: z.object({ currency: z.string().regex(/^[A-Za-z]{3}$/), value: z.number().int().nonnegative() }),
  eventCode: z.string().min(1).max(64),
  eventDate: z.string().max(64),
  success: z.enum(['true', 'false']),
  reason: z.string().max(1024).optional(),
  additionalData: z.record(z.string(), z.string().max(4096).optional()).optional(),
});
const StandardNotification = z.object({
  live: z.enum(['true', 'false']),
  notificationItems: z.array(z.object({ NotificationRequestItem: z.unknown() })).min(1),
});
const TerminalEvent = z.object({
  SaleToPOIResponse: z
    .object({
      PaymentResponse: z
        .object({ SaleData: z.object({ SaleTransactionID: z.object({ TransactionID: z.string() }) }) })
        .nullish(),
    })
    .optional(),
  SaleToPOIRequest: z
    .object({ EventNotification: z.object({ EventToNotify: z.string().max(64) }).nullish() })
    .optional(),
});

const invalid = (code: string) => new ConnectorError('invalid_notification', messageOf('invalid_notification'), code);

async function parseStandard(ctx: Ctx, channel: Channel, json: unknown): Promise<ProcessorNotification> {
  const notification = StandardNotification.safeParse(json);
  if (!notification.success) throw invalid('adyen_notification_unreadable');
  // Adyen sends one item per webhook; a batch would be acknowledged whole while only one item was applied.
  if (notification.data.notificationItems.length !== 1) throw invalid('adyen_notification_batch');
  const parsed = NotificationItemSchema.safeParse(notification.data.notificationItems[0]!.NotificationRequestItem);
  if (!parsed.success) throw invalid('adyen_notification_unreadable');
  const item = parsed.data;
  const payload = hmacPayload(item);
  if (!(await verifyHmac(ctx.credentials.hmac_key, payload, item.additionalData?.hmacSignature)))
    throw invalid('adyen_hmac_mismatch');
  if (notification.data.live !== (ctx.environment === 'live' ? 'true' : 'false')) throw invalid('adyen_live_mismatch');
  if (item.merchantAccountCode !== ctx.credentials.merchant_account) throw invalid('adyen_merchant_account_mismatch');

  // The event id is the signed tuple: a redelivery is a duplicate, and nobody without the key makes another's.
  const eventId = `adyen_${(await sha256Hex(payload)).slice(0, 40)}`;
  const success = item.success === 'true';
  const paymentPsp = item.originalReference ?? item.pspReference;
  // POS payments are known by the TransactionID we sent (Adyen's merchantReference), QR ones by their pspReference.
  const paymentReference = channel === 'pos' ? item.merchantReference : paymentPsp;
  const rule = eventRule(item.eventCode);
  switch (rule.kind) {
    case 'payment': {
      const status = success ? rule.success : rule.failure;
      return {
        eventId,
        resource: 'payment',
        processorReference: paymentReference,
        // A POS payment's PSP reference, which its refunds and voids address: kept by the core when first told.
        ...(channel === 'pos' ? { processorPaymentId: paymentPsp } : {}),
        status,
        trusted: true,
        ...(status === 'approved' ? { settlement: null, settlementNullReason: 'not_reported' as const } : {}),
      };
    }
    case 'refund': {
      const status = success ? rule.success : rule.failure;
      const reason = REFUND_FAILURE_REASONS[item.eventCode as keyof typeof REFUND_FAILURE_REASONS];
      return {
        eventId,
        resource: 'refund',
        processorReference: item.pspReference,
        status,
        trusted: true,
        ...((status === 'failed' || status === 'declined') && reason ? { failureReason: reason } : {}),
      };
    }
    case 'dispute': {
      const amount = fromCheckoutAmount(item.amount);
      if (!amount) throw invalid('adyen_notification_amount');
      const at = timeOf(item.eventDate) ?? Date.now();
      const dispute: ProcessorDispute = {
        processorDisputeId: rule.cycle === 1 ? paymentPsp : `${paymentPsp}:2`,
        paymentProcessorReference: paymentReference,
        status: rule.status,
        amount,
        reason: disputeReason(item.additionalData?.chargebackReasonCode),
        evidenceDueBy: timeOf(item.additionalData?.defensePeriodEndsAt),
        fundsWithdrawnAt: rule.funds === 'withdrawn' ? at : null,
        fundsReinstatedAt: rule.funds === 'reinstated' ? at : null,
        processorStatus: item.eventCode,
      };
      return {
        eventId,
        resource: 'payment',
        processorReference: paymentReference,
        status: rule.status === 'lost' ? 'charged_back' : null,
        trusted: true,
        dispute,
      };
    }
    case 'ignored':
      // Not news this service records: the core reads the payment where it can (POS), else ignores it.
      return { eventId, resource: 'payment', processorReference: paymentReference, status: null, trusted: true };
  }
}

/** A Terminal API event notification: unsigned, so only the payment it names is taken, and the terminal is read. */
function parseTerminalEvent(json: unknown): ProcessorNotification {
  const event = TerminalEvent.safeParse(json);
  if (!event.success) throw invalid('adyen_notification_unreadable');
  const transaction = event.data.SaleToPOIResponse?.PaymentResponse?.SaleData.SaleTransactionID.TransactionID;
  const named = transaction && /^[A-Za-z0-9_-]{1,128}$/.test(transaction) ? transaction : null;
  if (!named && !event.data.SaleToPOIRequest?.EventNotification) throw invalid('adyen_notification_unreadable');
  return {
    // Unique: nobody can use unsigned news to pre-empt a real event's id.
    eventId: `adyen_unsigned_${crypto.randomUUID()}`,
    resource: 'payment',
    // A device event (maintenance, a rejected message) names no payment: no payment has this reference.
    processorReference: named ?? 'adyen_device_event',
    status: null,
    trusted: false,
  };
}

// ---------------------------------------------------------------------------------------------------------
// The adapter

function adyenAdapter(channel: Channel): ConnectorAdapter<AdyenCredentials, Configuration> {
  /**
   * The PSP reference Checkout's modifications take: a QR payment's own; a POS payment's as the core kept it from the
   * first answer or news that told it, else read from the terminal (which reports its transactions for about 48 hours).
   */
  async function paymentPspOf(
    ctx: Ctx,
    processorReference: string,
    processorPaymentId: string | undefined,
  ): Promise<string> {
    if (channel === 'qr') return processorReference;
    if (processorPaymentId !== undefined) return processorPaymentId;
    const read = await readPayment(ctx, processorReference);
    const psp = read.kind === 'found' ? pspReferenceOf(read.response) : null;
    if (!psp)
      throw new ConnectorError(
        'declined',
        'Adyen no longer reports this terminal payment’s PSP reference; modify it in the Customer Area.',
        'adyen_psp_reference_unknown',
      );
    return psp;
  }

  return {
    async createPayment(ctx, input) {
      checkEnvironment(ctx);
      return channel === 'pos' ? createPosPayment(ctx, input) : createQrPayment(ctx, input);
    },

    async getPayment(ctx, input) {
      checkEnvironment(ctx);
      if (channel === 'qr') throw noRead('payment');
      const read = await readPayment(ctx, input.paymentId);
      if (read.kind === 'found' || read.kind === 'exhausted') return terminalOutcome(read.response, input.amount);
      if (read.kind === 'in_progress') return atTerminal(input.paymentId, 'Failure/InProgress');
      // Also when the terminal refused its requests at once: none of them started.
      throw new ConnectorError('not_found', 'The Adyen terminal has no such payment.', 'NotFound');
    },

    async cancelPayment(ctx, input) {
      checkEnvironment(ctx);
      if (input.processorReference === null)
        return {
          status: 'canceled',
          processorReference: null,
          action: { type: 'none' },
          processorStatus: 'not_created',
        };
      if (input.currentStatus === 'approved') {
        // A void: `/reversals` cancels it if not captured yet, refunds it otherwise; CANCEL_OR_REFUND tells.
        await modify(
          ctx,
          await paymentPspOf(ctx, input.processorReference, input.processorPaymentId),
          'reversals',
          input.processorIdempotencyKey,
          input.paymentId,
        );
        return requested(input, 'approved', 'reversal_received');
      }
      if (channel === 'qr') {
        await modify(ctx, input.processorReference, 'cancels', input.processorIdempotencyKey, input.paymentId);
        return requested(input, 'pending', 'cancel_received');
      }
      const read = await readPayment(ctx, input.paymentId);
      if (read.kind === 'found' || read.kind === 'exhausted') return terminalOutcome(read.response, input.amount);
      // Never reached the terminal (or refused there at once): nothing to cancel there.
      if (read.kind === 'not_found')
        return {
          status: 'canceled',
          processorReference: input.processorReference,
          action: { type: 'none' },
          processorStatus: 'Failure/NotFound',
        };
      const poiid = poiidOf(ctx);
      const abort: TerminalRequest = {
        SaleToPOIRequest: {
          MessageHeader: header(ctx, 'Abort', await serviceIdOf('abort', input.processorIdempotencyKey)),
          AbortRequest: {
            MessageReference: {
              MessageCategory: 'Payment',
              ServiceID: read.serviceId,
              SaleID: ctx.configuration?.sale_id ?? 'payment-service',
              POIID: poiid,
            },
            AbortReason: 'MerchantAbort',
          },
        },
      };
      // No answer comes to an AbortRequest: the payment's own response says Aborted (or approved, if paid first).
      await adyenCall(ctx, 'modify', { method: 'POST', url: devicePath(ctx, poiid, 'async'), body: abort });
      return { ...atTerminal(input.paymentId, 'abort_sent'), cancellation: 'requested' };
    },

    async refundPayment(ctx, input): Promise<RefundOutcome> {
      checkEnvironment(ctx);
      const psp = await paymentPspOf(ctx, input.paymentProcessorReference, input.paymentProcessorPaymentId);
      const body = {
        amount: toCheckoutAmount(input.amount),
        merchantAccount: ctx.credentials.merchant_account,
        reference: input.refundId,
      } satisfies CheckoutRefund;
      const answer = parse(
        ModificationAnswer,
        await adyenCall(ctx, 'modify', {
          method: 'POST',
          url: `${checkoutBase(ctx)}${paymentPath(psp, 'refunds')}`,
          body,
          idempotencyKey: await checkoutKey('refund', input.processorIdempotencyKey),
        }),
      );
      // Received, not done: the REFUND webhook approves or declines it.
      return { status: 'pending', processorReference: answer.pspReference, processorStatus: answer.status };
    },

    async getRefund(ctx) {
      checkEnvironment(ctx);
      throw noRead('refund');
    },

    async parseNotification(ctx, input): Promise<ProcessorNotification> {
      let json: unknown;
      try {
        json = JSON.parse(input.rawBody);
      } catch {
        throw invalid('adyen_notification_unreadable');
      }
      if (json && typeof json === 'object' && 'notificationItems' in json) return parseStandard(ctx, channel, json);
      // The Terminal API's event notifications concern POS payments only; they carry no signature.
      if (channel === 'pos') return parseTerminalEvent(json);
      throw invalid('adyen_notification_unreadable');
    },

    ...(channel === 'pos'
      ? {
          async getTerminal(ctx: Ctx): Promise<TerminalState> {
            checkEnvironment(ctx);
            return deviceStatus(ctx);
          },
        }
      : {}),
  };
}

/**
 * How long after a sale its disputes may still arrive. Adyen's webhooks bring them; no read can find a lost one
 * (Checkout has no read of disputes), so no version declares `disputeWindowMs` (NOTES.md, "Disputes").
 */
const common = {
  ...firstPublishedVersion('adyen', AdyenCredentials),
};

export const adyenPosV1 = defineVersion({
  ...common,
  id: 'cnv_adyen_pos_v1',
  definitionId: 'cnd_adyen_pos',
  name: 'Adyen Terminal API',
  type: 'pos',
  currencies: ADYEN_POS_CURRENCIES,
  configurationSchema: AdyenPosConfiguration,
  // Every read, abort and PSP lookup of a payment speaks to the terminal and as the till that took it.
  keptConfiguration: ['poiid', 'sale_id'],
  adapter: adyenAdapter('pos'),
});

export const adyenQrV1 = defineVersion({
  ...common,
  id: 'cnv_adyen_qr_v1',
  definitionId: 'cnd_adyen_qr',
  name: 'Adyen QR (Pix, PayNow, PromptPay, DuitNow, WeChat Pay)',
  type: 'qr',
  currencies: ADYEN_QR_CURRENCIES,
  configurationSchema: AdyenQrConfiguration,
  adapter: adyenAdapter('qr'),
});
