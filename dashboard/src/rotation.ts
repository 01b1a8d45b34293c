/**
 * The last rotation of the session, handed from the tab that made it to the next tab holding the refresh lock:
 * which refresh token was exchanged, and the session it became. localStorage cannot carry it across the lock:
 * Chromium keeps a copy of the origin's localStorage in each renderer and updates it from the other tabs
 * asynchronously, so a tab granted the lock right after another one stored its rotated tokens can still read the
 * old ones, and would exchange the spent refresh token a second time (which revokes the chain). An IndexedDB
 * transaction that has completed is seen by every transaction started after it, in any tab. Kept in the same
 * origin as the session itself, and cleared on sign-out.
 */
export interface Rotation<Session> {
  /** The refresh token that was exchanged (it must never be exchanged again). */
  from: string;
  session: Session;
}

const DATABASE = 'payment-dashboard';
const STORE = 'rotation';
const KEY = 'last';

function database(): Promise<IDBDatabase> {
  return new Promise((resolve, reject) => {
    const opening = indexedDB.open(DATABASE, 1);
    opening.onupgradeneeded = () => opening.result.createObjectStore(STORE);
    opening.onsuccess = () => resolve(opening.result);
    opening.onerror = () => reject(opening.error);
  });
}

/** Runs one request in a transaction and settles once the transaction has completed (so it is durable). */
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

/** The last rotation, or null when there is none or IndexedDB is unavailable (then localStorage is all there is). */
export async function lastRotation<Session>(): Promise<Rotation<Session> | null> {
  try {
    const found = (await transact('readonly', (store) => store.get(KEY))) as Rotation<Session> | undefined;
    return found && typeof found.from === 'string' && found.session ? found : null;
  } catch {
    return null;
  }
}

export async function recordRotation<Session>(rotation: Rotation<Session> | null): Promise<void> {
  try {
    await transact('readwrite', (store) => (rotation ? store.put(rotation, KEY) : store.delete(KEY)));
  } catch {
    // Without IndexedDB a tab falls back on localStorage alone, as it would have without this record.
  }
}
