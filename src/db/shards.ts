import type { D1Handle } from './client.ts';

/** A shard is a D1 binding named `SHARD_<n>` (wrangler.toml); `n` orders the shards (domain/shard-policy.ts). */
export type ShardName = `SHARD_${number}`;

export interface Shard {
  name: ShardName;
  index: number;
  d1: D1Database;
}

const SHARD_BINDING = /^SHARD_(0|[1-9][0-9]{0,3})$/;

export const isShardName = (name: string): name is ShardName => SHARD_BINDING.test(name);

const isD1 = (value: unknown): value is D1Database =>
  typeof value === 'object' &&
  value !== null &&
  typeof (value as Partial<D1Database>).prepare === 'function' &&
  typeof (value as Partial<D1Database>).batch === 'function';

const found = new WeakMap<object, readonly Shard[]>();

/**
 * Every shard binding of a deployment, by index. Read from the bindings themselves rather than a list in the
 * code, so adding a shard is a wrangler.toml change (docs/shards.md); computed once per bindings object.
 */
export function shardsOf(bindings: object): readonly Shard[] {
  let shards = found.get(bindings);
  if (!shards) {
    shards = Object.entries(bindings)
      .filter(([name, value]) => isShardName(name) && isD1(value))
      .map(([name, d1]) => ({
        name: name as ShardName,
        index: Number(name.slice('SHARD_'.length)),
        d1: d1 as D1Database,
      }))
      .sort((a, b) => a.index - b.index);
    found.set(bindings, shards);
  }
  return shards;
}

/**
 * Read bookmarks (docs/read-replication.md) name the shard they came from, so a bookmark of one database is
 * never handed to another (after an owner moves, or when a client mixes owners): `SHARD_1:<D1 bookmark>`. One
 * without a shard predates sharding and came from the single database, which became `SHARD_0`.
 */
export function encodeBookmark(shard: ShardName, bookmark: string): string {
  return `${shard}:${bookmark}`;
}

/** Where a read session on `shard` starts: the client's bookmark when it is this shard's, else the primary. */
export function sessionAnchor(shard: ShardName, clientBookmark: string | undefined): string {
  if (clientBookmark === undefined) return 'first-primary';
  const colon = clientBookmark.indexOf(':');
  const named = colon > 0 ? clientBookmark.slice(0, colon) : 'SHARD_0';
  const raw = colon > 0 ? clientBookmark.slice(colon + 1) : clientBookmark;
  return named === shard && raw !== '' ? raw : 'first-primary';
}

export type { D1Handle };
