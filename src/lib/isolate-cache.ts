/**
 * A small cache that lives as long as the Worker isolate, for lookups that would otherwise cost a D1 round trip (or a
 * processor's call) on most requests: an API key by its hash, the methods a key may use, a terminal's state. Bounded
 * twice: an entry is used for at most `ttlMs` after it was read (so a change made elsewhere, in another isolate, takes
 * effect within that time: the documented staleness) and then expires by itself, and at most `maxEntries` are kept
 * (the oldest read goes first).
 *
 * Each cache names what its values were read from (`readFrom`: `api_key:<id>`, `owner:<id>`, `payment_method:<id>`).
 * A write through this isolate that must be seen at once says what it changed, once (`changed`), whichever caches
 * hold it: it is then immediate where it was made.
 *
 * Deliberately module-level state (one instance per isolate): that is the point of it. It holds no secrets in the
 * clear; callers store hashes, ids and ciphertext only.
 */
export class IsolateCache<V> {
  readonly #entries = new Map<string, { value: V; readAt: number }>();

  constructor(
    readonly ttlMs: number,
    readonly maxEntries: number,
    /** What a value was read from, as `changed` names it; nothing by default. */
    readonly readFrom: (value: V) => readonly string[] = () => [],
  ) {
    caches.add(this as IsolateCache<unknown>);
  }

  get(key: string, now = Date.now()): V | undefined {
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    if (this.#expired(entry.readAt, now)) {
      this.#entries.delete(key);
      return undefined;
    }
    return entry.value;
  }

  /** The value of `key`, read by `load` when no fresh one is held; an `undefined` answer is not kept. */
  async read(key: string, load: () => Promise<V | undefined>, now = Date.now()): Promise<V | undefined> {
    const held = this.get(key, now);
    if (held !== undefined) return held;
    const value = await load();
    if (value !== undefined) this.set(key, value, now);
    return value;
  }

  set(key: string, value: V, now = Date.now()): void {
    this.#entries.delete(key);
    this.#entries.set(key, { value, readAt: now });
    // A Map iterates in insertion order: the first entries are the oldest reads, so the expired ones go from the front,
    // and so does the oldest when there are too many.
    for (const [first, entry] of this.#entries) {
      if (this.#entries.size <= this.maxEntries && !this.#expired(entry.readAt, now)) break;
      this.#entries.delete(first);
    }
  }

  delete(key: string): void {
    this.#entries.delete(key);
  }

  clear(): void {
    this.#entries.clear();
  }

  get size(): number {
    return this.#entries.size;
  }

  /** Drops every entry read from `subject`. */
  forget(subject: string): void {
    for (const [key, entry] of this.#entries)
      if (this.readFrom(entry.value).includes(subject)) this.#entries.delete(key);
  }

  // `now < readAt`: the clock stepped back; trust nothing read "in the future".
  #expired(readAt: number, now: number): boolean {
    return now - readAt >= this.ttlMs || now < readAt;
  }
}

const caches = new Set<IsolateCache<unknown>>();

/**
 * A write through this isolate changed `subject` (`payment_method:<id>`...): every isolate cache drops what it read
 * from it, so the change is seen at once here (elsewhere within the caches' time).
 */
export function changed(subject: string): void {
  for (const cache of caches) cache.forget(subject);
}
