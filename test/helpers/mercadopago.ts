import type { ConnectorContext, CreatePaymentInput } from '../../src/connectors/types.ts';
import { MercadoPagoSimulator, type SimAccount } from '../simulators/mercadopago.ts';

/** Shared by the Mercado Pago connector tests: contexts pointed at the simulator, payment inputs. */

export { connectorError } from './connectors.ts';

export const TERMINAL = 'NEWLAND_N950__N950NCB801293324';
export const POS_ID = 'STORE001POS001';

export type MpCtx = ConnectorContext<{ access_token: string; webhook_secret: string }, Record<string, unknown>>;

export interface MpCtxOptions {
  account?: SimAccount;
  configuration?: Record<string, unknown>;
  environment?: 'test' | 'live';
  type?: 'pos' | 'qr';
  secret?: string;
}

/** The adapter's context for `account` (its token and secret), its fetch answered by `sim`. */
export function mpCtx(sim: MercadoPagoSimulator, account: SimAccount, options: MpCtxOptions = {}): MpCtx {
  const a = options.account ?? account;
  const configuration =
    options.configuration ??
    (options.type === 'qr' ? { external_pos_id: POS_ID, qr_ttl_seconds: 900 } : { terminal_id: TERMINAL });
  return {
    credentials: { access_token: a.accessToken, webhook_secret: options.secret ?? a.webhookSecret },
    configuration,
    environment: options.environment ?? 'test',
    fetch: sim.fetch,
  };
}

export function mpPayment(
  minor: number,
  options: { currency?: string; attemptNumber?: number; key?: string; description?: string } = {},
): CreatePaymentInput {
  const paymentId = `pay_${crypto.randomUUID().replace(/-/g, '').slice(0, 20)}`;
  return {
    paymentId,
    processorIdempotencyKey: options.key ?? paymentId,
    attemptNumber: options.attemptNumber ?? 1,
    amount: { minor, currency: options.currency ?? 'ARS' },
    externalReference: `order-${crypto.randomUUID()}`,
    ...(options.description ? { description: options.description } : {}),
  };
}

export const mpLookup = (ref: string | null, minor = 2500, currency = 'ARS') => ({
  paymentId: 'pay_x',
  processorReference: ref,
  processorIdempotencyKey: 'pay_x',
  amount: { minor, currency },
});

/** A fresh simulator with one ARS account, and contexts of that account. */
export function mpFixture() {
  const sim = new MercadoPagoSimulator();
  const account = sim.addAccount({ currency: 'ARS' });
  return { sim, account, ctx: (options: MpCtxOptions = {}) => mpCtx(sim, account, options) };
}
