ALTER TABLE `owner_moves` ADD `heartbeat_at` integer;--> statement-breakpoint
ALTER TABLE `owner_moves` ADD `run` integer DEFAULT 0 NOT NULL;