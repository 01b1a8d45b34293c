// A shard database (bindings `SHARD_0`, `SHARD_1`, ...): the data of the owners the directory places on it
// (owner-placements.ts). Nothing here references a control table: the two live in different databases.
// Its migrations: migrations/shard (drizzle.shard.config.ts).
export * from './payments.ts';
export * from './disputes.ts';
export * from './payment-events.ts';
export * from './webhook-deliveries.ts';
export * from './webhook-endpoints.ts';
export * from './webhook-secrets.ts';
export * from './processor-notifications.ts';
export * from './counters.ts';
