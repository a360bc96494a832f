package credit_test

import (
	"testing"

	"github.com/creditd/creditd/credit"
)

// TestOverviewHistoryByOccurrence: the overview's outstanding history places each entry on the
// day it occurred, not the day it was recorded: an order recorded today but back-dated ten days
// counts from ten days ago, and a day before it shows nothing.
func TestOverviewHistoryByOccurrence(t *testing.T) {
	t.Parallel()
	env := newRuleEnv(t, "EUR")
	co := env.MustCompany(t, env.store, "Buyer", "1000.00", "NET_30")
	back := credit.At(env.Clock.Now().Add(-10 * day))
	order := orderEntry(co.ID, 1, "100.00")
	order.OccurredAt = &back
	env.MustRecord(t, order)
	env.MustRecord(t, orderEntry(co.ID, 2, "50.00"))

	ov, err := env.Service.Reports.Overview(env.staff)
	if err != nil {
		t.Fatal(err)
	}
	h := ov.History
	if len(h) != credit.OverviewDays {
		t.Fatalf("%d days of history, want %d", len(h), credit.OverviewDays)
	}
	for i, want := range map[int]string{len(h) - 1: "150", len(h) - 2: "100", len(h) - 10: "100", len(h) - 11: "100", len(h) - 12: "0"} {
		if got := h[i].Outstanding.String(); got != want {
			t.Errorf("outstanding at the end of %s: %s, want %s", h[i].Day.Format("2006-01-02"), got, want)
		}
	}
}
