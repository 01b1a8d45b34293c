import { DurableObject } from 'cloudflare:workers';
import { encodeBookmark } from '../db/shards.ts';
import { createDeps, type Deps, primaryBookmark } from '../deps.ts';
import type { Env } from '../env.ts';
import { IDEMPOTENCY_RETENTION_MS, requestFingerprint } from '../domain/idempotency.ts';
import { ServiceError } from '../lib/errors.ts';
import { errorFields, log } from '../lib/log.ts';
import type { OperationAnswer, OperationRequest, StoredAnswer } from '../services/idempotency.ts';
import { type AnyOperation, runOperation } from '../services/operations/operation.ts';
import { OPERATIONS } from '../services/operations/registry.ts';

interface StoredRecord {
  fingerprint: string;
  answer: StoredAnswer;
  /**
   * The D1 bookmark past the operation's writes, answered again with every replay (docs/read-replication.md);
   * none when the primary could not be asked for one.
   */
  bookmark?: string;
  createdAt: number;
}

/**
 * One object per (caller, operation, Idempotency-Key): the runner of every declared operation
 * (services/operations/). It runs the operation itself, one request at a time, so two identical
 * concurrent requests are one operation: the second waits for the first and gets its stored answer. Only
 * final answers are stored, in one write; a retryable processor failure is not, and the retry resumes the
 * same payment or refund (same processor-side idempotency key), which it finds in D1 by this object's id
 * (`attempt.key`). So a crash or eviction between the D1 writes and this object's write loses nothing.
 */
export class IdempotencyStore extends DurableObject<Env> {
  private running: Promise<unknown> | null = null;

  async execute(request: OperationRequest): Promise<OperationAnswer> {
    while (this.running) await this.running.catch(() => undefined);
    const run = this.executeAlone(request);
    this.running = run;
    try {
      return await run;
    } finally {
      if (this.running === run) this.running = null;
    }
  }

  private async executeAlone(request: OperationRequest): Promise<OperationAnswer> {
    const storage = this.ctx.storage;
    const { operation, input } = request.invocation;
    const body = 'body' in input ? input.body : null;
    const fingerprint = await requestFingerprint(request.target.method, request.target.path, body);
    const record = await storage.get<StoredRecord>('record');
    if (record && record.fingerprint !== fingerprint) {
      return { answer: { ok: false, error: new ServiceError('idempotency_key_reused').toOutcome() }, replayed: false };
    }
    if (record)
      return { answer: record.answer, replayed: true, ...(record.bookmark ? { bookmark: record.bookmark } : {}) };

    let started = false;
    let answer: StoredAnswer;
    // On the owner's shard, as the route found it in the directory (a move refuses writes before it copies).
    // Through the binding, whose queries D1 answers at the primary (replicas serve only sessions): the operation
    // decides on the newest rows, and writes. Its answer carries a bookmark past its writes, so that a read sent
    // with it sees them even from a replica (middleware/request-context.ts). The bookmark after the last write is
    // past them all: so only `applyOutcome`, the last write, goes through a session at the primary (runOperation).
    const deps = createDeps(this.env, { shard: request.shard });
    const ctx = {
      caller: request.caller,
      environment: this.env.ENVIRONMENT,
      attempt: { key: this.ctx.id.toString(), fingerprint },
    };
    try {
      const declared: AnyOperation = OPERATIONS[operation];
      let accepted = false;
      const hooks = { started: () => (started = true), accepted: () => (accepted = true) };
      const resource = await runOperation(declared, deps, ctx, input, hooks);
      answer = { ok: true, body: JSON.stringify(resource), ...(accepted ? { accepted: true as const } : {}) };
    } catch (error) {
      if (!(error instanceof ServiceError)) {
        log('error', 'idempotent_operation_failed', { operation, ...errorFields(error) });
      }
      const failure = error instanceof ServiceError ? error : new ServiceError('internal_error');
      answer = { ok: false, error: failure.toOutcome() };
      // Refused before anything was recorded: nothing written, so no bookmark to wait for.
      if (!started) return { answer, replayed: false };
      // Kept: every success, and failures of an operation that started, unless a retry may still succeed.
      if (failure.retryable) return { answer, replayed: false, ...(await this.bookmarkPast(deps)) };
    }
    const written = await this.bookmarkPast(deps);
    const kept: StoredRecord = { fingerprint, answer, ...written, createdAt: Date.now() };
    // The record and the alarm that forgets it, in one atomic write: storage writes issued with no await between
    // them are coalesced into one transaction, so no record outlives its alarm. Written once per key, so the alarm
    // is set once: no need to read it first.
    await Promise.all([storage.put('record', kept), storage.setAlarm(kept.createdAt + IDEMPOTENCY_RETENTION_MS)]);
    return { answer, replayed: false, ...written };
  }

  /**
   * A bookmark past the operation's writes: `applyOutcome`'s session's, or, when it wrote nothing (an earlier
   * try's resource found done, a failure before the outcome), the primary's now, which is past every write made:
   * one more query, on those paths only.
   */
  private async bookmarkPast(deps: Deps): Promise<{ bookmark?: string }> {
    const session = deps.d1Session?.getBookmark();
    const bookmark = session ? encodeBookmark(deps.shard, session) : await primaryBookmark(this.env, deps.shard);
    return bookmark ? { bookmark } : {};
  }

  /** Forgets the key after the retention period (at least 24 hours). */
  override async alarm(): Promise<void> {
    await this.ctx.storage.deleteAll();
  }
}
