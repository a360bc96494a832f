-- Written by hand, checked against ent/schema by TestMigrationsMatchEntSchema: every ledger
-- entry's balance_after (contract §5, 2026-11-27), the company's outstanding right after it.
-- New entries get it when appended; the existing ones get the running sum of their company's
-- amounts in sequence (append) order, in numeric, which is exact. The append-only trigger of
-- migration 0002 is off for this one statement of this transaction.
ALTER TABLE "ledger_entries" ADD COLUMN "balance_after" numeric NOT NULL DEFAULT 0;
ALTER TABLE "ledger_entries" DISABLE TRIGGER ledger_entries_no_update;
UPDATE "ledger_entries" AS e SET "balance_after" = r.balance
FROM (SELECT id, sum(amount) OVER (PARTITION BY company_id ORDER BY seq) AS balance FROM "ledger_entries") AS r
WHERE r.id = e.id;
ALTER TABLE "ledger_entries" ENABLE TRIGGER ledger_entries_no_update;
