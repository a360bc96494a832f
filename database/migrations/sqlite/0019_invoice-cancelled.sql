-- Written by hand, checked against ent/schema by TestMigrationsMatchEntSchema (issue 38): whether
-- an invoice is cancelled, kept as a column (set by the transaction that appends the
-- cancellation entry) so that the store's payment figures do not look every paid invoice's
-- order up in the ledger. ADD COLUMN in place; the existing invoices get the flag from their
-- ledgers by the UPDATE, with the very condition the reads used before (a cancellation entry
-- for the invoice's company and order). It touches only this column, so it renumbers freely
-- when branches merge.
ALTER TABLE `invoices` ADD COLUMN `cancelled` bool NOT NULL DEFAULT (false);
UPDATE `invoices` SET `cancelled` = true WHERE EXISTS (SELECT 1 FROM `ledger_entries` AS `c` WHERE `c`.`company_id` = `invoices`.`company_id` AND `c`.`platform_order_gid` = `invoices`.`platform_order_gid` AND `c`.`kind` = 'cancellation');
