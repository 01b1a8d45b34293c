import { z } from '@hono/zod-openapi';
import { Timestamp } from '../../lib/openapi.ts';

const ShardName = z
  .string()
  .max(10)
  .regex(/^SHARD_(0|[1-9][0-9]{0,3})$/)
  .openapi({
    description: 'A shard: a D1 database bound as `SHARD_<n>` in this deployment (docs/SCALE.md).',
    example: 'SHARD_1',
  });

export const MoveSchema = z
  .object({
    id: z.string().max(64).openapi({ example: 'mov_7q2m9x4k1v8b3n6c0z5d' }),
    from: ShardName,
    to: ShardName,
    step: z.enum(['mark', 'copy', 'verify', 'flip', 'drain', 'delete', 'done']).openapi({
      description:
        'How far the move got: `mark` (writes refused, waiting for every cached placement to expire), `copy`, `verify` (row by row), `flip` (the directory names `to`), `drain` (readers of the old copy finish), `delete` (the old copy goes), `done`.',
    }),
    status: z.enum(['running', 'done', 'canceled', 'failed']).openapi({
      description:
        '`canceled`: moved back to `from` before the flip (nothing of the owner changed); `failed`: the copy kept differing, the owner stayed on `from` and may be moved again.',
    }),
    reason: z.string().max(200).nullable().openapi({ description: 'Why it was canceled or failed.' }),
    rows_copied: z
      .record(z.string().max(64), z.number().int().min(0).max(2_147_483_647).openapi({ format: 'int32', example: 120 }))
      .nullable()
      .openapi({
        description: 'Rows copied per table, once the copy was checked; null before.',
        example: { payments: 120, refunds: 14, payment_events: 310 },
      }),
    flipped_at: Timestamp.nullable().openapi({ description: 'When the directory started naming `to`.' }),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .openapi('OwnerMove');

export const PlacementSchema = z
  .object({
    user_id: z.string().max(64).openapi({ example: 'usr_4n8d2k7q1x9m3v5b0c6z' }),
    shard: ShardName,
    moving_to: ShardName.nullable().openapi({
      description: "Set while a move runs: the owner's writes answer `503 owner_moving` until it flips or ends.",
    }),
    move: MoveSchema.nullable().openapi({
      description: "The owner's latest move (running or ended); null if never moved.",
    }),
    placed_at: Timestamp,
    updated_at: Timestamp,
  })
  .openapi('Placement');

export const PlaceOwnerBody = z
  .strictObject({
    shard: ShardName,
  })
  .openapi('PlaceOwnerBody');
