package database

import (
	"fmt"
	"strings"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
	"github.com/shopspring/decimal"
)

// Money columns in SQL. Amounts are exact decimals: numeric on PostgreSQL, TEXT on SQLite,
// whose NUMERIC keeps only about 15 digits and whose SUM of text is binary floating point.
// The domain asks for sums and comparisons by name (credit.MoneySums); how each database
// computes them exactly stays here.

// SumMoney is the SQL expression of the exact sum of the decimal column col (qualified and
// quoted by the query's selector) over the rows where cond holds, as text that ParseMoneySum
// reads back without loss: zero when no row matches. PostgreSQL sums numeric exactly. On
// SQLite the integer parts and the fractions (scaled to nine digits, signed like the amount)
// are summed as integers apart and joined as "<integers>:<fractions>".
func (db *DB) SumMoney(col string, cond func(*entsql.Builder)) entsql.Querier {
	return entsql.ExprFunc(func(b *entsql.Builder) {
		sum := func(value func()) {
			b.WriteString("COALESCE(SUM(CASE WHEN ")
			cond(b)
			b.WriteString(" THEN ")
			value()
			b.WriteString(" END), 0)")
		}
		if b.Dialect() == dialect.Postgres {
			b.WriteString("CAST(")
			sum(func() { b.Ident(col) })
			b.WriteString(" AS TEXT)")
			return
		}
		c := col // qualified and quoted by the selector
		sum(func() {
			b.WriteString(fmt.Sprintf("CAST(CASE WHEN instr(%[1]s, '.') > 0 THEN substr(%[1]s, 1, instr(%[1]s, '.') - 1) ELSE %[1]s END AS INTEGER)", c))
		})
		b.WriteString(" || ':' || ")
		sum(func() {
			b.WriteString(fmt.Sprintf("(CASE WHEN substr(%[1]s, 1, 1) = '-' THEN -1 ELSE 1 END) * "+
				"CAST(substr(CASE WHEN instr(%[1]s, '.') > 0 THEN substr(%[1]s, instr(%[1]s, '.') + 1) ELSE '' END || '000000000', 1, 9) AS INTEGER)", c))
		})
	})
}

// ParseMoneySum reads what SumMoney wrote; the empty text (a group that is not there) is
// zero.
//
// Errors: text that no SumMoney wrote.
func (db *DB) ParseMoneySum(text string) (decimal.Decimal, error) {
	if text == "" {
		return decimal.Zero, nil
	}
	whole, frac, split := strings.Cut(text, ":")
	d, err := decimal.NewFromString(whole)
	if err != nil {
		return decimal.Decimal{}, fmt.Errorf("sum of amounts %q: %w", text, err)
	}
	if split {
		f, err := decimal.NewFromString(frac)
		if err != nil {
			return decimal.Decimal{}, fmt.Errorf("sum of amounts %q: %w", text, err)
		}
		d = d.Add(f.Shift(-9))
	}
	return d, nil
}

// MoneyIsNotZero is the condition that the decimal column col (qualified by the query's
// selector) is not zero. SQLite keeps amounts as text, and compares the text as a number
// only once cast: as a number, a money amount is zero exactly when its text is.
func (db *DB) MoneyIsNotZero(col string) *entsql.Predicate {
	return entsql.P(func(b *entsql.Builder) {
		if b.Dialect() == dialect.Postgres {
			b.Ident(col).WriteString(" <> 0")
			return
		}
		b.WriteString("CAST(").Ident(col).WriteString(" AS REAL) <> 0")
	})
}
