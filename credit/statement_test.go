package credit_test

import (
	"errors"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
)

// TestStatementPeriodBoundaries records entries just before, at the first and last instant of,
// and just after a period, and wants the statement to hold exactly the period's entries, with
// opening and closing balances and totals computed here independently of the service.
func TestStatementPeriodBoundaries(t *testing.T) {
	t.Parallel()
	env := credittest.New(t)
	st := env.MustStore(t, "Statements", "EUR")
	key := ctxKey(st)
	c := env.MustCompany(t, st, "Alpenblick", "100000")
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
		{credit.KindPayment, "-30.00", "", from.Add(time.Hour), true},
		{credit.KindRefund, "-5.00", "gid://platform/Order/1", to, true},
		{credit.KindOrderPlaced, "7.50", "gid://platform/Order/2", last, true},
		{credit.KindPayment, "-1.00", "", last.Add(time.Microsecond), false},
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
}

// TestStatementBadPeriod wants each bad period refused naming its parameter.
func TestStatementBadPeriod(t *testing.T) {
	t.Parallel()
	env := credittest.New(t)
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
	env := credittest.New(t)
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
