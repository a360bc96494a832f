package console_test

import (
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/creditd/creditd/console"
	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
)

// TestPaymentBehaviourShown checks the payment figures on the overview, the receivables page
// and a company's page (with each open invoice's expected payment date) against a history
// worked out by hand, and that a company's page costs the same statements whatever the number
// of invoices it paid.
func TestPaymentBehaviourShown(t *testing.T) {
	e := newConsole(t)
	day := 24 * time.Hour
	store := e.MustStore(t, "Payers", "EUR")
	e.MustStaff(t, store, "Pat Payer", "pat@example.com", password)
	co := e.MustCompany(t, store, "Payer", "100000").ID
	t0 := e.MustPaymentHistory(t, co)

	b := e.browser(t)
	b.mustSignIn("pat@example.com", password)
	// To pay (100 × 20 + 300 × 40)/400 = 35.0; beyond terms (−1000 + 3000)/400 = 5.0; on time
	// 100/400; DSO: 200 open, issued on day 5 back: 4 + 200/200. Two paid: no rating.
	// Expected payment: due + 5.0 days.
	expected := t0.Add(80 * day).Format(time.DateOnly)
	b.get("/companies/"+co).wantStatus(t, 200).wantText(t, `id="behaviour-to-pay">35.0 days<`, `id="behaviour-beyond-terms">5.0 days<`,
		`id="behaviour-on-time">25.0 %<`, `id="behaviour-dso">5.0 days<`, `id="behaviour-rating"`, "none yet", `id="behaviour-overdue">none<`,
		`<td class="when expected-payment"><span title="`+expected)
	b.get("/receivables").wantStatus(t, 200).wantText(t, `id="store-dso">5.0 days<`, `id="store-beyond-terms">5.0 days<`, `id="store-on-time">25.0 %<`)
	b.get("/").wantStatus(t, 200).wantText(t, `id="store-dso">5.0 days<`)

	// Statements of a company's page: the same for a company that paid 2 invoices as for one
	// that paid 40.
	var n int
	svc := e.Hooked(credittest.SQLHooks{Statement: func(string) error { n++; return nil }})
	ts := httptest.NewServer(console.New(console.Config{Service: svc, Logger: slog.New(slog.NewJSONHandler(io.Discard, nil)), Now: e.Clock.Now}))
	t.Cleanup(ts.Close)
	many := e.MustCompany(t, store, "Many", "1000000").ID
	for i := range 40 {
		e.MustOrderEntry(t, many, credit.KindOrderPlaced, "10", fmt.Sprint(100+i))
		e.MustOrderEntry(t, many, credit.KindPayment, "-10", fmt.Sprint(100+i))
	}
	e.MustOrderEntry(t, many, credit.KindOrderPlaced, "10", "999")
	counted := e.browser(t)
	counted.base = ts.URL
	counted.mustSignIn("pat@example.com", password)
	count := func(id string) int {
		counted.get("/companies/" + id) // warm: the session and the store are read once
		n = 0
		counted.get("/companies/"+id).wantStatus(t, 200)
		return n
	}
	if few, lots := count(co), count(many); few != lots {
		t.Errorf("a company's page: %d statements for 2 invoices paid, %d for 40", few, lots)
	} else {
		t.Logf("a company's page: %d statements", lots)
	}
}
