/**
 * A small cache that lives as long as the Worker isolate, for lookups that would otherwise cost a D1
 * round trip on most requests (an API key by its hash, a payment method by its id). Bounded twice: an
 * entry is used for at most `ttlMs` after it was read from the database (so a change made elsewhere, in
 * another isolate, takes effect within that time: the documented staleness), and at most `maxEntries`
 * are kept (the oldest read goes first). The isolate that makes a change drops the entry at once
 * (`delete`), so a change is immediate where it was made.
 *
 * Deliberately module-level state (one instance per isolate): that is the point of it. It holds no
 * secrets in the clear; callers store hashes, ids and ciphertext only.
 */
export class IsolateCache<V> {
  readonly #entries = new Map<string, { value: V; readAt: number }>();

  constructor(
    readonly ttlMs: number,
    readonly maxEntries: number,
  ) {}

  get(key: string, now: number): V | undefined {
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    // `now < readAt`: the clock stepped back; trust nothing read "in the future".
    if (now - entry.readAt >= this.ttlMs || now < entry.readAt) {
      this.#entries.delete(key);
      return undefined;
    }
    return entry.value;
  }

  set(key: string, value: V, now: number): void {
    this.#entries.delete(key);
    this.#entries.set(key, { value, readAt: now });
    // A Map iterates in insertion order: the first key is the oldest read.
    while (this.#entries.size > this.maxEntries) this.#entries.delete(this.#entries.keys().next().value!);
  }

  delete(key: string): void {
    this.#entries.delete(key);
  }

  /** Drops every entry `matches` accepts (e.g. all keys of a user whose scopes changed). */
  deleteWhere(matches: (value: V) => boolean): void {
    for (const [key, entry] of this.#entries) if (matches(entry.value)) this.#entries.delete(key);
  }

  clear(): void {
    this.#entries.clear();
  }

  get size(): number {
    return this.#entries.size;
  }
}
