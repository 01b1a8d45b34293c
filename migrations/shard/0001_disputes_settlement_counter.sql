CREATE TABLE `disputes` (
	`id` text PRIMARY KEY NOT NULL,
	`payment_id` text NOT NULL,
	`owner_id` text NOT NULL,
	`environment` text NOT NULL,
	`processor_dispute_id` text NOT NULL,
	`status` text NOT NULL,
	`amount_minor` integer NOT NULL,
	`currency` text NOT NULL,
	`reason` text NOT NULL,
	`evidence_due_by` integer,
	`funds_withdrawn_at` integer,
	`funds_reinstated_at` integer,
	`processor_status` text NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`payment_id`) REFERENCES `payments`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `disputes_processor_idx` ON `disputes` (`payment_id`,`processor_dispute_id`);--> statement-breakpoint
CREATE INDEX `disputes_payment_idx` ON `disputes` (`payment_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `disputes_owner_created_idx` ON `disputes` (`owner_id`,`environment`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `disputes_owner_status_idx` ON `disputes` (`owner_id`,`environment`,`status`,`created_at`,`id`);--> statement-breakpoint
ALTER TABLE `payments` ADD `settlement_fee_minor` integer;--> statement-breakpoint
ALTER TABLE `payments` ADD `settlement_net_minor` integer;--> statement-breakpoint
ALTER TABLE `payments` ADD `settlement_currency` text;--> statement-breakpoint
ALTER TABLE `payments` ADD `settlement_available_on` integer;--> statement-breakpoint
ALTER TABLE `payments` ADD `settlement_null_reason` text;--> statement-breakpoint
ALTER TABLE `payments` ADD `cancel_accepted_at` integer;--> statement-breakpoint
ALTER TABLE `payments` ADD `at_terminal` integer DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE `payments` ADD `terminal_seen_at` integer;--> statement-breakpoint
ALTER TABLE `payments` ADD `terminal_checks` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `payments` ADD `terminal_check_at` integer;--> statement-breakpoint
CREATE INDEX `payments_terminal_check_idx` ON `payments` (`terminal_check_at`) WHERE "payments"."terminal_check_at" is not null;--> statement-breakpoint
ALTER TABLE `refunds` ADD `settlement_fee_minor` integer;--> statement-breakpoint
ALTER TABLE `refunds` ADD `settlement_net_minor` integer;--> statement-breakpoint
ALTER TABLE `refunds` ADD `settlement_currency` text;--> statement-breakpoint
ALTER TABLE `refunds` ADD `settlement_available_on` integer;--> statement-breakpoint
ALTER TABLE `refunds` ADD `settlement_null_reason` text;