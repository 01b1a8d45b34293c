import type { ConnectorError } from '../../connectors/types.ts';
import type { Deps } from '../../deps.ts';
import type { Caller } from '../../domain/caller.ts';
import type { Environment } from '../../domain/environment.ts';
import { callConnector, type ConnectorCall } from '../payments/processor.ts';

/**
 * An idempotent operation (create payment, cancel, refund...), declared once: its name, what its answer is, and
 * its phases in the order they run, as hyperswitch names them:
 *
 * 1. `validate`: check the request and read what it needs; nothing is written, so a failure here is not
 *    the key's answer.
 * 2. `record`: persist before calling. Writes the resource the operation is about (payment, refund
 *    reservation, cancellation claim) marked with this attempt (`ctx.attempt`), or finds the one an
 *    earlier try of the same attempt wrote. From here on, a non-retryable failure is the key's answer.
 *    `done` instead of `pending` means the processor need not (or must not) be asked again.
 * 3. `callProcessor`: the connector call; only its `ConnectorError`s are outcomes.
 * 4. `applyOutcome`: records the processor's answer through the state machines and decides the result
 *    (a declined payment is a result; a timeout is a retryable `ServiceError`).
 * 5. `present`: the public resource.
 *
 * One runner runs any declared operation (`runOperation`, inside the idempotency object,
 * durable-objects/idempotency-store.ts); a route calls it with the operation and its input
 * (http/operations.ts). docs/idempotency.md ("Adding an operation") says how to add one.
 */
export interface IdempotentOperation<Name extends string, Input, Plan, Tracker, Outcome, Saved> {
  name: Name;
  /** `created`: the answer is a new resource; `updated`: an existing one, changed. */
  answers: 'created' | 'updated';
  validate(deps: Deps, ctx: OperationContext, input: Input): Promise<Plan>;
  record(deps: Deps, ctx: OperationContext, plan: Plan): Promise<Recorded<Saved, Tracker>>;
  callProcessor(deps: Deps, tracker: Tracker): Promise<Outcome>;
  applyOutcome(deps: Deps, ctx: OperationContext, tracker: Tracker, call: ConnectorCall<Outcome>): Promise<Saved>;
  present(saved: Saved): unknown;
  /**
   * Whether the result is a change the processor accepted but completes later (a cancel at the terminal):
   * answered `202 Accepted` instead of 200, replays included. Absent: never.
   */
  accepted?(saved: Saved): boolean;
}

/** What `record` found: the final result already (`done`), or the resource to ask the processor about. */
export type Recorded<Saved, Tracker> = { done: Saved; pending?: never } | { pending: Tracker; done?: never };

// biome-ignore lint/suspicious/noExplicitAny: the runner and the registry hold operations of every input and phase type; each declaration is checked by defineOperation.
export type AnyOperation = IdempotentOperation<string, any, any, any, any, any>;

/** The input an operation's route hands over: its path's payment id where it has one, and its body. */
export type InputOf<Op> =
  Op extends IdempotentOperation<string, infer Input, unknown, unknown, unknown, unknown> ? Input : never;

/** Checks a declaration against the phase contract and keeps its precise types. */
export const defineOperation = <Name extends string, Input, Plan, Tracker, Outcome, Saved>(
  operation: IdempotentOperation<Name, Input, Plan, Tracker, Outcome, Saved>,
) => operation;

/**
 * What an operation is given by its runner. A retry with the same key and body finds its own resource by
 * `attempt.key` in D1 and resumes it, so nothing depends on the idempotency object having stored anything
 * before its final answer (docs/idempotency.md, "Crashes").
 */
export interface OperationContext {
  caller: Caller;
  environment: Environment;
  /** `key`: the idempotency object's id (credential, operation, Idempotency-Key); `fingerprint`: the request's. */
  attempt: { key: string; fingerprint: string };
}

/** What the runner reports: the presented resource, and whether the operation got past `record`. */
export interface RunHooks {
  /** Called once `record` has written (or found) the resource: from then on a final failure is the key's answer. */
  started: () => void;
  /** Called when the answer is accepted but not complete (the operation's `accepted`): a 202. */
  accepted?: () => void;
}

/**
 * Runs the phases of `operation`. Throws what a phase throws (a `ServiceError`, or a bug); `hooks.started`
 * tells the caller whether the failure came after `record`. `applyOutcome`, the operation's last write,
 * goes through a D1 session (`deps.bookmarkFromHere`), whose bookmark the answer carries; the phases before
 * through the binding.
 */
export async function runOperation<Op extends AnyOperation>(
  operation: Op,
  deps: Deps,
  ctx: OperationContext,
  input: InputOf<Op>,
  hooks: RunHooks = { started: () => {} },
): Promise<unknown> {
  const plan = await operation.validate(deps, ctx, input);
  const recorded = await operation.record(deps, ctx, plan);
  hooks.started();
  let saved: unknown;
  if (recorded.pending === undefined) saved = recorded.done;
  else {
    const tracker = recorded.pending;
    const call = await callConnector(() => operation.callProcessor(deps, tracker));
    deps.bookmarkFromHere();
    saved = await operation.applyOutcome(deps, ctx, tracker, call);
  }
  if (operation.accepted?.(saved)) hooks.accepted?.();
  return operation.present(saved);
}

export type { ConnectorCall, ConnectorError };
