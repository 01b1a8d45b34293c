CREATE TABLE `owner_moves` (
	`id` text PRIMARY KEY NOT NULL,
	`owner_id` text NOT NULL,
	`from_shard` text NOT NULL,
	`to_shard` text NOT NULL,
	`step` text NOT NULL,
	`status` text NOT NULL,
	`reason` text,
	`rows_copied` text,
	`flipped_at` integer,
	`finished_at` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `owner_moves_owner_idx` ON `owner_moves` (`owner_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `owner_moves_unfinished_idx` ON `owner_moves` (`finished_at`);--> statement-breakpoint
ALTER TABLE `owner_placements` ADD `move_id` text;