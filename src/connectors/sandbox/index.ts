import { z } from 'zod';
import { bytesToHex, hmacSha256, sha256Hex, timingSafeEqual, utf8 } from '../../lib/encoding.ts';
import type {
  Channel,
  ConnectorAdapter,
  ConnectorContext,
  Money,
  ProcessorNotification,
  ProcessorRefundStatus,
  RefundOutcome,
} from '../types.ts';
import { ConnectorError } from '../types.ts';
import { defineVersion, firstPublishedVersion } from '../version.ts';
import { SandboxNotificationBody, sandboxNotification } from './news.ts';
import {
  sandboxPaymentAnswer,
  sandboxPaymentStatus,
  sandboxRefundLookup,
  sandboxRefundSettlement,
  sandboxRefundStatus,
  toPaymentOutcome,
} from './transformers.ts';

export {
  closeSandboxDispute,
  openSandboxDispute,
  SandboxDispute,
  sandboxDisputeNews,
  SandboxNotificationBody,
  sandboxRefundFailedNews,
} from './news.ts';

/**
 * The built-in sandbox processor: deterministic outcomes for every case a real processor can produce,
 * so integrations can be exercised end to end in `test` without any processor account.
 */
export const SANDBOX_CURRENCIES = ['USD', 'EUR', 'BRL', 'ARS', 'MXN', 'CLP', 'COP', 'UYU'];

// Field descriptions use `.describe()`: `GET /v1/connectors` serves these schemas through `z.toJSONSchema`,
// which writes them as `description`.
export const SandboxCredentials = z.strictObject({
  api_key: z
    .string()
    .min(8)
    .max(256)
    .describe('Any value of 8+ characters; `invalid-credentials` simulates a rejected key.'),
});
export type SandboxCredentials = z.infer<typeof SandboxCredentials>;

const SandboxPosConfiguration = z.strictObject({
  terminal_id: z
    .string()
    .min(1)
    .max(64)
    .default('sandbox-terminal-1')
    .describe('The POS terminal that takes the payment.'),
});

const SandboxQrConfiguration = z.strictObject({
  qr_ttl_seconds: z
    .number()
    .int()
    .min(60)
    .max(86_400)
    .default(900)
    .describe('A pending QR payment expires after this many seconds.'),
});

/** Header carrying the sandbox's notification signature: hex HMAC-SHA256 of the raw body keyed by `api_key`. */
export const SANDBOX_SIGNATURE_HEADER = 'sandbox-signature';

export async function signSandboxNotification(credentials: SandboxCredentials, rawBody: string): Promise<string> {
  return bytesToHex(await hmacSha256(credentials.api_key, rawBody));
}

function checkCredentials(ctx: ConnectorContext<SandboxCredentials>) {
  if (ctx.credentials.api_key === 'invalid-credentials') {
    throw new ConnectorError('configuration_invalid', 'The sandbox rejected the API key.', 'sandbox_invalid_api_key');
  }
}

/** The processor's reference is derived from our idempotency key, as a processor replays its own answer. */
const referenceFor = async (prefix: string, key: string) => `${prefix}_${(await sha256Hex(key)).slice(0, 24)}`;

function sandboxAdapter(channel: Channel): ConnectorAdapter<SandboxCredentials, unknown> {
  return {
    async createPayment(ctx, input) {
      checkCredentials(ctx);
      const answer = sandboxPaymentAnswer(channel, input.amount, input.attemptNumber);
      if (answer.kind === 'timeout')
        throw new ConnectorError('timeout', 'The sandbox did not answer in time.', 'sandbox_timeout');
      if (answer.kind === 'unavailable')
        throw new ConnectorError('unavailable', 'The sandbox is unavailable.', 'sandbox_unavailable');
      return toPaymentOutcome(
        channel,
        answer.status,
        await referenceFor('sbx_pay', input.processorIdempotencyKey),
        input.amount,
      );
    },
    async getPayment(ctx, input) {
      checkCredentials(ctx);
      // The sandbox only knows payments it answered for: one whose creation never got an answer is unknown.
      if (input.processorReference === null)
        throw new ConnectorError('not_found', 'The sandbox has no such payment.', 'sandbox_not_found');
      return toPaymentOutcome(
        channel,
        sandboxPaymentStatus(channel, input.amount),
        input.processorReference,
        input.amount,
      );
    },
    async cancelPayment(ctx, input) {
      checkCredentials(ctx);
      const reference = input.processorReference ?? (await referenceFor('sbx_pay', input.processorIdempotencyKey));
      return toPaymentOutcome(channel, 'canceled', reference, input.amount);
    },
    async refundPayment(ctx, input) {
      checkCredentials(ctx);
      const status = sandboxRefundStatus(input.amount);
      return {
        status,
        processorReference: await referenceFor('sbx_ref', input.processorIdempotencyKey),
        processorStatus: `sandbox_${status}`,
        ...refundSettlement(status, input.amount),
        ...(status === 'declined' ? { failureReason: 'declined' as const } : {}),
      };
    },
    async getRefund(ctx, input) {
      checkCredentials(ctx);
      if (input.processorReference === null)
        throw new ConnectorError('not_found', 'The sandbox has no such refund.', 'sandbox_not_found');
      const read = sandboxRefundLookup(input.amount);
      return {
        ...read,
        processorReference: input.processorReference,
        processorStatus: `sandbox_${read.status}`,
        ...refundSettlement(read.status, input.amount),
      };
    },
    async parseNotification(ctx, input): Promise<ProcessorNotification> {
      const presented = input.headers.get(SANDBOX_SIGNATURE_HEADER) ?? '';
      const expected = await signSandboxNotification(ctx.credentials, input.rawBody);
      if (!timingSafeEqual(utf8(presented), utf8(expected))) {
        throw new ConnectorError('invalid_notification', 'The notification signature does not verify.');
      }
      let body: SandboxNotificationBody;
      try {
        body = SandboxNotificationBody.parse(JSON.parse(input.rawBody));
      } catch {
        throw new ConnectorError('invalid_notification', 'The notification body is not understood.');
      }
      return sandboxNotification(body);
    },
  };
}

const refundSettlement = (status: ProcessorRefundStatus, amount: Money): Pick<RefundOutcome, 'settlement'> =>
  status === 'approved' ? { settlement: sandboxRefundSettlement(amount, Date.now()) } : {};

/** As Stripe's, whose behaviour the sandbox's reversals imitate (docs.stripe.com/refunds, "up to 30 days"). */
export const SANDBOX_REFUND_REVERSAL_WINDOW_MS = 30 * 86_400_000;

const common = {
  ...firstPublishedVersion('sandbox', SandboxCredentials),
  currencies: SANDBOX_CURRENCIES,
  refundReversalWindowMs: SANDBOX_REFUND_REVERSAL_WINDOW_MS,
};

export const sandboxPosV1 = defineVersion({
  ...common,
  id: 'cnv_sandbox_pos_v1',
  definitionId: 'cnd_sandbox_pos',
  name: 'Sandbox POS',
  type: 'pos',
  configurationSchema: SandboxPosConfiguration,
  adapter: sandboxAdapter('pos'),
});

export const sandboxQrV1 = defineVersion({
  ...common,
  id: 'cnv_sandbox_qr_v1',
  definitionId: 'cnd_sandbox_qr',
  name: 'Sandbox QR',
  type: 'qr',
  configurationSchema: SandboxQrConfiguration,
  adapter: sandboxAdapter('qr'),
});
