ALTER TABLE `payments` ADD `voided_at` integer;--> statement-breakpoint
ALTER TABLE `payments` ADD `void_refund_reference` text;--> statement-breakpoint
-- Voids made before `voided_at` existed whose refund may still fail (Stripe: 30 days, `refundReversalWindowMs`):
-- the Stripe connector's void by refund writes `processor_status` 'refunded' on the canceled payment (`voidByRefund`),
-- and nothing moves a canceled payment's `updated_at` after, so it dates the void. Their refund's id is not known
-- (`void_refund_reference` stays null): news of a failed refund is then checked by reading the void's refund.
UPDATE `payments` SET `voided_at` = `updated_at` WHERE `status` = 'canceled' AND `processor_status` = 'refunded' AND `voided_at` IS NULL AND `updated_at` >= (CAST(strftime('%s', 'now') AS INTEGER) - 30 * 86400) * 1000;
