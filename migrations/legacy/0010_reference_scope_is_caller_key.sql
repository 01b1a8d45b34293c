-- One caller key (domain/caller.ts `callerKey`): an API key's reference scope was `key:<api_key_id>`, the
-- idempotency scope `<api_key_id>`; both are now the key's id. User scopes (`user:<id>`) were already equal.
-- Key ids start with `key_`, so no rewritten scope can meet a `user:` one in payments_reference_idx.
UPDATE `payments` SET `reference_scope` = substr(`reference_scope`, 5) WHERE `reference_scope` LIKE 'key:%';
