import type { Context } from 'hono';
import { callerOf } from '../domain/caller.ts';
import type { AppEnv } from '../lib/openapi.ts';
import { runIdempotently } from '../services/idempotency.ts';
import type { AnyOperation, InputOf } from '../services/operations/operation.ts';
import type { OperationInvocation } from '../services/operations/registry.ts';
import { errorEnvelope, errorHeaders, statusOf } from './errors.ts';
import { READ_BOOKMARK_HEADER } from './headers.ts';

/**
 * Answers a route with a declared idempotent operation (services/operations/), run through its
 * idempotency object: a new resource is 201, a changed one 200, a change the processor completes later (the
 * operation's `accepted`) 202, an error its code's status and envelope.
 * A stored answer comes back byte for byte (`Idempotent-Replayed: true`); an error's `request_id` is this
 * request's, as every response's is its own `X-Request-Id`. Returns a raw Response, whose shape is the one
 * declared on the route (checked by the contract tests).
 */
export async function answerOperation<Op extends AnyOperation>(
  c: Context<AppEnv>,
  operation: Op,
  input: InputOf<Op>,
): Promise<Response> {
  const deps = c.get('deps');
  const { answer, replayed, bookmark } = await runIdempotently(deps, {
    caller: callerOf(c.get('auth')),
    key: c.req.header('idempotency-key')!,
    invocation: { operation: operation.name, input } as OperationInvocation,
    target: { method: c.req.method, path: c.req.path },
    shard: deps.shard,
  });
  const headers = new Headers({ 'Content-Type': 'application/json' });
  if (replayed) headers.set('Idempotent-Replayed', 'true');
  if (bookmark) headers.set(READ_BOOKMARK_HEADER, bookmark);
  if (answer.ok) {
    const status = answer.accepted ? 202 : operation.answers === 'created' ? 201 : 200;
    return new Response(`{"data":${answer.body}}`, { status, headers });
  }
  c.set('errorCode', answer.error.code);
  for (const [name, value] of Object.entries(errorHeaders(answer.error))) headers.set(name, value);
  return new Response(JSON.stringify(errorEnvelope(answer.error, c.get('requestId'))), {
    status: statusOf(answer.error),
    headers,
  });
}
