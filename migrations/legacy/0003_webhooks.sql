CREATE TABLE `payment_events` (
	`id` text PRIMARY KEY NOT NULL,
	`payment_id` text NOT NULL,
	`owner_id` text NOT NULL,
	`environment` text NOT NULL,
	`type` text NOT NULL,
	`payload` text NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`payment_id`) REFERENCES `payments`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `payment_events_payment_idx` ON `payment_events` (`payment_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `processor_notifications` (
	`payment_method_id` text NOT NULL,
	`event_id` text NOT NULL,
	`resource` text NOT NULL,
	`processor_reference` text NOT NULL,
	`outcome` text NOT NULL,
	`received_at` integer NOT NULL,
	PRIMARY KEY(`payment_method_id`, `event_id`)
);
--> statement-breakpoint
CREATE TABLE `webhook_deliveries` (
	`event_id` text PRIMARY KEY NOT NULL,
	`payment_id` text NOT NULL,
	`owner_id` text NOT NULL,
	`url` text NOT NULL,
	`status` text NOT NULL,
	`attempts` integer NOT NULL,
	`next_attempt_at` integer,
	`last_attempt_at` integer,
	`last_status_code` integer,
	`last_error` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`event_id`) REFERENCES `payment_events`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `webhook_deliveries_due_idx` ON `webhook_deliveries` (`status`,`next_attempt_at`);--> statement-breakpoint
CREATE TABLE `webhook_delivery_attempts` (
	`id` text PRIMARY KEY NOT NULL,
	`event_id` text NOT NULL,
	`attempt_number` integer NOT NULL,
	`status_code` integer,
	`error` text,
	`latency_ms` integer NOT NULL,
	`attempted_at` integer NOT NULL,
	FOREIGN KEY (`event_id`) REFERENCES `payment_events`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `webhook_delivery_attempts_event_idx` ON `webhook_delivery_attempts` (`event_id`,`attempt_number`);--> statement-breakpoint
CREATE TABLE `webhook_secrets` (
	`owner_id` text NOT NULL,
	`environment` text NOT NULL,
	`current_ciphertext` text NOT NULL,
	`previous_ciphertext` text,
	`previous_expires_at` integer,
	`created_at` integer NOT NULL,
	`rotated_at` integer,
	PRIMARY KEY(`owner_id`, `environment`)
);
--> statement-breakpoint
ALTER TABLE `payments` ADD `reconciled_at` integer;--> statement-breakpoint
CREATE INDEX `payments_expiry_idx` ON `payments` (`status`,`expires_at`);--> statement-breakpoint
CREATE INDEX `payments_processor_reference_idx` ON `payments` (`payment_method_id`,`processor_reference`);--> statement-breakpoint
ALTER TABLE `refunds` ADD `reconciled_at` integer;--> statement-breakpoint
CREATE INDEX `refunds_processor_reference_idx` ON `refunds` (`processor_reference`);