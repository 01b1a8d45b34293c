import type { Deps } from '../../deps.ts';
import { signWebhook } from '../../domain/webhook-signature.ts';
import { validateWebhookUrl } from '../../domain/webhook-url.ts';

export const DELIVERY_TIMEOUT_MS = 10_000;

/** One POST of a signed webhook: what the receiver answered (never its body). */
export interface AttemptResult {
  succeeded: boolean;
  /** The receiver's HTTP status; null when none came. */
  statusCode: number | null;
  /** `timeout`, `network_error`, `http_<status>`, `url_refused`; null on success. */
  error: string | null;
  latencyMs: number;
}

/**
 * Signs (Standard Webhooks) and POSTs `payload` to `url` with a 10 s timeout and no redirects, after
 * checking the URL again (rules may have tightened since it was stored). The receiver's body is never
 * read or kept. Shared by deliveries and the endpoint ping.
 */
export async function postSignedWebhook(
  deps: Deps,
  url: string,
  secrets: string[],
  messageId: string,
  payload: string,
  now: number,
): Promise<AttemptResult> {
  let statusCode: number | null = null;
  let error: string | null = null;
  const started = Date.now();
  const checked = validateWebhookUrl(url, { allowInsecureLocal: deps.allowInsecureWebhooks });
  if (!checked.ok) {
    error = 'url_refused';
  } else {
    const timestamp = Math.floor(now / 1000);
    try {
      const response = await fetch(checked.url, {
        method: 'POST',
        redirect: 'manual',
        signal: AbortSignal.timeout(DELIVERY_TIMEOUT_MS),
        headers: {
          'Content-Type': 'application/json',
          'User-Agent': 'payment-service-webhooks/1',
          'webhook-id': messageId,
          'webhook-timestamp': String(timestamp),
          'webhook-signature': await signWebhook(secrets, messageId, timestamp, payload),
        },
        body: payload,
      });
      statusCode = response.status;
      await response.body?.cancel();
    } catch (cause) {
      error = (cause as Error)?.name === 'TimeoutError' ? 'timeout' : 'network_error';
    }
  }
  const succeeded = statusCode !== null && statusCode >= 200 && statusCode < 300;
  if (!succeeded && error === null) error = `http_${statusCode}`;
  return { succeeded, statusCode, error, latencyMs: Date.now() - started };
}
