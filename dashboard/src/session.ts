import { client, type Schemas } from './client.ts';
import { type Answer, NETWORK_PROBLEM, type Problem, problemOf } from './problem.ts';
import { lastRotation, recordRotation } from './rotation.ts';

/**
 * The user's session (docs/dashboard.md, "Session"). Both tokens live in localStorage, shared by every tab of
 * this origin: one session for all tabs, so a sign-in or sign-out in one is seen by all. A refresh token may be
 * exchanged only once (a second exchange revokes the whole chain), so the refresh runs under a Web Lock that
 * every tab takes: the tab holding it looks first for what another tab rotated (the rotation record, in
 * IndexedDB, see rotation.ts), and uses it instead of exchanging the same token twice.
 */
export interface Session {
  accessToken: string;
  refreshToken: string;
  /** Epoch milliseconds: when the access token lapses, from `expires_in` at the time it was issued. */
  expiresAt: number;
  user: Schemas['User'];
  /** The deployment's environment (`test` or `live`), from the access token's `env` claim. */
  environment: string;
}

const STORAGE_KEY = 'payment-dashboard.session';
const REFRESH_LOCK = 'payment-dashboard.refresh';
/** Rotated this long before the access token lapses, so no request leaves with one about to expire. */
const REFRESH_MARGIN_MS = 60_000;

export function readSession(): Session | null {
  try {
    const stored = JSON.parse(localStorage.getItem(STORAGE_KEY) ?? 'null') as Session | null;
    return stored && typeof stored.refreshToken === 'string' ? stored : null;
  } catch {
    return null;
  }
}

const listeners = new Set<(session: Session | null) => void>();

function store(session: Session | null) {
  if (session) localStorage.setItem(STORAGE_KEY, JSON.stringify(session));
  else localStorage.removeItem(STORAGE_KEY);
  for (const listener of listeners) listener(session);
}

/** Called on every change of the session, in this tab or another (the `storage` event). */
export function onSessionChange(listener: (session: Session | null) => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

addEventListener('storage', (event) => {
  if (event.key !== STORAGE_KEY && event.key !== null) return;
  const session = readSession();
  for (const listener of listeners) listener(session);
});

/** A JWT's claims, read without verifying (the API verifies; the dashboard only shows the environment). */
function claimsOf(jwt: string): Record<string, unknown> {
  try {
    const payload = jwt.split('.')[1] ?? '';
    const json = atob(payload.replaceAll('-', '+').replaceAll('_', '/'));
    return JSON.parse(new TextDecoder().decode(Uint8Array.from(json, (c) => c.charCodeAt(0))));
  } catch {
    return {};
  }
}

function sessionOf(tokens: Schemas['SessionTokens']): Session {
  const env = claimsOf(tokens.access_token).env;
  return {
    accessToken: tokens.access_token,
    refreshToken: tokens.refresh_token,
    expiresAt: Date.now() + tokens.expires_in * 1000,
    user: tokens.user,
    environment: typeof env === 'string' ? env : 'unknown',
  };
}

export async function signIn(email: string, password: string): Promise<Answer<Session>> {
  try {
    const { data, error, response } = await client.POST('/v1/auth/login', { body: { email, password } });
    if (!data) return { problem: problemOf(response, error) };
    const session = sessionOf(data.data);
    store(session);
    return { data: session, status: response.status };
  } catch {
    return { problem: NETWORK_PROBLEM };
  }
}

/** Ends the session at the API (its tokens stop working) and in every tab; signed out here even offline. */
export async function signOut(): Promise<void> {
  const session = readSession();
  store(null);
  await recordRotation(null);
  if (!session) return;
  try {
    await client.POST('/v1/auth/logout', { body: { refresh_token: session.refreshToken } });
  } catch {
    // Signed out here already; the refresh token lapses by itself (30 days) if the API could not be told.
  }
}

/**
 * Forgets, in every tab, the session whose access token the API refused (401), without asking the API again.
 * A newer session (signed in since, in another tab) stays.
 */
export function forgetSession(refusedAccessToken: string | undefined) {
  if (readSession()?.accessToken === refusedAccessToken) store(null);
}

/** Why no access token could be had: signed out, or the refresh failed (its problem, to show and retry). */
export class SessionProblem extends Error {
  constructor(readonly problem: Problem) {
    super(problem.message);
  }
}

const SIGNED_OUT: Problem = {
  status: 401,
  code: 'unauthorized',
  message: 'Your session ended: sign in again.',
  requestId: null,
  retryable: false,
};

const INSECURE_CONTEXT: Problem = {
  status: 0,
  code: 'insecure_context',
  message:
    'The session cannot be renewed on this address: open the dashboard over https:// (or http://localhost or http://127.0.0.1 locally), then sign in again.',
  requestId: null,
  retryable: false,
};

const fresh = (session: Session) => session.expiresAt - Date.now() > REFRESH_MARGIN_MS;

/**
 * A usable access token: the stored one, or, when it lapses within a minute, a rotated one. Throws a
 * `SessionProblem`: signed out (no session, or the API refused the refresh token), or the refresh failed
 * otherwise, so the call that needed the token reports it and may be retried. A network failure propagates.
 */
export async function accessToken(): Promise<string> {
  const session = readSession();
  if (!session) throw new SessionProblem(SIGNED_OUT);
  if (fresh(session)) return session.accessToken;
  // Web Locks exist only in a secure context: without them two tabs could spend the same refresh token.
  if (!('locks' in navigator)) throw new SessionProblem(INSECURE_CONTEXT);
  return navigator.locks.request(REFRESH_LOCK, async () => {
    let current = readSession();
    if (!current) throw new SessionProblem(SIGNED_OUT);
    // Another tab may have rotated while this one waited for the lock, and its localStorage write may not have
    // reached this tab yet: the rotation record says which token it spent and what it became.
    const rotation = await lastRotation<Session>();
    if (rotation?.from === current.refreshToken) {
      current = rotation.session;
      store(current);
    }
    if (fresh(current)) return current.accessToken;
    const { data, error, response } = await client.POST('/v1/auth/refresh', {
      body: { refresh_token: current.refreshToken },
    });
    if (data) {
      const rotated = sessionOf(data.data);
      store(rotated);
      // Recorded before the lock is released, so the next tab to hold it finds the new tokens.
      await recordRotation({ from: current.refreshToken, session: rotated });
      return rotated.accessToken;
    }
    if (response.status === 401) {
      if (readSession()?.refreshToken === current.refreshToken) store(null);
      throw new SessionProblem(SIGNED_OUT);
    }
    // Rate limited or unavailable: the current token still works until it lapses.
    if (current.expiresAt > Date.now()) return current.accessToken;
    throw new SessionProblem(problemOf(response, error));
  });
}
