-- Webhook deliveries: until when an attempt holds one (src/services/webhooks/deliver.ts claims it before sending),
-- so that the relay (src/jobs/relay-webhooks.ts), which now re-queues a delivery whose message was lost within a
-- minute, leaves an attempt that is running be. Null on every row before: no attempt holds them.
ALTER TABLE `webhook_deliveries` ADD `leased_until` integer;