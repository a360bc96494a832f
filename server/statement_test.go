package server_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
)

// The statement of account over REST (contract §17): the transport only. Its figures are
// tested in credit/.

func TestStatementOverREST(t *testing.T) {
	t.Parallel()
	f := newReadFixture(t)
	co := f.env.MustCompany(t, f.store, "Alpenblick Hotels AG", "25000.00", "NET_10")
	record := func(kind, amount, order string) {
		f.env.Clock.Advance(time.Hour)
		f.env.MustRecord(t, credit.LedgerEntryInput{CompanyID: co.ID, Kind: kind, Amount: amount, OrderGID: order})
	}
	record(credit.KindOpeningBalance, "20", "")
	f.env.Clock.Advance(24 * time.Hour) // 2026-03-03
	record(credit.KindOrderPlaced, "100", "gid://platform/Order/5001")
	record(credit.KindPayment, "-30", "")
	f.env.Clock.Set(time.Date(2026, 3, 20, 9, 0, 0, 0, time.UTC))

	r := f.get(t, "/v1/companies/"+co.ID+"/statement", "from", "2026-03-03", "to", "2026-03-20").WantStatus(t, 200)
	if ct := r.Header.Get("Content-Type"); ct != "application/json; charset=utf-8" {
		t.Errorf("Content-Type %q", ct)
	}
	var s credit.Statement
	r.Decode(t, &s)
	var inv credit.Page[credit.Invoice]
	f.get(t, "/v1/companies/"+co.ID+"/invoices").WantStatus(t, 200).Decode(t, &inv)
	mustJSONEqual(t, r.Body, fmt.Sprintf(`{
		"company": %s,
		"store": {"name": "Acme Wholesale", "currency": "EUR"},
		"from": "2026-03-03", "to": "2026-03-20",
		"opening_balance": {"amount": "20.00", "currency": "EUR"},
		"entries": %s,
		"closing_balance": {"amount": "90.00", "currency": "EUR"},
		"totals": {"invoiced": {"amount": "100.00", "currency": "EUR"}, "paid": {"amount": "-30.00", "currency": "EUR"},
			"credited": {"amount": "0.00", "currency": "EUR"}, "adjusted": {"amount": "0.00", "currency": "EUR"}},
		"open_invoices": [{"id": %q, "platform_order_gid": "gid://platform/Order/5001",
			"amount": {"amount": "100.00", "currency": "EUR"}, "open_amount": {"amount": "70.00", "currency": "EUR"},
			"issued_at": "2026-03-03T11:00:00.000000Z", "due_at": "2026-03-13T11:00:00.000000Z", "days_overdue": 7}],
		"aging": {"current": {"amount": "0.00", "currency": "EUR"}, "days_1_to_30": {"amount": "70.00", "currency": "EUR"},
			"days_31_to_60": {"amount": "0.00", "currency": "EUR"}, "days_61_to_90": {"amount": "0.00", "currency": "EUR"},
			"over_90": {"amount": "0.00", "currency": "EUR"}, "total": {"amount": "70.00", "currency": "EUR"}},
		"not_invoiced": {"amount": "20.00", "currency": "EUR"}}`,
		f.get(t, "/v1/companies/"+co.ID).WantStatus(t, 200).Body, asJSONText(t, s.Entries), inv.Data[0].ID))
	if len(s.Entries) != 2 || s.Entries[0].Kind != credit.KindOrderPlaced {
		t.Errorf("entries %+v, want the order and the payment", s.Entries)
	}

	path := "/v1/companies/" + co.ID + "/statement"
	for _, c := range []struct {
		pairs []string
		param string
	}{
		{[]string{"to", "2026-03-20"}, "from"},
		{[]string{"from", "2026-03-01"}, "to"},
		{[]string{"from", "3/1/2026", "to", "2026-03-20"}, "from"},
		{[]string{"from", "2026-03-01", "to", "2026-02-30"}, "to"},
		{[]string{"from", "2026-03-10", "to", "2026-03-09"}, "from"},
		{[]string{"from", "2026-03-01", "to", "2026-03-21"}, "to"},
		{[]string{"from", "2021-03-14", "to", "2026-03-20"}, "to"},
		{[]string{"from", "2026-03-01", "to", "2026-03-20", "format", "pdf"}, "format"},
	} {
		f.env.Get(t, f.key, credittest.WithQuery(path, c.pairs...)).WantError(t, 400, "invalid_parameter", c.param)
	}
	f.get(t, "/v1/companies/co_unknown/statement", "from", "2026-03-01", "to", "2026-03-20").WantError(t, 404, "not_found", "")
}

// asJSONText is v as JSON text.
func asJSONText(tb testing.TB, v any) string {
	tb.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}
