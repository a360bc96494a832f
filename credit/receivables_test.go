package credit_test

import (
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
)

// TestReceivablesMatchLedger checks the database's aging, totals and invoices against a plain
// replay of each company's ledger, on a store with invoices in every bucket, some partly paid,
// one refunded in part and one cancelled, as the clock moves.
func TestReceivablesMatchLedger(t *testing.T) {
	env := credittest.NewService(t)
	seed := env.SeedReceivables(t)
	other := env.MustStore(t, "Other", "EUR")
	oc := env.MustCompany(t, other, "Elsewhere", "1000")
	env.MustRecord(t, credit.LedgerEntryInput{CompanyID: oc.ID, Kind: credit.KindOrderPlaced, Amount: "55.55", OrderGID: "gid://platform/Order/1"})
	ctx := credittest.Staff(seed.Store)

	for _, advance := range []time.Duration{0, 11 * 24 * time.Hour, 40 * 24 * time.Hour} {
		env.Clock.Advance(advance)
		now := env.Clock.Now()
		var store credittest.RecomputedAging
		overdueCompanies := 0
		ids := make([]string, len(seed.Companies))
		for i, c := range seed.Companies {
			ids[i] = c.ID
		}
		agings, err := env.Service.Reports.CompanyAging(ctx, append(ids, oc.ID))
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := agings[oc.ID]; ok {
			t.Errorf("another store's company is in the aging")
		}
		outstanding := decimal.Zero
		for _, c := range seed.Companies {
			replayed := env.ReplayInvoices(t, c.ID)
			want := credittest.AgeInvoices(replayed, now)
			if got := credittest.AgingStrings(agings[c.ID]); !slices.Equal(got, want.Strings()) {
				t.Errorf("after %v, %s aging = %v, replay says %v", advance, c.Name, got, want.Strings())
			}
			for i := range store.Buckets {
				store.Buckets[i] = store.Buckets[i].Add(want.Buckets[i])
			}
			store.Total = store.Total.Add(want.Total)
			store.Overdue = store.Overdue.Add(want.Overdue)
			if want.Overdue.IsPositive() {
				overdueCompanies++
			}
			got, err := env.Service.Companies.Get(ctx, c.ID)
			if err != nil {
				t.Fatal(err)
			}
			outstanding = outstanding.Add(decimal.RequireFromString(got.Outstanding.Amount))

			page, err := env.Service.Invoices.List(ctx, c.ID, credit.InvoiceListParams{})
			if err != nil {
				t.Fatal(err)
			}
			if len(page.Data) != len(replayed) {
				t.Fatalf("%s has %d invoices, replay %d", c.Name, len(page.Data), len(replayed))
			}
			for i, inv := range page.Data {
				r := replayed[i]
				wantStatus := credit.InvoiceOpen
				switch {
				case !r.Open.IsPositive() && r.Cancelled:
					wantStatus = credit.InvoiceCancelled
				case !r.Open.IsPositive():
					wantStatus = credit.InvoicePaid
				}
				wantDays := 0
				if r.Open.IsPositive() && r.Due.Before(now) {
					wantDays = int((now.Sub(r.Due) + 24*time.Hour - 1) / (24 * time.Hour))
				}
				if inv.PlatformOrderGID != r.OrderGID || inv.Status != wantStatus || inv.DaysOverdue != wantDays ||
					inv.OpenAmount.Amount != decimal.Max(r.Open, decimal.Zero).StringFixed(2) ||
					inv.Amount.Amount != r.Amount.StringFixed(2) || !inv.IssuedAt.Equal(r.Issued) || !inv.DueAt.Equal(r.Due) {
					t.Errorf("%s invoice %d = %+v, replay says %+v (status %s, %d days)", c.Name, i, inv, r, wantStatus, wantDays)
				}
				again, err := env.Service.Invoices.Get(ctx, inv.ID)
				if err != nil || !reflect.DeepEqual(again, inv) {
					t.Errorf("GetInvoice(%s) = %+v, %v; want %+v", inv.ID, again, err, inv)
				}
			}
		}
		got, err := env.Service.Reports.Receivables(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if g, w := credittest.AgingStrings(got.Aging), store.Strings(); !slices.Equal(g, w) {
			t.Errorf("after %v, store aging = %v, replay says %v", advance, g, w)
		}
		if got.Overdue.Amount != store.Overdue.StringFixed(2) || got.CompaniesOverdue != overdueCompanies ||
			got.Outstanding.Amount != outstanding.StringFixed(2) {
			t.Errorf("after %v, totals = %+v; want overdue %s in %d companies, outstanding %s", advance, got, store.Overdue.StringFixed(2), overdueCompanies, outstanding.StringFixed(2))
		}
		lines, err := env.Service.Reports.ReceivablesByCompany(ctx, false)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range lines {
			if !slices.Equal(credittest.AgingStrings(l.Aging), credittest.AgingStrings(agings[l.CompanyID])) {
				t.Errorf("line %s = %v, company aging %v", l.CompanyName, l.Aging, agings[l.CompanyID])
			}
		}
	}
}

// TestInvoiceStatusFilter pages a company's invoices by status.
func TestInvoiceStatusFilter(t *testing.T) {
	env := credittest.NewService(t)
	seed := env.SeedReceivables(t)
	ctx := credittest.Staff(seed.Store)
	gids := func(status string, limit int) []string {
		var out []string
		p := credit.InvoiceListParams{Status: status, ListParams: credit.ListParams{Limit: &limit}}
		for {
			page, err := env.Service.Invoices.List(ctx, seed.CancelledCompany, p)
			if err != nil {
				t.Fatal(err)
			}
			for _, inv := range page.Data {
				out = append(out, inv.Status+" "+inv.PlatformOrderGID)
			}
			if !page.HasMore {
				return out
			}
			p.Cursor = *page.NextCursor
		}
	}
	if got := gids(credit.InvoiceCancelled, 1); !slices.Equal(got, []string{"cancelled " + seed.CancelledOrder}) {
		t.Errorf("cancelled = %v", got)
	}
	if got := gids(credit.InvoicePaid, 1); len(got) != 0 {
		t.Errorf("paid = %v", got)
	}
	if got := gids("", 1); len(got) != 2 || got[1][:4] != "open" {
		t.Errorf("all = %v", got)
	}
	_, err := env.Service.Invoices.List(ctx, seed.CancelledCompany, credit.InvoiceListParams{Status: "late"})
	if credit.CodeOf(err) != credit.CodeInvalidParameter {
		t.Errorf("status late: %v", err)
	}
	latest, err := env.Service.Invoices.FirstPages(ctx, []string{seed.Companies[0].ID, seed.Companies[1].ID, "co_nope"}, credit.InvoicePaid, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(latest) != 2 || len(latest[seed.Companies[1].ID].Data) != 1 || len(latest[seed.Companies[0].ID].Data) != 0 {
		t.Errorf("latest paid = %+v", latest)
	}
	one := 1
	latest, err = env.Service.Invoices.FirstPages(ctx, []string{seed.Companies[0].ID, seed.Companies[1].ID}, "", &one)
	if err != nil {
		t.Fatal(err)
	}
	for id, p := range latest {
		if len(p.Data) != 1 || !p.HasMore {
			t.Errorf("%s first page = %+v", id, p)
		}
	}
}

// TestSignedByKind: a positive figure gets the sign of its kind; a minus sign on a kind that
// lowers what is outstanding is refused rather than flipped.
func TestSignedByKind(t *testing.T) {
	for _, c := range []struct{ kind, in, want, code string }{
		{credit.KindPayment, "2950", "-2950", ""},
		{credit.KindRefund, " 10.50 ", "-10.50", ""},
		{credit.KindCancellation, "1", "-1", ""},
		{credit.KindOrderPlaced, "99.99", "99.99", ""},
		{credit.KindOpeningBalance, "-40", "-40", ""},
		{credit.KindAdjustment, "-5", "-5", ""},
		{credit.KindPayment, "", "", ""},
		{credit.KindPayment, "-2950", "", string(credit.CodeInvalidAmount)},
	} {
		got, err := credit.SignedByKind(c.kind, c.in)
		if got != c.want || string(credit.CodeOf(err)) != c.code {
			t.Errorf("SignedByKind(%s, %q) = %q, %v; want %q, %q", c.kind, c.in, got, err, c.want, c.code)
		}
	}
}
