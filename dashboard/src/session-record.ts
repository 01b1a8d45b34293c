/**
 * The session as the last holder of the session lock left it, kept in IndexedDB: what a tab holding the lock
 * reads instead of localStorage. localStorage cannot be trusted there: Chromium keeps a copy of the origin's
 * localStorage in each renderer and updates it from the other tabs asynchronously, so a tab granted the lock right
 * after another one rotated the tokens, signed out or signed in can still read the session as it was, and would
 * exchange a spent refresh token (which revokes the chain) or bring back a session that ended. An IndexedDB
 * transaction that has completed is seen by every transaction started after it, in any tab.
 *
 * Only lock holders write it (session.ts), so its writes are in the lock's order. Same origin as localStorage,
 * so no more exposed than the tokens already are; `{ session: null }` once signed out.
 */
export interface SessionRecord<Session> {
  session: Session | null;
}

const DATABASE = 'payment-dashboard';
const STORE = 'session';
const KEY = 'current';
/** A browser whose IndexedDB does not answer in this time is treated as one without it: the lock is not held on. */
const PATIENCE_MS = 2000;

function database(): Promise<IDBDatabase> {
  return new Promise((resolve, reject) => {
    const opening = indexedDB.open(DATABASE, 1);
    opening.onupgradeneeded = () => opening.result.createObjectStore(STORE);
    opening.onsuccess = () => resolve(opening.result);
    opening.onerror = () => reject(opening.error);
    opening.onblocked = () => reject(new Error('IndexedDB open blocked'));
  });
}

/** One request in its own transaction, settled once the transaction has completed (so it is durable), or refused. */
async function transact(mode: IDBTransactionMode, request: (store: IDBObjectStore) => IDBRequest): Promise<unknown> {
  const db = await database();
  try {
    return await new Promise((resolve, reject) => {
      const transaction = db.transaction(STORE, mode);
      const pending = request(transaction.objectStore(STORE));
      transaction.oncomplete = () => resolve(pending.result);
      transaction.onerror = () => reject(transaction.error);
      transaction.onabort = () => reject(transaction.error);
    });
  } finally {
    db.close();
  }
}

function patiently<T>(work: Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('IndexedDB did not answer')), PATIENCE_MS);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

/** The record, or undefined when there is none or IndexedDB is unavailable (then localStorage is all there is). */
export async function readRecord<Session>(): Promise<SessionRecord<Session> | undefined> {
  try {
    const found = (await patiently(transact('readonly', (store) => store.get(KEY)))) as
      | SessionRecord<Session>
      | undefined;
    return found && typeof found === 'object' && 'session' in found ? found : undefined;
  } catch {
    return undefined;
  }
}

export async function writeRecord<Session>(session: Session | null): Promise<void> {
  try {
    await patiently(transact('readwrite', (store) => store.put({ session } satisfies SessionRecord<Session>, KEY)));
  } catch {
    // A record left as it was would be read as the truth by the next lock holder: without one, it reads
    // localStorage, as it would in a browser without IndexedDB.
    try {
      await patiently(transact('readwrite', (store) => store.delete(KEY)));
    } catch {
      // IndexedDB refused both: nothing more can be done from here.
    }
  }
}
