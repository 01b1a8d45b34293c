import { z } from '@hono/zod-openapi';
import { Timestamp } from '../../lib/openapi.ts';

const ShardName = z
  .string()
  .max(10)
  .regex(/^SHARD_(0|[1-9][0-9]{0,3})$/)
  .openapi({
    description: 'A shard: a D1 database bound as `SHARD_<n>` in this deployment (README, "Shards").',
    example: 'SHARD_1',
  });

export const PlacementSchema = z
  .object({
    user_id: z.string().max(64).openapi({ example: 'usr_4n8d2k7q1x9m3v5b0c6z' }),
    shard: ShardName,
    moving_to: ShardName.nullable().openapi({
      description: 'Set while an operator moves the owner: its writes answer `503 owner_moving` until the move ends.',
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
