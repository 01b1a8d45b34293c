ALTER TABLE `payments` ADD `dispute_check_at` integer;--> statement-breakpoint
CREATE INDEX `payments_dispute_check_idx` ON `payments` (`dispute_check_at`,`environment`,`owner_id`,`id`) WHERE "payments"."dispute_check_at" is not null;--> statement-breakpoint
-- Payments collected before dispute re-reads existed, within the longest dispute window (120 days,
-- docs/dispute-checks.md) or with a dispute still open. Not all due at once: that would put every new payment's
-- first read behind all of them. Each is scheduled as the job's own cadence would (`nextDisputeCheck`): its next
-- read a quarter of its age away (1 hour to 3 days, never past its window's end), at a point within that gap given
-- by its creation time (`created_at % gap`), so the young ones come first and the old ones spread over 3 days. A
-- payment with a dispute open is due now (its gap is 6 hours, and there are few).
UPDATE `payments` SET `dispute_check_at` = CASE
  WHEN `id` IN (SELECT `payment_id` FROM `disputes` WHERE `status` NOT IN ('won', 'lost', 'warning_closed'))
    THEN CAST(strftime('%s', 'now') AS INTEGER) * 1000
  ELSE min(
    CAST(strftime('%s', 'now') AS INTEGER) * 1000
      + `created_at` % max(3600000, min(259200000, (CAST(strftime('%s', 'now') AS INTEGER) * 1000 - `created_at`) / 4)),
    `created_at` + 120 * 86400000)
  END
WHERE (`status` IN ('approved', 'partially_refunded', 'refunded') AND `created_at` >= (CAST(strftime('%s', 'now') AS INTEGER) - 120 * 86400) * 1000) OR `id` IN (SELECT `payment_id` FROM `disputes` WHERE `status` NOT IN ('won', 'lost', 'warning_closed'));
