import { sqliteTable, text, integer, index } from 'drizzle-orm/sqlite-core';

/**
 * The directory (control plane): which shard database holds each owner's payments, refunds, events,
 * deliveries, webhook endpoints and secrets, and processor notifications (docs/SCALE.md). `moving_to` and `move_id`
 * are set while a move runs (services/shards/move-owner.ts): the owner's writes then answer a retryable 503 and its
 * reads keep going to `shard` until the directory flips. `move_id` is the move's fencing token: every step of the
 * move checks it, and the flip is a compare-and-set on it.
 */
export const ownerPlacements = sqliteTable(
  'owner_placements',
  {
    ownerId: text('owner_id').primaryKey(),
    /** A shard's binding name in wrangler.toml: `SHARD_0`, `SHARD_1`, ... */
    shard: text('shard').notNull(),
    movingTo: text('moving_to'),
    /** The running move (`owner_moves.id`); null when none runs. */
    moveId: text('move_id'),
    placedAt: integer('placed_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
  },
  (t) => [index('owner_placements_shard_idx').on(t.shard)],
);

/**
 * Every move an operator asked for, with how far it got: the durable job (workflows/owner-move.ts) writes its step
 * here, `GET /v1/users/{user_id}/placement` shows the latest. `flipped_at` is written in the same batch as the
 * directory's flip, so a move that deletes the old copy can prove it flipped.
 */
export const ownerMoves = sqliteTable(
  'owner_moves',
  {
    id: text('id').primaryKey(),
    ownerId: text('owner_id').notNull(),
    fromShard: text('from_shard').notNull(),
    toShard: text('to_shard').notNull(),
    /** `mark`, `copy`, `verify`, `flip`, `drain`, `delete`, `done` (docs/SCALE.md, "Moves"). */
    step: text('step', { enum: ['mark', 'copy', 'verify', 'flip', 'drain', 'delete', 'done'] }).notNull(),
    status: text('status', { enum: ['running', 'done', 'canceled', 'failed'] }).notNull(),
    /** Why a move failed or was canceled; null otherwise. */
    reason: text('reason'),
    /** Rows copied per table, JSON, once the copy is checked. */
    rowsCopied: text('rows_copied'),
    flippedAt: integer('flipped_at'),
    /**
     * When the move's job ended, after its last write (the old copy deleted, or a partial copy removed): until then
     * the scheduled jobs leave the owner's rows on both shards alone, and the cron starts the job again if it gave up
     * or went silent (`heartbeat_at`).
     */
    finishedAt: integer('finished_at'),
    /**
     * The job's last sign of life: written by its every step (a copied page is a step) while the job is unfinished.
     * Distinct from `updated_at`, which says when the record last changed (shown by the API): a job that copies a
     * thousand pages beats a thousand times without changing what the record says. Null on moves from before it
     * existed (`updated_at` stands in). The cron restarts a job silent too long (move-owner.ts, `resumeMoves`).
     */
    heartbeatAt: integer('heartbeat_at'),
    /**
     * Which run of the job holds the move: each fresh run of the instance (a restart, not a resume after a crash,
     * which keeps its first step's result) takes the next number in its first step, and every later write of the job
     * is fenced by it, so a run that was restarted while still alive writes nothing more (move-steps.ts).
     */
    run: integer('run').notNull().default(0),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
  },
  (t) => [
    index('owner_moves_owner_idx').on(t.ownerId, t.createdAt),
    index('owner_moves_unfinished_idx').on(t.finishedAt),
  ],
);

export type OwnerMoveRow = typeof ownerMoves.$inferSelect;
