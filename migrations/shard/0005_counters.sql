CREATE TABLE `dispute_counters` (
	`owner_id` text NOT NULL,
	`environment` text NOT NULL,
	`status` text NOT NULL,
	`count` integer NOT NULL,
	PRIMARY KEY(`owner_id`, `environment`, `status`)
);
--> statement-breakpoint
CREATE TABLE `event_counters` (
	`owner_id` text NOT NULL,
	`environment` text NOT NULL,
	`span` text NOT NULL,
	`bucket` integer NOT NULL,
	`type` text NOT NULL,
	`count` integer NOT NULL,
	PRIMARY KEY(`owner_id`, `environment`, `span`, `bucket`, `type`)
);
--> statement-breakpoint
CREATE TABLE `payment_counters` (
	`owner_id` text NOT NULL,
	`environment` text NOT NULL,
	`span` text NOT NULL,
	`bucket` integer NOT NULL,
	`status` text NOT NULL,
	`payment_method_id` text NOT NULL,
	`currency` text NOT NULL,
	`count` integer NOT NULL,
	`amount_minor` integer NOT NULL,
	PRIMARY KEY(`owner_id`, `environment`, `span`, `bucket`, `status`, `payment_method_id`, `currency`)
);
--> statement-breakpoint
-- The counters of the rows already there: each payment in its status, over the whole history and in its UTC spans of
-- 512, 64 and 8 days, its day, hour and quarter hour (by `created_at`); each event by type likewise; each dispute by status. From here on the ledger's changes keep them.
INSERT INTO `payment_counters` SELECT `owner_id`, `environment`, 'all', 0, `status`, `payment_method_id`, `currency`, count(*), sum(`amount_minor`) FROM `payments` GROUP BY `owner_id`, `environment`, `status`, `payment_method_id`, `currency`;--> statement-breakpoint
INSERT INTO `payment_counters` SELECT `owner_id`, `environment`, 'days512', (`created_at` / 44236800000) * 44236800000, `status`, `payment_method_id`, `currency`, count(*), sum(`amount_minor`) FROM `payments` GROUP BY 1, 2, 4, 5, 6, 7;--> statement-breakpoint
INSERT INTO `payment_counters` SELECT `owner_id`, `environment`, 'days64', (`created_at` / 5529600000) * 5529600000, `status`, `payment_method_id`, `currency`, count(*), sum(`amount_minor`) FROM `payments` GROUP BY 1, 2, 4, 5, 6, 7;--> statement-breakpoint
INSERT INTO `payment_counters` SELECT `owner_id`, `environment`, 'days8', (`created_at` / 691200000) * 691200000, `status`, `payment_method_id`, `currency`, count(*), sum(`amount_minor`) FROM `payments` GROUP BY 1, 2, 4, 5, 6, 7;--> statement-breakpoint
INSERT INTO `payment_counters` SELECT `owner_id`, `environment`, 'day', (`created_at` / 86400000) * 86400000, `status`, `payment_method_id`, `currency`, count(*), sum(`amount_minor`) FROM `payments` GROUP BY 1, 2, 4, 5, 6, 7;--> statement-breakpoint
INSERT INTO `payment_counters` SELECT `owner_id`, `environment`, 'hour', (`created_at` / 3600000) * 3600000, `status`, `payment_method_id`, `currency`, count(*), sum(`amount_minor`) FROM `payments` GROUP BY 1, 2, 4, 5, 6, 7;--> statement-breakpoint
INSERT INTO `payment_counters` SELECT `owner_id`, `environment`, 'quarter', (`created_at` / 900000) * 900000, `status`, `payment_method_id`, `currency`, count(*), sum(`amount_minor`) FROM `payments` GROUP BY 1, 2, 4, 5, 6, 7;--> statement-breakpoint
INSERT INTO `event_counters` SELECT `owner_id`, `environment`, 'all', 0, `type`, count(*) FROM `payment_events` GROUP BY `owner_id`, `environment`, `type`;--> statement-breakpoint
INSERT INTO `event_counters` SELECT `owner_id`, `environment`, 'days512', (`created_at` / 44236800000) * 44236800000, `type`, count(*) FROM `payment_events` GROUP BY 1, 2, 4, 5;--> statement-breakpoint
INSERT INTO `event_counters` SELECT `owner_id`, `environment`, 'days64', (`created_at` / 5529600000) * 5529600000, `type`, count(*) FROM `payment_events` GROUP BY 1, 2, 4, 5;--> statement-breakpoint
INSERT INTO `event_counters` SELECT `owner_id`, `environment`, 'days8', (`created_at` / 691200000) * 691200000, `type`, count(*) FROM `payment_events` GROUP BY 1, 2, 4, 5;--> statement-breakpoint
INSERT INTO `event_counters` SELECT `owner_id`, `environment`, 'day', (`created_at` / 86400000) * 86400000, `type`, count(*) FROM `payment_events` GROUP BY 1, 2, 4, 5;--> statement-breakpoint
INSERT INTO `event_counters` SELECT `owner_id`, `environment`, 'hour', (`created_at` / 3600000) * 3600000, `type`, count(*) FROM `payment_events` GROUP BY 1, 2, 4, 5;--> statement-breakpoint
INSERT INTO `event_counters` SELECT `owner_id`, `environment`, 'quarter', (`created_at` / 900000) * 900000, `type`, count(*) FROM `payment_events` GROUP BY 1, 2, 4, 5;--> statement-breakpoint
INSERT INTO `dispute_counters` SELECT `owner_id`, `environment`, `status`, count(*) FROM `disputes` GROUP BY `owner_id`, `environment`, `status`;
