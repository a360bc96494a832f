package server_test

import (
	"testing"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
)

// The invoice writes over REST (contract §17): the transport of each route, one test each.
// The rules (dates, lengths, settled invoices, events, timeline) are tested in credit/.

// invoiceWriteFixture is a store with a writing key and one open invoice.
type invoiceWriteFixture struct {
	env     *credittest.Env
	key     string
	invoice string
}

func newInvoiceWriteFixture(t *testing.T) invoiceWriteFixture {
	t.Helper()
	f := newReadFixture(t)
	co := f.env.MustCompany(t, f.store, "Alpenblick Hotels AG", "25000.00")
	f.env.MustRecord(t, credit.LedgerEntryInput{CompanyID: co.ID, Kind: credit.KindOrderPlaced, Amount: "40", OrderGID: "gid://platform/Order/5002"})
	invoices, err := f.env.Service.Invoices.List(credittest.Staff(f.store), co.ID, credit.InvoiceListParams{})
	if err != nil || len(invoices.Data) != 1 {
		t.Fatalf("invoices: %v %v", invoices, err)
	}
	key := f.env.MustKey(t, f.store, "ERP sync", credit.ScopeReadCredit, credit.ScopeWriteCredit)
	return invoiceWriteFixture{env: f.env, key: key, invoice: invoices.Data[0].ID}
}

func (f invoiceWriteFixture) do(t *testing.T, method, what string, body any, headers ...string) *credittest.Response {
	t.Helper()
	req := credittest.Request{Method: method, Path: "/v1/invoices/" + f.invoice + "/" + what, Key: f.key, Body: body}
	if len(headers) == 2 {
		req.Header = map[string]string{headers[0]: headers[1]}
	}
	return f.env.Do(t, req)
}

func TestRecordPromiseOverREST(t *testing.T) {
	t.Parallel()
	f := newInvoiceWriteFixture(t)
	body := map[string]any{"promised_for": "2026-03-20", "note": "after the fair"}
	var res credit.InvoiceResult
	first := f.do(t, "POST", "promise", body, "Idempotency-Key", "promise-1").WantStatus(t, 200)
	first.Decode(t, &res)
	if p := res.Invoice.Promise; res.Invoice.ID != f.invoice || p == nil || p.PromisedFor != "2026-03-20" || p.RecordedBy != "ERP sync" {
		t.Fatalf("promise: %s", first.Body)
	}
	again := f.do(t, "POST", "promise", body, "Idempotency-Key", "promise-1").WantStatus(t, 200)
	if again.Header.Get("Idempotent-Replayed") != "true" || string(again.Body) != string(first.Body) {
		t.Errorf("a retry: %v %s", again.Header, again.Body)
	}
	f.do(t, "POST", "promise", map[string]any{"promised_for": "2026-03-01"}).WantError(t, 422, "validation_failed", "promised_for")
	f.do(t, "POST", "promise", map[string]any{}).WantError(t, 422, "validation_failed", "promised_for")
	f.do(t, "POST", "promise", map[string]any{"promised_for": 20260320}).WantError(t, 400, "invalid_request", "promised_for")
	f.do(t, "POST", "promise", map[string]any{"promised_for": "2026-03-20", "when": "soon"}).WantError(t, 400, "invalid_request", "when")
}

func TestWithdrawPromiseOverREST(t *testing.T) {
	t.Parallel()
	f := newInvoiceWriteFixture(t)
	f.do(t, "POST", "promise", map[string]any{"promised_for": "2026-03-20"}).WantStatus(t, 200)
	var res credit.InvoiceResult
	// No body, or an empty one with Content-Type: application/json (contract §1, amended).
	f.do(t, "DELETE", "promise", nil).WantStatus(t, 200).Decode(t, &res)
	if res.Invoice.Promise != nil {
		t.Errorf("promise after withdrawing: %+v", res.Invoice.Promise)
	}
	f.do(t, "DELETE", "promise", "", "Content-Type", "application/json").WantStatus(t, 200)
	f.do(t, "DELETE", "promise", map[string]any{"now": true}).WantError(t, 400, "invalid_request", "now")
}

func TestOpenDisputeOverREST(t *testing.T) {
	t.Parallel()
	f := newInvoiceWriteFixture(t)
	var res credit.InvoiceResult
	f.do(t, "POST", "dispute", map[string]any{"reason": "two crates arrived broken"}).WantStatus(t, 200).Decode(t, &res)
	if d := res.Invoice.Dispute; d == nil || d.Reason != "two crates arrived broken" || d.OpenedBy != "ERP sync" {
		t.Fatalf("dispute: %+v", d)
	}
	f.do(t, "POST", "dispute", map[string]any{"reason": ""}).WantError(t, 422, "validation_failed", "reason")
	f.do(t, "POST", "dispute", nil).WantError(t, 422, "validation_failed", "reason")
}

func TestResolveDisputeOverREST(t *testing.T) {
	t.Parallel()
	f := newInvoiceWriteFixture(t)
	f.do(t, "POST", "dispute", map[string]any{"reason": "wrong price"}).WantStatus(t, 200)
	var res credit.InvoiceResult
	f.do(t, "DELETE", "dispute", nil).WantStatus(t, 200).Decode(t, &res)
	if res.Invoice.Dispute != nil {
		t.Errorf("dispute after resolving: %+v", res.Invoice.Dispute)
	}
	// A paid invoice: 409 invoice_not_open; another kind of ID: 404.
	f.env.MustRecord(t, credit.LedgerEntryInput{CompanyID: res.Invoice.CompanyID, Kind: credit.KindPayment, Amount: "-40"})
	f.do(t, "DELETE", "dispute", nil).WantError(t, 409, "invoice_not_open", "")
	f.env.Do(t, credittest.Request{Method: "DELETE", Path: "/v1/invoices/" + res.Invoice.CompanyID + "/dispute", Key: f.key}).WantError(t, 404, "not_found", "")
}
