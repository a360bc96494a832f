package database

import (
	"context"
	"fmt"
	"math/big"
	"strings"
	"time"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
	"github.com/shopspring/decimal"

	"github.com/creditd/creditd/ent"
	"github.com/creditd/creditd/ent/invoice"
	"github.com/creditd/creditd/ent/ledgerentry"
)

// Payment behaviour's reads (credit.PaymentFigures, contract §17): a page of companies'
// invoices with their issue times and cancellations, and the store's figures summed by the
// database. The domain names what it reads; the SQL of each database is written here.
//
// The store's figures on SQLite. Amounts are TEXT and times are text in the form go-sqlite3
// writes ("2006-01-02 15:04:05.999999999-07:00"); SQLite has no exact decimal arithmetic, and
// its SUM of integers fails on an overflow (an error, never a wrong answer). So the sum of
// amount × (settled_at − due_at) is made of integer pieces small enough for SQLite's 64-bit
// SUM: the amount as an integer c of thousandths (every currency has at most three minor
// digits), split as c = c1·10⁶ + c0; the duration in nanoseconds (whole seconds by unixepoch
// of the time without its fraction, and the fractions' difference), truncated to microseconds
// d as the Go aggregate does and split as d = ds·10⁶ + dus, so that
// c × d = (Σc1·ds·10⁶ + Σc0·ds)·10⁶ + Σc1·dus·10⁶ + Σc0·dus, each product below 10¹⁸ by the
// bounds on c (twelve integer digits) and d (|d| < 10¹⁵ µs, 31 years). Each piece is computed
// once per invoice in a subquery that SQLite does not flatten into the sums (its LIMIT -1
// keeps it a co-routine). An invoice outside those bounds or forms (more decimals, a time in
// another zone) is summed by the Go aggregate instead
// (creditd_sum_amount_micros, FILTER: called for those rows only), so the answer stays exact
// whatever the rows; and should a SUM overflow all the same, the statement is run again with
// the Go aggregate over every row (paidSumsInGo). Measured in BENCHMARKS.md ("Issue 38").

// InvoicesSinceOldestOpen, given to a query of invoices' Where, keeps the invoices whose seq is
// at least that of their company's oldest open invoice (none of a company with nothing open).
func (db *DB) InvoicesSinceOldestOpen() func(*entsql.Selector) {
	return func(sel *entsql.Selector) {
		t := entsql.Table(invoice.Table).As("oldest_open")
		sel.Where(entsql.GTE(sel.C(invoice.FieldSeq), entsql.Select(entsql.Min(t.C(invoice.FieldSeq))).From(t).
			Where(entsql.And(entsql.ColumnsEQ(t.C(invoice.FieldCompanyID), sel.C(invoice.FieldCompanyID)), openIs(t.C(invoice.FieldOpen), true)))))
	}
}

// hasCancellation is the condition that the invoice of sel's row has a cancellation entry for
// its order (the invoice is cancelled, whatever else was paid on it): the invoice's cancelled
// column, which the transaction appending the cancellation sets (migration 0019 set it for the
// invoices before it), so that a read of many invoices looks none of their orders up.
func hasCancellation(sel *entsql.Selector) *entsql.Predicate {
	return entsql.EQ(sel.C(invoice.FieldCancelled), true)
}

// openIs is the condition that the invoice column col (open) is open, written "open = ?":
// ent writes a bare "open" (or "NOT open"), an expression through which SQLite seeks no
// index: not the one on (open, due_at), nor (company_id, open, seq) beyond company_id. The
// correlated subquery of InvoicesSinceOldestOpen read all of a company's invoices for each of
// them that way: a page of payment behaviour with a company of 166,000 invoices ran for
// minutes instead of 1.7 s (issue 40).
func openIs(col string, open bool) *entsql.Predicate {
	return entsql.P(func(b *entsql.Builder) { b.Ident(col).WriteOp(entsql.OpEQ).Arg(open) })
}

// InvoicesOpen, given to a query of invoices' Where, keeps the invoices whose open column is
// open, as "open = ?" (see openIs).
func (db *DB) InvoicesOpen(open bool) func(*entsql.Selector) {
	return func(sel *entsql.Selector) { sel.Where(openIs(sel.C(invoice.FieldOpen), open)) }
}

// IssueAndCancellation, given to the Aggregate of a Select of invoices, joins each invoice's
// order entry (a left join: NULL when the entry is not found, as base's separate read left
// the time zero) and selects as "cancelled" whether the invoice is closed and its order has a
// cancellation entry (an open invoice is not looked up: it is not cancelled). It returns the
// order entry's occurred_at (the invoice's issue time, column "occurred_at"), for the
// Aggregate to select.
func (db *DB) IssueAndCancellation() func(*entsql.Selector) string {
	return func(sel *entsql.Selector) string {
		le := entsql.Table(ledgerentry.Table).As("issued")
		sel.LeftJoin(le).On(sel.C(invoice.FieldLedgerEntryID), le.C(ledgerentry.FieldID))
		sel.AppendSelectExprAs(entsql.ExprFunc(func(b *entsql.Builder) {
			b.WriteString("CASE WHEN ").Ident(sel.C(invoice.FieldOpen)).WriteString(" THEN FALSE ELSE ").
				Join(hasCancellation(sel)).WriteString(" END")
		}), "cancelled")
		return le.C(ledgerentry.FieldOccurredAt)
	}
}

// PaidSums runs q, a query of invoices (handed over, not used again), and returns over those
// that are not cancelled and have settled_at: their number, the sum of their amounts, that of
// the amounts of those settled by their due date, and the sum of amount × the microseconds
// from due_at to settled_at (truncated toward zero, negative when early). Exact; one
// statement, two on SQLite in the rare case that one of its integer sums overflows.
//
// Errors: the query's.
func (db *DB) PaidSums(ctx context.Context, q *ent.InvoiceQuery) (n int, paid, onTime, weighted decimal.Decimal, err error) {
	q = q.Where(func(s *entsql.Selector) { s.Where(entsql.Not(hasCancellation(s))) }, invoice.SettledAtNotNil())
	if db.Dialect == dialect.Postgres {
		return db.paidSumsInGo(ctx, q)
	}
	var out []paidPieces
	fallback := q.Clone()
	err = q.GroupBy(invoice.FieldStoreID).Aggregate(db.sqlitePaidPieces).Scan(ctx, &out)
	if err != nil && strings.Contains(err.Error(), "integer overflow") {
		return db.paidSumsInGo(ctx, fallback)
	}
	if err != nil {
		return 0, decimal.Zero, decimal.Zero, decimal.Zero, err
	}
	thousandths := decimal.New(1, -3)
	million := big.NewInt(1_000_000)
	for _, r := range out {
		n += r.N
		oddPaid, err1 := db.ParseMoneySum(r.OddPaid)
		oddOnTime, err2 := db.ParseMoneySum(r.OddOnTime)
		oddWeighted, err3 := db.ParseMoneySum(r.OddWeighted)
		if err := firstError(err1, err2, err3); err != nil {
			return 0, decimal.Zero, decimal.Zero, decimal.Zero, err
		}
		paid = paid.Add(decimal.NewFromInt(r.C).Mul(thousandths)).Add(oddPaid)
		onTime = onTime.Add(decimal.NewFromInt(r.OnTime).Mul(thousandths)).Add(oddOnTime)
		// ((P1·10⁶ + P0)·10⁶ + Q1·10⁶ + Q0) thousandths × µs, in big integers.
		sum := new(big.Int).Mul(big.NewInt(r.P1), million)
		sum.Add(sum, big.NewInt(r.P0))
		sum.Mul(sum, million)
		sum.Add(sum, new(big.Int).Mul(big.NewInt(r.Q1), million))
		sum.Add(sum, big.NewInt(r.Q0))
		weighted = weighted.Add(decimal.NewFromBigInt(sum, -3)).Add(oddWeighted)
	}
	return n, paid, onTime, weighted, nil
}

// paidPieces is a row of sqlitePaidPieces.
type paidPieces struct {
	Key         string `json:"k"`
	N           int    `json:"n"`
	C           int64  `json:"c"`
	OnTime      int64  `json:"on_time"`
	P1          int64  `json:"p1"`
	P0          int64  `json:"p0"`
	Q1          int64  `json:"q1"`
	Q0          int64  `json:"q0"`
	OddPaid     string `json:"odd_paid"`
	OddOnTime   string `json:"odd_on_time"`
	OddWeighted string `json:"odd_weighted"`
}

func firstError(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// paidSumsInGo is PaidSums in one statement whose sums of amounts times durations are exact
// in the database: PostgreSQL's numeric, SQLite's Go aggregate over every row.
//
// Errors: the query's.
func (db *DB) paidSumsInGo(ctx context.Context, q *ent.InvoiceQuery) (n int, paid, onTime, weighted decimal.Decimal, err error) {
	var rows []struct {
		Key      string `json:"k"`
		N        int    `json:"n"`
		Paid     string `json:"paid"`
		OnTime   string `json:"on_time"`
		Weighted string `json:"weighted"`
	}
	err = q.GroupBy(invoice.FieldStoreID).Aggregate(func(sel *entsql.Selector) string {
		amount, settled, due := sel.C(invoice.FieldAmount), sel.C(invoice.FieldSettledAt), sel.C(invoice.FieldDueAt)
		sel.AppendSelectAs(sel.C(invoice.FieldStoreID), "k")
		sel.AppendSelectExprAs(entsql.Expr("COUNT(*)"), "n")
		sel.AppendSelectExprAs(db.SumMoney(amount, always), "paid")
		sel.AppendSelectExprAs(db.SumMoney(amount, func(b *entsql.Builder) { b.Ident(settled).WriteOp(entsql.OpLTE).Ident(due) }), "on_time")
		sel.AppendSelectExprAs(db.SumMoneyTimesMicros(amount, settled, due), "weighted")
		return ""
	}).Scan(ctx, &rows)
	if err != nil {
		return 0, decimal.Zero, decimal.Zero, decimal.Zero, err
	}
	for _, r := range rows {
		p, err1 := db.ParseMoneySum(r.Paid)
		o, err2 := db.ParseMoneySum(r.OnTime)
		w, err3 := db.ParseMoneySum(r.Weighted)
		if err := firstError(err1, err2, err3); err != nil {
			return 0, decimal.Zero, decimal.Zero, decimal.Zero, err
		}
		n, paid, onTime, weighted = n+r.N, paid.Add(p), onTime.Add(o), weighted.Add(w)
	}
	return n, paid, onTime, weighted, nil
}

// always is the condition of SumMoney that holds for every row.
func always(b *entsql.Builder) { b.WriteString("1 = 1") }

// SQLite's text of the pieces (see the file's comment). Each takes the quoted, qualified
// column(s) it reads.

// sqliteThousandths is the amount text a as an integer of thousandths, NULL when a has more
// than three decimals or more than twelve characters before its point (|c| < 10¹⁵).
func sqliteThousandths(a string) string {
	return fmt.Sprintf("CASE WHEN (CASE WHEN instr(%[1]s, '.') > 0 THEN instr(%[1]s, '.') - 1 ELSE length(%[1]s) END) <= 12 "+
		"THEN CAST(replace(%[1]s, '.', '') AS INTEGER) * CASE WHEN instr(%[1]s, '.') = 0 THEN 1000 "+
		"ELSE CASE length(%[1]s) - instr(%[1]s, '.') WHEN 1 THEN 100 WHEN 2 THEN 10 WHEN 3 THEN 1 END END END", a)
}

// sqliteUTCSeconds is the time text t's whole seconds since the Unix epoch, NULL unless t is
// in UTC ("+00:00", as creditd writes every time).
func sqliteUTCSeconds(t string) string {
	return fmt.Sprintf("CASE WHEN substr(%[1]s, -6) = '+00:00' THEN unixepoch(substr(%[1]s, 1, 19)) END", t)
}

// sqliteFractionNanos is the fraction of the second of the time text t in nanoseconds, NULL
// unless t has no fraction or one of one to nine digits.
func sqliteFractionNanos(t string) string {
	return fmt.Sprintf("CASE WHEN length(%[1]s) = 25 THEN 0 WHEN substr(%[1]s, 20, 1) = '.' THEN "+
		"CAST(substr(%[1]s, 21, length(%[1]s) - 26) AS INTEGER) * CASE length(%[1]s) WHEN 27 THEN 100000000 WHEN 28 THEN 10000000 "+
		"WHEN 29 THEN 1000000 WHEN 30 THEN 100000 WHEN 31 THEN 10000 WHEN 32 THEN 1000 WHEN 33 THEN 100 WHEN 34 THEN 10 "+
		"WHEN 35 THEN 1 END END", t)
}

// sqlitePaidPieces, given to the Aggregate of the paid invoices grouped by store_id, turns the
// query into an outer one that sums the pieces of the subquery's rows (the query itself, its
// conditions and the tenant's filter unchanged, selecting per invoice its store, amount,
// times and pieces). The subquery keeps the table's name as its alias, so that the group-by
// column ent adds afterwards names its column.
func (db *DB) sqlitePaidPieces(sel *entsql.Selector) string {
	amount, settled, due := sel.C(invoice.FieldAmount), sel.C(invoice.FieldSettledAt), sel.C(invoice.FieldDueAt)
	inner := sel.Clone()
	inner.Select(sel.C(invoice.FieldStoreID), amount, settled, due).
		AppendSelectExprAs(entsql.Expr(sqliteThousandths(amount)), "c").
		AppendSelectExprAs(entsql.Expr("("+sqliteUTCSeconds(settled)+" - "+sqliteUTCSeconds(due)+") * 1000000000 + ("+
			sqliteFractionNanos(settled)+" - "+sqliteFractionNanos(due)+")"), "dn").
		Limit(-1).As(invoice.Table)
	sel.From(inner).SetP(nil)
	col := func(name string) string { return inner.C(name) }
	c, dn := col("c"), col("dn")
	// dn is the duration in nanoseconds (a product past 2⁶³ makes it a float, which the range
	// leaves out); d, its microseconds truncated toward zero as the Go aggregate's, is split in
	// seconds ds and the rest dus.
	ok := fmt.Sprintf("(%[1]s IS NOT NULL AND %[2]s IS NOT NULL AND %[2]s BETWEEN -999999999999999999 AND 999999999999999999)", c, dn)
	d := "(" + dn + " / 1000)"
	ds, dus := "("+d+" / 1000000)", "("+d+" % 1000000)"
	sum := func(expr string) entsql.Querier {
		return entsql.Expr("COALESCE(SUM(CASE WHEN " + ok + " THEN " + expr + " END), 0)")
	}
	sel.AppendSelectAs(col(invoice.FieldStoreID), "k")
	sel.AppendSelectExprAs(entsql.Expr("COUNT(*)"), "n")
	sel.AppendSelectExprAs(sum(c), "c")
	sel.AppendSelectExprAs(sum("CASE WHEN "+dn+" <= 0 THEN "+c+" END"), "on_time")
	sel.AppendSelectExprAs(sum(fmt.Sprintf("(%s / 1000000) * %s", c, ds)), "p1")
	sel.AppendSelectExprAs(sum(fmt.Sprintf("(%s %% 1000000) * %s", c, ds)), "p0")
	sel.AppendSelectExprAs(sum(fmt.Sprintf("(%s / 1000000) * %s", c, dus)), "q1")
	sel.AppendSelectExprAs(sum(fmt.Sprintf("(%s %% 1000000) * %s", c, dus)), "q0")
	odd := func(b *entsql.Builder) { b.WriteString("NOT " + ok) }
	a, st, du := col(invoice.FieldAmount), col(invoice.FieldSettledAt), col(invoice.FieldDueAt)
	sel.AppendSelectExprAs(db.SumMoney(a, odd), "odd_paid")
	sel.AppendSelectExprAs(db.SumMoney(a, func(b *entsql.Builder) {
		// As instants, not as texts, which compare so only in one zone and form.
		odd(b)
		b.WriteString(" AND ").Join(db.Micros(st)).WriteOp(entsql.OpLTE).Join(db.Micros(du))
	}), "odd_on_time")
	sel.AppendSelectExprAs(entsql.Expr(fmt.Sprintf("COALESCE(%s(%s, %s, %s) FILTER (WHERE NOT %s), '0')", sqliteWeightedSumFunc, a, st, du, ok)), "odd_weighted")
	return ""
}

// IssuedByDay runs q, a query of store storeID's invoices (handed over), and returns, over the
// invoices issued since the store's oldest open invoice was (none when nothing is open), per
// day back from now (day k is [now − k days, now − (k−1) days), day 1 also holding now, day 0
// after now), the amounts invoiced, cancelled invoices not counted; and the open amounts'
// total. last is the earliest day with any invoice. One statement; its rows are at most the
// days since the oldest open invoice was issued.
//
// Errors: the query's.
func (db *DB) IssuedByDay(ctx context.Context, q *ent.InvoiceQuery, storeID string, now time.Time) (byDay map[int64]decimal.Decimal, last int64, open decimal.Decimal, err error) {
	dayMicros := (24 * time.Hour).Microseconds()
	nowMicros := now.UnixMicro()
	var rows []struct {
		Key    string `json:"k"`
		Day    int64  `json:"d"`
		Issued string `json:"issued"`
		Open   string `json:"open"`
	}
	// The oldest open invoice's issue time, by a subquery on the store's ID (not correlated
	// with the row, so the database runs it once).
	oldest := func() *entsql.Selector {
		oi, ol := entsql.Table(invoice.Table).As("oldest_open"), entsql.Table(ledgerentry.Table).As("oldest_issued")
		return entsql.Select(entsql.Min(ol.C(ledgerentry.FieldOccurredAt))).From(oi).
			Join(ol).On(oi.C(invoice.FieldLedgerEntryID), ol.C(ledgerentry.FieldID)).
			Where(entsql.And(openIs(oi.C(invoice.FieldOpen), true), entsql.EQ(oi.C(invoice.FieldStoreID), storeID)))
	}
	err = q.Where(
		// An invoice is due at or after it was issued: those due before the oldest open one
		// was issued are left out before their issue time is looked up.
		func(sel *entsql.Selector) {
			// "open IN (false, true)" holds for every invoice; it lets SQLite, which has no
			// index that leads with store_id, read the due dates by a range of the index on
			// (open, due_at) for each value (without it, it scanned every invoice of the store
			// and looked each one's issue time up).
			sel.Where(entsql.And(entsql.In(sel.C(invoice.FieldOpen), false, true), entsql.GTE(sel.C(invoice.FieldDueAt), oldest())))
		},
		func(sel *entsql.Selector) {
			sel.Where(entsql.Or(openIs(sel.C(invoice.FieldOpen), true), entsql.Not(hasCancellation(sel))))
		},
	).GroupBy(invoice.FieldStoreID).Aggregate(func(sel *entsql.Selector) string {
		le := entsql.Table(ledgerentry.Table).As("issued")
		sel.Join(le).On(sel.C(invoice.FieldLedgerEntryID), le.C(ledgerentry.FieldID))
		issuedAt := le.C(ledgerentry.FieldOccurredAt)
		sel.Where(entsql.GTE(issuedAt, oldest()))
		sel.AppendSelectAs(sel.C(invoice.FieldStoreID), "k")
		sel.AppendSelectExprAs(entsql.ExprFunc(func(b *entsql.Builder) {
			// Day 0 after now; else max(1, ⌈(now − issued) / day⌉), the issue time in
			// microseconds computed once.
			greatest := "max"
			if b.Dialect() == dialect.Postgres {
				greatest = "GREATEST"
			}
			b.WriteString("CASE WHEN ").Ident(issuedAt).WriteOp(entsql.OpGT).Arg(now).WriteString(" THEN 0 ELSE " + greatest + "(1, (").
				Arg(nowMicros + dayMicros - 1).WriteString(" - ").Join(db.Micros(issuedAt)).WriteString(") / ").Arg(dayMicros).WriteString(") END")
		}), "d")
		sel.AppendSelectExprAs(db.SumMoney(sel.C(invoice.FieldAmount), always), "issued")
		sel.AppendSelectExprAs(db.SumMoney(sel.C(invoice.FieldOpenAmount), func(b *entsql.Builder) {
			b.Ident(sel.C(invoice.FieldOpen)).WriteOp(entsql.OpEQ).Arg(true)
		}), "open")
		sel.GroupBy("d")
		return ""
	}).Scan(ctx, &rows)
	if err != nil {
		return nil, 0, decimal.Zero, err
	}
	byDay = map[int64]decimal.Decimal{}
	for _, r := range rows {
		if r.Key != storeID {
			continue
		}
		issued, err1 := db.ParseMoneySum(r.Issued)
		o, err2 := db.ParseMoneySum(r.Open)
		if err := firstError(err1, err2); err != nil {
			return nil, 0, decimal.Zero, err
		}
		open = open.Add(o)
		if r.Day > 0 {
			byDay[r.Day] = byDay[r.Day].Add(issued)
			last = max(last, r.Day)
		}
	}
	return byDay, last, open, nil
}
