ALTER TABLE `payments` ADD `cancel_accepted_at` integer;--> statement-breakpoint
ALTER TABLE `payments` ADD `at_terminal` integer DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE `payments` ADD `terminal_seen_at` integer;--> statement-breakpoint
ALTER TABLE `payments` ADD `terminal_checks` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `payments` ADD `terminal_check_at` integer;--> statement-breakpoint
CREATE INDEX `payments_terminal_check_idx` ON `payments` (`terminal_check_at`) WHERE "payments"."terminal_check_at" is not null;