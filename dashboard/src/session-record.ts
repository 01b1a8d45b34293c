/**
 * The session as the last holder of the session lock left it, kept in IndexedDB: what a tab holding the lock
 * reads instead of localStorage. localStorage cannot be trusted there: Chromium keeps a copy of the origin's
 * localStorage in each renderer and updates it from the other tabs asynchronously, so a tab granted the lock right
 * after another one rotated the tokens, signed out or signed in can still read the session as it was, and would
 * exchange a spent refresh token (which revokes the chain) or bring back a session that ended. An IndexedDB
 * transaction that has completed is visible to every transaction started after it, in any tab.
 *
 * Only lock holders write it (session.ts), so its writes are in the lock's order. Same origin as localStorage,
 * so no more exposed than the tokens already are; `{ session: null }` once signed out.
 */
export interface SessionRecord<Session> {
  session: Session | null;
}

/**
 * What the lock holder found: the record; none (never written, or IndexedDB unusable here, as it then is in every
 * tab of this browser, which then all go by localStorage); or unreadable for now (it did not answer in time).
 */
export type RecordRead<Session> = { found: SessionRecord<Session> } | { none: true } | { unreadable: true };

const DATABASE = 'payment-dashboard';
const STORE = 'session';
const KEY = 'current';
/** IndexedDB gets this long per call: the lock is not held on for a browser whose storage does not answer. */
const PATIENCE_MS = 2000;

class TimedOut extends Error {}

/**
 * One request in its own transaction, settled once the transaction has completed. Given up after PATIENCE_MS:
 * the transaction is then aborted (or never begun, if the database opens later), so a late write cannot land
 * after the next lock holder's.
 */
function transact(mode: IDBTransactionMode, request: (store: IDBObjectStore) => IDBRequest): Promise<unknown> {
  return new Promise((resolve, reject) => {
    let transaction: IDBTransaction | undefined;
    let gaveUp = false;
    const timer = setTimeout(() => {
      gaveUp = true;
      try {
        transaction?.abort();
      } catch {
        // Already finished or aborted.
      }
      reject(new TimedOut('IndexedDB did not answer'));
    }, PATIENCE_MS);
    const fail = (error: unknown) => {
      clearTimeout(timer);
      reject(error);
    };
    let opening: IDBOpenDBRequest;
    try {
      opening = indexedDB.open(DATABASE, 1);
    } catch (error) {
      return fail(error);
    }
    opening.onupgradeneeded = () => opening.result.createObjectStore(STORE);
    opening.onerror = () => fail(opening.error);
    opening.onblocked = () => fail(new Error('IndexedDB open blocked'));
    opening.onsuccess = () => {
      const db = opening.result;
      if (gaveUp) return db.close();
      try {
        transaction = db.transaction(STORE, mode);
        const pending = request(transaction.objectStore(STORE));
        transaction.oncomplete = () => {
          clearTimeout(timer);
          db.close();
          resolve(pending.result);
        };
        transaction.onerror = transaction.onabort = () => {
          db.close();
          fail(transaction?.error ?? new Error('IndexedDB transaction aborted'));
        };
      } catch (error) {
        db.close();
        fail(error);
      }
    };
  });
}

export async function readRecord<Session>(): Promise<RecordRead<Session>> {
  try {
    const found = (await transact('readonly', (store) => store.get(KEY))) as SessionRecord<Session> | undefined;
    return found && typeof found === 'object' && 'session' in found ? { found } : { none: true };
  } catch (error) {
    return error instanceof TimedOut ? { unreadable: true } : { none: true };
  }
}

/** Written before the session is shown anywhere else, so a tab that unloads midway leaves no spent token here. */
export async function writeRecord<Session>(session: Session | null): Promise<void> {
  try {
    await transact('readwrite', (store) => store.put({ session } satisfies SessionRecord<Session>, KEY));
  } catch {
    // A record left as it was would be read as the truth by the next lock holder: without one, it reads
    // localStorage, as it would in a browser without IndexedDB.
    try {
      await transact('readwrite', (store) => store.delete(KEY));
    } catch {
      // IndexedDB refused both: nothing more can be done from here.
    }
  }
}
