import { describe, expect, it } from 'vitest';
import {
  sandboxPosV1,
  sandboxQrV1,
  SANDBOX_SIGNATURE_HEADER,
  signSandboxNotification,
} from '../../src/connectors/sandbox/index.ts';
import {
  type ConnectorContext,
  type ConnectorVersion,
  type CreatePaymentInput,
  type Money,
  TerminalUnavailableError,
} from '../../src/connectors/types.ts';
import { connectorError } from '../helpers/connectors.ts';
import { crc16 } from '../helpers/emvco.ts';

/** The sandbox adapter called directly, against every row of docs/sandbox.md's tables. */

const API_KEY = `sbx-${crypto.randomUUID()}`;

function ctx(apiKey = API_KEY): ConnectorContext<{ api_key: string }, Record<string, unknown>> {
  return { credentials: { api_key: apiKey }, configuration: {}, environment: 'test', fetch: globalThis.fetch };
}

function paymentInput(
  minor: number,
  options: { currency?: string; attemptNumber?: number; key?: string } = {},
): CreatePaymentInput {
  return {
    paymentId: `pay_${crypto.randomUUID()}`,
    processorIdempotencyKey: options.key ?? crypto.randomUUID(),
    attemptNumber: options.attemptNumber ?? 1,
    amount: { minor, currency: options.currency ?? 'USD' },
    externalReference: `order-${crypto.randomUUID()}`,
  };
}

function expectUsual(
  version: ConnectorVersion,
  outcome: Awaited<ReturnType<ConnectorVersion['adapter']['createPayment']>>,
) {
  if (version.type === 'pos') {
    expect(outcome.status).toBe('approved');
    expect(outcome.action).toEqual({ type: 'none' });
  } else {
    expect(outcome.status).toBe('pending');
    expect(outcome.action.type).toBe('display_qr');
    const qrData = (outcome.action as { qrData: string }).qrData;
    expect(qrData.length).toBeGreaterThan(0);
    expect(qrData).toMatch(/6304[0-9A-F]{4}$/);
    expect(qrData.slice(-4)).toBe(crc16(qrData.slice(0, -4)));
  }
  expect(outcome.processorReference).toMatch(/^sbx_pay_[0-9a-f]{24}$/);
}

for (const version of [sandboxPosV1, sandboxQrV1]) {
  const adapter = version.adapter;
  const type = version.type;

  describe(`sandbox ${type}: createPayment`, () => {
    it('declares its channel, provider, capabilities and currencies', () => {
      expect(version).toMatchObject({ provider: 'sandbox', type, status: 'published' });
      expect(version.capabilities).toEqual(['payments', 'refunds', 'cancellations']);
      expect(version.currencies).toEqual(['USD', 'EUR', 'BRL', 'ARS', 'MXN', 'CLP', 'COP', 'UYU']);
    });

    it('gives the usual answer for any other ending', async () => {
      for (const minor of [100, 1, 99, 150, 157, 1050, 12_345_600, 161])
        expectUsual(version, await adapter.createPayment(ctx(), paymentInput(minor)));
    });

    it(
      type === 'pos' ? 'ending 55 → pending, waiting for a check at the terminal' : 'ending 55 → the usual answer',
      async () => {
        const outcome = await adapter.createPayment(ctx(), paymentInput(1055));
        if (type === 'pos') {
          expect(outcome).toMatchObject({ status: 'pending', action: { type: 'check_terminal' } });
          // Asked again (reconciliation), the sandbox says the same: nothing settles it but the processor's news.
          expect(
            await adapter.getPayment(ctx(), {
              paymentId: 'pay_x',
              processorReference: outcome.processorReference,
              processorIdempotencyKey: 'k',
              amount: { minor: 1055, currency: 'USD' },
            }),
          ).toMatchObject({
            status: 'pending',
            action: { type: 'check_terminal' },
          });
        } else {
          expectUsual(version, outcome);
        }
      },
    );

    it('ending 00 → the usual answer, in every currency', async () => {
      for (const currency of version.currencies)
        expectUsual(version, await adapter.createPayment(ctx(), paymentInput(2500, { currency })));
    });

    it(type === 'pos' ? 'ending 51 → declined' : 'ending 51 → the usual answer (the decline comes later)', async () => {
      for (const amount of [
        { minor: 1051, currency: 'USD' },
        { minor: 1551, currency: 'CLP' },
        { minor: 51, currency: 'BRL' },
      ] satisfies Money[]) {
        const outcome = await adapter.createPayment(ctx(), paymentInput(amount.minor, { currency: amount.currency }));
        if (type === 'pos') {
          expect(outcome.status).toBe('declined');
          expect(outcome.action).toEqual({ type: 'none' });
          expect(outcome.declineCode).toBeTruthy();
          expect(outcome.processorReference).toBeTruthy();
        } else {
          expectUsual(version, outcome);
        }
      }
    });

    it('ending 52 → timeout on the first attempt, the usual answer on the retry', async () => {
      const key = crypto.randomUUID();
      const error = await connectorError(adapter.createPayment(ctx(), paymentInput(2052, { key, attemptNumber: 1 })));
      expect(error.kind).toBe('timeout');
      const retry = await adapter.createPayment(ctx(), paymentInput(2052, { key, attemptNumber: 2 }));
      expectUsual(version, retry);
      // CLP has no decimals: its last two integer digits choose the answer.
      expect((await connectorError(adapter.createPayment(ctx(), paymentInput(1552, { currency: 'CLP' })))).kind).toBe(
        'timeout',
      );
    });

    it('ending 53 → unavailable on the first attempt, the usual answer on the retry', async () => {
      const key = crypto.randomUUID();
      const error = await connectorError(adapter.createPayment(ctx(), paymentInput(753, { key, attemptNumber: 1 })));
      expect(error.kind).toBe('unavailable');
      expectUsual(version, await adapter.createPayment(ctx(), paymentInput(753, { key, attemptNumber: 2 })));
      expect((await connectorError(adapter.createPayment(ctx(), paymentInput(1553, { currency: 'CLP' })))).kind).toBe(
        'unavailable',
      );
    });

    it('ending 54 → failed', async () => {
      for (const [minor, currency] of [
        [1054, 'USD'],
        [1554, 'CLP'],
      ] as const) {
        const outcome = await adapter.createPayment(ctx(), paymentInput(minor, { currency }));
        expect(outcome.status).toBe('failed');
        expect(outcome.action).toEqual({ type: 'none' });
      }
    });

    it('a CLP amount of 1551 is read as ending 51', async () => {
      const outcome = await adapter.createPayment(ctx(), paymentInput(1551, { currency: 'CLP' }));
      expect(outcome.status).toBe(type === 'pos' ? 'declined' : 'pending');
    });

    it('keeps the processor reference for the same idempotency key, and changes it for another', async () => {
      const key = crypto.randomUUID();
      const a = await adapter.createPayment(ctx(), paymentInput(1000, { key }));
      const b = await adapter.createPayment(ctx(), paymentInput(1000, { key, attemptNumber: 2 }));
      const c = await adapter.createPayment(ctx(), paymentInput(1000));
      expect(a.processorReference).toBe(b.processorReference);
      expect(a.processorReference).not.toBe(c.processorReference);
      // A retry after a timeout resumes the same processor-side payment.
      const timeoutKey = crypto.randomUUID();
      await connectorError(adapter.createPayment(ctx(), paymentInput(2052, { key: timeoutKey })));
      const resumed = await adapter.createPayment(ctx(), paymentInput(2052, { key: timeoutKey, attemptNumber: 2 }));
      const again = await adapter.createPayment(ctx(), paymentInput(2052, { key: timeoutKey, attemptNumber: 3 }));
      expect(resumed.processorReference).toBe(again.processorReference);
      if (type === 'qr') expect(resumed.action).toEqual(again.action);
    });

    it('never puts the credentials in an outcome', async () => {
      const outcome = await adapter.createPayment(ctx(), paymentInput(1000));
      expect(JSON.stringify(outcome)).not.toContain(API_KEY);
    });
  });

  describe(`sandbox ${type}: other operations`, () => {
    const lookup = (minor: number, reference: string | null = null) => ({
      paymentId: 'pay_x',
      processorReference: reference,
      processorIdempotencyKey: crypto.randomUUID(),
      amount: { minor, currency: 'USD' },
    });

    it('getPayment reports what the processor settled on, keeping the reference', async () => {
      const created = await adapter.createPayment(ctx(), paymentInput(1000));
      const read = await adapter.getPayment(ctx(), { ...lookup(1000), processorReference: created.processorReference });
      expect(read.processorReference).toBe(created.processorReference);
      expect(read.status).toBe(created.status);
      expect((await adapter.getPayment(ctx(), lookup(1054, 'sbx_pay_x'))).status).toBe('failed');
      expect((await adapter.getPayment(ctx(), lookup(1052, 'sbx_pay_x'))).status).toBe(
        type === 'pos' ? 'approved' : 'pending',
      );
      // A payment whose creation never got an answer is unknown to the sandbox.
      expect((await connectorError(adapter.getPayment(ctx(), lookup(1052)))).kind).toBe('not_found');
    });

    it('cancelPayment cancels, keeping the reference', async () => {
      const created = await adapter.createPayment(ctx(), paymentInput(1000));
      const canceled = await adapter.cancelPayment(ctx(), {
        ...lookup(1000, created.processorReference),
        currentStatus: created.status,
      });
      expect(canceled.status).toBe('canceled');
      expect(canceled.processorReference).toBe(created.processorReference);
      expect(canceled.action).toEqual({ type: 'none' });
    });

    it('refunds ending .61 are declined, any other refund approved', async () => {
      const refund = (minor: number, key = crypto.randomUUID()) =>
        adapter.refundPayment(ctx(), {
          refundId: `re_${crypto.randomUUID()}`,
          processorIdempotencyKey: key,
          attemptNumber: 1,
          paymentProcessorReference: 'sbx_pay_0123',
          amount: { minor, currency: 'USD' },
        });
      for (const minor of [61, 1061, 99_961]) expect((await refund(minor)).status).toBe('declined');
      for (const minor of [1, 60, 62, 100, 1000, 1051, 1052, 1053, 1054, 6100])
        expect((await refund(minor)).status).toBe('approved');
      const key = crypto.randomUUID();
      const a = await refund(500, key);
      const b = await refund(500, key);
      const c = await refund(500);
      expect(a.processorReference).toMatch(/^sbx_ref_[0-9a-f]{24}$/);
      expect(a.processorReference).toBe(b.processorReference);
      expect(a.processorReference).not.toBe(c.processorReference);
    });

    it('getRefund keeps the reference', async () => {
      const lookupRefund = (minor: number) => ({
        refundId: 're_x',
        amount: { minor, currency: 'USD' },
        processorReference: 'sbx_ref_abc',
        processorIdempotencyKey: 'k',
        paymentProcessorReference: 'sbx_pay_x',
      });
      const read = await adapter.getRefund(ctx(), lookupRefund(500));
      expect(read.processorReference).toBe('sbx_ref_abc');
      expect(read.status).toBe('approved');
      expect((await adapter.getRefund(ctx(), lookupRefund(561))).status).toBe('declined');
      expect(
        (await connectorError(adapter.getRefund(ctx(), { ...lookupRefund(500), processorReference: null }))).kind,
      ).toBe('not_found');
    });

    it("'invalid-credentials' → configuration_invalid on every operation, for every amount", async () => {
      const bad = ctx('invalid-credentials');
      const operations: [string, () => Promise<unknown>][] = [
        ['createPayment', () => adapter.createPayment(bad, paymentInput(1000))],
        ['createPayment (timeout amount)', () => adapter.createPayment(bad, paymentInput(1052))],
        ['createPayment (decline amount)', () => adapter.createPayment(bad, paymentInput(1051))],
        ['getPayment', () => adapter.getPayment(bad, lookup(1000, 'sbx_pay_x'))],
        [
          'cancelPayment',
          () => adapter.cancelPayment(bad, { ...lookup(1000, 'sbx_pay_x'), currentStatus: 'approved' }),
        ],
        [
          'refundPayment',
          () =>
            adapter.refundPayment(bad, {
              refundId: 're_x',
              processorIdempotencyKey: 'k',
              attemptNumber: 1,
              paymentProcessorReference: 'sbx_pay_x',
              amount: { minor: 100, currency: 'USD' },
            }),
        ],
        [
          'getRefund',
          () =>
            adapter.getRefund(bad, {
              refundId: 're_x',
              amount: { minor: 100, currency: 'USD' },
              processorReference: 'sbx_ref_x',
              processorIdempotencyKey: 'k',
              paymentProcessorReference: 'sbx_pay_x',
            }),
        ],
      ];
      for (const [name, run] of operations) {
        const error = await connectorError(run());
        expect(error.kind, name).toBe('configuration_invalid');
        expect(error.message).not.toContain('invalid-credentials');
      }
    });
  });

  describe(`sandbox ${type}: parseNotification`, () => {
    const body = (overrides: Record<string, unknown> = {}) =>
      JSON.stringify({
        id: `evt_${crypto.randomUUID()}`,
        resource: 'payment',
        reference: 'sbx_pay_0123456789abcdef01234567',
        status: 'approved',
        ...overrides,
      });
    const notification = (rawBody: string, signature: string | null) => ({
      headers: new Headers(signature === null ? {} : { [SANDBOX_SIGNATURE_HEADER]: signature }),
      rawBody,
      url: 'https://example.com/v1/processors/sandbox/notifications',
    });

    it('accepts a correctly signed body', async () => {
      const raw = body();
      const parsed = await adapter.parseNotification(
        ctx(),
        notification(raw, await signSandboxNotification({ api_key: API_KEY }, raw)),
      );
      const sent = JSON.parse(raw);
      expect(parsed).toEqual({
        eventId: sent.id,
        resource: 'payment',
        processorReference: sent.reference,
        status: 'approved',
        trusted: true,
      });

      const refund = body({ resource: 'refund', reference: 'sbx_ref_1', status: 'declined' });
      const parsedRefund = await adapter.parseNotification(
        ctx(),
        notification(refund, await signSandboxNotification({ api_key: API_KEY }, refund)),
      );
      expect(parsedRefund).toMatchObject({
        resource: 'refund',
        processorReference: 'sbx_ref_1',
        status: 'declined',
        trusted: true,
      });
    });

    it('refuses a tampered body, a missing or empty signature, and a wrong key', async () => {
      const raw = body();
      const signature = await signSandboxNotification({ api_key: API_KEY }, raw);
      const tampered = raw.replace('"approved"', '"declined"');
      const wrongKey = await signSandboxNotification({ api_key: `sbx-${crypto.randomUUID()}` }, raw);
      const cases: [string, ReturnType<typeof notification>][] = [
        ['tampered body', notification(tampered, signature)],
        ['body with trailing whitespace', notification(`${raw} `, signature)],
        ['missing signature', notification(raw, null)],
        ['empty signature', notification(raw, '')],
        ['wrong key', notification(raw, wrongKey)],
        ['upper-case signature', notification(raw, signature.toUpperCase())],
        ['truncated signature', notification(raw, signature.slice(0, -2))],
      ];
      for (const [name, input] of cases) {
        const error = await connectorError(adapter.parseNotification(ctx(), input));
        expect(error.kind, name).toBe('invalid_notification');
      }
    });

    it('refuses a signed body it does not understand', async () => {
      for (const raw of [
        'not json',
        '{}',
        body({ status: 'refunded' }),
        body({ resource: 'order' }),
        body({ id: '' }),
      ]) {
        const signed = notification(raw, await signSandboxNotification({ api_key: API_KEY }, raw));
        expect((await connectorError(adapter.parseNotification(ctx(), signed))).kind).toBe('invalid_notification');
      }
    });
  });

  describe(`sandbox ${type} in a live deployment`, () => {
    // Play money: refused before the sandbox decides anything, as Stripe's test keys and Mercado Pago's TEST- tokens
    // are in live.
    const live = { ...ctx(), environment: 'live' as const };
    const refused = { kind: 'configuration_invalid', processorCode: 'sandbox_not_offered_in_live' };
    const lookup = {
      paymentId: 'pay_x',
      processorReference: 'sbx_pay_0123456789abcdef01234567',
      processorIdempotencyKey: 'k',
      amount: { minor: 2500, currency: 'USD' },
    };

    it('refuses every operation', async () => {
      expect(version.environments).toEqual(['test']);
      expect(await connectorError(adapter.createPayment(live, paymentInput(2500)))).toMatchObject(refused);
      expect(await connectorError(adapter.getPayment(live, lookup))).toMatchObject(refused);
      expect(await connectorError(adapter.cancelPayment(live, { ...lookup, currentStatus: 'approved' }))).toMatchObject(
        refused,
      );
      const refund = {
        refundId: 'ref_x',
        processorIdempotencyKey: 'r',
        attemptNumber: 1,
        paymentProcessorReference: lookup.processorReference,
        amount: { minor: 100, currency: 'USD' },
      };
      expect(await connectorError(adapter.refundPayment(live, refund))).toMatchObject(refused);
      expect(
        await connectorError(
          adapter.getRefund(live, { ...refund, processorReference: 'sbx_ref_0123456789abcdef01234567' }),
        ),
      ).toMatchObject(refused);
      if (adapter.getTerminal) expect(await connectorError(adapter.getTerminal(live))).toMatchObject(refused);
    });

    it('refuses its own correctly signed news as unverifiable', async () => {
      const raw = JSON.stringify({
        id: 'evt_x',
        resource: 'payment',
        reference: lookup.processorReference,
        status: 'approved',
      });
      const signed = {
        headers: new Headers({ [SANDBOX_SIGNATURE_HEADER]: await signSandboxNotification({ api_key: API_KEY }, raw) }),
        rawBody: raw,
        url: 'https://example.com/v1/processor-notifications/x',
      };
      expect((await adapter.parseNotification(ctx(), signed)).status).toBe('approved');
      expect(await connectorError(adapter.parseNotification(live, signed))).toMatchObject({
        kind: 'invalid_notification',
        processorCode: 'sandbox_not_offered_in_live',
      });
    });
  });
}

describe('the tests’ own EMVCo checksum', () => {
  it('is CRC-16/CCITT-FALSE: the catalogue’s check value for "123456789" is 29B1', () => {
    expect(crc16('123456789')).toBe('29B1');
    expect(crc16('')).toBe('FFFF');
  });
});

describe('sandbox schemas', () => {
  it('validate credentials and apply configuration defaults', () => {
    expect(sandboxPosV1.credentialsSchema.safeParse({ api_key: API_KEY }).success).toBe(true);
    expect(sandboxPosV1.credentialsSchema.safeParse({ api_key: 'short' }).success).toBe(false);
    expect(sandboxPosV1.credentialsSchema.safeParse({ api_key: API_KEY, extra: 1 }).success).toBe(false);
    expect(sandboxPosV1.configurationSchema.parse({})).toEqual({ terminal_id: 'sandbox-terminal-1' });
    expect(sandboxQrV1.configurationSchema.parse({})).toEqual({ qr_ttl_seconds: 900 });
    expect(sandboxQrV1.configurationSchema.safeParse({ qr_ttl_seconds: 59 }).success).toBe(false);
  });
});

describe('sandbox POS at the counter: the simulated terminal', () => {
  const pos = sandboxPosV1.adapter;
  const posCtx = (configuration: Record<string, unknown> = {}) => ({
    ...ctx(),
    configuration: sandboxPosV1.configurationSchema.parse(configuration),
  });
  const lookupOf = (outcome: { processorReference: string | null }, minor: number) => ({
    paymentId: 'pay_x',
    processorReference: outcome.processorReference,
    processorIdempotencyKey: 'k',
    amount: { minor, currency: 'USD' },
  });

  it('ending 56 → pending at the terminal until someone acts; asked again, still there', async () => {
    const outcome = await pos.createPayment(posCtx(), paymentInput(1056));
    expect(outcome).toMatchObject({ status: 'pending', action: { type: 'at_terminal' } });
    expect(await pos.getPayment(posCtx(), lookupOf(outcome, 1056))).toMatchObject({
      status: 'pending',
      action: { type: 'at_terminal' },
    });
    // QR has no terminal: 56 is the usual answer there.
    expect((await sandboxQrV1.adapter.createPayment(ctx(), paymentInput(1056))).action.type).toBe('display_qr');
  });

  it('its cancel is accepted, not done; the next lookup after it answers canceled', async () => {
    const outcome = await pos.createPayment(posCtx(), paymentInput(1056));
    const cancel = { ...lookupOf(outcome, 1056), currentStatus: 'pending' as const };
    const requested = await pos.cancelPayment(posCtx(), cancel);
    expect(requested).toMatchObject({
      status: 'pending',
      action: { type: 'at_terminal' },
      cancellation: 'requested',
      processorReference: outcome.processorReference,
      processorStatus: 'sandbox_cancel_requested',
    });
    // A retry is accepted the same way.
    expect((await pos.cancelPayment(posCtx(), cancel)).cancellation).toBe('requested');
    expect(await pos.getPayment(posCtx(), { ...lookupOf(outcome, 1056), cancelRequested: true })).toMatchObject({
      status: 'canceled',
      action: { type: 'none' },
    });
    // Other POS payments cancel at once, as before.
    const other = await pos.createPayment(posCtx(), paymentInput(1055));
    const canceled = await pos.cancelPayment(posCtx(), { ...lookupOf(other, 1055), currentStatus: 'pending' });
    expect(canceled.status).toBe('canceled');
    expect(canceled.cancellation).toBeUndefined();
  });

  it('getTerminal: the device as the configuration says (the test helper writes it), online when unset', async () => {
    expect(await pos.getTerminal!(posCtx())).toEqual({
      processorId: 'sandbox-terminal-1',
      status: 'online',
      processorStatus: 'sandbox_terminal_online',
    });
    expect(await pos.getTerminal!(posCtx({ terminal_id: 'till-2', terminal_status: 'busy' }))).toEqual({
      processorId: 'till-2',
      status: 'busy',
      busyWith: { kind: 'payment', processorReference: null },
      processorStatus: 'sandbox_terminal_busy',
    });
    expect((await pos.getTerminal!(posCtx({ terminal_status: 'offline' }))).status).toBe('offline');
    expect(sandboxQrV1.adapter.getTerminal).toBeUndefined();
    expect((await connectorError(pos.getTerminal!(ctx('invalid-credentials')))).kind).toBe('configuration_invalid');
  });

  it('an offline or busy device refuses a payment at once; lookups and cancels are not refused', async () => {
    for (const status of ['offline', 'busy'] as const) {
      const error = await connectorError(pos.createPayment(posCtx({ terminal_status: status }), paymentInput(2500)));
      expect(error).toBeInstanceOf(TerminalUnavailableError);
      expect(error).toMatchObject({
        kind: 'unavailable',
        terminal: status,
        processorCode: `sandbox_terminal_${status}`,
      });
    }
    const outcome = await pos.createPayment(posCtx(), paymentInput(1056));
    expect((await pos.getPayment(posCtx({ terminal_status: 'offline' }), lookupOf(outcome, 1056))).status).toBe(
      'pending',
    );
  });

  it('the configuration takes terminal_status and display, and still defaults to the terminal alone', () => {
    const schema = sandboxPosV1.configurationSchema;
    expect(schema.parse({})).toEqual({ terminal_id: 'sandbox-terminal-1' });
    expect(schema.safeParse({ terminal_status: 'offline' }).success).toBe(true);
    expect(schema.safeParse({ terminal_status: 'asleep' }).success).toBe(false);
    const display = {
      lines: [{ description: 'Tea', quantity: 1, amount: { value: '25.00', currency: 'USD' } }],
      total: { value: '25.00', currency: 'USD' },
    };
    expect(schema.safeParse({ display }).success).toBe(true);
    expect(schema.safeParse({ display: { ...display, lines: [] } }).success).toBe(false);
    expect(sandboxQrV1.configurationSchema.safeParse({ display }).success).toBe(false);
  });

  it('a display whose total is not the amount is refused, as a real terminal’s would be', async () => {
    const display = {
      lines: [{ description: 'Tea', quantity: 1, amount: { value: '24.00', currency: 'USD' } }],
      total: { value: '24.00', currency: 'USD' },
    };
    expect(await connectorError(pos.createPayment(posCtx({ display }), paymentInput(2500)))).toMatchObject({
      kind: 'configuration_invalid',
      processorCode: 'display_invalid',
    });
  });
});
