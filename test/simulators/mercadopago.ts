import type {
  OrderResponse,
  PaymentResponse,
  RefundResponse,
  ChargebackResponse,
  TransactionsResponse,
} from 'mercadopago/dist/clients/order/commonTypes';
import type { UserResponse } from 'mercadopago/dist/clients/user/get/types';
import type { ChargebackResponse as ChargebackApiResponse } from 'mercadopago/dist/clients/chargeback/commonTypes';
import { SignatureFailureReason, WebhookSignatureValidator } from 'mercadopago/dist/utils/webhook/index.js';
import { formatAmount, parseAmount } from '../../src/domain/money.ts';
import { bytesToHex, hmacSha256 } from '../../src/lib/encoding.ts';
import type { DocsTerminalList, ExpectConforms, SdkMismatches } from '../../src/connectors/mercadopago/transformers.ts';
import { emvPayload, tlv } from '../helpers/emvco.ts';

/**
 * A local stand-in for Mercado Pago's Orders API (https://api.mercadopago.com), written from its public
 * reference: POST /v1/orders (`qr` dynamic orders with `type_response.qr_data`, `point` terminal orders),
 * GET /v1/orders/{id}, POST /v1/orders/{id}/cancel, POST /v1/orders/{id}/refund, GET /users/me, the
 * `X-Idempotency-Key` replay, `{ errors: [{ code, message, details }] }` error bodies, and webhooks signed
 * with `x-signature: ts=…,v1=…` over `id:{data.id};request-id:{x-request-id};ts:{ts};`.
 *
 * Amounts drive outcomes like the sandbox (docs/sandbox.md), by the last two digits of the minor units:
 * 51 → Point order declined (failed / rejected_by_issuer), QR as usual (decline later through `decline`);
 * 52 → the first request with a key is processed but its answer lost (a TimeoutError is thrown at once);
 * 53 → the first request with a key answers 503 and does nothing; 54 → order failed (processing_error);
 * 55 → a Point order the terminal could not settle (`action_required` / `check_on_terminal`).
 * Point orders complete at once (processed) unless declined: the terminal is simulated. A refund of an
 * amount ending in 61 is rejected. Switches in `faults` force the other cases.
 *
 * Terminals: GET /terminals/v1/list answers the account's Point terminals (`addTerminal`) in the shape of
 * the Point reference "Get list of terminals" (no SDK types it). The cancel of an order `at_terminal` sent
 * with `x-allow-cancelable-status: at_terminal` is accepted with 202 when the terminal supports it
 * (`faults.cancelAtTerminal: 'accepted'`; Point Smart 1 and 2, news of 2026-10-23): the order stays
 * `at_terminal` until `completeCancellation` (the terminal canceled it: `order.canceled` notified) or `pay`
 * (the customer paid first). With `faults.oneOrderPerTerminal`, a Point order for a terminal that already
 * holds a `created` or `at_terminal` order is refused with 409 `already_queued_order_for_terminal`.
 *
 * The oracle is the official SDK (mercadopago 3.6.1): every answer is a complete object of its Orders
 * types (`OrderResponse`, `PaymentResponse`, `RefundResponse`, `ChargebackResponse`), every status the
 * Orders API documents can be produced (`setStatus`), every documented error status (`faults.errorNext`),
 * amounts in the formats Mercado Pago may write (`faults.amountFormat`), and every signed notification is
 * checked by the SDK's own `WebhookSignatureValidator` before it is handed out.
 *
 * Chargebacks (`chargeBack`, `documentChargeback`, `decideChargeback`) are listed on the order and read at
 * GET /v1/chargebacks/{id} (by id or case_id), with the SDK's fields (`ChargebackResponse`,
 * clients/chargeback/commonTypes.d.ts) and those the API reference "Get chargeback" documents
 * (`coverage_applied`, `documentation_required`, `documentation_status`, `date_documentation_deadline`):
 * opened with documentation due in 10 days ("10 days are allowed to submit the transaction vouchers",
 * the chargeback management guide), decided for the seller (`coverage_applied: true`) or against it.
 *
 * `fetch` is fetch-compatible: inject it as `ctx.fetch`, or route `globalThis.fetch` to it.
 */

export const MP_BASE = 'https://api.mercadopago.com';

/** Every field of `T` present (a complete object of the SDK type, as the API answers for these orders). */
type Complete<T> = { [K in keyof T]-?: Exclude<T[K], undefined> };
export type SimPaymentJson = Complete<
  Pick<
    PaymentResponse,
    'id' | 'amount' | 'paid_amount' | 'reference_id' | 'status' | 'status_detail' | 'payment_method'
  >
>;
export type SimRefundJson = Complete<
  Pick<RefundResponse, 'id' | 'transaction_id' | 'reference_id' | 'amount' | 'status'>
>;
export type SimChargebackJson = Complete<
  Pick<ChargebackResponse, 'id' | 'transaction_id' | 'case_id' | 'status' | 'references'>
>;
/** The order as the Orders API answers it for `qr` and `point` orders (the online-only fields absent). */
export type SimOrderJson = Complete<
  Pick<
    OrderResponse,
    | 'id'
    | 'type'
    | 'processing_mode'
    | 'external_reference'
    | 'total_amount'
    | 'total_paid_amount'
    | 'country_code'
    | 'user_id'
    | 'status'
    | 'status_detail'
    | 'currency'
    | 'created_date'
    | 'last_updated_date'
    | 'integration_data'
  >
> &
  Pick<OrderResponse, 'description' | 'expiration_time'> & {
    transactions: Complete<Pick<TransactionsResponse, 'payments'>> & {
      refunds?: SimRefundJson[];
      chargebacks?: SimChargebackJson[];
    };
    /** `config.qr` / `config.point`: documented by the Orders API reference, absent from the SDK's `Config`. */
    config: OrderResponse['config'] & { qr?: Record<string, unknown>; point?: Record<string, unknown> };
    type_response?: Complete<NonNullable<OrderResponse['type_response']>>;
  };

/**
 * Every order `status` / `status_detail` pair the Orders API documents for QR and Point orders
 * (NOTES.md names the pages), so a test can put an order in any of them.
 */
export const DOCUMENTED_ORDER_STATES: readonly {
  status: string;
  detail: string;
  payment: { status: string; status_detail: string };
}[] = [
  { status: 'created', detail: 'created', payment: { status: 'created', status_detail: 'ready_to_process' } },
  { status: 'at_terminal', detail: 'at_terminal', payment: { status: 'at_terminal', status_detail: 'at_terminal' } },
  { status: 'processing', detail: 'in_process', payment: { status: 'processing', status_detail: 'in_process' } },
  {
    status: 'action_required',
    detail: 'check_on_terminal',
    payment: { status: 'action_required', status_detail: 'check_on_terminal' },
  },
  {
    status: 'action_required',
    detail: 'waiting_payment',
    payment: { status: 'action_required', status_detail: 'waiting_payment' },
  },
  { status: 'processed', detail: 'accredited', payment: { status: 'processed', status_detail: 'accredited' } },
  { status: 'processed', detail: 'processed', payment: { status: 'processed', status_detail: 'accredited' } },
  {
    status: 'processed',
    detail: 'partially_refunded',
    payment: { status: 'processed', status_detail: 'partially_refunded' },
  },
  { status: 'refunded', detail: 'refunded', payment: { status: 'refunded', status_detail: 'refunded' } },
  { status: 'canceled', detail: 'canceled', payment: { status: 'canceled', status_detail: 'canceled' } },
  { status: 'expired', detail: 'expired', payment: { status: 'expired', status_detail: 'expired' } },
  { status: 'failed', detail: 'failed', payment: { status: 'failed', status_detail: 'rejected_by_issuer' } },
  { status: 'failed', detail: 'processing_error', payment: { status: 'failed', status_detail: 'processing_error' } },
  {
    status: 'charged_back',
    detail: 'charged_back',
    payment: { status: 'charged_back', status_detail: 'charged_back' },
  },
];

/** The HTTP error statuses Mercado Pago's SDKs and the Orders API document, with a code of each. */
export const DOCUMENTED_ERRORS: readonly { status: number; code: string }[] = [
  { status: 400, code: 'property_value' },
  { status: 401, code: 'unauthorized' },
  { status: 402, code: 'failed' },
  { status: 403, code: 'forbidden' },
  { status: 404, code: 'order_not_found' },
  { status: 409, code: 'cannot_cancel_order' },
  { status: 422, code: 'unprocessable_entity' },
  { status: 423, code: 'resource_locked' },
  { status: 424, code: 'failed_dependency' },
  { status: 429, code: 'too_many_requests' },
  { status: 500, code: 'internal_error' },
  { status: 502, code: 'bad_gateway' },
  { status: 503, code: 'service_unavailable' },
  { status: 504, code: 'gateway_timeout' },
];
const SITE_OF: Record<string, { site: string; country: string; numeric: string; code: string }> = {
  ARS: { site: 'MLA', country: 'AR', numeric: '032', code: 'ARG' },
  BRL: { site: 'MLB', country: 'BR', numeric: '986', code: 'BRA' },
  MXN: { site: 'MLM', country: 'MX', numeric: '484', code: 'MEX' },
  CLP: { site: 'MLC', country: 'CL', numeric: '152', code: 'CHL' },
  COP: { site: 'MCO', country: 'CO', numeric: '170', code: 'COL' },
  UYU: { site: 'MLU', country: 'UY', numeric: '858', code: 'URY' },
  PEN: { site: 'MPE', country: 'PE', numeric: '604', code: 'PER' },
};

/** GET /terminals/v1/list as the Point reference documents it (`data.terminals`, `paging`). */
export interface SimTerminalList {
  data: { terminals: SimTerminalJson[] };
  paging: { total: number; offset: number; limit: number };
}

// No SDK types this endpoint: the list is held to the Point reference's declaration instead.
export type SimTerminalListConformsToDocs = ExpectConforms<SdkMismatches<SimTerminalList, DocsTerminalList>>;

export interface SimAccount {
  accessToken: string;
  webhookSecret: string;
  currency: string;
  userId: number;
  /** Where Mercado Pago posts this application's webhooks (the payment method's notification URL). */
  notificationUrl: string;
  /** Known stores' POS and Point terminals; null accepts any. */
  posIds: Set<string> | null;
  terminalIds: Set<string> | null;
  /** The Point terminals GET /terminals/v1/list answers, in order. */
  terminals: SimTerminalJson[];
}

/** A terminal of GET /terminals/v1/list, every field the Point reference's sample answer has. */
export interface SimTerminalJson {
  id: string;
  pos_id: number;
  store_id: string;
  external_pos_id: string;
  operating_mode: 'PDV' | 'STANDALONE' | 'SELF_SERVICE' | 'UNDEFINED';
}

export interface SimPayment {
  id: string;
  amount: string;
  status: string;
  status_detail: string;
}

export interface SimChargeback {
  id: string;
  transaction_id: string;
  case_id: string;
  status: string;
  amount: string;
  reason: string;
  documentationRequired: boolean;
  documentationStatus: 'pending' | 'review_pending' | 'valid' | 'invalid' | 'not_supplied' | 'not_applicable';
  coverageApplied: boolean | null;
  deadline: string | null;
  createdDate: string;
  lastUpdatedDate: string;
}

/** GET /v1/chargebacks/{id}: the SDK's fields (a complete object of its type) and the reference's others. */
export type SimChargebackApiJson = Complete<
  Pick<ChargebackApiResponse, 'id' | 'status' | 'amount' | 'currency_id' | 'reason' | 'date_created' | 'last_modified'>
> & {
  payments: number[];
  currency: string;
  coverage_applied: boolean | null;
  coverage_elegible: boolean;
  documentation_required: boolean;
  documentation_status: string;
  documentation: unknown[];
  date_documentation_deadline: string | null;
  date_last_updated: string;
  live_mode: boolean;
};

export interface SimRefund {
  id: string;
  transaction_id: string;
  reference_id: string;
  amount: string;
  status: string;
}

export interface SimOrder {
  id: string;
  token: string;
  type: 'qr' | 'point';
  status: string;
  statusDetail: string;
  externalReference: string;
  description: string | undefined;
  totalAmount: string;
  totalMinor: number;
  currency: string;
  expirationTime: string | undefined;
  config: Record<string, unknown>;
  qrData: string | undefined;
  payment: SimPayment;
  refunds: SimRefund[];
  chargebacks: SimChargeback[];
  /** A cancel at the terminal was accepted (202) and has not completed. */
  cancelRequested?: boolean;
  version: number;
  createdDate: string;
  lastUpdatedDate: string;
}

export interface SimRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: unknown;
}

/** A notification as Mercado Pago would deliver it: POST `url` with these headers and body. */
export interface SimNotification {
  url: string;
  /** `url` without origin, for `call('POST', path, …)`. */
  path: string;
  headers: Record<string, string>;
  rawBody: string;
}

export interface SimEvent {
  orderId: string;
  action: string;
  /** The notification's `data`: the order when the event happened. */
  data: Record<string, unknown>;
}

export type NotificationKind =
  | 'signed'
  | 'forged'
  | 'stale'
  | 'unsigned'
  | 'altered_body'
  | 'qr_unsigned'
  | 'signed_without_query_id';

export interface Faults {
  /** The next N requests throw a TimeoutError before reaching the API (nothing happens). */
  timeoutNext: number;
  /** The next N requests answer 503 (nothing happens). */
  unavailableNext: number;
  /** The next N requests answer 429. */
  rateLimitNext: number;
  /** Every request answers 401, as for a revoked or mistyped token. */
  invalidToken: boolean;
  /** Point orders are declined (failed / rejected_by_issuer) whatever the amount. */
  declineAll: boolean;
  /** Point orders wait on the terminal (`at_terminal`) instead of completing at once. */
  pointWaitsAtTerminal: boolean;
  /**
   * The cancel of an order `at_terminal` with `x-allow-cancelable-status: at_terminal`: `accepted` (202, the
   * terminal cancels later; Point Smart 1 and 2 on their latest software) or `refused` (409 as without the
   * header: an older terminal or software). Refused by default, as before the feature.
   */
  cancelAtTerminal: 'accepted' | 'refused';
  /** The body of that 202 (undocumented): the order as it still is, or none. */
  acceptedCancelBody: 'order' | 'empty';
  /**
   * A Point order for a terminal that holds one `created` or `at_terminal` is refused (409
   * `already_queued_order_for_terminal`), as Mercado Pago does. Off by default: suites sharing one simulator
   * leave orders waiting on one terminal.
   */
  oneOrderPerTerminal: boolean;
  /** Refunds stay `processing` until `settleRefund`. */
  refundsProcessing: boolean;
  /** The next QR order carries this `qr_data` instead of the generated one. */
  qrData: string | null;
  /** Fetch itself fails (DNS, TLS, connection reset): a TypeError. */
  networkError: boolean;
  /** The next `count` requests (of `method` only, when given) answer this HTTP error (nothing happens). */
  errorNext: { status: number; code: string; count: number; method?: 'GET' | 'POST' } | null;
  /**
   * How amounts are written in answers: `canonical` with the currency's digits ("10.50", CLP "1500");
   * `padded` with two more zeros ("10.5000", CLP "1500.00"); `short` without trailing zeros ("10.5", "10").
   */
  amountFormat: 'canonical' | 'padded' | 'short';
}

const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });

const mpError = (status: number, code: string, message: string, details: string[] = []) =>
  json(status, { errors: [{ code, message, details }] });

const ULID_ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const ulid = () => {
  const bytes = crypto.getRandomValues(new Uint8Array(26));
  return `01${Array.from(bytes.slice(2), (b) => ULID_ALPHABET[b & 31]).join('')}`;
};

/** An EMVCo merchant-presented payload shaped like Mercado Pago's dynamic QR codes. */
function emvQr(order: { id: string; totalAmount: string; currency: string }): string {
  const site = SITE_OF[order.currency]!;
  return emvPayload(
    tlv('00', '01') +
      tlv('01', '12') +
      tlv('43', tlv('00', 'COM.MERCADOLIBRE') + tlv('01', '306') + tlv('02', order.id.slice(-20))) +
      tlv('52', '5611') +
      tlv('53', site.numeric) +
      tlv('54', order.totalAmount) +
      tlv('58', site.country) +
      tlv('59', 'COMERCIO DE PRUEBA') +
      tlv('60', 'CIUDAD') +
      tlv('62', tlv('05', order.id.slice(-25))),
  );
}

export class MercadoPagoSimulator {
  readonly accounts = new Map<string, SimAccount>();
  readonly orders = new Map<string, SimOrder>();
  readonly requests: SimRequest[] = [];
  /** Events Mercado Pago notifies (each state change adds one), with the order as it was then. */
  readonly events: SimEvent[] = [];
  readonly faults: Faults = MercadoPagoSimulator.noFaults();

  static noFaults(): Faults {
    return {
      timeoutNext: 0,
      unavailableNext: 0,
      rateLimitNext: 0,
      invalidToken: false,
      declineAll: false,
      pointWaitsAtTerminal: false,
      cancelAtTerminal: 'refused',
      acceptedCancelBody: 'order',
      oneOrderPerTerminal: false,
      refundsProcessing: false,
      qrData: null,
      networkError: false,
      errorNext: null,
      amountFormat: 'canonical',
    };
  }

  /** Back to a well-behaved Mercado Pago (the accounts and orders stay). */
  resetFaults() {
    Object.assign(this.faults, MercadoPagoSimulator.noFaults());
  }
  private readonly idempotency = new Map<string, { fingerprint: string; status: number; body: string }>();
  private readonly seenKeys = new Set<string>();
  private readonly now: () => number;

  constructor(options: { now?: () => number } = {}) {
    this.now = options.now ?? Date.now;
  }

  addAccount(
    options: Partial<Omit<SimAccount, 'posIds' | 'terminalIds'>> & { posIds?: string[]; terminalIds?: string[] } = {},
  ): SimAccount {
    const account: SimAccount = {
      accessToken:
        options.accessToken ?? `TEST-${Math.floor(Math.random() * 1e15)}-${crypto.randomUUID().replace(/-/g, '')}`,
      webhookSecret: options.webhookSecret ?? bytesToHex(crypto.getRandomValues(new Uint8Array(32))),
      currency: options.currency ?? 'ARS',
      userId: options.userId ?? 100_000_000 + Math.floor(Math.random() * 900_000_000),
      notificationUrl: options.notificationUrl ?? 'https://merchant.example/notifications',
      posIds: options.posIds ? new Set(options.posIds) : null,
      terminalIds: options.terminalIds ? new Set(options.terminalIds) : null,
      terminals: [],
    };
    if (!SITE_OF[account.currency]) throw new Error(`no Mercado Pago site charges ${account.currency}`);
    this.accounts.set(account.accessToken, account);
    return account;
  }

  /** A Point terminal of `account`, listed by GET /terminals/v1/list (PDV unless said). */
  addTerminal(
    account: SimAccount,
    id: string,
    operatingMode: SimTerminalJson['operating_mode'] = 'PDV',
  ): SimTerminalJson {
    const n = account.terminals.length + 1;
    const terminal: SimTerminalJson = {
      id,
      pos_id: 47_792_476 + n,
      store_id: String(47_792_478 + n),
      external_pos_id: `SUC01POS${String(n).padStart(2, '0')}`,
      operating_mode: operatingMode,
    };
    account.terminals.push(terminal);
    return terminal;
  }

  /** Orders created with this `external_reference` (our payment id). */
  ordersFor(externalReference: string): SimOrder[] {
    return [...this.orders.values()].filter((o) => o.externalReference === externalReference);
  }

  /** Requests to a path (method and path as `POST /v1/orders`). */
  requestsTo(method: string, pathPrefix: string): SimRequest[] {
    return this.requests.filter((r) => r.method === method && r.path.startsWith(pathPrefix));
  }

  readonly fetch = (async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    const request = new Request(input, init);
    const url = new URL(request.url);
    if (url.origin !== MP_BASE) throw new TypeError(`simulator: no route to ${url.origin}`);
    const text = request.method === 'GET' ? '' : await request.text();
    let body: unknown;
    if (text) {
      try {
        body = JSON.parse(text);
      } catch {
        body = text;
      }
    }
    const headers: Record<string, string> = {};
    request.headers.forEach((value, key) => (headers[key] = value));
    this.requests.push({ method: request.method, path: url.pathname + url.search, headers, body });

    if (this.faults.networkError) throw new TypeError('Network connection lost.');
    if (this.faults.timeoutNext > 0) {
      this.faults.timeoutNext--;
      throw new DOMException('The operation was aborted due to timeout', 'TimeoutError');
    }
    if (this.faults.unavailableNext > 0) {
      this.faults.unavailableNext--;
      return mpError(
        503,
        'service_unavailable',
        'Service temporarily unavailable. Internal trace 7f3a: upstream pool exhausted.',
      );
    }
    if (
      this.faults.errorNext &&
      this.faults.errorNext.count > 0 &&
      (!this.faults.errorNext.method || this.faults.errorNext.method === request.method)
    ) {
      const { status, code } = this.faults.errorNext;
      if (--this.faults.errorNext.count === 0) this.faults.errorNext = null;
      return mpError(status, code, `Simulated ${status}.`);
    }
    if (this.faults.rateLimitNext > 0) {
      this.faults.rateLimitNext--;
      return mpError(429, 'too_many_requests', 'Too many requests.');
    }

    const token = /^Bearer (.+)$/.exec(request.headers.get('authorization') ?? '')?.[1];
    const account = token ? this.accounts.get(token) : undefined;
    if (this.faults.invalidToken || !account) {
      return json(401, {
        code: 'unauthorized',
        message: `invalid access token ${token?.slice(0, 12) ?? ''}…`,
        errors: [{ code: 'unauthorized', message: 'Invalid credentials.', details: [] }],
      });
    }

    const path = url.pathname;
    if (request.method === 'GET' && path === '/users/me') {
      const site = SITE_OF[account.currency]!;
      return json(200, {
        id: account.userId,
        nickname: 'TESTUSER',
        site_id: site.site,
        country_id: site.country,
        email: 'test_user@testuser.com',
      } satisfies Omit<UserResponse, 'api_response'>);
    }

    if (request.method === 'GET' && path === '/terminals/v1/list') return this.listTerminals(account, url.searchParams);
    const chargebackMatch = /^\/v1\/chargebacks\/([^/]+)$/.exec(path);
    if (request.method === 'GET' && chargebackMatch) {
      const id = decodeURIComponent(chargebackMatch[1]!);
      for (const order of this.orders.values()) {
        const found = order.chargebacks.find((c) => c.id === id || c.case_id === id);
        if (found && order.token === account.accessToken) return json(200, this.chargebackJson(order, found));
      }
      return json(404, { message: 'chargeback not found', error: 'not_found', status: 404, cause: [] });
    }

    const orderMatch = /^\/v1\/orders(?:\/([^/]+)(?:\/(cancel|refund))?)?$/.exec(path);
    if (!orderMatch) return json(404, { message: 'resource not found', error: 'not_found', status: 404, cause: [] });
    const orderId = orderMatch[1] ? decodeURIComponent(orderMatch[1]) : undefined;
    const action = orderMatch[2];

    if (request.method === 'GET' && orderId && !action) {
      const order = this.orders.get(orderId);
      if (!order || order.token !== account.accessToken) return mpError(404, 'order_not_found', 'Order not found.');
      return json(200, this.orderJson(order));
    }
    if (request.method !== 'POST')
      return json(405, { message: 'method not allowed', error: 'method_not_allowed', status: 405, cause: [] });

    // Every POST of the Orders API carries an idempotency key; a replay answers the first answer.
    const key = request.headers.get('x-idempotency-key');
    if (!key)
      return mpError(400, 'required_properties', 'The header X-Idempotency-Key is required.', ['X-Idempotency-Key']);
    const scope = `${account.accessToken}|${key}`;
    const fingerprint = `${request.method} ${path} ${text}`;
    const stored = this.idempotency.get(scope);
    if (stored) {
      if (stored.fingerprint !== fingerprint)
        return mpError(
          409,
          'idempotency_key_already_used',
          'The idempotency key was already used with a different request.',
        );
      return new Response(stored.body, {
        status: stored.status,
        headers: { 'content-type': 'application/json', 'x-idempotency-replayed': 'true' },
      });
    }
    const firstTime = !this.seenKeys.has(scope);
    this.seenKeys.add(scope);

    let lostAnswer = false;
    let res: Response;
    if (!orderId) {
      const amountRule = this.amountRule(account, body);
      if (amountRule === 53 && firstTime)
        return mpError(503, 'service_unavailable', 'Service temporarily unavailable.');
      lostAnswer = amountRule === 52 && firstTime;
      res = this.createOrder(account, body);
    } else {
      const order = this.orders.get(orderId);
      if (!order || order.token !== account.accessToken) res = mpError(404, 'order_not_found', 'Order not found.');
      else
        res =
          action === 'cancel'
            ? this.cancelOrder(order, request.headers)
            : action === 'refund'
              ? this.refundOrder(order, body)
              : json(404, { message: 'resource not found', error: 'not_found', status: 404, cause: [] });
    }
    // Answers are kept for the key (errors the request caused included); a 5xx never is.
    const resBody = await res.text();
    if (res.status < 500) this.idempotency.set(scope, { fingerprint, status: res.status, body: resBody });
    if (lostAnswer) throw new DOMException('The operation was aborted due to timeout', 'TimeoutError');
    return new Response(resBody, { status: res.status, headers: res.headers });
  }) as typeof fetch;

  /** GET /terminals/v1/list: `limit` 1 to 50 (default 50), `offset`, optional `store_id` / `pos_id` filters. */
  private listTerminals(account: SimAccount, query: URLSearchParams): Response {
    const limit = Number(query.get('limit') ?? 50);
    const offset = Number(query.get('offset') ?? 0);
    if (!Number.isInteger(limit) || limit < 1 || limit > 50 || !Number.isInteger(offset) || offset < 0)
      return mpError(400, 'invalid_parameter', 'limit must be 1 to 50 and offset 0 or more.');
    const storeId = query.get('store_id');
    const posId = query.get('pos_id');
    const matching = account.terminals.filter(
      (t) => (storeId === null || t.store_id === storeId) && (posId === null || String(t.pos_id) === posId),
    );
    return json(200, {
      data: { terminals: matching.slice(offset, offset + limit) },
      paging: { total: matching.length, offset, limit },
    } satisfies SimTerminalList);
  }

  private amountRule(account: SimAccount, body: unknown): number | null {
    const total = (body as { total_amount?: unknown } | undefined)?.total_amount;
    if (typeof total !== 'string') return null;
    try {
      return parseAmount(total, account.currency) % 100;
    } catch {
      return null;
    }
  }

  private createOrder(account: SimAccount, body: unknown): Response {
    const b = (body && typeof body === 'object' ? body : {}) as Record<string, any>;
    const missing: string[] = [];
    if (b.type !== 'qr' && b.type !== 'point')
      return mpError(400, 'property_value', 'type must be one of qr, point.', ['type']);
    if (typeof b.external_reference !== 'string' || !/^[A-Za-z0-9_-]{1,64}$/.test(b.external_reference))
      missing.push('external_reference');
    if (typeof b.total_amount !== 'string') missing.push('total_amount');
    const payments = b.transactions?.payments;
    if (!Array.isArray(payments) || payments.length !== 1 || typeof payments[0]?.amount !== 'string')
      missing.push('transactions.payments');
    if (b.type === 'qr' && typeof b.config?.qr?.external_pos_id !== 'string') missing.push('config.qr.external_pos_id');
    if (b.type === 'qr' && b.config?.qr?.mode !== 'dynamic') missing.push('config.qr.mode');
    if (b.type === 'point' && typeof b.config?.point?.terminal_id !== 'string')
      missing.push('config.point.terminal_id');
    if (missing.length)
      return mpError(400, 'required_properties', 'Required properties are missing or invalid.', missing);
    let totalMinor: number;
    try {
      totalMinor = parseAmount(b.total_amount, account.currency);
      if (parseAmount(payments[0].amount, account.currency) !== totalMinor) throw new Error('amounts differ');
    } catch {
      return mpError(
        400,
        'property_value',
        'total_amount is not a valid amount for this site, or differs from the payments.',
        ['total_amount'],
      );
    }
    if (b.type === 'qr' && account.posIds && !account.posIds.has(b.config.qr.external_pos_id))
      return mpError(404, 'pos_not_found', 'The POS does not exist.');
    if (b.type === 'point' && account.terminalIds && !account.terminalIds.has(b.config.point.terminal_id))
      return mpError(404, 'terminal_not_found', 'The terminal does not exist.');
    if (b.type === 'point' && this.faults.oneOrderPerTerminal && this.queuedOn(account, b.config.point.terminal_id))
      return mpError(
        409,
        'already_queued_order_for_terminal',
        'The terminal already has a queued order. It must be finished or canceled before sending new orders.',
      );

    const id = `ORD${ulid()}`;
    const now = new Date(this.now()).toISOString();
    const rule = totalMinor % 100;
    const order: SimOrder = {
      id,
      token: account.accessToken,
      type: b.type,
      status: 'created',
      statusDetail: 'created',
      externalReference: b.external_reference,
      description: typeof b.description === 'string' ? b.description : undefined,
      totalAmount: formatAmount(totalMinor, account.currency),
      totalMinor,
      currency: account.currency,
      expirationTime: typeof b.expiration_time === 'string' ? b.expiration_time : undefined,
      config: b.config,
      qrData: undefined,
      payment: {
        id: `PAY${ulid()}`,
        amount: formatAmount(totalMinor, account.currency),
        status: 'created',
        status_detail: 'ready_to_process',
      },
      refunds: [],
      chargebacks: [],
      version: 1,
      createdDate: now,
      lastUpdatedDate: now,
    };
    this.orders.set(id, order);
    if (rule === 54) {
      this.move(order, 'failed', 'processing_error', { status: 'failed', status_detail: 'processing_error' }, false);
    } else if (order.type === 'point') {
      if (rule === 51 || this.faults.declineAll)
        this.move(order, 'failed', 'failed', { status: 'failed', status_detail: 'rejected_by_issuer' }, false);
      else if (rule === 55)
        this.move(
          order,
          'action_required',
          'check_on_terminal',
          { status: 'action_required', status_detail: 'check_on_terminal' },
          false,
        );
      else if (this.faults.pointWaitsAtTerminal)
        this.move(order, 'at_terminal', 'at_terminal', { status: 'created', status_detail: 'ready_to_process' }, false);
      else this.move(order, 'processed', 'accredited', { status: 'processed', status_detail: 'accredited' }, false);
    } else {
      order.qrData = this.faults.qrData ?? emvQr(order);
      this.faults.qrData = null;
    }
    return json(201, this.orderJson(order));
  }

  /** An order of the account still waiting on this terminal (Point keeps one order per terminal). */
  private queuedOn(account: SimAccount, terminalId: string): boolean {
    return [...this.orders.values()].some(
      (o) =>
        o.token === account.accessToken &&
        o.type === 'point' &&
        (o.status === 'created' || o.status === 'at_terminal') &&
        (o.config as { point?: { terminal_id?: string } }).point?.terminal_id === terminalId,
    );
  }

  private cancelOrder(order: SimOrder, headers: Headers): Response {
    if (
      order.status === 'at_terminal' &&
      headers.get('x-allow-cancelable-status') === 'at_terminal' &&
      this.faults.cancelAtTerminal === 'accepted'
    ) {
      // Accepted for asynchronous processing: nothing changes until the terminal cancels it.
      order.cancelRequested = true;
      return this.faults.acceptedCancelBody === 'empty'
        ? new Response(null, { status: 202 })
        : json(202, this.orderJson(order));
    }
    // Only an order nobody has started paying can be canceled through the API.
    if (order.status !== 'created')
      return mpError(409, 'order_cannot_be_canceled', `The order is ${order.status} and cannot be canceled.`);
    this.move(order, 'canceled', 'canceled', { status: 'canceled', status_detail: 'canceled' });
    return json(200, this.orderJson(order));
  }

  private refundOrder(order: SimOrder, body: unknown): Response {
    if (order.status !== 'processed')
      return mpError(409, 'order_cannot_be_refunded', `The order is ${order.status} and cannot be refunded.`);
    const taken = order.refunds
      .filter((r) => r.status !== 'rejected' && r.status !== 'failed')
      .reduce((sum, r) => sum + parseAmount(r.amount, order.currency), 0);
    const remaining = order.totalMinor - taken;
    let amountMinor = remaining;
    if (body !== undefined) {
      const transactions = (body as { transactions?: unknown }).transactions;
      const t =
        Array.isArray(transactions) && transactions.length === 1
          ? (transactions[0] as { id?: unknown; amount?: unknown })
          : null;
      if (!t || t.id !== order.payment.id || typeof t.amount !== 'string')
        return mpError(400, 'property_value', 'transactions must name the order’s payment and an amount.', [
          'transactions',
        ]);
      try {
        amountMinor = parseAmount(t.amount, order.currency);
      } catch {
        return mpError(400, 'property_value', 'amount is not valid.', ['transactions.amount']);
      }
    }
    if (amountMinor <= 0 || amountMinor > remaining)
      return mpError(400, 'invalid_refund_amount', 'The amount exceeds what can be refunded.', ['transactions.amount']);
    const status = amountMinor % 100 === 61 ? 'rejected' : this.faults.refundsProcessing ? 'processing' : 'processed';
    const refund: SimRefund = {
      id: `REF${ulid()}`,
      transaction_id: order.payment.id,
      reference_id: String(Math.floor(Math.random() * 1e11)),
      amount: formatAmount(amountMinor, order.currency),
      status,
    };
    order.refunds.push(refund);
    this.afterRefund(order);
    return json(201, this.orderJson(order));
  }

  private afterRefund(order: SimOrder) {
    const refunded = order.refunds
      .filter((r) => r.status === 'processed')
      .reduce((sum, r) => sum + parseAmount(r.amount, order.currency), 0);
    if (refunded === 0) {
      order.version++;
      return;
    }
    if (refunded >= order.totalMinor)
      this.move(order, 'refunded', 'refunded', { status: 'refunded', status_detail: 'refunded' });
    else
      this.move(
        order,
        'processed',
        'partially_refunded',
        { status: 'processed', status_detail: 'partially_refunded' },
        true,
        'order.refunded',
      );
  }

  private move(
    order: SimOrder,
    status: string,
    detail: string,
    payment: Pick<SimPayment, 'status' | 'status_detail'>,
    notify = true,
    action = `order.${status}`,
  ) {
    order.status = status;
    order.statusDetail = detail;
    order.payment = { ...order.payment, ...payment };
    order.version++;
    order.lastUpdatedDate = new Date(this.now()).toISOString();
    if (notify) this.events.push({ orderId: order.id, action, data: this.notificationData(order) });
  }

  /** An amount as `faults.amountFormat` writes it. */
  private written(text: string): string {
    if (this.faults.amountFormat === 'padded') return text.includes('.') ? `${text}00` : `${text}.00`;
    if (this.faults.amountFormat === 'short') return text.includes('.') ? text.replace(/\.?0+$/, '') : text;
    return text;
  }

  private transactionsJson(order: SimOrder): SimOrderJson['transactions'] {
    const payment: SimPaymentJson = {
      id: order.payment.id,
      reference_id: order.payment.id.slice(3, 15),
      amount: this.written(order.payment.amount),
      paid_amount: this.written(
        order.status === 'processed' || order.status === 'refunded' || order.status === 'charged_back'
          ? order.payment.amount
          : formatAmount(0, order.currency),
      ),
      status: order.payment.status,
      status_detail: order.payment.status_detail,
      payment_method:
        order.type === 'point'
          ? { id: 'master', type: 'credit_card', installments: 1 }
          : { id: 'account_money', type: 'account_money', installments: 1 },
    };
    return {
      payments: [payment],
      ...(order.refunds.length
        ? {
            refunds: order.refunds.map(
              (r): SimRefundJson => ({
                id: r.id,
                transaction_id: r.transaction_id,
                reference_id: r.reference_id,
                amount: this.written(r.amount),
                status: r.status,
              }),
            ),
          }
        : {}),
      ...(order.chargebacks.length
        ? {
            chargebacks: order.chargebacks.map(
              (c): SimChargebackJson => ({
                id: c.id,
                transaction_id: c.transaction_id,
                case_id: c.case_id,
                status: c.status,
                references: [c.case_id],
              }),
            ),
          }
        : {}),
    };
  }

  private notificationData(order: SimOrder): Record<string, unknown> {
    const full = this.orderJson(order);
    return {
      id: full.id,
      external_reference: full.external_reference,
      status: full.status,
      status_detail: full.status_detail,
      total_paid_amount: full.total_paid_amount,
      type: full.type,
      version: order.version,
      transactions: full.transactions,
    };
  }

  /** The order as the API answers it: a complete `OrderResponse` of a `qr` or `point` order. */
  orderJson(order: SimOrder): SimOrderJson {
    const paid = order.status === 'processed' || order.status === 'refunded' || order.status === 'charged_back';
    return {
      id: order.id,
      type: order.type,
      processing_mode: 'automatic',
      external_reference: order.externalReference,
      ...(order.description !== undefined ? { description: order.description } : {}),
      total_amount: this.written(order.totalAmount),
      total_paid_amount: this.written(paid ? order.totalAmount : formatAmount(0, order.currency)),
      country_code: SITE_OF[order.currency]!.code,
      user_id: String(this.accounts.get(order.token)?.userId ?? 0),
      status: order.status,
      status_detail: order.statusDetail,
      currency: order.currency,
      created_date: order.createdDate,
      last_updated_date: order.lastUpdatedDate,
      ...(order.expirationTime ? { expiration_time: order.expirationTime } : {}),
      integration_data: {
        application_id: '1234567890123456',
        corporation_id: '',
        integrator_id: '',
        platform_id: '',
        sponsor: { id: '' },
      },
      transactions: this.transactionsJson(order),
      config: order.config,
      ...(order.type === 'qr' && order.qrData ? { type_response: { qr_data: order.qrData } } : {}),
    };
  }

  // -------------------------------------------------------------------------------------------------
  // The buyer, the terminal and Mercado Pago's back office
  // -------------------------------------------------------------------------------------------------

  private order(id: string): SimOrder {
    const order = this.orders.get(id);
    if (!order) throw new Error(`simulator: no order ${id}`);
    return order;
  }

  /** The buyer paid the QR (or the card went through on the terminal, before any cancel requested there). */
  pay(orderId: string) {
    const order = this.order(orderId);
    order.cancelRequested = false;
    this.move(order, 'processed', 'accredited', { status: 'processed', status_detail: 'accredited' });
  }

  /**
   * The terminal carries out the cancel accepted with 202: the order is canceled and `order.canceled`
   * notified. False (nothing happens) when no cancel is pending there: the customer paid first, or none was asked.
   */
  completeCancellation(orderId: string): boolean {
    const order = this.order(orderId);
    if (!order.cancelRequested || order.status !== 'at_terminal') return false;
    order.cancelRequested = false;
    this.move(order, 'canceled', 'canceled', { status: 'canceled', status_detail: 'canceled' });
    return true;
  }

  decline(orderId: string, detail = 'rejected_by_issuer') {
    this.move(this.order(orderId), 'failed', 'failed', { status: 'failed', status_detail: detail });
  }

  fail(orderId: string) {
    this.move(this.order(orderId), 'failed', 'processing_error', {
      status: 'failed',
      status_detail: 'processing_error',
    });
  }

  expire(orderId: string) {
    this.move(this.order(orderId), 'expired', 'expired', { status: 'expired', status_detail: 'expired' });
  }

  /** Puts the order in any documented state (`DOCUMENTED_ORDER_STATES`), notifying it. */
  setStatus(orderId: string, state: (typeof DOCUMENTED_ORDER_STATES)[number]) {
    this.move(this.order(orderId), state.status, state.detail, state.payment);
  }

  /** The terminal could not settle the Point payment: `action_required` / `check_on_terminal`, notified. */
  actionRequired(orderId: string) {
    this.move(this.order(orderId), 'action_required', 'check_on_terminal', {
      status: 'action_required',
      status_detail: 'check_on_terminal',
    });
  }

  /** The payer's bank charged a processed order back: a chargeback on its payment, notified. */
  chargeBack(orderId: string, options: { amount?: string; reason?: string; documentationRequired?: boolean } = {}) {
    const order = this.order(orderId);
    if (order.status !== 'processed') throw new Error(`simulator: a ${order.status} order cannot be charged back`);
    const now = new Date(this.now()).toISOString();
    const required = options.documentationRequired ?? true;
    order.chargebacks.push({
      id: `CHB${ulid()}`,
      transaction_id: order.payment.id,
      case_id: String(Math.floor(Math.random() * 1e10)),
      status: 'opened',
      amount: options.amount ?? order.totalAmount,
      reason: options.reason ?? 'general',
      documentationRequired: required,
      documentationStatus: required ? 'pending' : 'not_applicable',
      coverageApplied: null,
      deadline: required ? new Date(this.now() + 10 * 86_400_000).toISOString() : null,
      createdDate: now,
      lastUpdatedDate: now,
    });
    this.move(order, 'charged_back', 'charged_back', { status: 'charged_back', status_detail: 'charged_back' });
  }

  /** The seller uploaded documentation: `review_pending`, notified on the order. */
  documentChargeback(orderId: string) {
    this.updateChargeback(orderId, (c) => (c.documentationStatus = 'review_pending'));
  }

  /** The case is decided: for the seller (`coverage_applied: true`, the money returned) or against. */
  decideChargeback(orderId: string, outcome: 'won' | 'lost') {
    this.updateChargeback(orderId, (c) => {
      c.coverageApplied = outcome === 'won';
      c.status = 'closed';
      if (c.documentationStatus === 'review_pending') c.documentationStatus = outcome === 'won' ? 'valid' : 'invalid';
      else if (c.documentationStatus === 'pending') c.documentationStatus = 'not_supplied';
    });
  }

  private updateChargeback(orderId: string, change: (chargeback: SimChargeback) => void) {
    const order = this.order(orderId);
    const chargeback = order.chargebacks.at(-1);
    if (!chargeback) throw new Error(`simulator: order ${orderId} has no chargeback`);
    change(chargeback);
    chargeback.lastUpdatedDate = new Date(this.now()).toISOString();
    order.version++;
    this.events.push({ orderId: order.id, action: 'order.charged_back', data: this.notificationData(order) });
  }

  private chargebackJson(order: SimOrder, c: SimChargeback): SimChargebackApiJson {
    return {
      id: c.id,
      payments: [],
      status: c.status,
      amount: Number(c.amount),
      currency: order.currency,
      currency_id: order.currency,
      reason: c.reason,
      coverage_applied: c.coverageApplied,
      coverage_elegible: true,
      documentation_required: c.documentationRequired,
      documentation_status: c.documentationStatus,
      documentation: [],
      date_documentation_deadline: c.deadline,
      date_created: c.createdDate,
      date_last_updated: c.lastUpdatedDate,
      last_modified: c.lastUpdatedDate,
      live_mode: false,
    };
  }

  /** A refund that was `processing` completes (or is rejected). */
  settleRefund(orderId: string, refundId: string, status: 'processed' | 'rejected' | 'failed' = 'processed') {
    const order = this.order(orderId);
    const refund = order.refunds.find((r) => r.id === refundId);
    if (!refund) throw new Error(`simulator: no refund ${refundId}`);
    refund.status = status;
    this.afterRefund(order);
  }

  // -------------------------------------------------------------------------------------------------
  // Notifications
  // -------------------------------------------------------------------------------------------------

  /** Every event Mercado Pago would have notified, signed now, in the order they happened (`orderId` filters). */
  async delivered(orderId?: string): Promise<SimNotification[]> {
    const out: SimNotification[] = [];
    for (const event of this.events)
      if (!orderId || event.orderId === orderId) out.push(await this.notification(event.orderId, { event }));
    return out;
  }

  /**
   * A notification about an order, as Mercado Pago delivers it to the account's webhook URL:
   * `signed` correctly; `forged` signed with another secret; `stale` signed with a `ts` 10 minutes old;
   * `altered_body` correctly signed but its body claims `processed` (the signature does not cover the
   * body); `unsigned` in the IPN style (`?id=…&topic=order`, no `x-signature`).
   */
  async notification(
    orderId: string,
    options: {
      kind?: NotificationKind;
      event?: SimEvent;
      requestId?: string | null;
      ts?: number;
      lowercaseIdInManifest?: boolean;
    } = {},
  ): Promise<SimNotification> {
    const order = this.order(orderId);
    const account = this.accounts.get(order.token)!;
    const kind = options.kind ?? 'signed';
    const base = new URL(account.notificationUrl);
    if (kind === 'qr_unsigned') {
      // QR notifications are not signed (the SDKs' WebhookSignatureValidator says so): the webhook's
      // usual query string and body, no x-signature.
      base.searchParams.set('data.id', order.id);
      base.searchParams.set('type', 'order');
      const rawBody = JSON.stringify({
        action: `order.${order.status}`,
        api_version: 'v1',
        type: 'order',
        live_mode: false,
        user_id: String(account.userId),
        data: this.notificationData(order),
      });
      return {
        url: base.toString(),
        path: base.pathname + base.search,
        headers: { 'content-type': 'application/json', 'x-request-id': crypto.randomUUID() },
        rawBody,
      };
    }
    if (kind === 'unsigned') {
      base.searchParams.set('id', order.id);
      base.searchParams.set('topic', 'order');
      const rawBody = JSON.stringify({ resource: `${MP_BASE}/v1/orders/${order.id}`, topic: 'order' });
      return {
        url: base.toString(),
        path: base.pathname + base.search,
        headers: { 'content-type': 'application/json' },
        rawBody,
      };
    }
    if (kind !== 'signed_without_query_id') base.searchParams.set('data.id', order.id);
    base.searchParams.set('type', 'order');
    const action = options.event?.action ?? `order.${order.status}`;
    const data = { ...(options.event?.data ?? this.notificationData(order)) };
    if (kind === 'altered_body')
      Object.assign(data, { status: 'processed', status_detail: 'accredited', total_paid_amount: order.totalAmount });
    const rawBody = JSON.stringify({
      action,
      api_version: 'v1',
      application_id: '1234567890123456',
      date_created: new Date(this.now()).toISOString(),
      live_mode: false,
      type: 'order',
      user_id: String(account.userId),
      data,
    });
    const ts = options.ts ?? (kind === 'stale' ? Math.floor(this.now() / 1000) - 600 : Math.floor(this.now() / 1000));
    const requestId = options.requestId === undefined ? crypto.randomUUID() : options.requestId;
    const secret = kind === 'forged' ? bytesToHex(crypto.getRandomValues(new Uint8Array(32))) : account.webhookSecret;
    // The documented manifest: `id:{data.id of the query, lower-cased when alphanumeric};request-id:…;ts:…;`,
    // a part the notification lacks left out (here `id` when the query has no data.id).
    const manifestId =
      kind === 'signed_without_query_id'
        ? null
        : options.lowercaseIdInManifest === false
          ? order.id
          : order.id.toLowerCase();
    const manifest = `${manifestId !== null ? `id:${manifestId};` : ''}${requestId !== null ? `request-id:${requestId};` : ''}ts:${ts};`;
    const v1 = bytesToHex(await hmacSha256(secret, manifest));
    const headers: Record<string, string> = { 'content-type': 'application/json', 'x-signature': `ts=${ts},v1=${v1}` };
    if (requestId !== null) headers['x-request-id'] = requestId;
    this.checkWithSdk(kind, headers, manifestId, account.webhookSecret, ts, options.lowercaseIdInManifest === false);
    return { url: base.toString(), path: base.pathname + base.search, headers, rawBody };
  }

  /**
   * The official validator (mercadopago's `WebhookSignatureValidator`) must agree with what this
   * notification claims to be: a correctly signed one validates (its `dataId` lower-cased, as the docs
   * tell integrators to pass it), a forged one is a mismatch, a stale one out of tolerance.
   */
  private checkWithSdk(
    kind: NotificationKind,
    headers: Record<string, string>,
    dataId: string | null,
    secret: string,
    ts: number,
    mixedCaseId: boolean,
  ) {
    const validate = () =>
      WebhookSignatureValidator.validate({
        xSignature: headers['x-signature'],
        xRequestId: headers['x-request-id'],
        dataId: dataId ?? undefined,
        secret,
        toleranceSeconds: 300,
        now: this.now,
      });
    const failure = (() => {
      try {
        validate();
        return null;
      } catch (error) {
        return (error as { reason?: SignatureFailureReason }).reason ?? 'error';
      }
    })();
    const expected: SignatureFailureReason | null =
      kind === 'forged'
        ? SignatureFailureReason.SignatureMismatch
        : kind === 'stale'
          ? SignatureFailureReason.TimestampOutOfTolerance
          : null;
    // A manifest with the id as written (not lower-cased) is a deliberate misstep of tests; the SDK is told the same id.
    if (!mixedCaseId && failure !== expected && !(Math.abs(ts * 1000 - this.now()) > 300_000 && kind !== 'stale')) {
      throw new Error(`simulator: the SDK's validator says ${failure ?? 'valid'} of a ${kind} notification`);
    }
  }
}
