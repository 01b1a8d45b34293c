import { describe, expect, it } from 'vitest';
import { IsolateCache } from '../../src/lib/isolate-cache.ts';

describe('IsolateCache', () => {
  it('serves an entry until ttlMs after it was read, never at or after it', () => {
    const cache = new IsolateCache<string>(10_000, 10);
    cache.set('k', 'v', 1_000);
    expect(cache.get('k', 1_000)).toBe('v');
    expect(cache.get('k', 10_999)).toBe('v');
    expect(cache.get('k', 11_000)).toBeUndefined();
    // Expired entries are gone, not only hidden.
    expect(cache.size).toBe(0);
  });

  it('trusts nothing when the clock stepped back', () => {
    const cache = new IsolateCache<string>(10_000, 10);
    cache.set('k', 'v', 5_000);
    expect(cache.get('k', 4_999)).toBeUndefined();
  });

  it('keeps at most maxEntries, dropping the oldest read first (a read again counts as new)', () => {
    const cache = new IsolateCache<number>(60_000, 3);
    cache.set('a', 1, 0);
    cache.set('b', 2, 1);
    cache.set('c', 3, 2);
    cache.set('a', 1, 3);
    cache.set('d', 4, 4);
    expect(cache.size).toBe(3);
    expect(cache.get('b', 5)).toBeUndefined();
    expect([cache.get('a', 5), cache.get('c', 5), cache.get('d', 5)]).toEqual([1, 3, 4]);
  });

  it('drops entries on demand, one or by a predicate', () => {
    const cache = new IsolateCache<{ owner: string }>(60_000, 10);
    cache.set('k1', { owner: 'u1' }, 0);
    cache.set('k2', { owner: 'u1' }, 0);
    cache.set('k3', { owner: 'u2' }, 0);
    cache.delete('k3');
    expect(cache.get('k3', 1)).toBeUndefined();
    cache.deleteWhere((v) => v.owner === 'u1');
    expect(cache.size).toBe(0);
  });
});
