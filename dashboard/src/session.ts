import { client, type Schemas } from './client.ts';
import { type Answer, NETWORK_PROBLEM, type Problem, problemOf } from './problem.ts';
import { readRecord, writeRecord } from './session-record.ts';

/**
 * The user's session (docs/dashboard.md, "Session"). Both tokens live in localStorage, shared by every tab of
 * this origin: one session for all tabs, so a sign-in or sign-out in one is seen by all, and a page reads its
 * token from there without waiting. A refresh token may be exchanged only once (a second exchange revokes the
 * whole chain), so every change of the session (a rotation, a sign-in, a sign-out) is made under one Web Lock
 * that every tab takes, and the holder reads the session from its record in IndexedDB (session-record.ts), which
 * every tab sees alike, not from this tab's copy of localStorage, which can lag behind another tab's write.
 */
export interface Session {
  accessToken: string;
  refreshToken: string;
  /** Epoch milliseconds: when the access token lapses, from `expires_in` at the time it was issued. */
  expiresAt: number;
  user: Schemas['User'];
  /** The deployment's environment (`test` or `live`), from the access token's `env` claim. */
  environment: string;
  /** Epoch milliseconds of the sign-in this session comes from, kept across rotations: which chain it is. */
  signedInAt: number;
}

const STORAGE_KEY = 'payment-dashboard.session';
const SESSION_LOCK = 'payment-dashboard.session';
/** A sign-out waits this long at most for the logout's answer. */
const LOGOUT_PATIENCE_MS = 5000;
/** A refresh is sent under the lock, which every tab waits for: never held on for longer. */
const REFRESH_PATIENCE_MS = 10_000;
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

function sessionOf(tokens: Schemas['SessionTokens'], signedInAt: number): Session {
  const env = claimsOf(tokens.access_token).env;
  return {
    accessToken: tokens.access_token,
    refreshToken: tokens.refresh_token,
    expiresAt: Date.now() + tokens.expires_in * 1000,
    user: tokens.user,
    environment: typeof env === 'string' ? env : 'unknown',
    signedInAt,
  };
}

export async function signIn(email: string, password: string): Promise<Answer<Session>> {
  try {
    const { data, error, response } = await client.POST('/v1/auth/login', { body: { email, password } });
    if (!data) return { problem: problemOf(response, error) };
    const session = sessionOf(data.data, Date.now());
    // After any change of the session in flight in another tab (a rotation of the session signed in before).
    await underLock(() => commit(session));
    return { data: session, status: response.status };
  } catch {
    return { problem: NETWORK_PROBLEM };
  }
}

/**
 * Runs a change of the session under the session lock, so changes happen one at a time across tabs. Without Web
 * Locks (not a secure context) a sign-in or sign-out still runs; a refresh does not (`accessToken`).
 */
async function underLock<T>(change: () => Promise<T>): Promise<T> {
  return 'locks' in navigator ? navigator.locks.request(SESSION_LOCK, change) : change();
}

/**
 * Under the lock: the session as the last change left it (its record), or, with no record, localStorage's.
 * `unknown` when IndexedDB did not answer in time: nothing may be exchanged on a guess.
 */
async function newest(): Promise<Session | null | 'unknown'> {
  const read = await readRecord<Session>();
  if ('found' in read) return read.found.session;
  return 'none' in read ? readSession() : 'unknown';
}

/**
 * Under the lock: the session from now on, in the record the next lock holder reads, then in every tab. In that
 * order: a tab that unloads between the two leaves localStorage behind (its access token still works, and the next
 * lock holder repairs it from the record), never a record with a spent refresh token.
 */
async function commit(session: Session | null): Promise<void> {
  await writeRecord(session);
  store(session);
}

/** POST /v1/auth/logout: the API ends the whole session from any of its refresh tokens, even a spent one. */
async function logout(refreshToken: string): Promise<void> {
  try {
    await client.POST('/v1/auth/logout', {
      body: { refresh_token: refreshToken },
      // Sent even if the tab closes right after the click.
      keepalive: true,
      signal: AbortSignal.timeout(LOGOUT_PATIENCE_MS),
    });
  } catch {
    // Signed out here already; the refresh token lapses by itself (30 days) if the API could not be told.
  }
}

/**
 * Ends the session at the API (its tokens stop working) and in every tab; signed out here at once, and even
 * offline. The logout leaves at once, before waiting for the lock (a rotation in another tab may hold it); then,
 * under the lock, the session ends in the record and every tab, and a different sign-in found there is ended too.
 */
export async function signOut(): Promise<void> {
  const shown = readSession();
  store(null);
  const sent = shown ? logout(shown.refreshToken) : Promise.resolve();
  await underLock(async () => {
    const found = await newest();
    await commit(null);
    if (found && found !== 'unknown' && found.signedInAt !== shown?.signedInAt) await logout(found.refreshToken);
  });
  await sent;
}

/**
 * Forgets, in every tab, the session whose access token the API refused (401), without asking the API again:
 * the API refuses an access token when its session ended, and that ends every token rotated from the same
 * sign-in. A session signed in since, in another tab, stays.
 */
export function forgetSession(refusedAccessToken: string | undefined) {
  const refused = readSession();
  if (!refused || refused.accessToken !== refusedAccessToken) return;
  store(null);
  void underLock(async () => {
    const current = await newest();
    if (current === 'unknown') return;
    if (current?.signedInAt === refused.signedInAt) await commit(null);
    // Signed in since, in another tab: that session stays, here too.
    else if (current) store(current);
  });
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

const STORAGE_SILENT: Problem = {
  status: 0,
  code: 'storage_unavailable',
  message: 'The browser’s storage did not answer, so the session could not be renewed safely: retry in a moment.',
  requestId: null,
  retryable: true,
};

/** Web Locks are missing: on an address that is not a secure context, or in a browser too old to have them. */
const NO_LOCKS: () => Problem = () => ({
  status: 0,
  code: isSecureContext ? 'unsupported_browser' : 'insecure_context',
  message: isSecureContext
    ? 'The session cannot be renewed in this browser (it has no Web Locks, which keep tabs from renewing it twice): use a current browser, then sign in again.'
    : 'The session cannot be renewed on this address: open the dashboard over https:// (or http://localhost or http://127.0.0.1 locally), then sign in again.',
  requestId: null,
  retryable: false,
});

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
  if (!('locks' in navigator)) throw new SessionProblem(NO_LOCKS());
  return underLock(async () => {
    // Another tab may have rotated, signed out or signed in while this one waited for the lock.
    const current = await newest();
    if (current === 'unknown') {
      // Exchanging this tab's copy on a guess could spend a token another tab already spent.
      const shown = readSession();
      if (shown && shown.expiresAt > Date.now()) return shown.accessToken;
      throw new SessionProblem(STORAGE_SILENT);
    }
    if (!current) {
      if (readSession()) store(null);
      throw new SessionProblem(SIGNED_OUT);
    }
    if (readSession()?.refreshToken !== current.refreshToken) store(current);
    if (fresh(current)) return current.accessToken;
    const { data, error, response } = await client.POST('/v1/auth/refresh', {
      body: { refresh_token: current.refreshToken },
      // The lock is every tab's: it is not held on for an answer that does not come.
      signal: AbortSignal.timeout(REFRESH_PATIENCE_MS),
    });
    if (data) {
      const rotated = sessionOf(data.data, current.signedInAt);
      await commit(rotated);
      return rotated.accessToken;
    }
    if (response.status === 401) {
      // The newest session's refresh token refused: the session ended (signed out elsewhere, or revoked).
      await commit(null);
      throw new SessionProblem(SIGNED_OUT);
    }
    // Rate limited or unavailable: the current token still works until it lapses.
    if (current.expiresAt > Date.now()) return current.accessToken;
    throw new SessionProblem(problemOf(response, error));
  });
}
