CREATE TABLE `api_key_payment_methods` (
	`api_key_id` text NOT NULL,
	`payment_method_id` text NOT NULL,
	`enabled` integer NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	PRIMARY KEY(`api_key_id`, `payment_method_id`),
	FOREIGN KEY (`api_key_id`) REFERENCES `api_keys`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`payment_method_id`) REFERENCES `payment_methods`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `api_key_payment_methods_method_idx` ON `api_key_payment_methods` (`payment_method_id`);--> statement-breakpoint
CREATE TABLE `payment_methods` (
	`id` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`environment` text NOT NULL,
	`connector_version_id` text NOT NULL,
	`provider` text NOT NULL,
	`type` text NOT NULL,
	`name` text NOT NULL,
	`enabled` integer NOT NULL,
	`capabilities` text NOT NULL,
	`display_configuration` text NOT NULL,
	`secrets_ciphertext` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	`deleted_at` integer,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `payment_methods_owner_idx` ON `payment_methods` (`user_id`,`environment`,`created_at`);