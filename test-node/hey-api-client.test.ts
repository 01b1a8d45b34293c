// The live /openapi.json through a second generator, @hey-api/openapi-ts (types, SDK, fetch client), as a
// merchant would run it: it must generate without a warning, the generated code must compile, and the
// types must keep what the contract promises. Checked by compiling assertions against the generated types
// (TypeScript's compiler in this process), so a generator that typed an amount as a number, made the
// Idempotency-Key optional, lost the error envelope or the event types fails here. Offline: the
// description is handed over as an object; the output goes to a temporary directory.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from '@hey-api/openapi-ts';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';

const out = mkdtempSync(join(tmpdir(), 'hey-api-'));
afterAll(() => rmSync(out, { recursive: true, force: true }));

/** What the generator printed, by console method. */
const printed: Array<{ level: string; text: string }> = [];

beforeAll(async () => {
  const res = await fetch(`${inject('baseUrl')}/openapi.json`);
  expect(res.status).toBe(200);
  const description = (await res.json()) as Record<string, unknown>;
  const original = { log: console.log, info: console.info, warn: console.warn, error: console.error };
  for (const level of ['log', 'info', 'warn', 'error'] as const)
    console[level] = (...args: unknown[]) => printed.push({ level, text: args.map(String).join(' ') });
  try {
    await createClient({
      input: description,
      output: { path: out },
      // Its own checks of the description, as warnings.
      parser: { validate_EXPERIMENTAL: true },
      logs: { file: false },
      plugins: ['@hey-api/typescript', '@hey-api/sdk', '@hey-api/client-fetch'],
    });
  } finally {
    Object.assign(console, original);
  }
});

/** Compiles `source` beside the generated files, strictly; its diagnostics as text. */
function compile(source: string): string[] {
  const file = join(out, 'contract-check.ts');
  writeFileSync(file, source);
  const program = ts.createProgram([file, join(out, 'index.ts')], {
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    lib: ['lib.es2022.d.ts', 'lib.dom.d.ts', 'lib.dom.iterable.d.ts'],
    types: [],
  });
  return ts
    .getPreEmitDiagnostics(program)
    .map((d) => `${d.file?.fileName.replace(out, '') ?? ''}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`);
}

describe('@hey-api/openapi-ts on the served description', () => {
  it('generates without a warning', () => {
    const warnings = printed.filter(
      ({ level, text }) => level === 'warn' || level === 'error' || /warn|error|🚨|❗/i.test(text),
    );
    expect(warnings).toEqual([]);
    // It did run: the job's summary line.
    expect(printed.map((p) => p.text).join('\n')).toMatch(/Generating/);
  });

  it('makes code that compiles, with amounts as decimal strings, a required Idempotency-Key, the error envelope and the event types', () => {
    const assertions = `
      import type {
        Amount, CreatePaymentData, CancelPaymentData, CreateRefundData, CreatePaymentErrors, ErrorResponse,
        GetPaymentData, Payment, PaymentAction, Webhooks,
      } from './types.gen';
      import { createPayment } from './sdk.gen';

      type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
      const yes = <T extends true>() => undefined as unknown as T;

      // Amounts stay decimal strings, in requests and in responses.
      yes<Equal<Amount['value'], string>>();
      yes<Equal<Payment['amount'], Amount>>();
      // A described reference is the referenced type, not \`Amount & unknown\`.
      yes<Equal<NonNullable<CreateRefundData['body']>['amount'], Amount>>();

      // Idempotency-Key is required on every idempotent operation.
      yes<Equal<CreatePaymentData['headers']['idempotency-key'], string>>();
      yes<Equal<CancelPaymentData['headers']['idempotency-key'], string>>();
      yes<Equal<CreateRefundData['headers']['idempotency-key'], string>>();
      // @ts-expect-error: a create without the header does not compile.
      const missing: CreatePaymentData = { body: {} as CreatePaymentData['body'], url: '/v1/payments' };
      void missing;
      // Reads may send X-Read-Bookmark.
      yes<Equal<NonNullable<GetPaymentData['headers']>['x-read-bookmark'], string | undefined>>();

      // The error envelope, with each response's codes as its enum.
      yes<Equal<ErrorResponse['error']['retryable'], boolean>>();
      yes<Equal<ErrorResponse['error']['request_id'], string>>();
      type Conflict = CreatePaymentErrors[409]['error']['code'];
      yes<
        Equal<Conflict, 'external_reference_conflict' | 'terminal_unavailable' | 'idempotency_key_reused' | 'concurrent_update'>
      >();
      const conflict = {} as CreatePaymentErrors[409];
      const message: string = conflict.error.message;
      void message;

      // The QR's expiry.
      yes<Equal<PaymentAction['expires_at'], string | null | undefined>>();

      // One webhook type per event, discriminated by \`type\`, the payment in \`data\`.
      type Body = Webhooks['body'];
      yes<Equal<Extract<Body, { type: 'payment.approved' }>['data']['payment'], Payment>>();
      yes<Equal<Extract<Body, { type: 'ping' }>['data']['webhook_endpoint']['id'], string>>();
      const events: Array<Body['type']> = [
        'payment.pending', 'payment.approved', 'payment.declined', 'payment.failed', 'payment.expired',
        'payment.canceled', 'payment.refunded', 'payment.charged_back', 'payment.action_required', 'ping',
      ];
      void events;

      // The SDK takes the header where the description puts it.
      void createPayment({ headers: { 'idempotency-key': 'k1' }, body: {} as CreatePaymentData['body'] });
    `;
    expect(compile(assertions)).toEqual([]);
  });
});
