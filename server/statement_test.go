package server_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
	"github.com/creditd/creditd/server"
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

// TestStatementPDFOverREST asks for the same statement as JSON and as a PDF and wants the
// PDF's text (pdftotext) to carry every figure of the JSON, in the store's locale (here "de":
// 12.345,67), with "Page N of M" on every page; another Accept is 406 not_acceptable.
func TestStatementPDFOverREST(t *testing.T) {
	t.Parallel()
	env := credittest.New(t, credittest.Options{ServerConfig: func(c *server.Config) { c.RateLimit = 1_000_000 }})
	st, err := env.Service.Stores.Create(credittest.Admin(), "Weingut Müller", "EUR", credit.DefaultBufferPercent, "de")
	if err != nil {
		t.Fatal(err)
	}
	key := env.MustKey(t, st.ID, "erp", credit.ScopeReadCredit)
	co := env.MustCompany(t, st.ID, "Gasthof Zur Post", "900000", "NET_14")
	env.MustRecord(t, credit.LedgerEntryInput{CompanyID: co.ID, Kind: credit.KindOpeningBalance, Amount: "1250.40"})
	for i := 0; i < 90; i++ {
		env.Clock.Advance(7 * time.Hour)
		if i%3 == 2 {
			env.MustRecord(t, credit.LedgerEntryInput{CompanyID: co.ID, Kind: credit.KindPayment, Amount: fmt.Sprintf("-%d.10", 900+i), Note: "bank transfer"})
			continue
		}
		env.MustRecord(t, credit.LedgerEntryInput{CompanyID: co.ID, Kind: credit.KindOrderPlaced, Amount: fmt.Sprintf("%d.67", 12000+i*37), OrderGID: fmt.Sprintf("gid://platform/Order/%d", 7000+i)})
	}
	env.Clock.Advance(20 * 24 * time.Hour)
	path := credittest.WithQuery("/v1/companies/"+co.ID+"/statement", "from", "2026-03-02", "to", env.Clock.Now().UTC().Format(time.DateOnly))
	var s credit.Statement
	env.Get(t, key, path).WantStatus(t, 200).Decode(t, &s)

	get := func(accept string) *credittest.Response {
		return env.Do(t, credittest.Request{Method: "GET", Path: path, Key: key, Header: map[string]string{"Accept": accept}})
	}
	r := get("application/pdf").WantStatus(t, 200)
	if ct := r.Header.Get("Content-Type"); ct != "application/pdf" || !strings.HasPrefix(string(r.Body), "%PDF-") {
		t.Fatalf("Content-Type %q, body %.20q", ct, r.Body)
	}
	if again := get("application/pdf").Body; !bytes.Equal(again, r.Body) {
		t.Error("the same statement gave two different PDFs")
	}
	text := credittest.PDFText(t, r.Body)
	money := func(m credit.Money) string { return credit.FormatLocalAmount(m, "de") }
	want := []string{"Weingut Müller", "Gasthof Zur Post", "gid://platform/Company/42", co.ID, s.From, s.To,
		money(s.OpeningBalance), money(s.ClosingBalance), money(s.Totals.Invoiced), money(s.Totals.Paid),
		money(s.Totals.Credited), money(s.Totals.Adjusted), money(s.Aging.Current), money(s.Aging.Days1To30),
		money(s.Aging.Days31To60), money(s.Aging.Total), money(s.NotInvoiced)}
	for _, e := range s.Entries {
		want = append(want, money(e.Amount), money(e.BalanceAfter))
	}
	for _, inv := range s.OpenInvoices {
		want = append(want, inv.PlatformOrderGID, money(inv.OpenAmount))
	}
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Errorf("the PDF's text lacks %q", w)
		}
	}
	if len(s.OpenInvoices) == 0 || s.Aging.Total.Amount == "0.00" || !strings.Contains(money(s.ClosingBalance), ".") {
		t.Fatalf("the seed should leave large open invoices: %+v", s.Aging)
	}
	pages := strings.Count(text, "\f")
	if pages < 2 {
		t.Fatalf("%d pages, want the entries over several", pages)
	}
	for n := 1; n <= pages; n++ {
		if !strings.Contains(text, fmt.Sprintf("Page %d of %d", n, pages)) {
			t.Errorf("no \"Page %d of %d\"", n, pages)
		}
	}
	// Every entry's running balance, in order, as the JSON has them.
	last := -1
	for _, e := range s.Entries {
		i := strings.Index(text[last+1:], money(e.BalanceAfter))
		if i < 0 {
			t.Fatalf("balance %s of %s not after the previous one", money(e.BalanceAfter), e.ID)
		}
		last += 1 + i
	}

	for _, c := range []struct{ accept, media string }{
		{"*/*", "application/json"},
		{"application/*", "application/json"},
		{"application/json, application/pdf;q=0.5", "application/json"},
		{"application/pdf, */*;q=0.1", "application/pdf"},
		{"text/html, application/pdf;q=0.9", "application/pdf"},
	} {
		if ct := get(c.accept).WantStatus(t, 200).Header.Get("Content-Type"); !strings.HasPrefix(ct, c.media) {
			t.Errorf("Accept %q: %s, want %s", c.accept, ct, c.media)
		}
	}
	for _, accept := range []string{"text/csv", "text/*", "application/json;q=0, application/pdf;q=0", "image/png, text/html"} {
		get(accept).WantError(t, 406, "not_acceptable", "")
	}
}
