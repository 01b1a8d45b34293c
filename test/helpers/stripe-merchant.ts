import { expect, vi } from 'vitest';
import { type ApiResponse, call, createKey, seedSession, type Session } from './api.ts';
import { STRIPE_ORIGIN, stripeId, type SignedDelivery, type StripeSimulator } from '../simulators/stripe.ts';

/**
 * A merchant on Stripe Terminal, with the Worker's outbound fetch answered by a Stripe simulator: for suites that
 * drive the whole service (API, notifications, jobs) against Stripe as it behaves, not the sandbox.
 */

export interface StripeMerchant {
  session: Session;
  apiKey: { id: string; secret: string };
  /** The Stripe Terminal method, linked to the API key. */
  methodId: string;
  /** A POST with the API key and a fresh Idempotency-Key. */
  post: (path: string, body?: unknown) => Promise<ApiResponse>;
  /** A POS payment of `value` USD, optionally with more fields (`webhook_url`...). */
  pay: (value: string, extra?: Record<string, unknown>) => Promise<ApiResponse>;
  /** The payment as GET /v1/payments/{id} answers it. */
  get: (paymentId: string) => Promise<any>;
  /** A signed delivery of the simulator, to the method's notification URL. */
  send: (delivery: SignedDelivery) => Promise<ApiResponse>;
}

const urlOf = (input: RequestInfo | URL) =>
  typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;

/** Answers the Worker's requests to Stripe with `sim` (anything else would be the network, which tests never reach). */
export function installStripe(sim: StripeSimulator): () => void {
  const spy = vi.spyOn(globalThis, 'fetch').mockImplementation((input, init) => {
    if (urlOf(input).startsWith(`${STRIPE_ORIGIN}/`)) return sim.fetch(input, init);
    return Promise.reject(new TypeError(`network access refused in tests: ${urlOf(input)}`));
  });
  return () => spy.mockRestore();
}

export async function stripeMerchant(sim: StripeSimulator, readerId: string): Promise<StripeMerchant> {
  const session = await seedSession();
  const apiKey = await createKey(session);
  const created = await call('POST', '/v1/account/payment-methods', {
    token: session.accessToken,
    body: {
      name: 'Stripe counter',
      connector_definition_version_id: 'cnv_stripe_pos_v1',
      credentials: { secret_key: `sk_test_${stripeId('k').slice(2)}`, webhook_secret: sim.webhookSecret },
      configuration: { reader_id: readerId },
    },
  });
  expect(created.status, created.text).toBe(201);
  const methodId: string = created.body.data.id;
  const link = await call('POST', `/v1/account/payment-methods/${methodId}/api-keys`, {
    token: session.accessToken,
    body: { api_key_id: apiKey.id },
  });
  expect(link.status, link.text).toBe(201);
  const post = (path: string, body?: unknown) =>
    call('POST', path, {
      token: apiKey.secret,
      ...(body !== undefined ? { body } : {}),
      headers: { 'Idempotency-Key': crypto.randomUUID() },
    });
  return {
    session,
    apiKey,
    methodId,
    post,
    pay: (value, extra = {}) =>
      post('/v1/payments', {
        amount: { value, currency: 'USD' },
        external_reference: `order-${crypto.randomUUID()}`,
        payment_method: methodId,
        ...extra,
      }),
    get: async (paymentId) => (await call('GET', `/v1/payments/${paymentId}`, { token: apiKey.secret })).body.data,
    send: (delivery) =>
      call('POST', `/v1/processor-notifications/${methodId}`, { rawBody: delivery.rawBody, headers: delivery.headers }),
  };
}
