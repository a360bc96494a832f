-- Written by hand, checked against ent/schema by TestMigrationsMatchEntSchema: every ledger
-- entry's balance_after (contract §5, 2026-11-27), the company's outstanding right after it.
-- New entries get it when appended; the existing ones get the running sum of their company's
-- amounts in sequence (append) order. ADD COLUMN, not Atlas's rebuild of the table, which
-- would drop the append-only triggers and the rows other tables reference.
--
-- SQLite keeps money as TEXT and would sum it as doubles, so the sum is exact integer
-- arithmetic on thousandths (no currency has more than three minor digits, and amounts at
-- most 15 integer digits, so each fits an int64 and an overflowing sum fails the migration
-- rather than rounding): the text is split at its point, both parts read as integers, and the
-- sum written back as plain decimal text without trailing zeros, the form the service writes.
ALTER TABLE `ledger_entries` ADD COLUMN `balance_after` text NOT NULL DEFAULT '0';
DROP TRIGGER ledger_entries_no_update;
UPDATE `ledger_entries` SET `balance_after` = r.balance
FROM (
  SELECT id,
    CASE WHEN instr(t, '.') > 0 THEN rtrim(rtrim(t, '0'), '.') ELSE t END AS balance
  FROM (
    SELECT id,
      (CASE WHEN v < 0 THEN '-' ELSE '' END) || (abs(v) / 1000) || '.' || substr('00' || (abs(v) % 1000), -3) AS t
    FROM (
      SELECT id, sum(m) OVER (PARTITION BY company_id ORDER BY seq) AS v
      FROM (
        SELECT id, company_id, seq,
          (CASE WHEN amount LIKE '-%' THEN -1 ELSE 1 END) * (
            CAST(CASE WHEN instr(u, '.') > 0 THEN substr(u, 1, instr(u, '.') - 1) ELSE u END AS INTEGER) * 1000 +
            CAST(CASE WHEN instr(u, '.') > 0 THEN substr(substr(u, instr(u, '.') + 1) || '000', 1, 3) ELSE '0' END AS INTEGER)
          ) AS m
        FROM (SELECT id, company_id, seq, amount, ltrim(amount, '-') AS u FROM `ledger_entries`)
      )
    )
  )
) AS r
WHERE r.id = `ledger_entries`.id;
-- The trigger of migration 0002, as it was.
CREATE TRIGGER ledger_entries_no_update BEFORE UPDATE ON ledger_entries
BEGIN SELECT RAISE(ABORT, 'ledger entries are append-only'); END;
