import { createDb, type D1Handle, type Db } from './db/client.ts';
import { encodeBookmark, type Shard, type ShardName, sessionAnchor, shardsOf } from './db/shards.ts';
import { parseKeyRing, type KeyRing } from './domain/credential-crypto.ts';
import type { Environment } from './domain/environment.ts';
import { allowsInsecureLocalWebhooks } from './domain/webhook-url.ts';
import type { Env, WebhookMessage } from './env.ts';

/**
 * What one invocation works with, built once at each entry (the HTTP middleware in app.ts, the idempotency Durable
 * Object per operation, the queue consumer per batch, the cron per run) and handed to services first. Nothing else
 * reads a secret or builds a database client (the explorer's static files, `ASSETS`, are served by the HTTP layer
 * alone: routes/docs).
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
  /** Set when `db` goes through a D1 session (read replication, `bookmarkFromHere`): its bookmark after its queries. */
  d1Session?: D1DatabaseSession;
  /** Every shard of the deployment, by index (db/shards.ts). */
  shards: readonly Shard[];
  /**
   * This invocation on `shard`'s database: itself, when its shard was not chosen yet (the owner just became known) or
   * is that one; else the invocation's view of another owner's shard (an admin acting for a user, a batch's message of
   * another shard), made once per shard. A view reads through a session when this invocation reads through one.
   */
  withShard(shard: ShardName): Deps;
  /**
   * From here on, `db` goes through a D1 session that starts at the primary, so that the session's bookmark is past
   * the writes that follow: an idempotent operation's last write, whose answer carries it (services/operations). The
   * queries before went through the binding, which D1 answers at the primary.
   */
  bookmarkFromHere(): void;
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
  /** The durable jobs of owner moves (workflows/owner-move.ts). */
  ownerMoves: Env['OWNER_MOVES'];
}

export interface DepsOptions {
  /**
   * Read the shard through a D1 session anchored at this client bookmark, or at the primary when `null`: reads may
   * then be served by a replica that has caught up to it (docs/SCALE.md, docs/read-replication.md).
   */
  readSession?: string | null;
  shard?: ShardName;
}

/** What a deployment's bindings give every invocation alike: built once per isolate (per `env` object). */
type IsolateDeps = Omit<Deps, 'db' | 'd1' | 'shard' | 'd1Session' | 'withShard' | 'bookmarkFromHere'>;

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
      ownerMoves: env.OWNER_MOVES,
    };
    isolateDeps.set(env, base);
  }
  return base;
}

/**
 * One invocation's dependencies: the isolate's (above) with this invocation's shard and read session. Built at the
 * entry, before the owner's shard may be known; choosing it (`withShard`) completes the same object.
 */
export function createDeps(env: Env, options: DepsOptions = {}): Deps {
  return new InvocationDeps(env, isolateDepsOf(env), options);
}

/** A class, not a literal with getters: one shape for every invocation, and the isolate's part read, never copied. */
class InvocationDeps implements Deps {
  d1Session?: D1DatabaseSession;
  readonly #env: Env;
  readonly #base: IsolateDeps;
  readonly #options: DepsOptions;
  #shard: Shard | undefined;
  #d1: D1Handle | undefined;
  /** Views of other shards than this invocation's own (`withShard`), by name. */
  #others: Map<ShardName, Deps> | undefined;

  constructor(env: Env, base: IsolateDeps, options: DepsOptions) {
    this.#env = env;
    this.#base = base;
    this.#options = options;
    if (options.shard !== undefined) this.#choose(options.shard);
  }

  #choose(name: ShardName) {
    const chosen = this.#base.shards.find((s) => s.name === name);
    if (!chosen) throw new Error(`No binding for shard ${name} (wrangler.toml).`);
    const { readSession } = this.#options;
    this.#shard = chosen;
    if (readSession !== undefined) this.#openSession(sessionAnchor(chosen.name, readSession ?? undefined));
    else this.#d1 = chosen.d1;
  }

  #openSession(anchor: string) {
    this.d1Session = this.#shard!.d1.withSession(anchor);
    this.#d1 = this.d1Session;
  }

  get db(): Db {
    return createDb(this.d1);
  }
  get d1(): D1Handle {
    return this.#d1 ?? noShard();
  }
  get shard(): ShardName {
    return this.#shard?.name ?? noShard();
  }
  withShard(shard: ShardName): Deps {
    if (this.#shard === undefined) this.#choose(shard);
    if (shard === this.#shard!.name) return this;
    this.#others ??= new Map();
    let other = this.#others.get(shard);
    if (!other) {
      other = createDeps(this.#env, { ...this.#options, shard });
      this.#others.set(shard, other);
    }
    return other;
  }
  bookmarkFromHere(): void {
    if (this.#shard === undefined) noShard();
    this.#openSession('first-primary');
  }
  get control() {
    return this.#base.control;
  }
  get controlD1() {
    return this.#base.controlD1;
  }
  get shards() {
    return this.#base.shards;
  }
  get environment() {
    return this.#base.environment;
  }
  get keyRing() {
    return this.#base.keyRing;
  }
  get jwtSigningKey() {
    return this.#base.jwtSigningKey;
  }
  get apiKeyPepper() {
    return this.#base.apiKeyPepper;
  }
  get allowInsecureWebhooks() {
    return this.#base.allowInsecureWebhooks;
  }
  get webhooks() {
    return this.#base.webhooks;
  }
  get idempotency() {
    return this.#base.idempotency;
  }
  get rateLimiter() {
    return this.#base.rateLimiter;
  }
  get ownerMoves() {
    return this.#base.ownerMoves;
  }
}

function noShard(): never {
  throw new Error('The shard was read before the owner was known (deps.withShard).');
}

/**
 * A shard primary's bookmark now, past every write already made, as answers carry it (named by its shard:
 * `encodeBookmark`): one query at that primary. Null when the primary cannot be asked: an answer matters more than
 * its bookmark, and a read sent without one goes to the primary anyway.
 */
export async function primaryBookmark(env: Env, shard: ShardName): Promise<string | null> {
  const d1 = shardsOf(env).find((s) => s.name === shard)?.d1;
  if (!d1) return null;
  try {
    const session = d1.withSession('first-primary');
    await session.prepare('SELECT 1').first();
    const bookmark = session.getBookmark();
    return bookmark ? encodeBookmark(shard, bookmark) : null;
  } catch {
    return null;
  }
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
