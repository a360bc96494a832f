package database_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"entgo.io/ent/dialect"
	"github.com/shopspring/decimal"

	"github.com/creditd/creditd/credittest"
	"github.com/creditd/creditd/ent/invoice"
	"github.com/creditd/creditd/tenant"
)

// countingDriver counts the statements a database view sends.
type countingDriver struct {
	dialect.Driver
	n *int
}

func (d countingDriver) Query(ctx context.Context, query string, args, v any) error {
	*d.n++
	return d.Driver.Query(ctx, query, args, v)
}

// paidInvoice is an invoice for TestPaidSums: its amount, and when it fell due and was
// settled.
type paidInvoice struct {
	amount       string
	due, settled time.Time
}

// TestPaidSums checks PaidSums against the same sums computed here in decimals from the rows
// read back, over invoices written straight into the table: cents and thousandths, early and
// late by odd microseconds, both signs of the pieces; then with rows that SQLite's integer
// pieces cannot take (four decimals, an hour's zone, thirteen integer digits, a delay of 40
// years), and nanoseconds, which the pieces truncate as the Go aggregate does,, which its Go aggregate sums in the same statement; then with amounts
// and delays whose integer sums overflow, which sends SQLite's sums down the Go aggregate in a
// second statement. Every case is exact, in one statement unless it overflows.
func TestPaidSums(t *testing.T) {
	env := credittest.NewService(t)
	ctx := tenant.System(context.Background())
	t0 := time.Date(2026, 3, 1, 9, 30, 0, 0, time.UTC)
	day := 24 * time.Hour
	us := time.Microsecond
	normal := []paidInvoice{
		{"100", t0, t0.Add(10*day + 7*us)},
		{"0.01", t0, t0.Add(-3*day - 999_999*us)},
		{"-25.5", t0.Add(123_456 * us), t0.Add(40*day + 654_321*us)},
		{"12345678901.23", t0.Add(999_999 * us), t0.Add(1 * us)},
		{"999.999", t0, t0},
		{"7777777.77", t0.Add(500_000 * us), t0.Add(-200*day + 499_999*us)},
		{"0.5", t0.Add(-us), t0.Add(us)},
	}
	hour := time.FixedZone("+01:00", 3600)
	odd := []paidInvoice{
		{"10.1234", t0, t0.Add(5 * day)},                                      // four decimals
		{"50", t0.In(hour), t0.Add(-30 * time.Minute).In(hour)},               // not UTC, early
		{"60", t0.In(hour), t0.Add(30 * time.Minute)},                         // one of two not UTC, late
		{"70", t0.Add(123 * time.Nanosecond), t0.Add(2 * day)},                // nanoseconds
		{"1234567890123.45", t0, t0.Add(3 * day)},                             // thirteen integer digits
		{"3.5", t0.Add(-40 * 365 * day), t0},                                  // 40 years late
		{"-0.001", t0, t0.Add(-7*day - 3*us)},                                 // normal, among the odd
		{"80", t0.Add(500 * time.Nanosecond), t0.Add(2000 * time.Nanosecond)}, // nanoseconds, on time
	}
	// 999,999,999,999 × (10⁹ − 1) s: each product just below 10¹⁸ thousandths·s, ten of them past 2⁶³.
	long := t0.Add(-999_999_999 * time.Second)
	var overflow []paidInvoice
	for range 12 {
		overflow = append(overflow, paidInvoice{"999999999999", long, t0})
	}
	overflow = append(overflow, paidInvoice{"-0.5", t0, t0.Add(day)})

	for _, c := range []struct {
		name       string
		invoices   []paidInvoice
		statements int
	}{
		{"normal", normal, 1},
		{"odd rows", append(append([]paidInvoice{}, normal...), odd...), 1},
		{"overflow", overflow, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := env.MustStore(t, c.name, "KWD")
			for i, inv := range c.invoices {
				_, err := env.DB.Client.Invoice.Create().SetStoreID(st).SetCompanyID("co_paid").
					SetLedgerEntryID(fmt.Sprintf("le_%s_%d", st, i)).SetSeq(int64(i + 1)).
					SetPlatformOrderGid(fmt.Sprintf("gid://platform/Order/%d", i)).
					SetAmount(decimal.RequireFromString(inv.amount)).SetOpenAmount(decimal.Zero).SetOpen(false).
					SetDueAt(inv.due).SetSettledAt(inv.settled).Save(ctx)
				if err != nil {
					t.Fatal(err)
				}
			}
			rows, err := env.DB.Client.Invoice.Query().Where(invoice.StoreID(st)).All(ctx)
			if err != nil || len(rows) != len(c.invoices) {
				t.Fatalf("%d rows, %v", len(rows), err)
			}
			var paid, onTime, weighted decimal.Decimal
			for _, r := range rows {
				paid = paid.Add(r.Amount)
				if !r.SettledAt.After(r.DueAt) {
					onTime = onTime.Add(r.Amount)
				}
				weighted = weighted.Add(r.Amount.Mul(decimal.NewFromInt(r.SettledAt.Sub(r.DueAt).Microseconds())))
			}
			var statements int
			counted := env.DB.WithDriver(func(d dialect.Driver) dialect.Driver { return countingDriver{Driver: d, n: &statements} })
			n, gotPaid, gotOnTime, gotWeighted, err := counted.PaidSums(ctx, counted.Client.Invoice.Query().Where(invoice.StoreID(st)))
			if err != nil {
				t.Fatal(err)
			}
			if n != len(rows) || !gotPaid.Equal(paid) || !gotOnTime.Equal(onTime) || !gotWeighted.Equal(weighted) {
				t.Errorf("got n %d paid %s on time %s weighted %s\nwant n %d paid %s on time %s weighted %s",
					n, gotPaid, gotOnTime, gotWeighted, len(rows), paid, onTime, weighted)
			}
			want := c.statements
			if env.DB.Dialect == dialect.Postgres {
				want = 1
			}
			if statements != want {
				t.Errorf("%d statements, want %d", statements, want)
			}
		})
	}
}
