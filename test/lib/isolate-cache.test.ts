import { describe, expect, it } from 'vitest';
import { changed, IsolateCache } from '../../src/lib/isolate-cache.ts';

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

  it('drops expired entries by itself as new ones come, not only when asked for them', () => {
    const cache = new IsolateCache<string>(10_000, 10);
    cache.set('a', 'v', 0);
    cache.set('b', 'v', 5_000);
    cache.set('c', 'v', 10_000);
    expect(cache.size).toBe(2);
    cache.set('d', 'v', 15_001);
    expect(cache.size).toBe(2);
  });

  it('reads through: loads what it does not hold, keeps what was found, not what was not', async () => {
    const cache = new IsolateCache<string>(10_000, 10);
    let loads = 0;
    const load = async () => (++loads === 1 ? undefined : 'found');
    expect(await cache.read('k', load, 0)).toBeUndefined();
    expect(await cache.read('k', load, 1)).toBe('found');
    expect(await cache.read('k', load, 2)).toBe('found');
    expect(loads).toBe(2);
  });

  it('drops, in every cache, what was read from a subject a write changed', () => {
    const keys = new IsolateCache<{ id: string; owner: string }>(60_000, 10, (v) => [
      `key:${v.id}`,
      `owner:${v.owner}`,
    ]);
    const others = new IsolateCache<{ owner: string }>(60_000, 10, (v) => [`owner:${v.owner}`]);
    keys.set('k1', { id: '1', owner: 'u1' }, 0);
    keys.set('k2', { id: '2', owner: 'u1' }, 0);
    keys.set('k3', { id: '3', owner: 'u2' }, 0);
    others.set('o1', { owner: 'u1' }, 0);
    changed('key:3');
    expect([keys.get('k3', 1), keys.size, others.size]).toEqual([undefined, 2, 1]);
    changed('owner:u1');
    expect([keys.size, others.size]).toEqual([0, 0]);
  });
});
