ALTER TABLE `payments` ADD `cancel_attempt_key` text;--> statement-breakpoint
ALTER TABLE `payments` ADD `attempt_key` text;--> statement-breakpoint
ALTER TABLE `payments` ADD `attempt_fingerprint` text;--> statement-breakpoint
ALTER TABLE `refunds` ADD `attempt_key` text;--> statement-breakpoint
ALTER TABLE `refunds` ADD `attempt_fingerprint` text;--> statement-breakpoint
CREATE UNIQUE INDEX `refunds_attempt_idx` ON `refunds` (`payment_id`,`attempt_key`);