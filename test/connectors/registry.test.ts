import { describe, expect, it } from 'vitest';
import {
  CONNECTOR_DEFINITIONS,
  CONNECTOR_VERSIONS,
  definitionsOf,
  findConnectorVersion,
} from '../../src/connectors/registry.ts';
import type { ConnectorContext, ConnectorVersion } from '../../src/connectors/types.ts';
import { defineVersion } from '../../src/connectors/version.ts';
import { connectorError } from '../helpers/connectors.ts';

const lookup = {
  paymentId: 'pay_1',
  processorReference: 'ref_1',
  processorIdempotencyKey: 'key_1',
  amount: { minor: 1000, currency: 'USD' },
};

describe('the registry', () => {
  it('builds each definition from its versions: id, provider, name and type written once, on the versions', () => {
    expect(CONNECTOR_DEFINITIONS.map((d) => [d.id, d.provider, d.name, d.type, d.versions.map((v) => v.id)])).toEqual([
      ['cnd_sandbox_pos', 'sandbox', 'Sandbox POS', 'pos', ['cnv_sandbox_pos_v1']],
      ['cnd_sandbox_qr', 'sandbox', 'Sandbox QR', 'qr', ['cnv_sandbox_qr_v1']],
      ['cnd_stripe_pos', 'stripe', 'Stripe Terminal', 'pos', ['cnv_stripe_pos_v1']],
      ['cnd_stripe_qr', 'stripe', 'Stripe QR (PromptPay, PayNow)', 'qr', ['cnv_stripe_qr_v1']],
      ['cnd_mercadopago_pos', 'mercadopago', 'Mercado Pago Point', 'pos', ['cnv_mercadopago_pos_v1']],
      ['cnd_mercadopago_qr', 'mercadopago', 'Mercado Pago QR', 'qr', ['cnv_mercadopago_qr_v1']],
      ['cnd_adyen_pos', 'adyen', 'Adyen Terminal API', 'pos', ['cnv_adyen_pos_v1']],
      ['cnd_adyen_qr', 'adyen', 'Adyen QR (Pix, PayNow, PromptPay, DuitNow, WeChat Pay)', 'qr', ['cnv_adyen_qr_v1']],
    ]);
    for (const version of CONNECTOR_VERSIONS) expect(findConnectorVersion(version.id)).toBe(version);
    expect(findConnectorVersion('cnv_unknown')).toBeUndefined();
  });

  it('refuses a version listed twice, or versions of one definition that disagree on what it is', () => {
    const [pos] = CONNECTOR_VERSIONS as [ConnectorVersion];
    const v2 = { ...pos, id: 'cnv_sandbox_pos_v2', version: '2' };
    expect(definitionsOf([pos, v2])[0]!.versions).toEqual([pos, v2]);
    expect(() => definitionsOf([pos, pos])).toThrow(/listed twice/);
    expect(() => definitionsOf([pos, { ...v2, name: 'Another name' }])).toThrow(/disagrees/);
    expect(() => definitionsOf([pos, { ...v2, type: 'qr' }])).toThrow(/disagrees/);
    expect(() => definitionsOf([pos, { ...v2, provider: 'stripe' }])).toThrow(/disagrees/);
  });
});

describe('decrypted credentials are parsed with the version’s schema before every adapter call', () => {
  const untouched: typeof fetch = () =>
    Promise.reject(new Error('no request may be sent with credentials that do not fit'));
  const ctx = (credentials: unknown): ConnectorContext => ({
    credentials,
    configuration: {},
    environment: 'test',
    fetch: untouched,
  });
  const stored = [
    null,
    {},
    'a string',
    { api_key: 1, secret_key: 1, access_token: 1 },
    { secret_key: 'sk_test_1234567890', webhook_secret: 'whsec_12345678', extra: 'x' },
  ];

  it.each(CONNECTOR_VERSIONS.map((v) => [v.id, v] as const))(
    '%s: credentials that do not fit → configuration_invalid (credentials_invalid), nothing sent, no value echoed',
    async (_, version) => {
      const a = version.adapter;
      for (const credentials of stored) {
        const calls = [
          a.createPayment(ctx(credentials), { ...lookup, attemptNumber: 1, externalReference: 'ext' }),
          a.getPayment(ctx(credentials), lookup),
          a.cancelPayment(ctx(credentials), { ...lookup, currentStatus: 'pending' }),
          a.refundPayment(ctx(credentials), {
            refundId: 'ref',
            processorIdempotencyKey: 'k',
            attemptNumber: 1,
            paymentProcessorReference: 'ref_1',
            amount: lookup.amount,
          }),
          a.getRefund(ctx(credentials), {
            refundId: 'ref',
            amount: lookup.amount,
            processorReference: null,
            processorIdempotencyKey: 'k',
            paymentProcessorReference: 'ref_1',
          }),
          a.parseNotification(ctx(credentials), { headers: new Headers(), rawBody: '{}', url: 'https://example.com/' }),
          ...(a.getTerminal ? [a.getTerminal(ctx(credentials))] : []),
          ...(a.getVoidRefund ? [a.getVoidRefund(ctx(credentials), lookup)] : []),
        ];
        for (const call of calls) {
          const error = await connectorError(call);
          expect(error).toMatchObject({ kind: 'configuration_invalid', processorCode: 'credentials_invalid' });
          expect(error.message).not.toMatch(/sk_test|whsec|extra/);
        }
      }
    },
  );

  it('every POS version reads its terminal, and only POS versions do', () => {
    for (const version of CONNECTOR_VERSIONS)
      expect(typeof version.adapter.getTerminal, version.id).toBe(version.type === 'pos' ? 'function' : 'undefined');
  });

  it('the adapter receives what the schema returns (defaults applied, the original object untouched)', async () => {
    const [pos] = CONNECTOR_VERSIONS as [ConnectorVersion];
    let seen: unknown;
    const spy = defineVersion({
      ...pos,
      adapter: { ...pos.adapter, getPayment: async (c) => ((seen = c.credentials), Promise.reject(new Error('stop'))) },
    });
    const credentials = { api_key: 'sandbox-key-1' };
    await expect(spy.adapter.getPayment(ctx(credentials), lookup)).rejects.toThrow('stop');
    expect(seen).toEqual(credentials);
    expect(seen).not.toBe(credentials);
  });
});
