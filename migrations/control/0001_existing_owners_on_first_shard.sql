-- Upgrading a single-database deployment (README, "Shards"): its database becomes this control database and the
-- first shard (`SHARD_0` bound to the same database), so every owner it already has lives on `SHARD_0`. On a new
-- deployment there are no users yet and this places nobody.
INSERT OR IGNORE INTO `owner_placements` (`owner_id`, `shard`, `moving_to`, `placed_at`, `updated_at`)
SELECT `id`, 'SHARD_0', NULL, `created_at`, `created_at` FROM `users`;
