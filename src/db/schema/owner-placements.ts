import { sqliteTable, text, integer, index } from 'drizzle-orm/sqlite-core';

/**
 * The directory (control plane): which shard database holds each owner's payments, refunds, events,
 * deliveries, webhook endpoints and secrets, and processor notifications (docs/SCALE.md). `moving_to` is set
 * while an operator moves the owner (services/shards/move-owner.ts): the owner's writes then answer a retryable
 * 503 and its reads keep going to `shard` until the directory flips.
 */
export const ownerPlacements = sqliteTable(
  'owner_placements',
  {
    ownerId: text('owner_id').primaryKey(),
    /** A shard's binding name in wrangler.toml: `SHARD_0`, `SHARD_1`, ... */
    shard: text('shard').notNull(),
    movingTo: text('moving_to'),
    placedAt: integer('placed_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
  },
  (t) => [index('owner_placements_shard_idx').on(t.shard)],
);

export type OwnerPlacementRow = typeof ownerPlacements.$inferSelect;
