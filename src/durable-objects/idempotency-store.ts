import { DurableObject } from 'cloudflare:workers';
import { createDeps, READ_BOOKMARK_HEADER, type Deps } from '../deps.ts';
import type { Caller } from '../domain/caller.ts';
import type { Env } from '../env.ts';
import { IDEMPOTENCY_RETENTION_MS } from '../domain/idempotency.ts';
import { ApiError } from '../lib/errors.ts';
import { errorFields, log } from '../lib/log.ts';
import { cancelPayment } from '../services/payments/cancel-payment.ts';
import { createPayment, type CreatePaymentBody } from '../services/payments/create-payment.ts';
import { createRefund, type CreateRefundBody } from '../services/payments/create-refund.ts';
import type { OperationContext, OperationResult } from '../services/payments/operation.ts';

export type IdempotentCommand =
  | { operation: 'create_payment'; body: CreatePaymentBody }
  | { operation: 'cancel_payment'; paymentId: string }
  | { operation: 'create_refund'; paymentId: string; body: CreateRefundBody };

export interface IdempotentRequest {
  fingerprint: string;
  caller: Caller;
  command: IdempotentCommand;
}

/** What the Worker sends back: the stored (or fresh) status and body text, byte for byte. */
export interface IdempotentResponse {
  status: number;
  body: string;
  replayed: boolean;
  headers?: Record<string, string>;
}

interface StoredRecord {
  fingerprint: string;
  /** Null only in records written before the final answer was the only thing stored. */
  response: { status: number; body: string } | null;
  createdAt: number;
}

/**
 * One object per (credential, operation, Idempotency-Key). It runs the operation itself, one request at
 * a time, so two identical concurrent requests are one operation: the second waits for the first and
 * gets its stored answer. Only final answers are stored, in one write; a retryable processor failure is
 * not, and the retry resumes the same payment or refund (same processor-side idempotency key), which it
 * finds in D1 by this object's id (`attempt.key`, services/payments/operation.ts). So a crash or eviction
 * between the D1 writes and this object's write loses nothing: the retry resumes from D1.
 */
export class IdempotencyStore extends DurableObject<Env> {
  private running: Promise<unknown> | null = null;

  async execute(request: IdempotentRequest): Promise<IdempotentResponse> {
    while (this.running) await this.running.catch(() => undefined);
    const run = this.executeAlone(request);
    this.running = run;
    try {
      return await run;
    } finally {
      if (this.running === run) this.running = null;
    }
  }

  private async executeAlone(request: IdempotentRequest): Promise<IdempotentResponse> {
    const storage = this.ctx.storage;
    const record = await storage.get<StoredRecord>('record');
    if (record && record.fingerprint !== request.fingerprint) {
      return errorResponse(new ApiError('idempotency_key_reused'), false);
    }
    if (record?.response) return { ...record.response, replayed: true };

    let started = false;
    const ctx: OperationContext = {
      caller: request.caller,
      environment: this.env.ENVIRONMENT,
      attempt: { key: this.ctx.id.toString(), fingerprint: request.fingerprint },
      started: () => {
        started = true;
      },
    };

    let result: OperationResult | null = null;
    let failure: ApiError | null = null;
    // Through a session at the primary, so the answer can carry a bookmark past these writes: a read sent
    // with it sees them, even from a replica (middleware/request-context.ts).
    const deps = createDeps(this.env, { d1Session: 'first-primary' });
    try {
      result = await run(deps, ctx, request.command);
    } catch (error) {
      if (!(error instanceof ApiError)) {
        log('error', 'idempotent_operation_failed', { operation: request.command.operation, ...errorFields(error) });
      }
      failure = error instanceof ApiError ? error : new ApiError('internal_error');
    }

    // Kept: every success, and failures of an operation that started, unless a retry may still succeed.
    const keep = result !== null || (failure !== null && started && !failure.retryable);
    const response = result ? { status: result.status, body: JSON.stringify(result.body) } : errorBody(failure!);
    if (keep) {
      const stored: StoredRecord = { fingerprint: request.fingerprint, response, createdAt: Date.now() };
      await storage.put('record', stored);
      // Written once per key, so the alarm is set once: no need to read it first.
      await storage.setAlarm(stored.createdAt + IDEMPOTENCY_RETENTION_MS);
    }
    const bookmark = deps.d1Session?.getBookmark();
    const headers = { ...(failure?.headers ?? {}), ...(bookmark ? { [READ_BOOKMARK_HEADER]: bookmark } : {}) };
    return { ...response, replayed: false, ...(Object.keys(headers).length > 0 ? { headers } : {}) };
  }

  /** Forgets the key after the retention period (at least 24 hours). */
  override async alarm(): Promise<void> {
    await this.ctx.storage.deleteAll();
  }
}

function run(deps: Deps, ctx: OperationContext, command: IdempotentCommand): Promise<OperationResult> {
  switch (command.operation) {
    case 'create_payment':
      return createPayment(deps, ctx, command.body);
    case 'cancel_payment':
      return cancelPayment(deps, ctx, command.paymentId);
    case 'create_refund':
      return createRefund(deps, ctx, command.paymentId, command.body);
  }
}

/** Error bodies carry a placeholder request id; the Worker puts the current request's id in. */
export const REQUEST_ID_PLACEHOLDER = 'req_00000000000000000000';

function errorBody(error: ApiError) {
  return { status: error.status, body: JSON.stringify(error.toBody(REQUEST_ID_PLACEHOLDER)) };
}

function errorResponse(error: ApiError, replayed: boolean): IdempotentResponse {
  return { ...errorBody(error), replayed };
}
