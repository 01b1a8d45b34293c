-- The processor's own id of a payment where `processor_reference` is another name of it (Adyen POS: the PSP reference,
-- which Adyen's refunds and voids address, learned once the terminal took the card). Null on every row before: the
-- Adyen connector then reads it from the terminal, as it did.
ALTER TABLE `payments` ADD `processor_payment_id` text;
