package database

import (
	"context"
	"database/sql"
	"strings"

	"entgo.io/ent/dialect"
	"github.com/shopspring/decimal"

	"github.com/creditd/creditd/credit"
)

// steps are the Go parts of migrations: what SQL cannot compute alike on both databases, done
// with the domain's own functions so that old rows get exactly what the service writes. A
// migration names its steps by lines "-- step: NAME"; a name this binary does not know fails
// the migration.
var steps = map[string]func(ctx context.Context, tx *sql.Tx, dialectName string) error{
	"company-order-keys": fillCompanyOrderKeys,
	"invoice-settled-at": fillInvoiceSettledAt,
}

// stepPrefix starts a line of a migration that names a step.
const stepPrefix = "-- step: "

// steps returns the names of the migration's steps, in the order the file names them.
func (m Migration) steps() []string {
	var out []string
	for _, line := range strings.Split(m.SQL, "\n") {
		if name, ok := strings.CutPrefix(strings.TrimSpace(line), stepPrefix); ok {
			out = append(out, strings.TrimSpace(name))
		}
	}
	return out
}

// fillCompanyOrderKeys writes every company's normalised name and sort keys (migration 0010,
// contract §6 of 2026-11-27) with credit.OrderKeysOf.
func fillCompanyOrderKeys(ctx context.Context, tx *sql.Tx, dialectName string) error {
	rows, err := tx.QueryContext(ctx, `SELECT c.id, c.name, c.credit_limit, c.outstanding, s.buffer_percent, s.currency
		FROM companies c JOIN stores s ON s.id = c.store_id`)
	if err != nil {
		return err
	}
	type company struct {
		id   string
		keys credit.CompanyOrderKeys
	}
	var all []company
	for rows.Next() {
		var (
			id, name, currency string
			limit, outstanding decimal.Decimal
			buffer             int
		)
		if err := rows.Scan(&id, &name, &limit, &outstanding, &buffer, &currency); err != nil {
			rows.Close()
			return err
		}
		all = append(all, company{id, credit.OrderKeysOf(name, limit, outstanding, buffer, currency)})
	}
	if err := rows.Close(); err != nil {
		return err
	}
	if err := rows.Err(); err != nil {
		return err
	}
	q := "UPDATE companies SET name_key = ?, outstanding_key = ?, credit_limit_key = ?, available_key = ?, utilization_key = ? WHERE id = ?"
	if dialectName == dialect.Postgres {
		q = "UPDATE companies SET name_key = $1, outstanding_key = $2, credit_limit_key = $3, available_key = $4, utilization_key = $5 WHERE id = $6"
	}
	update, err := tx.PrepareContext(ctx, q)
	if err != nil {
		return err
	}
	defer update.Close()
	for _, c := range all {
		k := c.keys
		if _, err := update.ExecContext(ctx, k.Name, k.Outstanding, k.CreditLimit, k.Available, k.Utilization, c.id); err != nil {
			return err
		}
	}
	return nil
}

// fillInvoiceSettledAt writes every settled invoice's settled_at (migration 0015, contract
// §17's paid_at) by replaying each company's ledger, in sequence order, with
// credit.ReplaySettlements: the allocation rule the live path applies. Ledgers are read one
// company at a time, so memory holds one ledger, not the database.
func fillInvoiceSettledAt(ctx context.Context, tx *sql.Tx, dialectName string) error {
	companies, err := tx.QueryContext(ctx, `SELECT DISTINCT company_id FROM invoices`)
	if err != nil {
		return err
	}
	var ids []string
	for companies.Next() {
		var id string
		if err := companies.Scan(&id); err != nil {
			companies.Close()
			return err
		}
		ids = append(ids, id)
	}
	if err := companies.Close(); err != nil {
		return err
	}
	if err := companies.Err(); err != nil {
		return err
	}
	read, update := "SELECT id, kind, amount, platform_order_gid, occurred_at FROM ledger_entries WHERE company_id = ? ORDER BY seq",
		"UPDATE invoices SET settled_at = ? WHERE ledger_entry_id = ?"
	if dialectName == dialect.Postgres {
		read, update = strings.Replace(read, "?", "$1", 1), "UPDATE invoices SET settled_at = $1 WHERE ledger_entry_id = $2"
	}
	for _, id := range ids {
		rows, err := tx.QueryContext(ctx, read, id)
		if err != nil {
			return err
		}
		var entries []credit.SettlementEntry
		for rows.Next() {
			var e credit.SettlementEntry
			var gid sql.NullString
			if err := rows.Scan(&e.ID, &e.Kind, &e.Amount, &gid, &e.OccurredAt); err != nil {
				rows.Close()
				return err
			}
			if gid.Valid {
				e.OrderGID = &gid.String
			}
			entries = append(entries, e)
		}
		if err := rows.Close(); err != nil {
			return err
		}
		if err := rows.Err(); err != nil {
			return err
		}
		for entryID, at := range credit.ReplaySettlements(entries) {
			if _, err := tx.ExecContext(ctx, update, at, entryID); err != nil {
				return err
			}
		}
	}
	return nil
}
