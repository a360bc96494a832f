package console_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
)

// invoiceEnv is a store with a staff member signed in and a company with one open invoice of
// 100.00 (order 1, Net 30), recorded on 2026-03-02.
type invoiceEnv struct {
	*consoleEnv
	b       *browser
	store   string
	company credit.Company
	invoice credit.Invoice
}

func newInvoiceEnv(t *testing.T) *invoiceEnv {
	t.Helper()
	e := newConsole(t)
	st := e.MustStore(t, "Alpine Wholesale", "EUR")
	e.MustStaff(t, st, "Anna Berg", "anna@example.com", password)
	co := e.MustCompany(t, st, "Alpenblick Hotels AG", "25000.00", "NET_30")
	e.MustRecord(t, credit.LedgerEntryInput{CompanyID: co.ID, Kind: credit.KindOrderPlaced, Amount: "100.00", OrderGID: "gid://platform/Order/1"})
	page, err := e.Service.Invoices.List(credittest.Staff(st), co.ID, credit.InvoiceListParams{})
	if err != nil || len(page.Data) != 1 {
		t.Fatalf("invoices: %+v %v", page, err)
	}
	b := e.browser(t)
	b.mustSignIn("anna@example.com", password)
	return &invoiceEnv{consoleEnv: e, b: b, store: st, company: co, invoice: page.Data[0]}
}

func (e *invoiceEnv) invoiceNow(t *testing.T) credit.Invoice {
	t.Helper()
	inv, err := e.Service.Invoices.Get(credittest.Staff(e.store), e.invoice.ID)
	if err != nil {
		t.Fatal(err)
	}
	return inv
}

// TestInvoicePromiseAndDispute: on a company's page, staff record a promise to pay on an open
// invoice (both fields' refusals at once, beside their fields, with what was typed), withdraw
// it, open and resolve a dispute; each shows on the invoice's row and is on the timeline
// under the member's name. A settled invoice's write is 409 with the reason; another
// company's invoice is not found.
func TestInvoicePromiseAndDispute(t *testing.T) {
	e := newInvoiceEnv(t)
	b, path, inv := e.b, "/companies/"+e.company.ID, e.invoice.ID
	b.get(path).wantStatus(t, http.StatusOK).wantText(t, "Record a promise", "Open a dispute", "No reminder sent.")

	// Both refusals at once, the values kept.
	long := strings.Repeat("n", 501)
	refused := b.post(path, url.Values{"form": {"promise"}, "invoice": {inv}, "promised_for": {"2026-02-01"}, "note": {long}}).
		wantStatus(t, http.StatusUnprocessableEntity)
	refused.wantText(t, `id="promise-day-`+inv+`-error">Promised for must be from today (2026-03-02) to 90 days ahead (2026-05-31), UTC.`,
		`id="promise-note-`+inv+`-error">Note must be at most 500 characters.`, `value="2026-02-01"`, `value="`+long+`"`)
	if e.invoiceNow(t).Promise != nil {
		t.Fatal("a refused promise was recorded")
	}

	done := b.follow(b.post(path, url.Values{"form": {"promise"}, "invoice": {inv}, "promised_for": {"2026-03-20"}, "note": {"by transfer"}}))
	done.wantText(t, "Promise recorded: gid://platform/Order/1 to be paid by 2026-03-20", "Promised</span> for <strong>2026-03-20</strong> · by transfer",
		"by Anna Berg", "Withdraw the promise", "Replace the promise")
	if p := e.invoiceNow(t).Promise; p == nil || p.PromisedFor != "2026-03-20" || p.RecordedBy != "Anna Berg" {
		t.Fatalf("the promise: %+v", p)
	}
	b.follow(b.post(path, url.Values{"form": {"withdraw"}, "invoice": {inv}})).wantText(t, "The promise to pay gid://platform/Order/1 is withdrawn.")
	if e.invoiceNow(t).Promise != nil {
		t.Fatal("the promise was not withdrawn")
	}

	b.post(path, url.Values{"form": {"dispute"}, "invoice": {inv}, "reason": {"  "}}).wantStatus(t, http.StatusUnprocessableEntity).
		wantText(t, `id="dispute-reason-`+inv+`-error">Reason must not be empty.`)
	b.follow(b.post(path, url.Values{"form": {"dispute"}, "invoice": {inv}, "reason": {"Goods damaged in transit"}})).
		wantText(t, "is disputed: it gets no reminder", "Disputed</span> Goods damaged in transit", "Resolve the dispute", "Change the reason")
	if d := e.invoiceNow(t).Dispute; d == nil || d.OpenedBy != "Anna Berg" {
		t.Fatalf("the dispute: %+v", d)
	}
	b.follow(b.post(path, url.Values{"form": {"resolve"}, "invoice": {inv}})).wantText(t, "The dispute on gid://platform/Order/1 is resolved").
		wantNoText(t, "Disputed</span>")
	b.get(path).wantText(t, "Promise recorded", "Promise withdrawn", "Invoice disputed", "Dispute resolved")

	// Another company's invoice, or none, is not found and changes nothing.
	other := e.MustCompany(t, e.store, "Other Hotels AG", "1000.00")
	b.post("/companies/"+other.ID, url.Values{"form": {"dispute"}, "invoice": {inv}, "reason": {"x"}}).wantStatus(t, http.StatusNotFound)
	b.post(path, url.Values{"form": {"resolve"}, "invoice": {"inv_nothing"}}).wantStatus(t, http.StatusNotFound)
	if e.invoiceNow(t).Dispute != nil {
		t.Fatal("a dispute through another company's page was opened")
	}

	// Settled meanwhile (another tab): 409 with the reason on the page.
	e.MustRecord(t, credit.LedgerEntryInput{CompanyID: e.company.ID, Kind: credit.KindPayment, Amount: "-100.00", OrderGID: "gid://platform/Order/1"})
	b.post(path, url.Values{"form": {"promise"}, "invoice": {inv}, "promised_for": {"2026-03-20"}}).wantStatus(t, http.StatusConflict).
		wantText(t, "Invoice "+inv+" is paid: only an open invoice takes a promise or a dispute.")
}

// TestStatementDownload: the company page's picker offers the last full month; the statement
// downloads as the API's PDF; a refused period is shown beside its field, as typed.
func TestStatementDownload(t *testing.T) {
	e := newInvoiceEnv(t)
	b, path := e.b, "/companies/"+e.company.ID
	b.get(path).wantText(t, `id="statement-from" name="from" type="text" inputmode="numeric" autocomplete="off" placeholder="YYYY-MM-DD" aria-required="true" value="2026-02-01"`,
		`id="statement-to" name="to" type="text" inputmode="numeric" autocomplete="off" placeholder="YYYY-MM-DD" aria-required="true" value="2026-02-28"`, "Statement (PDF)")

	pdf := b.get(path+"/statement?from=2026-03-01&to=2026-03-02").wantStatus(t, http.StatusOK)
	if ct := pdf.Header.Get("Content-Type"); ct != "application/pdf" {
		t.Fatalf("Content-Type %q", ct)
	}
	if cd := pdf.Header.Get("Content-Disposition"); cd != `attachment; filename="statement-`+e.company.ID+`-2026-03-01-2026-03-02.pdf"` {
		t.Errorf("Content-Disposition %q", cd)
	}
	if text := credittest.PDFText(t, []byte(pdf.Body)); !strings.Contains(text, "Alpenblick Hotels AG") || !strings.Contains(text, "Alpine Wholesale") {
		t.Errorf("the PDF's text lacks the company or the store:\n%.2000s", text)
	}

	bad := b.get(path+"/statement?from=2026-03-05&to=2026-03-09").wantStatus(t, http.StatusBadRequest)
	bad.wantText(t, `id="statement-to-error">`, `value="2026-03-05"`, `value="2026-03-09"`)
	both := b.get(path+"/statement?from=1.3.2026&to=yesterday").wantStatus(t, http.StatusBadRequest)
	both.wantText(t, `id="statement-from-error">From must be a date, YYYY-MM-DD.`, `id="statement-to-error">To must be a date, YYYY-MM-DD.`,
		`value="1.3.2026"`, `value="yesterday"`).wantNoText(t, `<div class="alert" role="alert">`)
	b.get("/companies/co_nothing/statement?from=2026-03-01&to=2026-03-02").wantStatus(t, http.StatusNotFound)
	b.get("/companies/co_nothing/statement?from=x&to=y").wantStatus(t, http.StatusNotFound)
}
