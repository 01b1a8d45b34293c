/**
 * Where a new owner's data goes (docs/SCALE.md): the shard with the fewest owners, ties to the lowest index. It is
 * deterministic, so a fresh deployment's consecutive new owners alternate between its shards, and a shard added
 * later takes every new owner until it has caught up. Owners placed by an admin count like any other.
 */
export function chooseShard<S extends { name: string; index: number }>(
  shards: readonly S[],
  ownersPerShard: ReadonlyMap<string, number>,
): S {
  let best: S | undefined;
  for (const shard of shards) {
    if (
      !best ||
      (ownersPerShard.get(shard.name) ?? 0) < (ownersPerShard.get(best.name) ?? 0) ||
      ((ownersPerShard.get(shard.name) ?? 0) === (ownersPerShard.get(best.name) ?? 0) && shard.index < best.index)
    )
      best = shard;
  }
  if (!best) throw new Error('No shard is configured: bind at least one D1 database named SHARD_0 (wrangler.toml).');
  return best;
}
