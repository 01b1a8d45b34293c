import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { client } from './client.ts';
import { type Answer, NETWORK_PROBLEM, type Problem, problemOf } from './problem.ts';
import { accessToken, forgetSession, SessionProblem } from './session.ts';

export { client };

/** Paths whose body carries the session's tokens: they take no bearer. */
const SESSION_PATHS = new Set(['/v1/auth/login', '/v1/auth/refresh', '/v1/auth/logout']);

const BEARER = 'Bearer ';

client.use({
  async onRequest({ request, schemaPath }) {
    if (SESSION_PATHS.has(schemaPath)) return request;
    request.headers.set('Authorization', `${BEARER}${await accessToken()}`);
    return request;
  },
  // A refused access token ends its session in every tab: the app shows the sign-in form at the same address.
  onResponse({ request, response, schemaPath }) {
    if (response.status === 401 && !SESSION_PATHS.has(schemaPath))
      forgetSession(request.headers.get('Authorization')?.slice(BEARER.length));
    return response;
  },
});

/**
 * One API call as the pages use it: its data, or its problem. After a 401 (the session ended, above) the app
 * shows the sign-in form at the same address, so the user returns to this page once signed in.
 */
export async function ask<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<Answer<T>> {
  try {
    const { data, error, response } = await call;
    if (response.ok) return { data: data as T, status: response.status };
    return { problem: problemOf(response, error) };
  } catch (error) {
    return { problem: error instanceof SessionProblem ? error.problem : NETWORK_PROBLEM };
  }
}

export interface Loaded<T> {
  data?: T;
  problem?: Problem;
  loading: boolean;
  reload: () => void;
}

/** Loads what a page shows, again whenever `deps` change or `reload` is called; a stale answer is dropped. */
export function useLoad<T>(load: () => Promise<Answer<T>>, deps: readonly unknown[]): Loaded<T> {
  const [state, setState] = useState<{ data?: T; problem?: Problem; loading: boolean }>({ loading: true });
  const [round, setRound] = useState(0);
  const latest = useRef(0);
  // `deps` are the caller's: `load` is a new closure on every render, and runs again only when they change.
  useEffect(() => {
    const mine = ++latest.current;
    setState((previous) => ({ ...previous, loading: true }));
    load().then((answer) => {
      if (mine !== latest.current) return;
      setState(answer.problem ? { problem: answer.problem, loading: false } : { data: answer.data, loading: false });
    });
  }, [...deps, round]);
  const reload = useCallback(() => setRound((r) => r + 1), []);
  return { ...state, reload };
}

export interface Action<A extends unknown[]> {
  run: (...args: A) => Promise<void>;
  /** The last run again, with the same arguments (so the same Idempotency-Key). */
  retry: () => void;
  busy: boolean;
  problem?: Problem;
}

/**
 * A write: one at a time (a second click while one runs is ignored, before any re-render could disable the
 * button), its problem kept for the page to show with a Retry of the very same call.
 */
export function useAction<A extends unknown[], T>(
  act: (...args: A) => Promise<Answer<T>>,
  onDone: (data: T, status: number) => void,
  onProblem?: (problem: Problem) => void,
): Action<A> {
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<Problem>();
  const running = useRef(false);
  const last = useRef<A | undefined>(undefined);
  const run = async (...args: A) => {
    if (running.current) return;
    running.current = true;
    last.current = args;
    setBusy(true);
    setProblem(undefined);
    const answer = await act(...args);
    running.current = false;
    setBusy(false);
    if (answer.problem) {
      setProblem(answer.problem);
      onProblem?.(answer.problem);
    } else onDone(answer.data, answer.status);
  };
  const retry = () => {
    if (last.current) void run(...last.current);
  };
  return { run, retry, busy, problem };
}

/** A fresh Idempotency-Key: one per dialog, kept across its retries (docs/dashboard.md, "Writes"). */
export const newIdempotencyKey = () => `dash-${crypto.randomUUID()}`;
