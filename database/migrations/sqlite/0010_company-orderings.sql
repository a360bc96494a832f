-- Written by hand, checked against ent/schema by TestMigrationsMatchEntSchema: the company
-- orderings and the search of contract §6 (2026-11-27). Each company gets its normalised name
-- and its sort keys (credit/orderkeys.go), with an index per ordering; ADD COLUMN, not Atlas's
-- rebuild of the table, which other tables reference. The keys of the existing companies are
-- computed by the domain's own functions, in Go, in this migration's transaction: SQLite can
-- neither take accents off a name nor divide decimals exactly.
ALTER TABLE `companies` ADD COLUMN `name_key` text NOT NULL DEFAULT '';
ALTER TABLE `companies` ADD COLUMN `outstanding_key` text NOT NULL DEFAULT '';
ALTER TABLE `companies` ADD COLUMN `credit_limit_key` text NOT NULL DEFAULT '';
ALTER TABLE `companies` ADD COLUMN `available_key` text NOT NULL DEFAULT '';
ALTER TABLE `companies` ADD COLUMN `utilization_key` text NOT NULL DEFAULT '';
CREATE INDEX `company_store_id_name_key_id` ON `companies` (`store_id`, `name_key`, `id`);
CREATE INDEX `company_store_id_outstanding_key_id` ON `companies` (`store_id`, `outstanding_key`, `id`);
CREATE INDEX `company_store_id_credit_limit_key_id` ON `companies` (`store_id`, `credit_limit_key`, `id`);
CREATE INDEX `company_store_id_available_key_id` ON `companies` (`store_id`, `available_key`, `id`);
CREATE INDEX `company_store_id_utilization_key_id` ON `companies` (`store_id`, `utilization_key`, `id`);
-- step: company-order-keys
