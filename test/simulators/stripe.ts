/**
 * A local simulator of the parts of Stripe's HTTP API (https://docs.stripe.com/api) the Stripe connector
 * uses, built from the public reference: a `fetch`-compatible function with all state in memory.
 *
 * Simulated:
 * - Authentication by `Authorization: Bearer sk_test_...|sk_live_...|rk_...` (401 otherwise, or for a
 *   key marked rejected); `livemode` follows the key.
 * - `application/x-www-form-urlencoded` bodies in bracket notation; Stripe-shaped JSON answers and errors
 *   (`{ error: { type, code, decline_code, message, param } }`).
 * - Idempotency: a POST with an `Idempotency-Key` seen before replays the stored status and body with
 *   `Idempotent-Replayed: true`; the same key with other parameters (or another endpoint) is 400
 *   `idempotency_error`. Results of requests that failed validation or never executed are not stored.
 * - PaymentIntents (create, confirm at creation for QR methods, retrieve, search by metadata, cancel),
 *   Refunds (create, retrieve, list by payment_intent), Terminal readers (retrieve,
 *   process_payment_intent, cancel_action, and the test helper present_payment_method).
 * - Events for every state change, and signed deliveries (`Stripe-Signature: t=...,v1=...`).
 *
 * Outcomes follow the sandbox's amount rules (CONTRACT.md), by the last two digits of the minor units:
 * 51 → a POS card is declined at the reader (QR: pending, decline later with `declineQr`); 52 → the first
 * create with an idempotency key is executed but its answer is lost (a timeout); 53 → the first create with
 * a key answers 503 without executing; 54 → the payment attempt fails; a refund ending 61 fails with
 * `failure_reason: declined`. Switches inject timeouts, network errors, 5xx, 401, 402 and 429 on demand.
 */

export const STRIPE_ORIGIN = 'https://api.stripe.com';

type Json = Record<string, any>;

export interface SimPaymentIntent {
  id: string;
  object: 'payment_intent';
  amount: number;
  amount_received: number;
  currency: string;
  status: string;
  capture_method: string;
  payment_method_types: string[];
  payment_method: string | null;
  metadata: Record<string, string>;
  description: string | null;
  created: number;
  livemode: boolean;
  client_secret: string;
  last_payment_error: Json | null;
  next_action: Json | null;
  latest_charge: string | null;
  canceled_at: number | null;
  cancellation_reason: string | null;
}

export interface SimRefund {
  id: string;
  object: 'refund';
  amount: number;
  currency: string;
  status: 'succeeded' | 'pending' | 'requires_action' | 'failed' | 'canceled';
  failure_reason: string | null;
  payment_intent: string;
  charge: string | null;
  metadata: Record<string, string>;
  reason: string | null;
  created: number;
}

export interface SimReader {
  id: string;
  object: 'terminal.reader';
  device_type: string;
  label: string;
  status: 'online' | 'offline';
  livemode: boolean;
  action: null | {
    type: 'process_payment_intent';
    status: 'in_progress' | 'succeeded' | 'failed';
    process_payment_intent: { payment_intent: string };
    failure_code: string | null;
    failure_message: string | null;
  };
}

export interface SimEvent {
  id: string;
  object: 'event';
  api_version: string;
  created: number;
  livemode: boolean;
  pending_webhooks: number;
  request: { id: string | null; idempotency_key: string | null };
  type: string;
  data: { object: Json };
}

export interface RecordedRequest {
  method: string;
  path: string;
  query: string;
  params: Json;
  rawBody: string;
  headers: Record<string, string>;
  idempotencyKey: string | null;
}

export type InjectionKind =
  /** Throws a DOMException `TimeoutError` before anything executes (the adapter's abort signal fired). */
  | 'timeout'
  /** Executes (and stores the idempotent result), then throws `TimeoutError`: the answer is lost. */
  | 'timeout_after'
  /** Throws a TypeError, as fetch does when the network fails. */
  | 'network'
  | 'server_error'
  | 'unavailable'
  | 'invalid_key'
  | 'forbidden'
  | 'rate_limited'
  | 'decline'
  | 'idempotency_conflict';

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
  apiVersion?: string;
}

interface HandlerResult {
  status: number;
  body: Json;
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
const clone = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;
const lastTwo = (amount: number) => amount % 100;

export function timeoutError(): DOMException {
  return new DOMException('The operation was aborted due to timeout', 'TimeoutError');
}

function stripeError(status: number, error: Json, save = true): HandlerResult {
  return { status, body: { error: { message: 'An error occurred.', ...error } }, save };
}

const invalid = (message: string, param?: string, code = 'parameter_invalid') =>
  stripeError(400, { type: 'invalid_request_error', code, message, ...(param ? { param } : {}) }, false);

const missing = (kind: string, id: string, param?: string) =>
  stripeError(404, { type: 'invalid_request_error', code: 'resource_missing', message: `No such ${kind}: '${id}'`, ...(param ? { param } : {}) });

/** Decodes bracket notation (`a[b][]=x`) into nested objects and arrays. */
export function parseForm(text: string): Json {
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
function qrPayload(pi: SimPaymentIntent, type: string): string {
  const tlv = (tag: string, value: string) => `${tag}${String(value.length).padStart(2, '0')}${value}`;
  const value = `${Math.floor(pi.amount / 100)}.${String(pi.amount % 100).padStart(2, '0')}`;
  const body =
    tlv('00', '01') +
    tlv('01', '12') +
    tlv('29', tlv('00', type === 'paynow' ? 'SG.PAYNOW' : 'A000000677010111') + tlv('01', pi.id.slice(3, 19))) +
    tlv('53', type === 'paynow' ? '702' : '764') +
    tlv('54', value) +
    tlv('58', type === 'paynow' ? 'SG' : 'TH') +
    tlv('59', 'SIM SHOP & CO=1+2%') +
    tlv('62', tlv('05', pi.id)) +
    '6304';
  let crc = 0xffff;
  for (const byte of new TextEncoder().encode(body)) {
    crc ^= byte << 8;
    for (let i = 0; i < 8; i++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return body + crc.toString(16).toUpperCase().padStart(4, '0');
}

async function hmacHex(secret: string, message: string): Promise<string> {
  const key = await crypto.subtle.importKey('raw', new TextEncoder().encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  const mac = new Uint8Array(await crypto.subtle.sign('HMAC', key, new TextEncoder().encode(message)));
  return Array.from(mac, (b) => b.toString(16).padStart(2, '0')).join('');
}

export interface SignedDelivery {
  rawBody: string;
  signature: string;
  headers: Record<string, string>;
}

export class StripeSimulator {
  readonly paymentIntents = new Map<string, SimPaymentIntent>();
  readonly refunds = new Map<string, SimRefund>();
  readonly readers = new Map<string, SimReader>();
  readonly events: SimEvent[] = [];
  readonly requests: RecordedRequest[] = [];
  readonly rejectedKeys = new Set<string>();
  readonly offlineReaders = new Set<string>();
  readonly webhookSecret: string;
  readerMode: 'auto' | 'manual';
  refundMode: 'auto' | 'pending';
  readonly apiVersion: string;

  private readonly idempotency = new Map<string, { fingerprint: string; status: number; body: string }>();
  private readonly unavailableOnce = new Set<string>();
  private readonly injections: Injection[] = [];
  private livemode = false;

  constructor(options: StripeSimulatorOptions = {}) {
    this.webhookSecret = options.webhookSecret ?? `whsec_${stripeId('sim', 32).slice(4)}`;
    this.readerMode = options.readerMode ?? 'auto';
    this.refundMode = options.refundMode ?? 'auto';
    this.apiVersion = options.apiVersion ?? '2024-06-20';
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
    this.injections.push({ kind, times: options.times ?? 1, ...(options.method ? { method: options.method } : {}), ...(options.path ? { path: options.path } : {}) });
  }

  clearInjections() {
    this.injections.length = 0;
  }

  rejectKey(secretKey: string) {
    this.rejectedKeys.add(secretKey);
  }

  /** PaymentIntents created, optionally only those of one of our payments (by metadata). */
  paymentIntentCount(paymentId?: string): number {
    return [...this.paymentIntents.values()].filter((pi) => paymentId === undefined || pi.metadata.payment_id === paymentId).length;
  }

  paymentIntentFor(paymentId: string): SimPaymentIntent | undefined {
    return [...this.paymentIntents.values()].find((pi) => pi.metadata.payment_id === paymentId);
  }

  requestsTo(method: string, path: string | RegExp): RecordedRequest[] {
    return this.requests.filter((r) => r.method === method && (typeof path === 'string' ? r.path === path : path.test(r.path)));
  }

  // -------------------------------------------------------------------------------------------------------
  // What happens away from the API (the buyer, the reader, the bank)

  /** The card is presented to the reader: the outcome follows the amount rules unless given. */
  presentCard(readerId: string, outcome?: 'succeed' | 'decline' | 'fail') {
    const reader = this.readers.get(readerId);
    if (!reader?.action || reader.action.status !== 'in_progress') throw new Error(`reader ${readerId} has no action in progress`);
    const pi = this.paymentIntents.get(reader.action.process_payment_intent.payment_intent)!;
    const decided = outcome ?? (lastTwo(pi.amount) === 51 ? 'decline' : lastTwo(pi.amount) === 54 ? 'fail' : 'succeed');
    pi.payment_method = stripeId('pm');
    if (decided === 'succeed') {
      this.succeed(pi);
      reader.action.status = 'succeeded';
      this.emit('terminal.reader.action_succeeded', reader);
    } else {
      const error =
        decided === 'decline'
          ? { type: 'card_error', code: 'card_declined', decline_code: 'generic_decline', message: 'Your card was declined.' }
          : { type: 'invalid_request_error', code: 'payment_intent_payment_attempt_failed', message: 'The latest payment attempt of this PaymentIntent has failed.' };
      this.failAttempt(pi, error);
      reader.action.status = 'failed';
      reader.action.failure_code = error.code;
      reader.action.failure_message = error.message;
      this.emit('terminal.reader.action_failed', reader);
    }
  }

  /** The buyer pays the QR code. */
  payQr(paymentIntentId: string) {
    const pi = this.mustQr(paymentIntentId);
    this.succeed(pi);
  }

  /** The buyer's bank refuses the QR payment. */
  declineQr(paymentIntentId: string) {
    const pi = this.mustQr(paymentIntentId);
    this.failAttempt(pi, { type: 'card_error', code: 'payment_method_provider_decline', decline_code: 'generic_decline', message: 'The payment was declined.' });
  }

  /**
   * The processor's asynchronous news for a waiting PaymentIntent, whatever its channel (a card at the
   * reader, a QR scan, an abandonment), returned as the signed delivery of the event it causes: what a
   * behavioural suite sends to POST /v1/processor-notifications/{method} where the sandbox has test helpers.
   */
  async settlePayment(paymentIntentId: string, outcome: 'succeed' | 'decline' | 'fail' | 'cancel'): Promise<SignedDelivery> {
    const pi = this.paymentIntents.get(paymentIntentId);
    if (!pi) throw new Error(`no PaymentIntent ${paymentIntentId}`);
    const reader = [...this.readers.values()].find((r) => r.action?.status === 'in_progress' && r.action.process_payment_intent.payment_intent === pi.id);
    if (outcome === 'cancel') {
      if (reader?.action) Object.assign(reader.action, { status: 'failed', failure_code: 'canceled', failure_message: 'The action was canceled.' });
      pi.status = 'canceled';
      pi.canceled_at = nowSeconds();
      pi.cancellation_reason = 'abandoned';
      pi.next_action = null;
      this.emit('payment_intent.canceled', pi);
      return this.deliver(this.eventFor('payment_intent.canceled', pi.id));
    }
    if (reader) this.presentCard(reader.id, outcome);
    else if (outcome === 'succeed') this.payQr(pi.id);
    else if (outcome === 'decline') this.declineQr(pi.id);
    else {
      this.mustQr(pi.id);
      this.failAttempt(pi, { type: 'api_error', code: 'payment_method_provider_timeout', message: 'The payment method provider failed.' });
    }
    return this.deliver(this.eventFor(outcome === 'succeed' ? 'payment_intent.succeeded' : 'payment_intent.payment_failed', pi.id));
  }

  settleRefund(refundId: string, status: 'succeeded' | 'failed', failureReason: string | null = status === 'failed' ? 'unknown' : null) {
    const refund = this.refunds.get(refundId);
    if (!refund) throw new Error(`no refund ${refundId}`);
    refund.status = status;
    refund.failure_reason = failureReason;
    this.emit('charge.refund.updated', refund);
    if (status === 'failed') this.emit('refund.failed', refund);
  }

  // -------------------------------------------------------------------------------------------------------
  // Webhooks

  /** `Stripe-Signature` for `rawBody` at `timestamp` (unix seconds) with `secret`. */
  async signatureHeader(rawBody: string, options: { secret?: string; timestamp?: number; extraSignatures?: string[] } = {}): Promise<string> {
    const t = options.timestamp ?? nowSeconds();
    const v1 = await hmacHex(options.secret ?? this.webhookSecret, `${t}.${rawBody}`);
    return [`t=${t}`, ...(options.extraSignatures ?? []).map((s) => `v1=${s}`), `v1=${v1}`, `v0=${'0'.repeat(64)}`].join(',');
  }

  /**
   * A delivery of `event` as Stripe sends it. `secret` signs with another secret (a forgery, or a wrong
   * configuration); `timestamp` backdates it (stale); `tamper` changes the body after signing.
   */
  async deliver(event: SimEvent, options: { secret?: string; timestamp?: number; tamper?: (raw: string) => string } = {}): Promise<SignedDelivery> {
    const signed = JSON.stringify(event, null, 2);
    const signature = await this.signatureHeader(signed, options);
    const rawBody = options.tamper ? options.tamper(signed) : signed;
    return { rawBody, signature, headers: { 'Content-Type': 'application/json; charset=utf-8', 'Stripe-Signature': signature, 'User-Agent': 'Stripe/1.0 (+https://stripe.com/docs/webhooks)' } };
  }

  /** The latest event of `type` about object `objectId`. */
  eventFor(type: string, objectId: string): SimEvent {
    const found = [...this.events].reverse().find((e) => e.type === type && e.data.object.id === objectId);
    if (!found) throw new Error(`no ${type} event for ${objectId}; have ${this.events.map((e) => e.type).join(', ')}`);
    return found;
  }

  /** An event built by hand (for unknown types or odd shapes). */
  makeEvent(type: string, object: Json): SimEvent {
    return {
      id: stripeId('evt'),
      object: 'event',
      api_version: this.apiVersion,
      created: nowSeconds(),
      livemode: this.livemode,
      pending_webhooks: 1,
      request: { id: null, idempotency_key: null },
      type,
      data: { object: clone(object) },
    };
  }

  // -------------------------------------------------------------------------------------------------------
  // The HTTP layer

  private async handle(request: Request): Promise<Response> {
    const url = new URL(request.url);
    if (url.origin !== STRIPE_ORIGIN) throw new TypeError(`The Stripe simulator refuses network access to ${url.origin}`);
    const method = request.method.toUpperCase();
    // Read as bytes: workerd warns when .text() is called on a form body, which Stripe's bodies are.
    const rawBody = method === 'POST' ? new TextDecoder().decode(await request.arrayBuffer()) : '';
    const params = parseForm(method === 'POST' ? rawBody : url.search.slice(1));
    const idempotencyKey = request.headers.get('idempotency-key');
    const headers: Record<string, string> = {};
    request.headers.forEach((value, name) => (headers[name] = value));
    this.requests.push({ method, path: url.pathname, query: url.search, params, rawBody, headers, idempotencyKey });

    const injection = this.takeInjection(method, url.pathname);
    switch (injection?.kind) {
      case 'timeout':
        throw timeoutError();
      case 'network':
        throw new TypeError('fetch failed');
      case 'server_error':
        return this.respond(stripeError(500, { type: 'api_error', message: 'Something went wrong on Stripe’s end.' }));
      case 'unavailable':
        return this.respond(stripeError(503, { type: 'api_error', message: 'Stripe is temporarily unavailable.' }));
      case 'invalid_key':
        return this.respond(stripeError(401, { type: 'invalid_request_error', message: 'Invalid API Key provided: sk_test_********' }));
      case 'forbidden':
        return this.respond(stripeError(403, { type: 'invalid_request_error', code: 'secret_key_required', message: 'The provided key does not have the required permissions.' }));
      case 'rate_limited':
        return this.respond(stripeError(429, { type: 'invalid_request_error', code: 'rate_limit', message: 'Too many requests hit the API too quickly.' }));
      case 'decline':
        return this.respond(stripeError(402, { type: 'card_error', code: 'card_declined', decline_code: 'insufficient_funds', message: 'Your card has insufficient funds.' }));
      case 'idempotency_conflict':
        return this.respond(stripeError(409, { type: 'idempotency_error', code: 'idempotency_key_in_use', message: 'There is currently another in-progress request using this Stripe-Idempotency-Key.' }));
    }

    const secretKey = /^Bearer (\S+)$/.exec(request.headers.get('authorization') ?? '')?.[1] ?? '';
    if (!/^(sk|rk)_(test|live)_[A-Za-z0-9]+$/.test(secretKey) || this.rejectedKeys.has(secretKey)) {
      return this.respond(stripeError(401, { type: 'invalid_request_error', message: `Invalid API Key provided: ${secretKey.slice(0, 8)}********` }));
    }
    this.livemode = /_live_/.test(secretKey);
    if (method === 'POST' && !(request.headers.get('content-type') ?? '').startsWith('application/x-www-form-urlencoded')) {
      return this.respond(invalid('Invalid request: the body must be application/x-www-form-urlencoded.'));
    }

    const fingerprint = `${method} ${url.pathname} ${rawBody}`;
    if (method === 'POST' && idempotencyKey) {
      const stored = this.idempotency.get(idempotencyKey);
      if (stored) {
        if (stored.fingerprint !== fingerprint) {
          return this.respond(
            stripeError(400, { type: 'idempotency_error', message: `Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than '${idempotencyKey}' if you meant to execute a different request.` }, false),
          );
        }
        return this.json(stored.status, stored.body, { 'Idempotent-Replayed': 'true' });
      }
    }

    const result = this.route(method, url.pathname, params, idempotencyKey);
    if (method === 'POST' && idempotencyKey && result.save !== false) {
      this.idempotency.set(idempotencyKey, { fingerprint, status: result.status, body: JSON.stringify(result.body) });
    }
    if (injection?.kind === 'timeout_after' || result.loseAnswer) throw timeoutError();
    return this.respond(result);
  }

  private takeInjection(method: string, path: string): Injection | undefined {
    const index = this.injections.findIndex(
      (i) => (!i.method || i.method === method) && (!i.path || (typeof i.path === 'string' ? i.path === path : i.path.test(path))),
    );
    if (index < 0) return undefined;
    const injection = this.injections[index]!;
    if (--injection.times <= 0) this.injections.splice(index, 1);
    return injection;
  }

  private respond(result: HandlerResult): Response {
    return this.json(result.status, JSON.stringify(result.body));
  }

  private json(status: number, body: string, extra: Record<string, string> = {}): Response {
    return new Response(body, { status, headers: { 'Content-Type': 'application/json', 'Request-Id': stripeId('req', 14), 'Stripe-Version': this.apiVersion, ...extra } });
  }

  private route(method: string, path: string, params: Json, idempotencyKey: string | null): HandlerResult {
    const parts = path.split('/').filter(Boolean).map(decodeURIComponent);
    const [v1, resource, id, action, extra] = parts;
    if (v1 !== 'v1') return this.unknownRoute(method, path);
    if (resource === 'payment_intents') {
      if (method === 'POST' && parts.length === 2) return this.createPaymentIntent(params, idempotencyKey);
      if (method === 'GET' && id === 'search' && parts.length === 3) return this.searchPaymentIntents(params);
      if (method === 'GET' && parts.length === 3) return this.retrievePaymentIntent(id!);
      if (method === 'POST' && action === 'cancel' && parts.length === 4) return this.cancelPaymentIntent(id!, params);
    }
    if (resource === 'refunds') {
      if (method === 'POST' && parts.length === 2) return this.createRefund(params);
      if (method === 'GET' && parts.length === 2) return this.listRefunds(params);
      if (method === 'GET' && parts.length === 3) return this.refunds.has(id!) ? { status: 200, body: clone(this.refunds.get(id!)!) } : missing('refund', id!);
    }
    if (resource === 'terminal' && id === 'readers') {
      const readerId = action!;
      if (method === 'GET' && parts.length === 4) return this.withReader(readerId, (reader) => ({ status: 200, body: clone(reader) }));
      if (method === 'POST' && extra === 'process_payment_intent' && parts.length === 5) return this.processPaymentIntent(readerId, params);
      if (method === 'POST' && extra === 'cancel_action' && parts.length === 5) return this.cancelAction(readerId);
    }
    if (resource === 'test_helpers' && id === 'terminal' && action === 'readers' && method === 'POST' && parts[5] === 'present_payment_method') {
      return this.withReader(extra!, (reader) => {
        if (reader.action?.status !== 'in_progress') return invalid('The reader has no action in progress.', undefined, 'terminal_reader_invalid_state');
        this.presentCard(reader.id);
        return { status: 200, body: clone(reader) };
      });
    }
    return this.unknownRoute(method, path);
  }

  private unknownRoute(method: string, path: string): HandlerResult {
    return stripeError(404, { type: 'invalid_request_error', message: `Unrecognized request URL (${method}: ${path}).` }, false);
  }

  // -------------------------------------------------------------------------------------------------------
  // PaymentIntents

  private createPaymentIntent(params: Json, idempotencyKey: string | null): HandlerResult {
    const amount = Number(params.amount);
    if (!/^\d+$/.test(params.amount ?? '') || amount < 1) return invalid('Invalid positive integer', 'amount');
    if (!/^[a-z]{3}$/.test(params.currency ?? '')) return invalid('Invalid currency', 'currency');
    const types: string[] = Array.isArray(params.payment_method_types) ? params.payment_method_types : [];
    if (types.length === 0) return invalid('payment_method_types is required.', 'payment_method_types', 'parameter_missing');
    const type = types[0]!;
    const currencyOf: Record<string, string> = { promptpay: 'thb', paynow: 'sgd' };
    if (currencyOf[type] && currencyOf[type] !== params.currency) {
      return invalid(`The currency provided (${params.currency}) is invalid for ${type}.`, 'currency', 'payment_intent_invalid_parameter');
    }
    if (!['card_present', 'promptpay', 'paynow'].includes(type)) return invalid(`The payment method type "${type}" is invalid.`, 'payment_method_types');

    // Amount rule 53: the first try with a key never reaches an API server.
    const key = idempotencyKey ?? `${params.amount}:${JSON.stringify(params.metadata ?? {})}`;
    if (lastTwo(amount) === 53 && !this.unavailableOnce.has(key)) {
      this.unavailableOnce.add(key);
      return stripeError(503, { type: 'api_error', message: 'Stripe is temporarily unavailable.' }, false);
    }

    const id = stripeId('pi');
    const pi: SimPaymentIntent = {
      id,
      object: 'payment_intent',
      amount,
      amount_received: 0,
      currency: params.currency,
      status: 'requires_payment_method',
      capture_method: params.capture_method ?? 'automatic_async',
      payment_method_types: types,
      payment_method: null,
      metadata: { ...(params.metadata ?? {}) },
      description: params.description ?? null,
      created: nowSeconds(),
      livemode: this.livemode,
      client_secret: `${id}_secret_${stripeId('cs').slice(3)}`,
      last_payment_error: null,
      next_action: null,
      latest_charge: null,
      canceled_at: null,
      cancellation_reason: null,
    };
    this.paymentIntents.set(id, pi);
    this.emit('payment_intent.created', pi);
    // Amount rule 52: executed, and the answer is lost.
    const loseAnswer = lastTwo(amount) === 52;

    if (params.confirm === 'true') {
      if (type === 'card_present') return { ...invalid('card_present PaymentIntents are confirmed by a reader.', 'confirm'), save: true };
      const data = params.payment_method_data ?? {};
      if (data.type !== type) return { ...invalid('payment_method_data[type] must match payment_method_types.', 'payment_method_data[type]'), save: true };
      pi.payment_method = stripeId('pm');
      if (lastTwo(amount) === 54) {
        const error = { type: 'invalid_request_error', code: 'payment_intent_payment_attempt_failed', message: 'The latest payment attempt of this PaymentIntent has failed.' };
        this.failAttempt(pi, error);
        return { status: 400, body: { error: { ...error, payment_intent: clone(pi) } }, loseAnswer };
      }
      pi.status = 'requires_action';
      const actionType = `${type}_display_qr_code`;
      pi.next_action = {
        type: actionType,
        [actionType]: {
          data: qrPayload(pi, type),
          hosted_instructions_url: `https://payments.stripe.com/qr/instructions/${pi.id}`,
          image_url_png: `https://qr.stripe.com/${pi.id}.png`,
          image_url_svg: `https://qr.stripe.com/${pi.id}.svg`,
        },
      };
      this.emit('payment_intent.requires_action', pi);
    }
    return { status: 200, body: clone(pi), loseAnswer };
  }

  private retrievePaymentIntent(id: string): HandlerResult {
    const pi = this.paymentIntents.get(id);
    return pi ? { status: 200, body: clone(pi) } : missing('payment_intent', id);
  }

  private searchPaymentIntents(params: Json): HandlerResult {
    const match = /^metadata\['([^']+)'\]:'((?:[^'\\]|\\.)*)'$/.exec(params.query ?? '');
    if (!match) return invalid('Invalid search query.', 'query', 'search_query_invalid');
    const value = match[2]!.replace(/\\(.)/g, '$1');
    const data = [...this.paymentIntents.values()].filter((pi) => pi.metadata[match[1]!] === value).map(clone);
    return { status: 200, body: { object: 'search_result', data, has_more: false, next_page: null, url: '/v1/payment_intents/search' } };
  }

  private cancelPaymentIntent(id: string, params: Json): HandlerResult {
    const pi = this.paymentIntents.get(id);
    if (!pi) return missing('payment_intent', id);
    const cancelable = ['requires_payment_method', 'requires_capture', 'requires_confirmation', 'requires_action', 'processing'];
    if (!cancelable.includes(pi.status)) {
      return stripeError(400, {
        type: 'invalid_request_error',
        code: 'payment_intent_unexpected_state',
        message: `You cannot cancel this PaymentIntent because it has a status of ${pi.status}.`,
        payment_intent: clone(pi),
      });
    }
    // A PaymentIntent a reader is still collecting for must have the reader's action canceled first.
    const busy = [...this.readers.values()].find((r) => r.action?.status === 'in_progress' && r.action.process_payment_intent.payment_intent === id);
    if (busy) return stripeError(400, { type: 'invalid_request_error', code: 'terminal_reader_busy', message: 'A reader is processing this PaymentIntent.' });
    pi.status = 'canceled';
    pi.canceled_at = nowSeconds();
    pi.cancellation_reason = params.cancellation_reason ?? null;
    pi.next_action = null;
    this.emit('payment_intent.canceled', pi);
    return { status: 200, body: clone(pi) };
  }

  private succeed(pi: SimPaymentIntent) {
    pi.status = 'succeeded';
    pi.amount_received = pi.amount;
    pi.latest_charge = stripeId('ch');
    pi.next_action = null;
    pi.last_payment_error = null;
    this.emit('payment_intent.succeeded', pi);
  }

  private failAttempt(pi: SimPaymentIntent, error: Json) {
    pi.status = 'requires_payment_method';
    pi.next_action = null;
    pi.last_payment_error = { ...error, payment_method: { id: pi.payment_method, type: pi.payment_method_types[0] } };
    this.emit('payment_intent.payment_failed', pi);
  }

  private mustQr(id: string): SimPaymentIntent {
    const pi = this.paymentIntents.get(id);
    if (!pi || pi.status !== 'requires_action') throw new Error(`PaymentIntent ${id} is not waiting for a QR payment`);
    return pi;
  }

  // -------------------------------------------------------------------------------------------------------
  // Refunds

  private createRefund(params: Json): HandlerResult {
    const piId = params.payment_intent;
    if (typeof piId !== 'string' || !piId) return invalid('One of charge or payment_intent is required.', 'payment_intent', 'parameter_missing');
    const pi = this.paymentIntents.get(piId);
    if (!pi) return stripeError(400, { type: 'invalid_request_error', code: 'resource_missing', message: `No such payment_intent: '${piId}'`, param: 'payment_intent' }, false);
    if (pi.status !== 'succeeded') {
      return stripeError(400, { type: 'invalid_request_error', code: 'payment_intent_unexpected_state', message: 'This PaymentIntent does not have a successful charge to refund.' });
    }
    const refunded = [...this.refunds.values()].filter((r) => r.payment_intent === piId && (r.status === 'succeeded' || r.status === 'pending')).reduce((sum, r) => sum + r.amount, 0);
    const remaining = pi.amount_received - refunded;
    if (remaining <= 0) return stripeError(400, { type: 'invalid_request_error', code: 'charge_already_refunded', message: `Charge ${pi.latest_charge} has already been refunded.` });
    const amount = params.amount === undefined ? remaining : Number(params.amount);
    if (!Number.isSafeInteger(amount) || amount < 1) return invalid('Invalid positive integer', 'amount');
    if (amount > remaining) {
      return stripeError(400, { type: 'invalid_request_error', code: 'amount_too_large', param: 'amount', message: `Refund amount is greater than unrefunded amount on charge.` });
    }
    const declined = lastTwo(amount) === 61;
    const refund: SimRefund = {
      id: stripeId('re'),
      object: 'refund',
      amount,
      currency: pi.currency,
      status: declined ? 'failed' : this.refundMode === 'pending' ? 'pending' : 'succeeded',
      failure_reason: declined ? 'declined' : null,
      payment_intent: piId,
      charge: pi.latest_charge,
      metadata: { ...(params.metadata ?? {}) },
      reason: params.reason ?? null,
      created: nowSeconds(),
    };
    this.refunds.set(refund.id, refund);
    this.emit('refund.created', refund);
    if (declined) this.emit('refund.failed', refund);
    return { status: 200, body: clone(refund) };
  }

  private listRefunds(params: Json): HandlerResult {
    const limit = Math.min(Math.max(Number(params.limit ?? 10) || 10, 1), 100);
    const all = [...this.refunds.values()].filter((r) => !params.payment_intent || r.payment_intent === params.payment_intent).reverse();
    return { status: 200, body: { object: 'list', data: all.slice(0, limit).map(clone), has_more: all.length > limit, url: '/v1/refunds' } };
  }

  // -------------------------------------------------------------------------------------------------------
  // Terminal readers

  private withReader(id: string, run: (reader: SimReader) => HandlerResult): HandlerResult {
    if (!/^tmr_[A-Za-z0-9]+$/.test(id)) return missing('terminal.reader', id);
    let reader = this.readers.get(id);
    if (!reader) {
      reader = { id, object: 'terminal.reader', device_type: 'simulated_wisepos_e', label: 'Simulated reader', status: 'online', livemode: this.livemode, action: null };
      this.readers.set(id, reader);
    }
    reader.status = this.offlineReaders.has(id) ? 'offline' : 'online';
    return run(reader);
  }

  private processPaymentIntent(readerId: string, params: Json): HandlerResult {
    return this.withReader(readerId, (reader) => {
      if (reader.status === 'offline') return stripeError(400, { type: 'invalid_request_error', code: 'terminal_reader_offline', message: 'Reader is currently offline.' });
      if (reader.action?.status === 'in_progress') return stripeError(400, { type: 'invalid_request_error', code: 'terminal_reader_busy', message: 'Reader is currently busy processing another request.' });
      const pi = this.paymentIntents.get(params.payment_intent ?? '');
      if (!pi) return stripeError(400, { type: 'invalid_request_error', code: 'resource_missing', param: 'payment_intent', message: `No such payment_intent: '${params.payment_intent}'` }, false);
      if (!pi.payment_method_types.includes('card_present') || pi.status !== 'requires_payment_method') {
        return stripeError(400, { type: 'invalid_request_error', code: 'payment_intent_unexpected_state', message: `This PaymentIntent's status is ${pi.status}.` });
      }
      reader.action = { type: 'process_payment_intent', status: 'in_progress', process_payment_intent: { payment_intent: pi.id }, failure_code: null, failure_message: null };
      const answer = clone(reader);
      if (this.readerMode === 'auto') this.presentCard(reader.id);
      return { status: 200, body: answer };
    });
  }

  private cancelAction(readerId: string): HandlerResult {
    return this.withReader(readerId, (reader) => {
      if (reader.action?.status !== 'in_progress') return stripeError(400, { type: 'invalid_request_error', code: 'terminal_reader_invalid_state', message: 'The reader has no action to cancel.' });
      reader.action.status = 'failed';
      reader.action.failure_code = 'canceled';
      reader.action.failure_message = 'The action was canceled.';
      this.emit('terminal.reader.action_failed', reader);
      return { status: 200, body: clone(reader) };
    });
  }

  private emit(type: string, object: Json) {
    this.events.push(this.makeEvent(type, object));
  }
}
