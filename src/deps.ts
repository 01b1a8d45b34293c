import { createDb, type Db } from './db/client.ts';
import type { D1Handle } from './db/prepared.ts';
import { parseKeyRing, type KeyRing } from './domain/credential-crypto.ts';
import type { Environment } from './domain/environment.ts';
import { allowsInsecureLocalWebhooks } from './domain/webhook-url.ts';
import type { Env, WebhookMessage } from './env.ts';

/**
 * What one invocation works with, built once at each entry (the HTTP middleware in app.ts, the
 * idempotency Durable Object, the queue consumer, the cron) and handed to services first. Nothing else
 * reads a secret or builds a database client (the explorer's static files, `ASSETS`, are served by the
 * HTTP layer alone: routes/docs).
 */
export interface Deps {
  readonly db: Db;
  /** The raw binding behind `db` (the database, or this invocation's session of it), for the prepared hot reads. */
  d1: D1Handle;
  /** Set when `db` reads through a D1 session (read replication): its bookmark after the queries ran. */
  d1Session?: D1DatabaseSession;
  environment: Environment;
  /** The credential encryption keys, parsed on first use (a malformed ring fails only the operations that need it). */
  readonly keyRing: KeyRing;
  jwtSigningKey: string;
  apiKeyPepper: string;
  /** The local-development exception for webhook URLs (domain/webhook-url.ts). */
  allowInsecureWebhooks: boolean;
  webhooks: Queue<WebhookMessage>;
  idempotency: Env['IDEMPOTENCY'];
  rateLimiter: Env['RATE_LIMITER'];
}

export interface DepsOptions {
  /**
   * Read through a D1 session anchored here (a bookmark the client sent, or `first-primary`): reads may
   * then be served by a replica that has caught up to it (docs/SCALE.md, README "Reading from near you").
   */
  d1Session?: string;
}

export function createDeps(env: Env, options: DepsOptions = {}): Deps {
  const d1Session = options.d1Session !== undefined ? env.DB.withSession(options.d1Session) : undefined;
  const d1 = d1Session ?? env.DB;
  return {
    // Built on first use (then one per binding or session, db/client.ts): a read through the prepared statements
    // (db/prepared.ts) never needs one, and a session's client would otherwise be built for every read.
    get db() {
      return createDb(d1);
    },
    d1,
    ...(d1Session ? { d1Session } : {}),
    environment: env.ENVIRONMENT,
    get keyRing() {
      return keyRingOf(env.CREDENTIALS_ENCRYPTION_KEYS);
    },
    jwtSigningKey: env.JWT_SIGNING_KEY,
    apiKeyPepper: env.API_KEY_PEPPER,
    allowInsecureWebhooks: allowsInsecureLocalWebhooks(env.ENVIRONMENT, env.ALLOW_INSECURE_WEBHOOKS),
    webhooks: env.WEBHOOKS,
    idempotency: env.IDEMPOTENCY,
    rateLimiter: env.RATE_LIMITER,
  };
}

/** The primary's bookmark now, past every write already made: one query at the primary. */
export async function primaryBookmark(env: Env): Promise<string | null> {
  const session = env.DB.withSession('first-primary');
  await session.prepare('SELECT 1').first();
  return session.getBookmark();
}

let parsedRing: { secret: string; ring: KeyRing } | undefined;

/**
 * One ring per isolate and key text: the ring caches its imported WebCrypto keys (domain/credential-crypto.ts),
 * so parsing it afresh per call would import every key again. A changed secret (a new deployment) parses anew.
 */
function keyRingOf(secret: string): KeyRing {
  if (parsedRing?.secret !== secret) parsedRing = { secret, ring: parseKeyRing(secret) };
  return parsedRing.ring;
}
