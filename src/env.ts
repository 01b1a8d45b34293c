import type { Environment } from './domain/environment.ts';

// Re-exported for the connectors, which import it from here; everything else imports domain/environment.ts.
export type { Environment };

/**
 * The body of a message on the `WEBHOOKS` queue: one delivery that is due, of event `eventId` to the
 * endpoint `endpointId`, or to the payment's `webhook_url` without one (as every message queued before
 * endpoints existed).
 */
export interface WebhookMessage {
  eventId: string;
  endpointId?: string;
}

/**
 * Bindings of one deployment (see wrangler.toml); secrets come from `.dev.vars` or `wrangler secret put`.
 * This file depends on nothing of the app: the Durable Object namespaces are typed where they are used
 * (services/idempotency.ts, services/rate-limit.ts), and the app reads bindings through `createDeps`.
 */
export interface Env {
  ENVIRONMENT: Environment;
  DB: D1Database;
  ASSETS: Fetcher;
  RATE_LIMITER: DurableObjectNamespace;
  IDEMPOTENCY: DurableObjectNamespace<import('./durable-objects/idempotency-store.ts').IdempotencyStore>;
  WEBHOOKS: Queue<WebhookMessage>;
  JWT_SIGNING_KEY: string;
  API_KEY_PEPPER: string;
  CREDENTIALS_ENCRYPTION_KEYS: string;
  ALLOW_INSECURE_WEBHOOKS?: string;
}
