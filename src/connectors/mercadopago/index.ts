import { z } from 'zod';
import { sha256Hex } from '../../lib/encoding.ts';
import type {
  Channel,
  ConnectorAdapter,
  ConnectorContext,
  PaymentOutcome,
  ProcessorDispute,
  ProcessorNotification,
  RefundOutcome,
  TerminalState,
} from '../types.ts';
import { ConnectorError } from '../types.ts';
import { defineVersion, firstPublishedVersion, qrTtlSeconds } from '../version.ts';
import { sendRequest } from '../http.ts';
import type { RefundRequest } from 'mercadopago/dist/clients/order/refund/types';
import {
  buildOrderRequest,
  CANCEL_AT_TERMINAL_HEADER,
  buildRefundRequest,
  chargebackToDispute,
  currencyOfSite,
  firstPayment,
  mapRefundStatus,
  MERCADOPAGO_API_BASE,
  MERCADOPAGO_HTTP,
  MercadoPagoChargeback,
  MercadoPagoOrder,
  MercadoPagoTerminalList,
  MercadoPagoUser,
  minorOf,
  normalizeHttpError,
  notificationId,
  orderToOutcome,
  parseAnswer,
  parseNotificationBody,
  parseSignatureHeader,
  processorIdempotencyKey,
  processorStatusOf,
  refundFailureReason,
  refundIdOf,
  signatureManifest,
  terminalState,
  TERMINALS_MAX_PAGES,
  TERMINALS_PAGE_SIZE,
  verifySignature,
  type InPersonOrderRequest,
  type MercadoPagoOperation,
  type MercadoPagoOrderRefund,
} from './transformers.ts';

/**
 * Mercado Pago through its Orders API: dynamic QR orders (`type: qr`, the code in
 * `type_response.qr_data`) and Point terminal orders (`type: point`). Stateless: every call carries the
 * method's access token, every POST an `X-Idempotency-Key` derived from ours, and notifications are
 * verified with the `x-signature` scheme. Mercado Pago decides the currency by the account's country,
 * so a payment in another currency is refused before any order exists.
 */

export const MERCADOPAGO_CURRENCIES = ['ARS', 'BRL', 'MXN', 'CLP', 'COP', 'UYU', 'PEN'];

// Field descriptions use `.describe()`: GET /v1/connectors serves these schemas through z.toJSONSchema.
export const MercadoPagoCredentials = z.strictObject({
  access_token: z
    .string()
    .min(16)
    .max(256)
    .regex(/^(APP_USR|TEST)-[A-Za-z0-9_-]+$/)
    .describe(
      'The application’s access token (`APP_USR-…`, or `TEST-…` in the test environment only; Mercado Pago test users also have `APP_USR-` tokens).',
    ),
  webhook_secret: z
    .string()
    .min(16)
    .max(256)
    .describe(
      'The secret signature of the application’s webhooks (Your integrations → Webhooks), used to verify `x-signature`. Point the webhook URL at /v1/processor-notifications/{payment_method_id}.',
    ),
});
export type MercadoPagoCredentials = z.infer<typeof MercadoPagoCredentials>;

const PosId = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[A-Za-z0-9_-]+$/);

export const MercadoPagoQrConfiguration = z.strictObject({
  external_pos_id: PosId.optional().describe(
    'The `external_id` of the Mercado Pago point of sale (store POS) whose QR shows the order. Required to take a payment; may be given per payment.',
  ),
  qr_ttl_seconds: qrTtlSeconds('A pending QR order expires after this many seconds (`expiration_time`).'),
});
export type MercadoPagoQrConfiguration = z.infer<typeof MercadoPagoQrConfiguration>;

export const MercadoPagoPosConfiguration = z.strictObject({
  terminal_id: PosId.optional().describe(
    'The Point terminal that takes the payment (e.g. `NEWLAND_N950__N950NCB801293324`). Required to take a payment; may be given per payment.',
  ),
});
export type MercadoPagoPosConfiguration = z.infer<typeof MercadoPagoPosConfiguration>;

type Configuration = Partial<MercadoPagoQrConfiguration & MercadoPagoPosConfiguration>;
type Ctx = ConnectorContext<MercadoPagoCredentials, Configuration>;

function checkCredentials(ctx: Ctx) {
  // The token's shape was parsed before the call (version.ts). Test credentials can never move real
  // money: refused in live. (`APP_USR-` tokens of test users are indistinguishable from production
  // ones, so nothing is refused in test.)
  if (ctx.environment === 'live' && ctx.credentials.access_token.startsWith('TEST-')) {
    throw new ConnectorError(
      'configuration_invalid',
      'A Mercado Pago TEST- access token cannot be used in live.',
      'test_token_in_live',
    );
  }
}

interface CallOptions {
  operation: MercadoPagoOperation;
  body?: InPersonOrderRequest | RefundRequest;
  idempotencyKey?: string;
  /**
   * A 402 ("transaction processing error") that carries the order is the order's answer: its failed
   * payment says whether it was a decline, and the order id is kept.
   */
  orderOn402?: boolean;
  /** Request headers beyond authentication, content type and idempotency. */
  headers?: Readonly<Record<string, string>>;
}

/** One request to the fixed base URL; anything but a 2xx becomes a `ConnectorError` without its payload. */
async function mpCall(ctx: Ctx, method: 'GET' | 'POST', path: string, options: CallOptions): Promise<unknown> {
  return (await mpSend(ctx, method, path, options)).json;
}

/** `mpCall` with the 2xx status, for the answers whose status says something (202: accepted, not done). */
async function mpSend(
  ctx: Ctx,
  method: 'GET' | 'POST',
  path: string,
  options: CallOptions,
): Promise<{ status: number; json: unknown }> {
  const headers: Record<string, string> = {
    ...options.headers,
    Authorization: `Bearer ${ctx.credentials.access_token}`,
    Accept: 'application/json',
  };
  if (options.body !== undefined) headers['Content-Type'] = 'application/json';
  if (method === 'POST') {
    if (!options.idempotencyKey) throw new Error('every Mercado Pago POST carries an X-Idempotency-Key');
    headers['X-Idempotency-Key'] = options.idempotencyKey;
  }
  const { status, json } = await sendRequest(ctx.fetch, MERCADOPAGO_HTTP, {
    method,
    url: `${MERCADOPAGO_API_BASE}${path}`,
    headers,
    ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
  });
  if (status === 402 && options.orderOn402 && MercadoPagoOrder.safeParse(json).success) return { status, json };
  if (status < 200 || status > 299) throw normalizeHttpError(options.operation, status, json);
  return { status, json };
}

const orderPath = (id: string, suffix = '') => `/v1/orders/${encodeURIComponent(id)}${suffix}`;

async function getOrder(ctx: Ctx, id: string): Promise<MercadoPagoOrder> {
  return parseAnswer(MercadoPagoOrder, await mpCall(ctx, 'GET', orderPath(id), { operation: 'lookup' }));
}

/** The account's currency (GET /users/me → `site_id`): an order is always charged in it. */
async function accountCurrency(ctx: Ctx): Promise<string | null> {
  const user = parseAnswer(MercadoPagoUser, await mpCall(ctx, 'GET', '/users/me', { operation: 'create' }));
  return currencyOfSite(user.site_id);
}

const notFound = (what: string) => new ConnectorError('not_found', `Mercado Pago has no such ${what}.`, 'not_found');

/**
 * The order's chargebacks as our disputes: each one the order lists (`transactions.chargebacks`) read from
 * the Chargebacks API (GET /v1/chargebacks/{id}; the Orders guides say to read it "using the id or case_id").
 * A chargeback Mercado Pago does not find is left out rather than failing the lookup; any other failure fails
 * it, as the order read would. No request when the order lists none.
 */
async function disputesOf(ctx: Ctx, order: MercadoPagoOrder, currency: string): Promise<ProcessorDispute[]> {
  const disputes: ProcessorDispute[] = [];
  for (const entry of order.transactions?.chargebacks ?? []) {
    if (!entry.id) continue;
    try {
      const chargeback = parseAnswer(
        MercadoPagoChargeback,
        await mpCall(ctx, 'GET', `/v1/chargebacks/${encodeURIComponent(entry.id)}`, { operation: 'lookup' }),
      );
      disputes.push(chargebackToDispute(chargeback, order, currency));
    } catch (error) {
      if (!(error instanceof ConnectorError && error.kind === 'not_found')) throw error;
    }
  }
  return disputes;
}

/** Our refund among the refunds an answer lists: the one of our transaction and amount, newest first. */
function findRefund(
  refunds: MercadoPagoOrderRefund[],
  options: { transactionId?: string; amountMinor?: number; currency: string },
): MercadoPagoOrderRefund | undefined {
  for (let i = refunds.length - 1; i >= 0; i--) {
    const refund = refunds[i]!;
    if (options.transactionId && refund.transaction_id && refund.transaction_id !== options.transactionId) continue;
    if (
      options.amountMinor !== undefined &&
      refund.amount != null &&
      minorOf(refund.amount, options.currency) !== options.amountMinor
    )
      continue;
    return refund;
  }
  return undefined;
}

function mercadoPagoAdapter(channel: Channel): ConnectorAdapter<MercadoPagoCredentials, Configuration> {
  const outcome = (order: MercadoPagoOrder): PaymentOutcome => orderToOutcome(channel, order);

  return {
    async createPayment(ctx, input) {
      checkCredentials(ctx);
      const config = ctx.configuration ?? {};
      // Built (and its configuration checked) before anything is sent.
      const body = buildOrderRequest(channel, input, {
        ...(config.external_pos_id ? { externalPosId: config.external_pos_id } : {}),
        ...(config.terminal_id ? { terminalId: config.terminal_id } : {}),
        ...(typeof config.qr_ttl_seconds === 'number' ? { qrTtlSeconds: config.qr_ttl_seconds } : {}),
      });
      const currency = await accountCurrency(ctx);
      if (currency !== input.amount.currency) {
        throw new ConnectorError(
          'configuration_invalid',
          `This Mercado Pago account charges in ${currency ?? 'another currency'}, not ${input.amount.currency}.`,
          'currency_mismatch',
        );
      }
      const key = await processorIdempotencyKey('order', input.processorIdempotencyKey);
      return outcome(
        parseAnswer(
          MercadoPagoOrder,
          await mpCall(ctx, 'POST', '/v1/orders', { operation: 'create', body, idempotencyKey: key, orderOn402: true }),
        ),
      );
    },

    async getPayment(ctx, input) {
      checkCredentials(ctx);
      // The Orders API is read by id; an order whose creation never got an answer has no id we know
      // (a retry of the creation with the same key recovers it).
      if (input.processorReference === null) throw notFound('order');
      const order = await getOrder(ctx, input.processorReference);
      return { ...outcome(order), disputes: await disputesOf(ctx, order, order.currency ?? input.amount.currency) };
    },

    async listDisputes(ctx, input) {
      checkCredentials(ctx);
      // Mercado Pago lists no chargebacks by order: the order names them (`transactions.chargebacks`), each is read.
      if (input.processorReference === null) throw notFound('order');
      const order = await getOrder(ctx, input.processorReference);
      return disputesOf(ctx, order, order.currency ?? input.amount.currency);
    },

    async cancelPayment(ctx, input) {
      checkCredentials(ctx);
      if (input.processorReference === null) {
        // Never answered: no QR code or terminal prompt reached anyone, and a QR order expires by itself.
        return {
          status: 'canceled',
          processorReference: null,
          action: { type: 'none' },
          processorStatus: 'not_created',
        };
      }
      const order = await getOrder(ctx, input.processorReference);
      const current = outcome(order);
      switch (current.status) {
        case 'canceled':
          return current;
        case 'approved':
          return voidOrder(ctx, order, input.processorIdempotencyKey);
        case 'pending':
        case 'processing': {
          // Only someone at the terminal can settle it; Mercado Pago refuses to cancel it (409), so it is not asked.
          if (current.action.type === 'check_terminal') {
            throw new ConnectorError(
              'declined',
              'The Point order awaits a check at the terminal; Mercado Pago cannot cancel it.',
              'action_required',
            );
          }
          const key = await processorIdempotencyKey('cancel', input.processorIdempotencyKey);
          // On the terminal already: only the header lets Mercado Pago cancel it, and then not at once.
          const atTerminal = order.status === 'at_terminal';
          const answer = await mpSend(ctx, 'POST', orderPath(order.id, '/cancel'), {
            operation: 'cancel',
            idempotencyKey: key,
            ...(atTerminal ? { headers: CANCEL_AT_TERMINAL_HEADER } : {}),
          });
          if (answer.status === 202) {
            // Accepted, not done: the order stays at_terminal until its cancellation (or the customer's
            // payment) is notified. The 202's body is not documented, so the order read above stands.
            const accepted = MercadoPagoOrder.safeParse(answer.json);
            const now = outcome(accepted.success && accepted.data.id === order.id ? accepted.data : order);
            if (now.status !== 'pending' && now.status !== 'processing') return now;
            return { ...now, cancellation: 'requested' };
          }
          return outcome(parseAnswer(MercadoPagoOrder, answer.json));
        }
        default:
          // Declined, failed or expired at the processor already: that is the payment's truth.
          return current;
      }
    },

    async refundPayment(ctx, input) {
      checkCredentials(ctx);
      const order = await getOrder(ctx, input.paymentProcessorReference);
      const transactionId = firstPayment(order)?.id;
      // Full when it is the whole order (the core never lets refunds exceed it): decided from the
      // request alone, so a retry sends the same body under the same key.
      const full = minorOf(order.total_amount, input.amount.currency) === input.amount.minor;
      const body = buildRefundRequest(full, transactionId, input.amount);
      const key = await processorIdempotencyKey('refund', input.processorIdempotencyKey);
      const answer = parseAnswer(
        MercadoPagoOrder,
        await mpCall(ctx, 'POST', orderPath(order.id, '/refund'), {
          operation: 'refund',
          ...(body ? { body } : {}),
          idempotencyKey: key,
        }),
      );
      const refund = findRefund(answer.transactions?.refunds ?? [], {
        ...(full ? {} : { transactionId, amountMinor: input.amount.minor }),
        currency: input.amount.currency,
      });
      if (!refund) {
        // Accepted without naming the refund: the order itself tells whether it is refunded.
        return {
          status: answer.status === 'refunded' ? 'approved' : 'pending',
          processorReference: null,
          processorStatus: processorStatusOf(answer),
        };
      }
      return refundOutcome(refund);
    },

    async getRefund(ctx, input) {
      checkCredentials(ctx);
      if (input.processorReference === null) throw notFound('refund');
      const order = await getOrder(ctx, input.paymentProcessorReference);
      const refund = (order.transactions?.refunds ?? []).find((r) => r.id === input.processorReference);
      if (!refund) throw notFound('refund');
      return refundOutcome(refund);
    },

    async parseNotification(ctx, input): Promise<ProcessorNotification> {
      const invalid = (message: string) => new ConnectorError('invalid_notification', message);
      let url: URL;
      try {
        url = new URL(input.url);
      } catch {
        throw invalid('The notification URL is not understood.');
      }
      const body = parseNotificationBody(input.rawBody);
      const queryDataId = url.searchParams.get('data.id');
      const signature = input.headers.get('x-signature');
      const requestId = input.headers.get('x-request-id');
      // Only `data.id` of the query string, `x-request-id` and `ts` are signed. Anything less is news
      // nobody vouches for: Mercado Pago's SDKs say QR notifications are not signed at all, so refusing
      // them would make Mercado Pago retry forever. It is accepted untrusted: only an id is taken, and
      // the core reads the order from Mercado Pago instead of believing anything here.
      const check =
        signature === null ||
        queryDataId === null ||
        queryDataId.length > 256 ||
        (requestId !== null && !/^[\x21-\x7e]{1,256}$/.test(requestId))
          ? null
          : await verifySignature(
              ctx.credentials.webhook_secret,
              signature,
              { dataId: queryDataId, requestId },
              Date.now(),
            );
      const refundId = refundIdOf(body);
      const bodyId = body.data?.id;

      if (!check?.ok) {
        const id =
          notificationId(queryDataId) ??
          notificationId(url.searchParams.get('id')) ??
          notificationId(bodyId) ??
          notificationId(body.resource?.split('/').pop());
        if (!id) throw invalid('The notification names no resource.');
        // A unique event id: nobody can use unsigned news to pre-empt a real event's id.
        const eventId = `mp_unsigned_${crypto.randomUUID()}`;
        if (refundId)
          return { eventId, resource: 'refund', processorReference: refundId, status: null, trusted: false };
        return { eventId, resource: 'payment', processorReference: id, status: null, trusted: false };
      }

      // The body may route the news (order or refund) but its status is never believed. `status: null`
      // makes the core read the order from Mercado Pago, so a replayed signature with an altered body
      // can change nothing.
      if (bodyId != null && String(bodyId).toLowerCase() !== queryDataId!.toLowerCase()) {
        throw invalid('The notification body names another resource than the signed data.id.');
      }
      const orderId = notificationId(queryDataId);
      if (!orderId) throw invalid('The notification names no order.');
      // The event id is the signed triple: a redelivery of the same notification is a duplicate, and no
      // one without the secret can produce another notification's id.
      const { ts } = parseSignatureHeader(signature!)!;
      const eventId = `mp_${(await sha256Hex(signatureManifest({ dataId: queryDataId, requestId, ts }))).slice(0, 40)}`;
      if (refundId) return { eventId, resource: 'refund', processorReference: refundId, status: null, trusted: true };
      return { eventId, resource: 'payment', processorReference: orderId, status: null, trusted: true };
    },

    ...(channel === 'pos'
      ? {
          async getTerminal(ctx: Ctx): Promise<TerminalState> {
            checkCredentials(ctx);
            const terminalId = ctx.configuration?.terminal_id;
            if (!terminalId)
              throw new ConnectorError(
                'configuration_invalid',
                'A Mercado Pago Point terminal needs configuration.terminal_id.',
                'missing_terminal_id',
              );
            return findTerminal(ctx, terminalId);
          },
        }
      : {}),
  };
}

/**
 * The Point terminal of the configuration, from GET /terminals/v1/list (its filters are a store and a POS,
 * not a terminal, so the pages are read until it appears).
 */
async function findTerminal(ctx: Ctx, terminalId: string): Promise<TerminalState> {
  for (let page = 0; page < TERMINALS_MAX_PAGES; page++) {
    const query = `limit=${TERMINALS_PAGE_SIZE}&offset=${page * TERMINALS_PAGE_SIZE}`;
    const list = parseAnswer(
      MercadoPagoTerminalList,
      await mpCall(ctx, 'GET', `/terminals/v1/list?${query}`, { operation: 'lookup' }),
    );
    const found = list.data.terminals.find((t) => t.id === terminalId);
    if (found) return terminalState(found);
    const total = list.paging?.total;
    const seen = (page + 1) * TERMINALS_PAGE_SIZE;
    if (list.data.terminals.length < TERMINALS_PAGE_SIZE || (typeof total === 'number' && seen >= total)) break;
  }
  throw new ConnectorError(
    'not_found',
    'Mercado Pago does not list this terminal for the account.',
    'terminal_not_listed',
  );
}

function refundOutcome(refund: MercadoPagoOrderRefund): RefundOutcome {
  const status = mapRefundStatus(refund.status);
  const failureReason = refundFailureReason(status);
  return {
    status,
    processorReference: refund.id,
    processorStatus: refund.status ?? 'unknown',
    ...(failureReason ? { failureReason } : {}),
    // Refunds, like orders, carry no fee or net in the Orders API (NOTES.md, "Fees").
    ...(status === 'approved' ? { settlement: null, settlementNullReason: 'not_reported' as const } : {}),
  };
}

/**
 * A void of a processed order: Mercado Pago cancels only orders nobody paid yet, so the whole order is
 * refunded, and the payment is canceled once that refund is processed. While it is still in progress
 * the cancel answers `unavailable`; retrying it (same key) finds the refund instead of making another.
 */
async function voidOrder(ctx: Ctx, order: MercadoPagoOrder, ourKey: string): Promise<PaymentOutcome> {
  const canceled = (answer: MercadoPagoOrder): PaymentOutcome => ({
    status: 'canceled',
    processorReference: order.id,
    action: { type: 'none' },
    processorStatus: processorStatusOf(answer),
  });
  if (order.status === 'refunded') return canceled(order);
  const key = await processorIdempotencyKey('void', ourKey);
  const answer = parseAnswer(
    MercadoPagoOrder,
    await mpCall(ctx, 'POST', orderPath(order.id, '/refund'), { operation: 'refund', idempotencyKey: key }),
  );
  const refunds = answer.transactions?.refunds ?? [];
  const statuses = refunds.map((r) => mapRefundStatus(r.status));
  if (statuses.some((s) => s === 'declined' || s === 'failed')) {
    throw new ConnectorError(
      'declined',
      'Mercado Pago refused to refund the order, so it cannot be voided.',
      'void_refund_rejected',
    );
  }
  if (answer.status === 'refunded' || (statuses.length > 0 && statuses.every((s) => s === 'approved')))
    return canceled(answer);
  throw new ConnectorError(
    'unavailable',
    'Mercado Pago is still processing the refund that voids the order; retry the cancel.',
    'void_in_progress',
  );
}

/**
 * How long after a sale its chargebacks are listed again (NOTES.md, "Chargebacks found without their
 * notification"). Mercado Pago's material gives no window for a payer to open one; 120 days is the one card
 * networks commonly allow (https://docs.chargeflow.io/docs/reference/concepts/network-timelines), and Point and
 * QR card payments run on them.
 */
export const MERCADOPAGO_DISPUTE_WINDOW_MS = 120 * 86_400_000;

const common = {
  ...firstPublishedVersion('mercadopago', MercadoPagoCredentials),
  currencies: MERCADOPAGO_CURRENCIES,
  disputeWindowMs: MERCADOPAGO_DISPUTE_WINDOW_MS,
};

export const mercadoPagoQrV1 = defineVersion({
  ...common,
  id: 'cnv_mercadopago_qr_v1',
  definitionId: 'cnd_mercadopago_qr',
  name: 'Mercado Pago QR',
  type: 'qr',
  configurationSchema: MercadoPagoQrConfiguration,
  adapter: mercadoPagoAdapter('qr'),
});

export const mercadoPagoPosV1 = defineVersion({
  ...common,
  id: 'cnv_mercadopago_pos_v1',
  definitionId: 'cnd_mercadopago_pos',
  name: 'Mercado Pago Point',
  type: 'pos',
  configurationSchema: MercadoPagoPosConfiguration,
  adapter: mercadoPagoAdapter('pos'),
});
