import type { IdempotencyStore } from './durable-objects/idempotency-store.ts';
import type { RateLimiter } from './durable-objects/rate-limiter.ts';
import type { AuthContext } from './middleware/auth.ts';
import type { WebhookMessage } from './services/webhooks/enqueue.ts';

export type Environment = 'test' | 'live';

/** Bindings of one deployment (see wrangler.toml); secrets come from `.dev.vars` or `wrangler secret put`. */
export interface Env {
  ENVIRONMENT: Environment;
  DB: D1Database;
  ASSETS: Fetcher;
  RATE_LIMITER: DurableObjectNamespace<RateLimiter>;
  IDEMPOTENCY: DurableObjectNamespace<IdempotencyStore>;
  WEBHOOKS: Queue<WebhookMessage>;
  JWT_SIGNING_KEY: string;
  API_KEY_PEPPER: string;
  CREDENTIALS_ENCRYPTION_KEYS: string;
  ALLOW_INSECURE_WEBHOOKS?: string;
}

export interface AppVariables {
  requestId: string;
  auth: AuthContext;
  /** The error code answered, for the access log (middleware/error-handler.ts, idempotent replays). */
  errorCode?: string;
}

export type AppEnv = { Bindings: Env; Variables: AppVariables };
