package database

import (
	"fmt"
	"time"

	entsql "entgo.io/ent/dialect/sql"

	"github.com/creditd/creditd/ent/company"
	"github.com/creditd/creditd/ent/invoice"
)

// The receivables' figures the domain names (credit.ReceivableSums), each one statement
// whatever the number of companies and invoices.

// AgingSums, given to the Aggregate of a query of invoices grouped by the invoice column
// groupBy, selects per group: its key as "k"; as "b0" to "b4" the exact sums (SumMoney's
// text) of open_amount of the invoices due on or after bounds[0], before bounds[i-1] and on
// or after bounds[i] (i = 1, 2, 3), and before bounds[3]; and as "n" the number of distinct
// companies with an invoice due before bounds[0].
func (db *DB) AgingSums(groupBy string, bounds [4]time.Time) func(*entsql.Selector) string {
	return func(sel *entsql.Selector) string {
		// The expressions carry the bounds as arguments, which only expressions can: with a
		// column selected, the group-by keeps this selection as it is.
		due := sel.C(invoice.FieldDueAt)
		amount := sel.C(invoice.FieldOpenAmount)
		bucket := []func(b *entsql.Builder){
			func(b *entsql.Builder) { b.Ident(due).WriteOp(entsql.OpGTE).Arg(bounds[0]) },
			func(b *entsql.Builder) {
				b.Ident(due).WriteOp(entsql.OpLT).Arg(bounds[0]).WriteString(" AND ").Ident(due).WriteOp(entsql.OpGTE).Arg(bounds[1])
			},
			func(b *entsql.Builder) {
				b.Ident(due).WriteOp(entsql.OpLT).Arg(bounds[1]).WriteString(" AND ").Ident(due).WriteOp(entsql.OpGTE).Arg(bounds[2])
			},
			func(b *entsql.Builder) {
				b.Ident(due).WriteOp(entsql.OpLT).Arg(bounds[2]).WriteString(" AND ").Ident(due).WriteOp(entsql.OpGTE).Arg(bounds[3])
			},
			func(b *entsql.Builder) { b.Ident(due).WriteOp(entsql.OpLT).Arg(bounds[3]) },
		}
		sel.AppendSelectAs(sel.C(groupBy), "k")
		for i, cond := range bucket {
			sel.AppendSelectExprAs(db.SumMoney(amount, cond), fmt.Sprintf("b%d", i))
		}
		sel.AppendSelectExprAs(entsql.ExprFunc(func(b *entsql.Builder) {
			b.WriteString("COUNT(DISTINCT CASE WHEN ").Ident(due).WriteOp(entsql.OpLT).Arg(bounds[0]).
				WriteString(" THEN ").Ident(sel.C(invoice.FieldCompanyID)).WriteString(" END)")
		}), "n")
		return ""
	}
}

// OutstandingSums, given to the Aggregate of a query of companies grouped by store_id,
// selects per store its ID as "k" and as "s" the exact sum (SumMoney's text) of the
// companies' outstanding balances.
func (db *DB) OutstandingSums() func(*entsql.Selector) string {
	return func(sel *entsql.Selector) string {
		sel.AppendSelectAs(sel.C(company.FieldStoreID), "k")
		sel.AppendSelectExprAs(db.SumMoney(sel.C(company.FieldOutstanding), func(b *entsql.Builder) { b.WriteString("1 = 1") }), "s")
		return ""
	}
}
