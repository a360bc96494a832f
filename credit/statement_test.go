package credit_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
)

// TestStatementPeriodBoundaries records entries just before, at the first and last instant of
// from and of to, and just after a period, and wants the statement to hold exactly the period's
// entries, with opening and closing balances, totals, open invoices, aging and not_invoiced as
// of the end of to computed here independently of the service.
func TestStatementPeriodBoundaries(t *testing.T) {
	t.Parallel()
	env := credittest.NewService(t)
	st := env.MustStore(t, "Statements", "EUR")
	key := ctxKey(st)
	c := env.MustCompany(t, st, "Alpenblick", "100000", "NET_1")
	now := env.Clock.Now().UTC()
	from := now.Truncate(24*time.Hour).AddDate(0, 0, -10)
	to := from.AddDate(0, 0, 3)
	last := to.Add(24*time.Hour - time.Microsecond)
	type rec struct {
		kind, amount, gid string
		at                time.Time
		in                bool
	}
	recs := []rec{
		{credit.KindOpeningBalance, "50.00", "", from.Add(-time.Microsecond), false},
		{credit.KindOrderPlaced, "100.00", "gid://platform/Order/1", from, true},
		{credit.KindPayment, "-30.00", "", from.Add(24*time.Hour - time.Microsecond), true},
		{credit.KindRefund, "-5.00", "gid://platform/Order/1", to, true},
		{credit.KindOrderPlaced, "7.50", "gid://platform/Order/2", last, true},
		{credit.KindPayment, "-1.00", "", last.Add(time.Microsecond), false},
		{credit.KindOrderPlaced, "9.00", "gid://platform/Order/3", last.Add(time.Microsecond), false},
	}
	opening, closing := decimal.Zero, decimal.Zero
	sums := map[string]decimal.Decimal{}
	for _, r := range recs {
		at := credit.At(r.at)
		env.MustRecord(t, credit.LedgerEntryInput{CompanyID: c.ID, Kind: r.kind, Amount: r.amount, OrderGID: r.gid, OccurredAt: &at})
		a := decimal.RequireFromString(r.amount)
		if r.at.Before(from) {
			opening = opening.Add(a)
		}
		if r.in {
			sums[r.kind] = sums[r.kind].Add(a)
		}
		if !r.at.After(last) {
			closing = closing.Add(a)
		}
	}
	s, err := env.Service.Reports.Statement(key, c.ID, from.Format(time.DateOnly), to.Format(time.DateOnly))
	if err != nil {
		t.Fatal(err)
	}
	eq := func(what string, got credit.Money, want decimal.Decimal) {
		t.Helper()
		if !decimal.RequireFromString(got.Amount).Equal(want) || got.Currency != "EUR" {
			t.Errorf("%s = %v, want %s EUR", what, got, want)
		}
	}
	eq("opening_balance", s.OpeningBalance, opening)
	eq("closing_balance", s.ClosingBalance, closing)
	eq("totals.invoiced", s.Totals.Invoiced, sums[credit.KindOrderPlaced])
	eq("totals.paid", s.Totals.Paid, sums[credit.KindPayment])
	eq("totals.credited", s.Totals.Credited, sums[credit.KindRefund])
	eq("totals.adjusted", s.Totals.Adjusted, decimal.Zero)
	if len(s.Entries) != 4 {
		t.Fatalf("%d entries, want the period's 4", len(s.Entries))
	}
	run := opening
	for i, e := range s.Entries {
		run = run.Add(decimal.RequireFromString(e.Amount.Amount))
		eq("entries balance_after", e.BalanceAfter, run)
		if i > 0 && e.OccurredAt.Time.Before(s.Entries[i-1].OccurredAt.Time) {
			t.Errorf("entries not oldest first")
		}
	}
	eq("opening + Σ entries", s.ClosingBalance, run)

	// As of the end of to: Order/1 (due from + 1 day) has 100 − 30 − 5 open, 1–30 days past
	// due; Order/2, placed at the last instant, is current; the payment and Order/3 after the
	// period are not counted. The opening balance is on no invoice.
	if len(s.OpenInvoices) != 2 {
		t.Fatalf("open_invoices %s, want Order/1 and Order/2", asJSON(s.OpenInvoices))
	}
	for i, want := range []struct {
		gid, open string
		overdue   int
	}{{"gid://platform/Order/1", "65.00", 3}, {"gid://platform/Order/2", "7.50", 0}} {
		got := s.OpenInvoices[i]
		if got.PlatformOrderGID != want.gid || got.OpenAmount.Amount != want.open || got.DaysOverdue != want.overdue {
			t.Errorf("open_invoices[%d] = %s, want %s open %s, %d days overdue", i, asJSON(got), want.gid, want.open, want.overdue)
		}
	}
	eq("aging.current", s.Aging.Current, decimal.RequireFromString("7.50"))
	eq("aging.days_1_to_30", s.Aging.Days1To30, decimal.RequireFromString("65.00"))
	eq("aging.total", s.Aging.Total, decimal.RequireFromString("72.50"))
	eq("not_invoiced", s.NotInvoiced, decimal.RequireFromString("50.00"))
	eq("aging.total + not_invoiced", s.ClosingBalance, decimal.RequireFromString(s.Aging.Total.Amount).Add(decimal.RequireFromString(s.NotInvoiced.Amount)))
}

// TestStatementBadPeriod wants each bad period refused naming its parameter.
func TestStatementBadPeriod(t *testing.T) {
	t.Parallel()
	env := credittest.NewService(t)
	st := env.MustStore(t, "Statements", "EUR")
	c := env.MustCompany(t, st, "Alpenblick", "100000")
	today := env.Clock.Now().UTC().Format(time.DateOnly)
	tomorrow := env.Clock.Now().UTC().AddDate(0, 0, 1).Format(time.DateOnly)
	for _, tc := range []struct{ from, to, param string }{
		{"2026-13-01", today, "from"},
		{"2020-01-01", "nope", "to"},
		{today, "2020-01-01", "from"},
		{today, tomorrow, "to"},
		{"2000-01-01", today, "to"},
	} {
		_, err := env.Service.Reports.Statement(ctxKey(st), c.ID, tc.from, tc.to)
		var ce *credit.Error
		if !errors.As(err, &ce) || ce.Code != credit.CodeInvalidParameter || ce.Param != tc.param {
			t.Errorf("%s..%s: %v, want invalid_parameter naming %s", tc.from, tc.to, err, tc.param)
		}
	}
	var ce2 *credit.Error
	other := env.MustStore(t, "Other", "EUR")
	if _, err := env.Service.Reports.Statement(ctxKey(other), c.ID, today, today); !errors.As(err, &ce2) || ce2.Code != credit.CodeNotFound {
		t.Errorf("another store's company: %v, want not_found", err)
	}
}

// TestStatementPastToIsTheOutstandingThen records a history across days, notes the company's
// live outstanding at the end of a day, moves on and records more, and wants a statement to
// that day to close at the outstanding noted then.
func TestStatementPastToIsTheOutstandingThen(t *testing.T) {
	t.Parallel()
	env := credittest.NewService(t)
	st := env.MustStore(t, "Statements", "EUR")
	key := ctxKey(st)
	c := env.MustCompany(t, st, "Brauhaus", "100000")
	env.Clock.Set(env.Clock.Now().UTC().Truncate(24 * time.Hour).Add(-5*24*time.Hour + time.Hour))
	env.MustRecord(t, credit.LedgerEntryInput{CompanyID: c.ID, Kind: credit.KindOrderPlaced, Amount: "400.00", OrderGID: "gid://platform/Order/7"})
	env.MustRecord(t, credit.LedgerEntryInput{CompanyID: c.ID, Kind: credit.KindPayment, Amount: "-150.25"})
	day := env.Clock.Now().UTC().Format(time.DateOnly)
	then, err := env.Service.Companies.Get(key, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	env.Clock.Advance(2 * 24 * time.Hour)
	env.MustRecord(t, credit.LedgerEntryInput{CompanyID: c.ID, Kind: credit.KindPayment, Amount: "-49.75"})
	s, err := env.Service.Reports.Statement(key, c.ID, day, day)
	if err != nil {
		t.Fatal(err)
	}
	if s.ClosingBalance != then.Outstanding {
		t.Errorf("closing_balance %v, want the outstanding of that day %v", s.ClosingBalance, then.Outstanding)
	}
	now, err := env.Service.Companies.Get(key, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	today := env.Clock.Now().UTC().Format(time.DateOnly)
	s, err = env.Service.Reports.Statement(key, c.ID, day, today)
	if err != nil {
		t.Fatal(err)
	}
	if s.ClosingBalance != now.Outstanding {
		t.Errorf("closing_balance to today %v, want the live outstanding %v", s.ClosingBalance, now.Outstanding)
	}
}

// liveFigures are a company's live figures at one moment, as the API serves them.
type liveFigures struct {
	day         string
	outstanding credit.Money
	aging       credit.Aging
	open        []credit.Invoice
}

// TestStatementPastToIsTheLiveFiguresThen records four months of orders, payments with and
// without an order, refunds, cancellations, adjustments and payments larger than what is open,
// notes the company's live outstanding, aging and open invoices at the last instant of every
// day, and wants a statement to each of those days to show exactly them; and a statement to
// today, at any time of the day, the live figures of now.
func TestStatementPastToIsTheLiveFiguresThen(t *testing.T) {
	t.Parallel()
	env := credittest.NewService(t)
	st := env.MustStore(t, "Statements", "EUR")
	key := ctxKey(st)
	c := env.MustCompany(t, st, "Kellerei", "1000000", "NET_7")
	first := env.Clock.Now().UTC().Truncate(24*time.Hour).AddDate(0, 0, -130)
	live := func(day time.Time) liveFigures {
		t.Helper()
		co, err := env.Service.Companies.Get(key, c.ID)
		if err != nil {
			t.Fatal(err)
		}
		aging, err := env.Service.Reports.CompanyAging(key, []string{c.ID})
		if err != nil {
			t.Fatal(err)
		}
		f := liveFigures{day: day.Format(time.DateOnly), outstanding: co.Outstanding, aging: aging[c.ID]}
		limit := 100
		p := credit.InvoiceListParams{ListParams: credit.ListParams{Limit: &limit}, Status: credit.InvoiceOpen}
		for {
			page, err := env.Service.Invoices.List(key, c.ID, p)
			if err != nil {
				t.Fatal(err)
			}
			f.open = append(f.open, page.Data...)
			if !page.HasMore {
				return f
			}
			p.Cursor = *page.NextCursor
		}
	}
	var seen []liveFigures
	var orders []string
	for i := 0; i < 130; i++ {
		day := first.AddDate(0, 0, i)
		env.Clock.Set(day.Add(9 * time.Hour))
		rec := func(kind, amount, gid string) {
			env.MustRecord(t, credit.LedgerEntryInput{CompanyID: c.ID, Kind: kind, Amount: amount, OrderGID: gid})
			env.Clock.Advance(time.Minute)
		}
		if i%3 == 0 {
			gid := fmt.Sprintf("gid://platform/Order/%d", i)
			rec(credit.KindOrderPlaced, fmt.Sprintf("%d.25", 100+i), gid)
			orders = append(orders, gid)
		}
		if i%5 == 1 {
			rec(credit.KindPayment, fmt.Sprintf("-%d.10", 20+i%7), "")
		}
		if i%11 == 2 {
			rec(credit.KindRefund, "-10.00", orders[len(orders)-1])
		}
		if i%17 == 4 && len(orders) > 2 {
			rec(credit.KindCancellation, "-30.00", orders[len(orders)-3])
		}
		if i%13 == 5 {
			rec(credit.KindAdjustment, "12.00", "")
		}
		if i == 110 || i == 111 {
			rec(credit.KindPayment, "-3500.00", "")
		}
		if i == 0 {
			rec(credit.KindOpeningBalance, "75.00", "")
		}
		env.Clock.Set(day.Add(24*time.Hour - time.Microsecond))
		seen = append(seen, live(day))
	}
	// The seed must reach every bucket, an unapplied credit and a zero aging for the test to
	// mean something.
	var reached [6]bool
	for _, f := range seen {
		for i, m := range []credit.Money{f.aging.Current, f.aging.Days1To30, f.aging.Days31To60, f.aging.Days61To90, f.aging.Over90} {
			reached[i] = reached[i] || !decimal.RequireFromString(m.Amount).IsZero()
		}
		reached[5] = reached[5] || decimal.RequireFromString(f.outstanding.Amount).IsNegative()
	}
	if reached != [6]bool{true, true, true, true, true, true} {
		t.Fatalf("the seed reached buckets and a credit balance %v, want all", reached)
	}
	// Later: a statement to a past day shows that day's figures.
	env.Clock.Set(first.AddDate(0, 0, 131).Add(13 * time.Hour))
	check := func(from string, want liveFigures) {
		t.Helper()
		s, err := env.Service.Reports.Statement(key, c.ID, from, want.day)
		if err != nil {
			t.Fatal(err)
		}
		if s.ClosingBalance != want.outstanding {
			t.Errorf("to %s: closing_balance %v, want the outstanding then %v", want.day, s.ClosingBalance, want.outstanding)
		}
		if asJSON(s.Aging) != asJSON(want.aging) {
			t.Errorf("to %s: aging %s, want the aging then %s", want.day, asJSON(s.Aging), asJSON(want.aging))
		}
		if s.NotInvoiced != credit.NotInvoiced(want.outstanding, want.aging) {
			t.Errorf("to %s: not_invoiced %v, want %v", want.day, s.NotInvoiced, credit.NotInvoiced(want.outstanding, want.aging))
		}
		if len(s.OpenInvoices) != len(want.open) {
			t.Fatalf("to %s: %d open invoices, want the %d open then", want.day, len(s.OpenInvoices), len(want.open))
		}
		for i, got := range s.OpenInvoices {
			w := want.open[i]
			if got.ID != w.ID || got.PlatformOrderGID != w.PlatformOrderGID || got.Amount != w.Amount || got.OpenAmount != w.OpenAmount ||
				!got.IssuedAt.Equal(w.IssuedAt.Time) || !got.DueAt.Equal(w.DueAt.Time) || got.DaysOverdue != w.DaysOverdue {
				t.Errorf("to %s: open_invoices[%d] = %s, want the invoice then %s", want.day, i, asJSON(got), asJSON(w))
			}
		}
	}
	for i, f := range seen {
		check(seen[max(0, i-40)].day, f)
	}
	// Today, at several times of the day: the live figures of now, whose days overdue grow
	// during the day (an order dated 20 days ago, more than the credit balance, is overdue).
	today := env.Clock.Now().UTC().Truncate(24 * time.Hour)
	placed := credit.At(today.AddDate(0, 0, -20).Add(5 * time.Hour))
	env.MustRecord(t, credit.LedgerEntryInput{CompanyID: c.ID, Kind: credit.KindOrderPlaced, Amount: "10000.00", OrderGID: "gid://platform/Order/88888", OccurredAt: &placed})
	for _, at := range []time.Duration{0, 13 * time.Hour, 24*time.Hour - time.Microsecond} {
		env.Clock.Set(today.Add(at))
		if at == 13*time.Hour {
			env.MustRecord(t, credit.LedgerEntryInput{CompanyID: c.ID, Kind: credit.KindOrderPlaced, Amount: "44.00", OrderGID: "gid://platform/Order/99999"})
		}
		check(seen[100].day, live(today))
	}
}
