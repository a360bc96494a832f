package server_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
)

// writeFixture is a store with a company and keys of each kind.
type writeFixture struct {
	env     *credittest.Env
	storeID string
	company credit.Company
	full    string // read_credit + write_credit
	read    string // read_credit only
}

func newWriteFixture(t *testing.T) *writeFixture {
	t.Helper()
	env := credittest.New(t)
	st := env.MustStore(t, "Acme", "EUR")
	return &writeFixture{
		env:     env,
		storeID: st,
		company: env.MustCompany(t, st, "Buyer GmbH", "1000.00"),
		full:    env.MustKey(t, st, "ERP sync", credit.ScopeReadCredit, credit.ScopeWriteCredit),
		read:    env.MustKey(t, st, "dashboard", credit.ScopeReadCredit),
	}
}

// ledgerCount counts the company's ledger entries through the API.
func (f *writeFixture) ledgerCount(t *testing.T) int {
	t.Helper()
	r := f.env.Get(t, f.full, "/v1/companies/"+f.company.ID+"/ledger?limit=250")
	if r.Status != http.StatusOK {
		t.Fatalf("ledger: %d %s", r.Status, r.Body)
	}
	var page credit.Page[credit.LedgerEntry]
	r.Decode(t, &page)
	return len(page.Data)
}

// timeline returns what the writes under test added to the company's timeline.
func (f *writeFixture) timeline(t *testing.T) []credit.TimelineEvent {
	t.Helper()
	return f.env.WritesOnTimeline(t, f.company.ID)
}

func (f *writeFixture) companyNow(t *testing.T) credit.Company {
	t.Helper()
	var c credit.Company
	r := f.env.Get(t, f.full, "/v1/companies/"+f.company.ID)
	if r.Status != http.StatusOK {
		t.Fatalf("company: %d %s", r.Status, r.Body)
	}
	r.Decode(t, &c)
	return c
}

func TestAdjustmentSuccess(t *testing.T) {
	f := newWriteFixture(t)
	before := f.companyNow(t)
	f.env.Clock.Advance(1500) // a later updated_at
	r := f.env.Do(t, credittest.Request{Method: "POST", Path: "/v1/companies/" + f.company.ID + "/adjustments", Key: f.full,
		Body: `{"amount":"-12.50","note":"goodwill credit","currency":"EUR"}`})
	if r.Status != http.StatusCreated {
		t.Fatalf("status %d: %s", r.Status, r.Body)
	}
	var res credit.AdjustmentResult
	r.Decode(t, &res)
	if res.LedgerEntry.Kind != "adjustment" || res.LedgerEntry.Amount != (credit.Money{Amount: "-12.50", Currency: "EUR"}) ||
		res.LedgerEntry.Note == nil || *res.LedgerEntry.Note != "goodwill credit" || res.LedgerEntry.PlatformOrderGID != nil {
		t.Fatalf("ledger entry: %+v", res.LedgerEntry)
	}
	if !strings.HasPrefix(res.LedgerEntry.ID, "le_") {
		t.Fatalf("entry id %q", res.LedgerEntry.ID)
	}
	// 1000 limit, 5% buffer (50), outstanding -12.50 → available 962.50.
	if res.Company.Outstanding.Amount != "-12.50" || res.Company.AvailableCredit.Amount != "962.50" {
		t.Fatalf("company after adjustment: %+v", res.Company)
	}
	if !res.Company.UpdatedAt.After(before.UpdatedAt.Time) {
		t.Fatalf("updated_at did not move: %v -> %v", before.UpdatedAt, res.Company.UpdatedAt)
	}
	if got := f.companyNow(t); got.Outstanding.Amount != "-12.50" {
		t.Fatalf("outstanding not persisted: %+v", got)
	}
	ev := f.timeline(t)
	if len(ev) != 1 || ev[0].Type != credit.TimelineAdjustmentCreated || ev[0].Actor != (credit.Actor{Type: "api_key", Label: "ERP sync"}) ||
		ev[0].Data["ledger_entry_id"] != res.LedgerEntry.ID {
		t.Fatalf("timeline: %+v", ev)
	}
}

func TestAdjustmentValidation(t *testing.T) {
	f := newWriteFixture(t)
	path := "/v1/companies/" + f.company.ID + "/adjustments"
	long := strings.Repeat("x", 501)
	cases := []struct {
		name   string
		body   string
		header map[string]string
		status int
		code   string
		param  string
	}{
		{"zero", `{"amount":"0","note":"n"}`, nil, 422, "invalid_amount", "amount"},
		{"zero with decimals", `{"amount":"-0.00","note":"n"}`, nil, 422, "invalid_amount", "amount"},
		{"json number", `{"amount":12.5,"note":"n"}`, nil, 422, "invalid_amount", "amount"},
		{"json integer", `{"amount":-3,"note":"n"}`, nil, 422, "invalid_amount", "amount"},
		{"exponent", `{"amount":"1e3","note":"n"}`, nil, 422, "invalid_amount", "amount"},
		{"plus sign", `{"amount":"+5.00","note":"n"}`, nil, 422, "invalid_amount", "amount"},
		{"spaces", `{"amount":" 5.00","note":"n"}`, nil, 422, "invalid_amount", "amount"},
		{"trailing dot", `{"amount":"5.","note":"n"}`, nil, 422, "invalid_amount", "amount"},
		{"too many decimals", `{"amount":"1.001","note":"n"}`, nil, 422, "invalid_amount", "amount"},
		{"16 integer digits", `{"amount":"1234567890123456","note":"n"}`, nil, 422, "invalid_amount", "amount"},
		{"wrong currency", `{"amount":"5.00","note":"n","currency":"USD"}`, nil, 422, "currency_mismatch", "currency"},
		{"missing amount", `{"note":"n"}`, nil, 422, "validation_failed", "amount"},
		{"null amount", `{"amount":null,"note":"n"}`, nil, 422, "validation_failed", "amount"},
		{"missing note", `{"amount":"5.00"}`, nil, 422, "validation_failed", "note"},
		{"empty note", `{"amount":"5.00","note":""}`, nil, 422, "validation_failed", "note"},
		{"blank note", `{"amount":"5.00","note":"   "}`, nil, 422, "validation_failed", "note"},
		{"long note", `{"amount":"5.00","note":"` + long + `"}`, nil, 422, "validation_failed", "note"},
		{"unknown field", `{"amount":"5.00","note":"n","memo":"x"}`, nil, 400, "invalid_request", "memo"},
		{"duplicated field", `{"amount":"5.00","note":"n","amount":"6.00"}`, nil, 400, "invalid_request", "amount"},
		{"case-folded field", `{"Amount":"5.00","note":"n"}`, nil, 400, "invalid_request", "Amount"},
		{"note not a string", `{"amount":"5.00","note":7}`, nil, 400, "invalid_request", "note"},
		{"amount is an object", `{"amount":{"v":"5"},"note":"n"}`, nil, 400, "invalid_request", "amount"},
		{"malformed json", `{"amount":"5.00",`, nil, 400, "invalid_request", ""},
		{"array body", `["amount"]`, nil, 400, "invalid_request", ""},
		{"two objects", `{"amount":"5.00","note":"n"}{}`, nil, 400, "invalid_request", ""},
		{"empty body", ``, nil, 422, "validation_failed", "amount"},
		// Contract §1 (amended 2026-11-28): an empty body is {} whatever its Content-Type.
		{"empty body that says it is JSON", ``, map[string]string{"Content-Type": "application/json"}, 422, "validation_failed", "amount"},
		{"blank body that says it is JSON", "  \n", map[string]string{"Content-Type": "application/json"}, 422, "validation_failed", "amount"},
		{"empty body of another media type", ``, map[string]string{"Content-Type": "text/plain"}, 422, "validation_failed", "amount"},
		{"empty amount", `{"amount":"","note":"n"}`, nil, 422, "validation_failed", "amount"},
		{"blank amount", `{"amount":"  ","note":"n"}`, nil, 422, "validation_failed", "amount"},
		{"latin1 charset", `{"amount":"5.00","note":"n"}`, map[string]string{"Content-Type": "application/json; charset=latin1"}, 415, "unsupported_media_type", ""},
		{"text content type", `{"amount":"5.00","note":"n"}`, map[string]string{"Content-Type": "text/plain"}, 415, "unsupported_media_type", ""},
		{"too large", `{"amount":"5.00","note":"` + strings.Repeat("y", 70000) + `"}`, nil, 413, "request_too_large", ""},
		{"bad idempotency key", `{"amount":"5.00","note":"n"}`, map[string]string{"Idempotency-Key": strings.Repeat("k", 256)}, 400, "invalid_request", "Idempotency-Key"},
		{"non-ascii idempotency key", `{"amount":"5.00","note":"n"}`, map[string]string{"Idempotency-Key": "clé"}, 400, "invalid_request", "Idempotency-Key"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := f.env.Do(t, credittest.Request{Method: "POST", Path: path, Key: f.full, Body: tc.body, Header: tc.header})
			if r.Status != tc.status || r.ErrorCode() != tc.code {
				t.Fatalf("got %d %s, want %d %s: %s", r.Status, r.ErrorCode(), tc.status, tc.code, r.Body)
			}
			var e struct {
				Error struct{ Param, Message string } `json:"error"`
			}
			r.Decode(t, &e)
			if e.Error.Param != tc.param || e.Error.Message == "" {
				t.Fatalf("param %q (want %q), message %q", e.Error.Param, tc.param, e.Error.Message)
			}
		})
	}
	if n := f.ledgerCount(t); n != 0 {
		t.Fatalf("bad input wrote %d ledger entries", n)
	}
	if ev := f.timeline(t); len(ev) != 0 {
		t.Fatalf("bad input wrote timeline events: %+v", ev)
	}
	if c := f.companyNow(t); c.Outstanding.Amount != "0.00" {
		t.Fatalf("bad input moved the balance: %+v", c)
	}
}

func TestWriteCurrencyDigits(t *testing.T) {
	env := credittest.New(t)
	for _, tc := range []struct{ cur, ok, tooPrecise, shown string }{
		{"JPY", "1500", "1500.5", "1500"},
		{"KWD", "12.345", "12.3456", "12.345"},
		{"EUR", "12.3", "12.345", "12.30"},
	} {
		st := env.MustStore(t, "s-"+tc.cur, tc.cur)
		key := env.MustKey(t, st, "k", credit.ScopeReadCredit, credit.ScopeWriteCredit)
		co := env.MustCompany(t, st, "c", "0")
		path := "/v1/companies/" + co.ID + "/adjustments"
		if r := env.Do(t, credittest.Request{Method: "POST", Path: path, Key: key, Body: `{"amount":"` + tc.tooPrecise + `","note":"n"}`}); r.ErrorCode() != "invalid_amount" {
			t.Fatalf("%s: %s accepted: %d %s", tc.cur, tc.tooPrecise, r.Status, r.Body)
		}
		r := env.Do(t, credittest.Request{Method: "POST", Path: path, Key: key, Body: `{"amount":"` + tc.ok + `","note":"n"}`})
		var res credit.AdjustmentResult
		r.Decode(t, &res)
		if r.Status != 201 || res.LedgerEntry.Amount.Amount != tc.shown || res.Company.Outstanding.Currency != tc.cur {
			t.Fatalf("%s: %d %s", tc.cur, r.Status, r.Body)
		}
	}
}

func TestWriteScopesAndForeignCompany(t *testing.T) {
	f := newWriteFixture(t)
	other := f.env.MustStore(t, "Other", "EUR")
	foreign := f.env.MustCompany(t, other, "Theirs", "500.00")
	writes := []struct{ method, suffix, body string }{
		{"POST", "/adjustments", `{"amount":"5.00","note":"n"}`},
		{"PUT", "/credit-limit", `{"amount":"5.00"}`},
		{"POST", "/hold", `{"note":"n"}`},
		{"DELETE", "/hold", ``},
	}
	for _, w := range writes {
		r := f.env.Do(t, credittest.Request{Method: w.method, Path: "/v1/companies/" + f.company.ID + w.suffix, Key: f.read, Body: w.body})
		if r.Status != 403 || r.ErrorCode() != "insufficient_scope" || !strings.Contains(string(r.Body), "write_credit") {
			t.Fatalf("%s %s with read key: %d %s", w.method, w.suffix, r.Status, r.Body)
		}
		unknown := f.env.Do(t, credittest.Request{Method: w.method, Path: "/v1/companies/co_doesnotexist0000000000" + w.suffix, Key: f.full, Body: w.body})
		theirs := f.env.Do(t, credittest.Request{Method: w.method, Path: "/v1/companies/" + foreign.ID + w.suffix, Key: f.full, Body: w.body})
		if unknown.Status != 404 || theirs.Status != 404 || unknown.ErrorCode() != "not_found" || string(unknown.Body) != string(theirs.Body) {
			t.Fatalf("%s %s: unknown %d %s / foreign %d %s", w.method, w.suffix, unknown.Status, unknown.Body, theirs.Status, theirs.Body)
		}
	}
	r := f.env.Get(t, f.env.MustKey(t, other, "theirs", credit.ScopeReadCredit), "/v1/companies/"+foreign.ID)
	var c credit.Company
	r.Decode(t, &c)
	if c.Outstanding.Amount != "0.00" || c.CreditLimit.Amount != "500.00" || c.Hold != nil {
		t.Fatalf("a foreign write changed another store's company: %s", r.Body)
	}
}

func TestCreditLimit(t *testing.T) {
	f := newWriteFixture(t)
	path := "/v1/companies/" + f.company.ID + "/credit-limit"
	for _, tc := range []struct {
		body   string
		status int
		code   string
	}{
		{`{"amount":"-0.01"}`, 422, "limit_below_zero"},
		{`{"amount":"-100","reason":"r"}`, 422, "limit_below_zero"},
		{`{}`, 422, "validation_failed"},
		{`{"amount":"10","reason":""}`, 422, "validation_failed"},
		{`{"amount":"10","reason":"` + strings.Repeat("r", 501) + `"}`, 422, "validation_failed"},
		{`{"amount":10}`, 422, "invalid_amount"},
		{`{"amount":"10","currency":"GBP"}`, 422, "currency_mismatch"},
		{`{"amount":"10","limit":"x"}`, 400, "invalid_request"},
	} {
		r := f.env.Do(t, credittest.Request{Method: "PUT", Path: path, Key: f.full, Body: tc.body})
		if r.Status != tc.status || r.ErrorCode() != tc.code {
			t.Fatalf("%s: got %d %s", tc.body, r.Status, r.Body)
		}
		if tc.code == "limit_below_zero" && !strings.Contains(string(r.Body), "credit limit must be zero or greater") {
			t.Fatalf("limit_below_zero message: %s", r.Body)
		}
	}
	if ev := f.timeline(t); len(ev) != 0 {
		t.Fatalf("refused limit changes wrote events: %+v", ev)
	}
	r := f.env.Do(t, credittest.Request{Method: "PUT", Path: path, Key: f.full, Body: `{"amount":"2500","reason":"annual review"}`})
	var res credit.CreditLimitResult
	r.Decode(t, &res)
	if r.Status != 200 || res.PreviousCreditLimit.Amount != "1000.00" || res.Company.CreditLimit.Amount != "2500.00" || res.Company.AvailableCredit.Amount != "2375.00" {
		t.Fatalf("limit change: %d %s", r.Status, r.Body)
	}
	r = f.env.Do(t, credittest.Request{Method: "PUT", Path: path, Key: f.full, Body: `{"amount":"0"}`})
	if r.Status != 200 || !strings.Contains(string(r.Body), `"previous_credit_limit":{"amount":"2500.00"`) {
		t.Fatalf("zero limit: %d %s", r.Status, r.Body)
	}
	ev := f.timeline(t)
	if len(ev) != 2 || ev[0].Type != credit.TimelineCreditLimitChanged || ev[1].Data["reason"] != "annual review" || ev[0].Data["reason"] != nil {
		t.Fatalf("timeline: %+v", ev)
	}
}

func TestManualHold(t *testing.T) {
	f := newWriteFixture(t)
	path := "/v1/companies/" + f.company.ID + "/hold"
	if r := f.env.Do(t, credittest.Request{Method: "DELETE", Path: path, Key: f.full}); r.Status != 404 || r.ErrorCode() != "hold_not_found" {
		t.Fatalf("lift without hold: %d %s", r.Status, r.Body)
	}
	if r := f.env.Do(t, credittest.Request{Method: "POST", Path: path, Key: f.full, Body: `{"note":"` + strings.Repeat("n", 501) + `"}`}); r.ErrorCode() != "validation_failed" {
		t.Fatalf("long hold note: %d %s", r.Status, r.Body)
	}
	r := f.env.Do(t, credittest.Request{Method: "POST", Path: path, Key: f.full, Body: `{"note":"payment dispute"}`})
	var res credit.CompanyResult
	r.Decode(t, &res)
	h := res.Company.Hold
	if r.Status != 200 || res.Company.Status != "on_hold" || h == nil || h.Kind != "manual" || h.PlacedBy != "ERP sync" ||
		h.Note == nil || *h.Note != "payment dispute" || h.PlatformOrderGID != nil || h.DueAt != nil || !h.PlacedAt.Equal(f.env.Clock.Now()) {
		t.Fatalf("place hold: %d %s", r.Status, r.Body)
	}
	if r := f.env.Do(t, credittest.Request{Method: "POST", Path: path, Key: f.full}); r.Status != 409 || r.ErrorCode() != "hold_exists" {
		t.Fatalf("second hold: %d %s", r.Status, r.Body)
	}
	list := f.env.Get(t, f.read, "/v1/companies?status=on_hold")
	if !strings.Contains(string(list.Body), f.company.ID) {
		t.Fatalf("on_hold filter misses the company: %s", list.Body)
	}
	r = f.env.Do(t, credittest.Request{Method: "DELETE", Path: path, Key: f.full})
	r.Decode(t, &res)
	if r.Status != 200 || res.Company.Hold != nil || res.Company.Status != "approved" {
		t.Fatalf("lift: %d %s", r.Status, r.Body)
	}
	// A hold without a body or note is fine too, and so is an empty body that says it is JSON,
	// as many HTTP clients send on every request (contract §1, amended 2026-11-28).
	if r := f.env.Do(t, credittest.Request{Method: "POST", Path: path, Key: f.full}); r.Status != 200 || !strings.Contains(string(r.Body), `"note":null`) {
		t.Fatalf("hold without body: %d %s", r.Status, r.Body)
	}
	jsonType := map[string]string{"Content-Type": "application/json"}
	if r := f.env.Do(t, credittest.Request{Method: "DELETE", Path: path, Key: f.full, Header: jsonType}); r.Status != 200 || !strings.Contains(string(r.Body), `"hold":null`) {
		t.Fatalf("lift with an empty JSON body: %d %s", r.Status, r.Body)
	}
	if r := f.env.Do(t, credittest.Request{Method: "POST", Path: path, Key: f.full, Header: jsonType}); r.Status != 200 || !strings.Contains(string(r.Body), `"note":null`) {
		t.Fatalf("hold with an empty JSON body: %d %s", r.Status, r.Body)
	}
	ev := f.timeline(t)
	if len(ev) != 5 || ev[4].Type != credit.TimelineHoldPlaced || ev[3].Type != credit.TimelineHoldLifted || ev[2].Type != credit.TimelineHoldPlaced ||
		ev[1].Type != credit.TimelineHoldLifted || ev[0].Type != credit.TimelineHoldPlaced {
		t.Fatalf("timeline: %+v", ev)
	}
	for _, e := range ev {
		if e.Actor.Type != "api_key" || e.Actor.Label != "ERP sync" {
			t.Fatalf("attribution: %+v", e)
		}
	}
}

// TestAmountAsNumberAfterCompanyLookup keeps the validation order: an unknown company is
// 404 whatever the body's amount looks like; a known one refuses a JSON number with 422.
func TestAmountAsNumberAfterCompanyLookup(t *testing.T) {
	f := newWriteFixture(t)
	for _, w := range []struct{ method, suffix string }{{"POST", "/adjustments"}, {"PUT", "/credit-limit"}} {
		body := `{"amount":5,"note":"n"}`
		if w.method == "PUT" {
			body = `{"amount":5}`
		}
		r := f.env.Do(t, credittest.Request{Method: w.method, Path: "/v1/companies/co_doesnotexist0000000000" + w.suffix, Key: f.full, Body: body})
		if r.Status != 404 {
			t.Fatalf("%s unknown company: %d %s", w.suffix, r.Status, r.Body)
		}
		r = f.env.Do(t, credittest.Request{Method: w.method, Path: "/v1/companies/" + f.company.ID + w.suffix, Key: f.full, Body: body})
		if r.Status != 422 || r.ErrorCode() != "invalid_amount" {
			t.Fatalf("%s known company: %d %s", w.suffix, r.Status, r.Body)
		}
	}
}

const day = 24 * time.Hour

func order(companyID, gid, amount string) credit.LedgerEntryInput {
	return credit.LedgerEntryInput{CompanyID: companyID, Kind: credit.KindOrderPlaced, Amount: amount, OrderGID: gid}
}

// TestOverdueHoldRefusalsOverHTTP: the overdue hold's refusals reach an ERP with their status
// and code (the rules themselves are credit's TestOverdueHoldLifecycle): lifting it is 409
// hold_not_liftable, a manual hold over it 409 hold_exists.
func TestOverdueHoldRefusalsOverHTTP(t *testing.T) {
	f := newWriteFixture(t)
	old := credit.At(f.env.Clock.Now().Add(-45 * day))
	in := order(f.company.ID, "gid://platform/Order/1", "400.00")
	in.OccurredAt = &old
	f.env.MustRecord(t, in)
	path := "/v1/companies/" + f.company.ID + "/hold"
	if r := f.env.Do(t, credittest.Request{Method: "DELETE", Path: path, Key: f.full}); r.Status != http.StatusConflict || r.ErrorCode() != "hold_not_liftable" {
		t.Fatalf("lift the overdue hold: %d %s", r.Status, r.Body)
	}
	if r := f.env.Do(t, credittest.Request{Method: "POST", Path: path, Key: f.full}); r.Status != http.StatusConflict || r.ErrorCode() != "hold_exists" {
		t.Fatalf("a manual hold over the overdue one: %d %s", r.Status, r.Body)
	}
}
