ALTER TABLE `payments` ADD `dispute_check_at` integer;--> statement-breakpoint
CREATE INDEX `payments_dispute_check_idx` ON `payments` (`dispute_check_at`,`environment`,`owner_id`,`id`) WHERE "payments"."dispute_check_at" is not null;--> statement-breakpoint
-- Payments collected before dispute re-reads existed: due now when within the longest dispute window (120 days,
-- docs/dispute-checks.md) or with a dispute still open; the job reads them a few at a time, oldest slot first.
UPDATE `payments` SET `dispute_check_at` = CAST(strftime('%s', 'now') AS INTEGER) * 1000 WHERE (`status` IN ('approved', 'partially_refunded', 'refunded') AND `created_at` >= (CAST(strftime('%s', 'now') AS INTEGER) - 120 * 86400) * 1000) OR `id` IN (SELECT `payment_id` FROM `disputes` WHERE `status` NOT IN ('won', 'lost', 'warning_closed'));
