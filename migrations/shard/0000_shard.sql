CREATE TABLE IF NOT EXISTS `payments` (
	`id` text PRIMARY KEY NOT NULL,
	`owner_id` text NOT NULL,
	`environment` text NOT NULL,
	`payment_method_id` text NOT NULL,
	`api_key_id` text,
	`reference_scope` text NOT NULL,
	`external_reference` text NOT NULL,
	`amount_minor` integer NOT NULL,
	`currency` text NOT NULL,
	`status` text NOT NULL,
	`version` integer NOT NULL,
	`processor_reference` text,
	`processor_idempotency_key` text NOT NULL,
	`processor_attempts` integer NOT NULL,
	`processor_status` text,
	`qr_data` text,
	`required_action` text,
	`description` text,
	`metadata` text,
	`webhook_url` text,
	`expires_at` integer,
	`reconciled_at` integer,
	`charged_back_at` integer,
	`cancel_requested_at` integer,
	`cancel_attempt_key` text,
	`attempt_key` text,
	`attempt_fingerprint` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX IF NOT EXISTS `payments_reference_idx` ON `payments` (`reference_scope`,`external_reference`);--> statement-breakpoint
CREATE INDEX IF NOT EXISTS `payments_status_idx` ON `payments` (`status`,`updated_at`);--> statement-breakpoint
CREATE INDEX IF NOT EXISTS `payments_expiry_idx` ON `payments` (`status`,`expires_at`);--> statement-breakpoint
CREATE INDEX IF NOT EXISTS `payments_processor_reference_idx` ON `payments` (`payment_method_id`,`processor_reference`);--> statement-breakpoint
CREATE INDEX IF NOT EXISTS `payments_owner_created_idx` ON `payments` (`owner_id`,`environment`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX IF NOT EXISTS `payments_owner_status_idx` ON `payments` (`owner_id`,`environment`,`status`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX IF NOT EXISTS `payments_owner_method_idx` ON `payments` (`owner_id`,`environment`,`payment_method_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX IF NOT EXISTS `payments_owner_reference_idx` ON `payments` (`owner_id`,`environment`,`external_reference`,`created_at`,`id`);--> statement-breakpoint
CREATE TABLE IF NOT EXISTS `refunds` (
	`id` text PRIMARY KEY NOT NULL,
	`payment_id` text NOT NULL,
	`owner_id` text NOT NULL,
	`amount_minor` integer NOT NULL,
	`currency` text NOT NULL,
	`status` text NOT NULL,
	`reason` text,
	`failure_reason` text,
	`processor_reference` text,
	`processor_idempotency_key` text NOT NULL,
	`processor_attempts` integer NOT NULL,
	`processor_status` text,
	`reconciled_at` integer,
	`attempt_key` text,
	`attempt_fingerprint` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`payment_id`) REFERENCES `payments`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX IF NOT EXISTS `refunds_attempt_idx` ON `refunds` (`payment_id`,`attempt_key`);--> statement-breakpoint
CREATE INDEX IF NOT EXISTS `refunds_payment_idx` ON `refunds` (`payment_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX IF NOT EXISTS `refunds_status_idx` ON `refunds` (`status`,`updated_at`);--> statement-breakpoint
CREATE INDEX IF NOT EXISTS `refunds_processor_reference_idx` ON `refunds` (`processor_reference`);--> statement-breakpoint
CREATE TABLE IF NOT EXISTS `payment_events` (
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
CREATE INDEX IF NOT EXISTS `payment_events_payment_idx` ON `payment_events` (`payment_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX IF NOT EXISTS `payment_events_owner_created_idx` ON `payment_events` (`owner_id`,`environment`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX IF NOT EXISTS `payment_events_owner_type_idx` ON `payment_events` (`owner_id`,`environment`,`type`,`created_at`,`id`);--> statement-breakpoint
CREATE TABLE IF NOT EXISTS `webhook_deliveries` (
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
CREATE INDEX IF NOT EXISTS `webhook_deliveries_due_idx` ON `webhook_deliveries` (`status`,`next_attempt_at`);--> statement-breakpoint
CREATE INDEX IF NOT EXISTS `webhook_deliveries_destination_idx` ON `webhook_deliveries` (`destination`,`status`);--> statement-breakpoint
CREATE TABLE IF NOT EXISTS `webhook_delivery_attempts` (
	`id` text PRIMARY KEY NOT NULL,
	`event_id` text NOT NULL,
	`destination` text DEFAULT 'payment_url' NOT NULL,
	`attempt_number` integer NOT NULL,
	`status_code` integer,
	`error` text,
	`latency_ms` integer NOT NULL,
	`attempted_at` integer NOT NULL,
	FOREIGN KEY (`event_id`) REFERENCES `payment_events`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS `webhook_delivery_attempts_event_idx` ON `webhook_delivery_attempts` (`event_id`,`destination`,`attempt_number`);--> statement-breakpoint
CREATE TABLE IF NOT EXISTS `webhook_endpoints` (
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
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS `webhook_endpoints_owner_idx` ON `webhook_endpoints` (`owner_id`,`environment`,`created_at`,`id`);--> statement-breakpoint
CREATE TABLE IF NOT EXISTS `webhook_secrets` (
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
CREATE TABLE IF NOT EXISTS `processor_notifications` (
	`payment_method_id` text NOT NULL,
	`event_id` text NOT NULL,
	`resource` text NOT NULL,
	`processor_reference` text NOT NULL,
	`outcome` text NOT NULL,
	`received_at` integer NOT NULL,
	PRIMARY KEY(`payment_method_id`, `event_id`)
);
