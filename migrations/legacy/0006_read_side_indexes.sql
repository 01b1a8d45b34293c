DROP INDEX `refunds_payment_idx`;--> statement-breakpoint
CREATE INDEX `refunds_payment_idx` ON `refunds` (`payment_id`,`created_at`,`id`);--> statement-breakpoint
DROP INDEX `payment_events_payment_idx`;--> statement-breakpoint
CREATE INDEX `payment_events_owner_created_idx` ON `payment_events` (`owner_id`,`environment`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `payment_events_owner_type_idx` ON `payment_events` (`owner_id`,`environment`,`type`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `payment_events_payment_idx` ON `payment_events` (`payment_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `payments_owner_created_idx` ON `payments` (`owner_id`,`environment`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `payments_owner_status_idx` ON `payments` (`owner_id`,`environment`,`status`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `payments_owner_method_idx` ON `payments` (`owner_id`,`environment`,`payment_method_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `payments_owner_reference_idx` ON `payments` (`owner_id`,`environment`,`external_reference`,`created_at`,`id`);