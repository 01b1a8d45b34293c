import { createDb, type Db } from './db/client.ts';
import type { D1Handle } from './db/prepared.ts';
import { type Shard, type ShardName, sessionAnchor, shardsOf } from './db/shards.ts';
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
  /** The control database (binding `DB`): users, sessions, API keys, payment methods, the shard directory. */
  control: Db;
  controlD1: D1Database;
  /**
   * The owner's shard (`withShard`, once the owner is known: middleware/auth.ts, the idempotency object, the queue
   * consumer, the cron per shard): payments, refunds, events, deliveries, webhook endpoints and secrets, processor
   * notifications. Reading these before a shard is chosen is a programming error and throws.
   */
  db: Db;
  /** The raw binding behind `db` (the shard, or this invocation's session of it), for the prepared hot reads. */
  d1: D1Handle;
  /** The shard `db` is, when chosen. */
  shard: ShardName;
  /** Set when `db` reads through a D1 session (read replication): its bookmark after the queries ran. */
  d1Session?: D1DatabaseSession;
  /** Every shard of the deployment, by index (db/shards.ts). */
  shards: readonly Shard[];
  /** The same invocation on `shard`'s database (read through a session when this one was asked for reads). */
  withShard(shard: ShardName): Deps;
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
   * Read the shard through a D1 session anchored at this client bookmark, or at the primary when `null`: reads may
   * then be served by a replica that has caught up to it (docs/SCALE.md, README "Reading from near you").
   */
  readSession?: string | null;
  shard?: ShardName;
}

/** What a deployment's bindings give every invocation alike: built once per isolate (per `env` object). */
type IsolateDeps = Omit<Deps, 'db' | 'd1' | 'shard' | 'd1Session' | 'withShard'>;

const isolateDeps = new WeakMap<Env, IsolateDeps>();

function isolateDepsOf(env: Env): IsolateDeps {
  let base = isolateDeps.get(env);
  if (!base) {
    base = {
      control: createDb(env.DB),
      controlD1: env.DB,
      shards: shardsOf(env),
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
    isolateDeps.set(env, base);
  }
  return base;
}

/**
 * One invocation's dependencies: the isolate's (above) with this invocation's shard and read session. Built at the
 * edge without a shard and again, once, when the owner's shard is known (`withShard`).
 */
export function createDeps(env: Env, options: DepsOptions = {}): Deps {
  const base = isolateDepsOf(env);
  const chosen = options.shard === undefined ? undefined : base.shards.find((s) => s.name === options.shard);
  if (options.shard !== undefined && !chosen) throw new Error(`No binding for shard ${options.shard} (wrangler.toml).`);
  const d1Session =
    chosen && options.readSession !== undefined
      ? chosen.d1.withSession(sessionAnchor(chosen.name, options.readSession ?? undefined))
      : undefined;
  const d1 = d1Session ?? chosen?.d1;
  // The isolate's part is the prototype: read through, never copied, and never written per invocation.
  const deps = Object.create(base, {
    db: { get: () => createDb(d1 ?? noShard()), enumerable: true },
    d1: { get: () => d1 ?? noShard(), enumerable: true },
    shard: { get: () => chosen?.name ?? noShard(), enumerable: true },
    d1Session: { value: d1Session, enumerable: d1Session !== undefined },
    withShard: {
      value: (shard: ShardName): Deps => (shard === chosen?.name ? deps : createDeps(env, { ...options, shard })),
    },
  }) as Deps;
  return deps;
}

function noShard(): never {
  throw new Error('The shard was read before the owner was known (deps.withShard).');
}

/** A shard primary's bookmark now, past every write already made: one query at that primary. */
export async function primaryBookmark(env: Env, shard: ShardName): Promise<string | null> {
  const d1 = shardsOf(env).find((s) => s.name === shard)?.d1;
  if (!d1) return null;
  const session = d1.withSession('first-primary');
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
