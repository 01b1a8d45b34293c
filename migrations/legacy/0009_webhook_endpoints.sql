CREATE TABLE `webhook_endpoints` (
	`id` text PRIMARY KEY NOT NULL,
	`owner_id` text NOT NULL,
	`environment` text NOT NULL,
	`url` text NOT NULL,
	`enabled_events` text NOT NULL,
	`description` text,
	`disabled_at` integer,
	`disabled_reason` text,
	`failing_since` integer,
	`secret_ciphertext` text NOT NULL,
	`previous_secret_ciphertext` text,
	`previous_secret_expires_at` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`owner_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `webhook_endpoints_owner_idx` ON `webhook_endpoints` (`owner_id`,`environment`,`created_at`,`id`);--> statement-breakpoint
DROP INDEX `webhook_delivery_attempts_event_idx`;--> statement-breakpoint
ALTER TABLE `webhook_delivery_attempts` ADD `destination` text DEFAULT 'payment_url' NOT NULL;--> statement-breakpoint
CREATE INDEX `webhook_delivery_attempts_event_idx` ON `webhook_delivery_attempts` (`event_id`,`destination`,`attempt_number`);--> statement-breakpoint
-- webhook_deliveries gains `destination` in its primary key, so SQLite needs the table rebuilt. Nothing
-- references it (no foreign-key pragma needed, which D1 would not honour anyway); every existing row is a
-- delivery to its payment's webhook_url.
CREATE TABLE `__new_webhook_deliveries` (
	`event_id` text NOT NULL,
	`destination` text DEFAULT 'payment_url' NOT NULL,
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
	PRIMARY KEY(`event_id`, `destination`),
	FOREIGN KEY (`event_id`) REFERENCES `payment_events`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
INSERT INTO `__new_webhook_deliveries`("event_id", "destination", "payment_id", "owner_id", "url", "status", "attempts", "next_attempt_at", "last_attempt_at", "last_status_code", "last_error", "created_at", "updated_at") SELECT "event_id", 'payment_url', "payment_id", "owner_id", "url", "status", "attempts", "next_attempt_at", "last_attempt_at", "last_status_code", "last_error", "created_at", "updated_at" FROM `webhook_deliveries`;--> statement-breakpoint
DROP TABLE `webhook_deliveries`;--> statement-breakpoint
ALTER TABLE `__new_webhook_deliveries` RENAME TO `webhook_deliveries`;--> statement-breakpoint
CREATE INDEX `webhook_deliveries_due_idx` ON `webhook_deliveries` (`status`,`next_attempt_at`);--> statement-breakpoint
CREATE INDEX `webhook_deliveries_destination_idx` ON `webhook_deliveries` (`destination`,`status`);