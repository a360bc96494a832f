package server_test

import (
	"strings"
	"testing"
	"time"

	"github.com/creditd/creditd/credit"
)

// TestPaymentBehaviourOverREST is the transport of GET /v1/companies/{id}/payment-behaviour:
// the figures (computed and tested in credit/), days as JSON numbers, window_days refused out
// of range, an unknown company 404.
func TestPaymentBehaviourOverREST(t *testing.T) {
	t.Parallel()
	f := newReadFixture(t)
	co := f.env.MustCompany(t, f.store, "Alpenblick Hotels AG", "25000.00")
	record := func(kind, amount, order string) {
		f.env.Clock.Advance(time.Second)
		f.env.MustRecord(t, credit.LedgerEntryInput{CompanyID: co.ID, Kind: kind, Amount: amount, OrderGID: order})
	}
	record(credit.KindOrderPlaced, "100", "gid://platform/Order/5001")
	record(credit.KindOrderPlaced, "40", "gid://platform/Order/5002")
	record(credit.KindOrderPlaced, "10", "gid://platform/Order/5003")
	record(credit.KindPayment, "-100", "gid://platform/Order/5001")
	record(credit.KindCancellation, "-10", "gid://platform/Order/5003")
	f.env.Clock.Set(time.Date(2026, 4, 3, 9, 0, 0, 0, time.UTC)) // 5002 fell due on 1 April at 09:00:02

	// 5001 paid 3 seconds after issue, 30 days less 3 seconds early; 5002's 40 open, 2 days
	// overdue, issued 32 days less 2 seconds ago (day 32 back): DSO 31 + 40/40; one paid and
	// something overdue: rated by its 2 days, B.
	res := f.get(t, "/v1/companies/"+co.ID+"/payment-behaviour").WantStatus(t, 200)
	mustJSONEqual(t, res.Body, `{
		"as_of": "2026-04-03T09:00:00.000000Z", "window_days": 365, "invoices_paid": 1,
		"average_days_to_pay": 0.0, "average_days_beyond_terms": -30.0, "paid_on_time_share": "1.000",
		"open_overdue": {"count": 1, "amount": {"amount": "40.00", "currency": "EUR"}, "oldest_days_overdue": 2},
		"dso_days": 32.0, "rating": "B"}`)
	if !strings.Contains(string(res.Body), `"average_days_beyond_terms":-30.0`) {
		t.Errorf("days with one decimal: %s", res.Body)
	}
	f.get(t, "/v1/companies/"+co.ID+"/payment-behaviour", "window_days", "1").WantStatus(t, 200)
	for _, bad := range []string{"0", "1826", "x", ""} {
		f.get(t, "/v1/companies/"+co.ID+"/payment-behaviour", "window_days", bad).WantError(t, 400, "invalid_parameter", "window_days")
	}
	f.get(t, "/v1/companies/co_unknown/payment-behaviour").WantError(t, 404, "not_found", "")
}
