-- The payment ledger's running totals (src/domain/ledger): a refund reads the payment row, not its refund history.
-- The cancel columns take the names they mean: `cancel_claimed_at` is the internal claim while the processor is
-- asked, `cancel_requested_at` the public field (a cancel the processor accepted and completes later).
ALTER TABLE `payments` RENAME COLUMN `cancel_requested_at` TO `cancel_claimed_at`;--> statement-breakpoint
ALTER TABLE `payments` RENAME COLUMN `cancel_accepted_at` TO `cancel_requested_at`;--> statement-breakpoint
ALTER TABLE `payments` ADD `amount_refunded` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `payments` ADD `amount_reserved` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `payments` ADD `refund_count` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `payments` ADD `amount_charged_back` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `payments` ADD `open_dispute_id` text;--> statement-breakpoint
-- The totals of payments refunded before, from their refunds (refunds_payment_idx): approved ones are refunded, the
-- ones still in flight reserved.
UPDATE `payments` SET
  `amount_refunded` = coalesce((SELECT sum(`amount_minor`) FROM `refunds` WHERE `refunds`.`payment_id` = `payments`.`id` AND `refunds`.`status` = 'approved'), 0),
  `amount_reserved` = coalesce((SELECT sum(`amount_minor`) FROM `refunds` WHERE `refunds`.`payment_id` = `payments`.`id` AND `refunds`.`status` IN ('created', 'pending', 'processing')), 0),
  `refund_count` = (SELECT count(*) FROM `refunds` WHERE `refunds`.`payment_id` = `payments`.`id`)
WHERE `id` IN (SELECT `payment_id` FROM `refunds`);--> statement-breakpoint
-- What chargebacks took: the lost disputes' amounts (or, charged back without a dispute, the whole rest), no more
-- than the rest of the payment.
UPDATE `payments` SET `amount_charged_back` = max(0, min(
  `amount_minor` - `amount_refunded` - `amount_reserved`,
  coalesce((SELECT sum(`amount_minor`) FROM `disputes` WHERE `disputes`.`payment_id` = `payments`.`id` AND `disputes`.`status` = 'lost'), `amount_minor`)
)) WHERE `charged_back_at` IS NOT NULL;--> statement-breakpoint
-- The dispute still open, if any (the newest, had a payment more than one).
UPDATE `payments` SET `open_dispute_id` = (
  SELECT `id` FROM `disputes` WHERE `disputes`.`payment_id` = `payments`.`id`
    AND `disputes`.`status` IN ('warning_needs_response', 'warning_under_review', 'needs_response', 'under_review')
  ORDER BY `created_at` DESC, `id` DESC LIMIT 1
) WHERE `id` IN (SELECT `payment_id` FROM `disputes` WHERE `status` IN ('warning_needs_response', 'warning_under_review', 'needs_response', 'under_review'));
