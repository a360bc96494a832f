-- Written by hand, checked against ent/schema by TestMigrationsMatchEntSchema: when each invoice
-- was settled (contract §17's paid_at), null while open. ADD COLUMN in place; the existing
-- invoices get it from their ledgers by the step, which replays the allocation rule
-- (credit.ReplaySettlements), so that they hold exactly what the live path would have written.
ALTER TABLE `invoices` ADD COLUMN `settled_at` datetime NULL;
-- step: invoice-settled-at
