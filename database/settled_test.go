package database_test

import (
	"context"
	"testing"
	"time"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
	"github.com/creditd/creditd/ent"
	"github.com/creditd/creditd/ent/invoice"
	"github.com/creditd/creditd/tenant"
)

// TestMigration0015GivesOldInvoicesTheLiveSettledAt records a history through the service
// (which sets settled_at as it allocates), forgets every settled_at as an old database would
// not have one, runs migration 0015's step, and wants back exactly what the live path wrote:
// orders paid by their own payments, by payments without an order (oldest first, across
// several invoices), covered by earlier credit, cancelled, overpaid, and still open.
func TestMigration0015GivesOldInvoicesTheLiveSettledAt(t *testing.T) {
	env := credittest.NewService(t)
	st := env.MustStore(t, "Old Ledgers", "EUR")
	a := env.MustCompany(t, st, "Alpha", "100000").ID
	b := env.MustCompany(t, st, "Beta", "100000").ID
	rec := func(co, kind, amount, order string) {
		t.Helper()
		env.Clock.Advance(37 * time.Minute)
		env.MustRecord(t, credit.LedgerEntryInput{CompanyID: co, Kind: kind, Amount: amount, OrderGID: order})
	}
	gid := func(n string) string { return "gid://platform/Order/" + n }
	rec(a, credit.KindOrderPlaced, "100", gid("1"))
	rec(a, credit.KindOrderPlaced, "50.5", gid("2"))
	rec(a, credit.KindOrderPlaced, "30", gid("3"))
	rec(a, credit.KindPayment, "-120", "")         // settles 1, leaves 30.50 on 2
	rec(a, credit.KindPayment, "-30.5", gid("2"))  // settles 2
	rec(a, credit.KindPayment, "-40", gid("3"))    // overpays 3
	rec(a, credit.KindPayment, "-5", gid("3"))     // on a settled invoice: no new moment
	rec(a, credit.KindPayment, "-25", "")          // nothing open: credit
	rec(a, credit.KindOrderPlaced, "20", gid("4")) // covered by the credit when placed
	rec(a, credit.KindOrderPlaced, "10", gid("5")) // 5 of credit left, stays open
	rec(b, credit.KindOrderPlaced, "70", gid("6"))
	rec(b, credit.KindCancellation, "-70", gid("6"))
	rec(b, credit.KindOrderPlaced, "9.99", gid("7"))
	rec(b, credit.KindRefund, "-9.99", gid("7"))
	rec(b, credit.KindOrderPlaced, "1", gid("8"))

	ctx := tenant.System(context.Background())
	read := func() map[string]*time.Time {
		t.Helper()
		rows, err := env.DB.Client.Invoice.Query().Order(ent.Asc(invoice.FieldCompanyID), ent.Asc(invoice.FieldSeq)).All(ctx)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]*time.Time{}
		for _, r := range rows {
			out[r.PlatformOrderGid] = r.SettledAt
		}
		return out
	}
	live := read()
	settled := 0
	for order, at := range live {
		if at != nil {
			settled++
		} else if order != gid("5") && order != gid("8") {
			t.Errorf("%s: live settled_at is null", order)
		}
	}
	if settled != 6 {
		t.Fatalf("live settled_at of %d invoices, want 6: %v", settled, live)
	}
	if _, err := env.DB.SQL.ExecContext(ctx, "UPDATE invoices SET settled_at = NULL"); err != nil {
		t.Fatal(err)
	}
	if err := env.DB.FillInvoiceSettledAt(ctx); err != nil {
		t.Fatal(err)
	}
	for order, want := range live {
		got := read()[order]
		if (got == nil) != (want == nil) || (got != nil && !got.Equal(*want)) {
			t.Errorf("%s: replayed settled_at %v, live %v", order, got, want)
		}
	}
}
