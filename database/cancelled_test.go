package database_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
	"github.com/creditd/creditd/database"
	"github.com/creditd/creditd/ent"
	"github.com/creditd/creditd/ent/invoice"
	"github.com/creditd/creditd/tenant"
)

// TestMigration0019GivesOldInvoicesTheLiveCancelled records a history through the service
// (which sets an invoice's cancelled as it appends the cancellation): an order cancelled
// whole, one cancelled after a partial payment, one paid and then cancelled, one cancelled in
// another company that has an order of the same GID left alone, a paid one and an open one.
// It then forgets every flag, as a database before migration 0019 has none, runs the
// migration's UPDATE, and wants back exactly what the live path wrote.
func TestMigration0019GivesOldInvoicesTheLiveCancelled(t *testing.T) {
	env := credittest.NewService(t)
	st := env.MustStore(t, "Cancellations", "EUR")
	a := env.MustCompany(t, st, "Alpha", "100000").ID
	b := env.MustCompany(t, st, "Beta", "100000").ID
	rec := func(co, kind, amount, order string) {
		t.Helper()
		env.Clock.Advance(11 * time.Minute)
		env.MustOrderEntry(t, co, kind, amount, order)
	}
	gid := func(n string) string { return "gid://platform/Order/" + n }
	rec(a, credit.KindOrderPlaced, "100", "1")
	rec(a, credit.KindCancellation, "-100", "1") // cancelled whole
	rec(a, credit.KindOrderPlaced, "50", "2")
	rec(a, credit.KindPayment, "-20", "2")
	rec(a, credit.KindCancellation, "-30", "2") // the rest cancelled
	rec(a, credit.KindOrderPlaced, "40", "3")
	rec(a, credit.KindPayment, "-40", "3")
	rec(a, credit.KindCancellation, "-40", "3") // paid, then cancelled
	rec(a, credit.KindOrderPlaced, "10", "4")   // paid
	rec(a, credit.KindPayment, "-10", "4")
	rec(a, credit.KindOrderPlaced, "5", "5") // open
	rec(b, credit.KindOrderPlaced, "7", "1") // the same GID in another company: not cancelled
	rec(b, credit.KindOrderPlaced, "8", "6")
	rec(b, credit.KindCancellation, "-8", "6")

	ctx := tenant.System(context.Background())
	read := func() map[string]bool {
		t.Helper()
		rows, err := env.DB.Client.Invoice.Query().Order(ent.Asc(invoice.FieldCompanyID), ent.Asc(invoice.FieldSeq)).All(ctx)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]bool{}
		for _, r := range rows {
			out[r.CompanyID+" "+r.PlatformOrderGid] = r.Cancelled
		}
		return out
	}
	live := read()
	want := map[string]bool{a + " " + gid("1"): true, a + " " + gid("2"): true, a + " " + gid("3"): true,
		a + " " + gid("4"): false, a + " " + gid("5"): false, b + " " + gid("1"): false, b + " " + gid("6"): true}
	for k, w := range want {
		if live[k] != w {
			t.Errorf("%s: live cancelled %v, want %v", k, live[k], w)
		}
	}
	if len(live) != len(want) {
		t.Fatalf("%d invoices, want %d", len(live), len(want))
	}

	migrations, err := database.Migrations(env.DB.Dialect)
	if err != nil {
		t.Fatal(err)
	}
	var update string
	for _, m := range migrations {
		if m.Version == "0019" {
			for _, line := range strings.Split(m.SQL, "\n") {
				if strings.HasPrefix(line, "UPDATE ") {
					update = line
				}
			}
		}
	}
	if update == "" {
		t.Fatal("migration 0019 has no UPDATE")
	}
	if _, err := env.DB.SQL.ExecContext(ctx, "UPDATE invoices SET cancelled = false"); err != nil {
		t.Fatal(err)
	}
	if _, err := env.DB.SQL.ExecContext(ctx, update); err != nil {
		t.Fatal(err)
	}
	for k, w := range read() {
		if w != live[k] {
			t.Errorf("%s: migrated cancelled %v, live %v", k, w, live[k])
		}
	}
}
