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
