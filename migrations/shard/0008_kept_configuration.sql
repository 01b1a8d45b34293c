-- What later calls of a payment keep of the configuration it was created with (ConnectorVersion `keptConfiguration`:
-- an Adyen POS payment's terminal, `poiid` and `sale_id`). Null on every row before: their calls use the method's
-- configuration, as they did.
ALTER TABLE `payments` ADD `kept_configuration` text;
