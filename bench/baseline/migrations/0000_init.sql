-- The baseline's rows have the service's columns (migrations/0002_payments.sql), so each write moves as
-- much data, and the one index the contract needs (a unique external reference); nothing else.
CREATE TABLE `payments` (
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
	`description` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
CREATE UNIQUE INDEX `payments_reference_idx` ON `payments` (`reference_scope`,`external_reference`);
CREATE TABLE `refunds` (
	`id` text PRIMARY KEY NOT NULL,
	`payment_id` text NOT NULL,
	`amount_minor` integer NOT NULL,
	`currency` text NOT NULL,
	`status` text NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
CREATE TABLE `payment_events` (
	`id` text PRIMARY KEY NOT NULL,
	`payment_id` text NOT NULL,
	`type` text NOT NULL,
	`payload` text NOT NULL,
	`created_at` integer NOT NULL
);
