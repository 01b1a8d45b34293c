import { applyD1Migrations } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ownerMoves } from '../../src/db/schema/index.ts';
import { createDeps, type Deps } from '../../src/deps.ts';
import { runScheduledJobs } from '../../src/jobs/scheduled.ts';
import { clearPlacementCache, readPlacement } from '../../src/services/shards/directory.ts';
import { loadMove, type MoveRequestResult, requestMove } from '../../src/services/shards/move-owner.ts';
import { MOVE_MAX_RUNS, type MoveOutcome, type MoveRunner, runMove } from '../../src/services/shards/run-move.ts';
import { call, createKey, seedSession } from '../helpers/api.ts';
import { addSandboxMethod, linkMethod, paymentBody, postIdempotent, SANDBOX_POS } from '../helpers/merchant.ts';
import { countRows, ownerRows } from '../helpers/owners.ts';
import { shardOf } from '../helpers/shards.ts';
import { captureQueue, consumeOnce, receiver } from '../helpers/webhooks.ts';
import { random } from '../helpers/random.ts';

/**
 * The move as a model: a move's steps run one at a time, and at every boundary between two steps the test does what
 * the world does meanwhile (a merchant's writes and reads, a cron run, queue deliveries, a crash that restarts the
 * move from its first step) and, at one boundary per scenario, a second operator request: the same target, back to
 * the origin, a third shard, or two requests at once. Whatever the interleaving, when every move has ended the
 * owner's rows are all on the shard the directory names, none lost, none on another shard, and no payment's version
 * ever went backwards on the directory's shard.
 *
 * The durable job is replaced by `Stepper`, which parks at every `do` and `sleep` (a sleep is where every cached
 * placement expires: the caches are cleared there). The third shard (SHARD_2) exists only in this test's bindings,
 * so requests through the Worker, which has two shards, never reach it: the third-shard request is made while
 * another move runs, where it must be refused.
 */

/** Jobs the model's requests (and the cron's resumption of moves) asked the platform to create: the model runs them. */
const created: string[] = [];
const fakeMoves = {
  create: async ({ id }: { id: string }) => {
    if (created.includes(id)) throw new Error('instance.already_exists');
    created.push(id);
    return { id };
  },
  get: async (id: string) => {
    if (!created.includes(id)) throw new Error('instance.not_found');
    return { id, status: async () => ({ status: 'running' }), restart: async () => {} };
  },
};
const MODEL_ENV = { ...env, SHARD_2: env.MOVE_THIRD_SHARD, OWNER_MOVES: fakeMoves } as unknown as typeof env;
const SHARD_NAMES = ['SHARD_0', 'SHARD_1', 'SHARD_2'] as const;
const shardDb = (name: string) =>
  name === 'SHARD_2' ? env.MOVE_THIRD_SHARD : name === 'SHARD_1' ? env.SHARD_1 : env.SHARD_0;

/** A move's job, parked at each boundary until the test lets it take one step. */
class Stepper {
  done = false;
  outcome: MoveOutcome | undefined;
  error: unknown;
  boundaries = 0;
  #release: (() => void) | undefined;
  #wake: (() => void) | undefined;

  /** `rerun`: every step runs twice, as the platform runs again a step whose answer was lost after its write. */
  constructor(
    readonly moveId: string,
    deps: Deps,
    rerun = false,
  ) {
    const runner: MoveRunner = {
      do: async (_name, run) => {
        await this.#boundary();
        if (rerun) await run();
        return run();
      },
      sleep: async () => {
        await this.#boundary();
        clearPlacementCache();
      },
    };
    runMove(runner, deps, moveId).then(
      (outcome) => this.#end(outcome, undefined),
      (error: unknown) => this.#end(undefined, error),
    );
  }

  #end(outcome: MoveOutcome | undefined, error: unknown) {
    this.done = true;
    this.outcome = outcome;
    this.error = error;
    this.#wake?.();
  }

  #boundary(): Promise<void> {
    this.boundaries++;
    return new Promise<void>((resolve) => {
      this.#release = resolve;
      this.#wake?.();
    });
  }

  /** Resolves once the job is parked at a boundary or has ended. */
  parked(): Promise<void> {
    if (this.done || this.#release) return Promise.resolve();
    return new Promise<void>((resolve) => {
      this.#wake = () => {
        this.#wake = undefined;
        resolve();
      };
    });
  }

  /** Lets the job take its next step, then waits until it parks again (or ends). */
  async step(): Promise<void> {
    await this.parked();
    const release = this.#release;
    if (!release) return;
    this.#release = undefined;
    release();
    await this.parked();
  }
}

type SecondRequest = 'same' | 'origin' | 'third' | 'concurrent';
const SECOND_REQUESTS: readonly SecondRequest[] = ['same', 'origin', 'third', 'concurrent'];

interface Scenario {
  seed: number;
  /** The boundary of the first move at which the second request is made (after the move, if it ended before). */
  at: number;
  second: SecondRequest | null;
  /** The boundary of the first move at which its job crashes and starts again from its first step; -1: never. */
  crashAt: number;
  /**
   * The boundary of the first move at which its job is started again while its first run goes on (the cron restarts
   * an instance that looked dead but was only slow): both runs take steps, interleaved; -1 or absent: never.
   */
  restartAt?: number;
  /** Every step of every move runs twice (its write committed, its answer lost). */
  rerun?: boolean;
}

let modelDeps: Deps;

beforeAll(async () => {
  await applyD1Migrations(env.MOVE_THIRD_SHARD, env.TEST_SHARD_MIGRATIONS, 'd1_shard_migrations');
  modelDeps = createDeps(MODEL_ENV);
});

async function seedOwner() {
  const session = await seedSession();
  const pos = await addSandboxMethod(session, SANDBOX_POS);
  const key = await createKey(session);
  await linkMethod(session, pos.id, key.id);
  // Placed by its first request; a few rows of every kind.
  const payments: string[] = [];
  for (const value of ['30.00', '45.00']) {
    const res = await postIdempotent('/v1/payments', key.secret, paymentBody(pos.id, value));
    expect(res.status, res.text).toBe(201);
    payments.push(res.body.data.id);
  }
  const refund = await postIdempotent(`/v1/payments/${payments[0]}/refunds`, key.secret, {
    amount: { value: '5.00', currency: 'USD' },
  });
  expect(refund.status, refund.text).toBe(201);
  const endpoint = await call('POST', '/v1/account/webhook-endpoints', {
    token: session.accessToken,
    body: { url: 'https://hooks.example.com/model', enabled_events: ['*'] },
  });
  expect(endpoint.status, endpoint.text).toBe(201);
  return { id: session.user.id, session, pos, key, payments, refunds: [refund.body.data.id as string] };
}

type ModelOwner = Awaited<ReturnType<typeof seedOwner>>;

/** What the world does at a boundary: one of a merchant's writes or reads, a cron run, queue deliveries. */
async function interfere(owner: ModelOwner, rand: () => number, queue: ReturnType<typeof captureQueue>) {
  const pick = rand();
  clearPlacementCache();
  if (pick < 0.2) return;
  if (pick < 0.4) {
    const res = await postIdempotent('/v1/payments', owner.key.secret, paymentBody(owner.pos.id, '12.00'));
    if (res.status === 201) owner.payments.push(res.body.data.id);
    else expect(res.body?.error?.code, res.text).toBe('owner_moving');
  } else if (pick < 0.5) {
    const paymentId = owner.payments[Math.floor(rand() * owner.payments.length)]!;
    const res = await postIdempotent(`/v1/payments/${paymentId}/refunds`, owner.key.secret, {
      amount: { value: '1.00', currency: 'USD' },
    });
    if (res.status === 201) owner.refunds.push(res.body.data.id);
    else expect(['owner_moving', 'refund_exceeds_balance'], res.text).toContain(res.body?.error?.code);
  } else if (pick < 0.65) {
    const paymentId = owner.payments[Math.floor(rand() * owner.payments.length)]!;
    const res = await call('GET', `/v1/payments/${paymentId}`, { token: owner.key.secret });
    expect(res.status, res.text).toBe(200);
  } else if (pick < 0.8) {
    await runScheduledJobs(MODEL_ENV, Date.now());
  } else {
    const pending = queue.pending.splice(0);
    if (pending.length > 0) await consumeOnce(pending);
  }
}

/** The second operator request of a scenario; the moves it starts are run by the model too. */
async function secondRequest(kind: SecondRequest, ownerId: string, origin: string, target: string) {
  const ask = (to: string) =>
    requestMove({ deps: modelDeps, input: { ownerId, to } }).then(
      (result): MoveRequestResult | { kind: 'refused'; code: string } => result,
      (error: { code?: string }) => ({ kind: 'refused' as const, code: error.code ?? String(error) }),
    );
  if (kind === 'same') return [await ask(target)];
  if (kind === 'origin') return [await ask(origin)];
  if (kind === 'third') {
    const running = (await readPlacement(modelDeps, ownerId))?.movingTo !== null;
    // With no move running, a move to SHARD_2 would put the owner where the Worker's requests cannot follow.
    return running ? [await ask('SHARD_2')] : [];
  }
  return Promise.all([ask(target), ask(origin)]);
}

/** Every payment's version on the directory's shard, which must never go down. */
async function versionsOnDirectoryShard(ownerId: string): Promise<Map<string, number>> {
  const shard = (await shardOf(ownerId))!;
  const { results } = await shardDb(shard)
    .prepare('SELECT id, version FROM payments WHERE owner_id = ?')
    .bind(ownerId)
    .all<{ id: string; version: number }>();
  return new Map(results.map((r) => [r.id, r.version]));
}

async function runScenario({ seed, at, second, crashAt, restartAt = -1, rerun = false }: Scenario) {
  const rand = random(seed);
  const queue = captureQueue();
  const hooks = receiver();
  try {
    const owner = await seedOwner();
    const origin = (await shardOf(owner.id))!;
    const target = origin === 'SHARD_0' ? 'SHARD_1' : 'SHARD_0';
    const first = await requestMove({ deps: modelDeps, input: { ownerId: owner.id, to: target } });
    expect(first.kind).toBe('started');
    const jobs = new Map<string, Stepper>([[first.move!.id, new Stepper(first.move!.id, modelDeps, rerun)]]);
    const seen = new Map<string, number>();
    const checkVersions = async () => {
      for (const [id, version] of await versionsOnDirectoryShard(owner.id)) {
        expect(version, `payment ${id} went back`).toBeGreaterThanOrEqual(seen.get(id) ?? 0);
        seen.set(id, version);
      }
    };

    let boundary = 0;
    let asked = second === null;
    for (let guard = 0; guard < 2_000; guard++) {
      const running = [...jobs.values()].filter((j) => !j.done);
      if (running.length === 0 && asked) break;
      await checkVersions();
      await interfere(owner, rand, queue);
      if (second !== null && !asked && (boundary >= at || running.length === 0)) {
        asked = true;
        for (const result of await secondRequest(second, owner.id, origin, target)) {
          if (result.kind === 'started') jobs.set(result.move.id, new Stepper(result.move.id, modelDeps, rerun));
          if ('code' in result) expect(['invalid_state_transition'], second).toContain(result.code);
        }
        continue;
      }
      const job = running[Math.floor(rand() * running.length)]!;
      if (job === jobs.get(first.move!.id) && boundary === restartAt) {
        // The first run is not dropped: it keeps taking steps alongside the second.
        jobs.set(`${job.moveId} restarted`, new Stepper(job.moveId, modelDeps, rerun));
        boundary++;
        continue;
      }
      if (job.moveId === first.move!.id && boundary === crashAt) {
        // The job's process died here: the platform starts it again, this model from its very first step.
        jobs.set(job.moveId, new Stepper(job.moveId, modelDeps, rerun));
        boundary++;
        continue;
      }
      await job.step();
      if (job === jobs.get(first.move!.id)) boundary++;
    }
    for (const job of jobs.values()) {
      expect(job.error).toBeUndefined();
      expect(job.done).toBe(true);
      const move = await loadMove(modelDeps, job.moveId);
      expect(move?.status, job.moveId).not.toBe('running');
      expect(move?.finishedAt, job.moveId).not.toBeNull();
    }
    await checkVersions();

    // Every row on the directory's shard, nothing on any other, nothing lost.
    clearPlacementCache();
    const placement = (await readPlacement(modelDeps, owner.id))!;
    expect(placement.movingTo).toBeNull();
    const home = placement.shard;
    for (const name of SHARD_NAMES) {
      if (name !== home) expect(countRows(await ownerRows(shardDb(name), owner.id)), name).toBe(0);
    }
    const rows = await ownerRows(shardDb(home), owner.id);
    const ids = (table: string) => new Set(rows[table]!.map((r) => r.id as string));
    for (const id of owner.payments) expect(ids('payments').has(id), id).toBe(true);
    for (const id of owner.refunds) expect(ids('refunds').has(id), id).toBe(true);
    expect(rows.webhook_endpoints).toHaveLength(1);
    // The owner works where the directory says.
    const read = await call('GET', `/v1/payments/${owner.payments[0]}`, { token: owner.key.secret });
    expect(read.status, read.text).toBe(200);
    return {
      boundaries: boundary,
      moves: jobs.size,
      home,
      target,
      outcome: jobs.get(first.move!.id)!.outcome,
      move: await loadMove(modelDeps, first.move!.id),
    };
  } finally {
    hooks.restore();
    queue.restore();
  }
}

describe('the move model', () => {
  afterAll(() => clearPlacementCache());

  it('a move alone: every row ends on the target, none on the origin', async () => {
    const { boundaries } = await runScenario({ seed: 1, at: 0, second: null, crashAt: -1 });
    console.log('boundaries of a move alone', boundaries);
    // The boundaries the scenarios below visit, one by one.
    expect(boundaries).toBeGreaterThan(30);
  }, 120_000);

  it('a move alone whose every step runs twice (answers lost after their writes): it still ends done, on the target', async () => {
    const { boundaries, home, target, outcome } = await runScenario({
      seed: 2,
      at: 0,
      second: null,
      crashAt: -1,
      rerun: true,
    });
    expect(boundaries).toBeGreaterThan(30);
    expect(outcome).toBe('done');
    expect(home).toBe(target);
  }, 120_000);

  // A move of the seeded owner takes 34 boundaries (the test above): the second request at each of them and just
  // after the move, in turn of the four kinds, a crash at another boundary, and the world's own operations between
  // every two steps.
  const BOUNDARIES = 36;
  const scenarios: Scenario[] = Array.from({ length: BOUNDARIES }, (_, at) => ({
    seed: 1_000 + at,
    at,
    second: SECOND_REQUESTS[at % SECOND_REQUESTS.length]!,
    crashAt: (at * 7 + 3) % BOUNDARIES,
    rerun: at % 2 === 1,
  }));
  it.each(scenarios)(
    'second request $second at boundary $at, crash at $crashAt, steps run twice: $rerun (seed $seed)',
    async (scenario) => {
      await runScenario(scenario);
    },
    120_000,
  );

  // The cron restarts a job whose heartbeat went silent (move-owner.ts, resumeMoves) without knowing whether its
  // process died or is only slow: a second run of the same move at every boundary of the first, both going on. The
  // move must end as it would have alone: done, every row on the target.
  const restarts: Scenario[] = Array.from({ length: BOUNDARIES }, (_, at) => ({
    seed: 2_000 + at,
    at: 0,
    second: null,
    crashAt: -1,
    restartAt: at,
    rerun: at % 2 === 1,
  }));
  it.each(restarts)(
    'a second run of the same move from boundary $restartAt while the first goes on, steps run twice: $rerun (seed $seed)',
    async (scenario) => {
      const { home, target, move } = await runScenario(scenario);
      expect(move?.status, move?.reason ?? '').toBe('done');
      expect(home).toBe(target);
    },
    120_000,
  );

  it('a move whose job started more than MOVE_MAX_RUNS runs before its flip fails: the owner stays, unmarked, whole', async () => {
    const owner = await seedOwner();
    const origin = (await shardOf(owner.id))!;
    const target = origin === 'SHARD_0' ? 'SHARD_1' : 'SHARD_0';
    const started = await requestMove({ deps: modelDeps, input: { ownerId: owner.id, to: target } });
    expect(started.kind).toBe('started');
    const id = started.move!.id;
    // A run that copied part of the owner, then went silent for good (parked here, never let on).
    const silent = new Stepper(id, modelDeps);
    for (let boundary = 0; boundary < 12; boundary++) await silent.step();
    expect(countRows(await ownerRows(shardDb(target), owner.id))).toBeGreaterThan(0);
    // Every run the cron could start before this one did the same.
    await modelDeps.control.update(ownerMoves).set({ run: MOVE_MAX_RUNS }).where(eq(ownerMoves.id, id)).run();
    const last = new Stepper(id, modelDeps);
    while (!last.done) await last.step();
    expect(last.error).toBeUndefined();
    expect(last.outcome).toBe('failed');
    expect(await loadMove(modelDeps, id)).toMatchObject({ status: 'failed', run: MOVE_MAX_RUNS + 1 });
    expect((await loadMove(modelDeps, id))!.finishedAt).not.toBeNull();
    clearPlacementCache();
    expect(await readPlacement(modelDeps, owner.id)).toMatchObject({ shard: origin, movingTo: null });
    expect(countRows(await ownerRows(shardDb(target), owner.id))).toBe(0);
    const rows = await ownerRows(shardDb(origin), owner.id);
    expect(rows.payments!.map((r) => r.id).sort()).toEqual([...owner.payments].sort());
    // The owner writes again.
    const write = await postIdempotent('/v1/payments', owner.key.secret, paymentBody(owner.pos.id, '2.00'));
    expect(write.status, write.text).toBe(201);
  }, 120_000);
});
