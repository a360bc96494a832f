package credit_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
)

// The writes on an invoice (contract §17): a promise to pay and a dispute, each with its event
// and its timeline entry, refused on a settled invoice, and bad input refused writing nothing.

// openInvoice records an order of 100.00 for a new company of the env's store and returns the
// company's and the invoice's IDs.
func (e *ruleEnv) openInvoice(t testing.TB, name string) (string, string) {
	t.Helper()
	co := e.MustCompany(t, e.store, name, "1000.00", "NET_30").ID
	e.MustRecord(t, orderEntry(co, 1, "100.00"))
	return co, e.invoices(t, co)[0].ID
}

// eventPrevious decodes an event's data.previous.
func eventPrevious(t testing.TB, ev credit.Event) map[string]json.RawMessage {
	t.Helper()
	var data struct {
		Previous map[string]json.RawMessage `json:"previous"`
	}
	if err := json.Unmarshal(ev.Data, &data); err != nil {
		t.Fatalf("event %s: %v", ev.ID, err)
	}
	return data.Previous
}

// TestPromiseToPay: a key records a promise (invoice.promise_recorded, the invoice's promise,
// the timeline by the key's label), a second replaces it (previous.promise the first), a
// withdrawal clears it (invoice.promise_withdrawn); withdrawing none changes nothing and
// appends no event, but is on the timeline.
func TestPromiseToPay(t *testing.T) {
	t.Parallel()
	env := newRuleEnv(t, "EUR")
	co, inv := env.openInvoice(t, "Promiser GmbH")
	key := apiKey(env.store, credit.ScopeReadCredit, credit.ScopeWriteCredit)
	feedBefore, timelineBefore := len(env.feed(t)), len(env.timeline(t, co))

	note := "pays after the trade fair"
	res, err := env.Service.Invoices.RecordPromise(key, credit.PromiseInput{InvoiceID: inv, PromisedFor: "2026-03-20", Note: &note})
	if err != nil {
		t.Fatal(err)
	}
	p := res.Invoice.Promise
	if p == nil || p.PromisedFor != "2026-03-20" || p.Note == nil || *p.Note != note || p.RecordedBy != "ERP sync" ||
		!p.RecordedAt.Equal(env.Clock.Now()) || p.BrokenAt != nil {
		t.Fatalf("promise = %+v", p)
	}
	got, err := env.Service.Invoices.Get(env.staff, inv)
	if err != nil {
		t.Fatal(err)
	}
	wantSameInvoice(t, got, res.Invoice)

	env.Clock.Advance(day)
	res, err = env.Service.Invoices.RecordPromise(env.staff, credit.PromiseInput{InvoiceID: inv, PromisedFor: "2026-03-25"})
	if err != nil {
		t.Fatal(err)
	}
	if p := res.Invoice.Promise; p == nil || p.PromisedFor != "2026-03-25" || p.Note != nil || p.RecordedBy != "test staff" {
		t.Fatalf("replaced promise = %+v, want the staff's without a note", p)
	}
	res, err = env.Service.Invoices.WithdrawPromise(key, inv)
	if err != nil || res.Invoice.Promise != nil {
		t.Fatalf("withdrawn: %+v %v", res.Invoice.Promise, err)
	}
	if _, err := env.Service.Invoices.WithdrawPromise(key, inv); err != nil {
		t.Fatalf("withdrawing no promise: %v", err)
	}

	want := []string{string(credit.EventTypeInvoicePromiseRecorded), string(credit.EventTypeInvoicePromiseRecorded), string(credit.EventTypeInvoicePromiseWithdrawn)}
	if got := env.feedTypes(t, feedBefore); !slices.Equal(got, want) {
		t.Fatalf("feed %v, want %v", got, want)
	}
	feed := env.feed(t)[feedBefore:]
	if prev := eventPrevious(t, feed[0]); prev != nil {
		t.Errorf("the first promise's previous = %v, want none", prev)
	}
	if prev := eventPrevious(t, feed[1]); !strings.Contains(string(prev["promise"]), `"promised_for":"2026-03-20"`) {
		t.Errorf("the replacing promise's previous = %s, want the first promise", prev["promise"])
	}
	if prev := eventPrevious(t, feed[2]); !strings.Contains(string(prev["promise"]), `"promised_for":"2026-03-25"`) {
		t.Errorf("the withdrawal's previous = %s, want the promise withdrawn", prev["promise"])
	}
	if id, err := feed[0].CompanyID(); err != nil || id != co {
		t.Errorf("the event's company = %q %v, want %s", id, err, co)
	}
	wantTimeline := []string{"promise_recorded by ERP sync", "promise_recorded by test staff", "promise_withdrawn by ERP sync", "promise_withdrawn by ERP sync"}
	if got := env.timelineTypes(t, co, timelineBefore); !slices.Equal(got, wantTimeline) {
		t.Errorf("timeline %v, want %v", got, wantTimeline)
	}
}

// TestDispute: a dispute opened (invoice.disputed), its reason replaced (previous.dispute),
// resolved (invoice.dispute_resolved); resolving none appends no event. The invoice stays in
// the outstanding and keeps its overdue hold.
func TestDispute(t *testing.T) {
	t.Parallel()
	env := newRuleEnv(t, "EUR")
	co, inv := env.openInvoice(t, "Disputer GmbH")
	key := apiKey(env.store, credit.ScopeReadCredit, credit.ScopeWriteCredit)
	feedBefore, timelineBefore := len(env.feed(t)), len(env.timeline(t, co))

	res, err := env.Service.Invoices.OpenDispute(key, credit.DisputeInput{InvoiceID: inv, Reason: "two crates arrived broken"})
	if err != nil {
		t.Fatal(err)
	}
	if d := res.Invoice.Dispute; d == nil || d.Reason != "two crates arrived broken" || d.OpenedBy != "ERP sync" || !d.OpenedAt.Equal(env.Clock.Now()) {
		t.Fatalf("dispute = %+v", d)
	}
	if _, err := env.Service.Invoices.OpenDispute(env.staff, credit.DisputeInput{InvoiceID: inv, Reason: "three crates"}); err != nil {
		t.Fatal(err)
	}
	// Overdue while disputed: the hold rule stands.
	env.Clock.Advance(31 * day)
	env.sweep(t)
	if c := env.company(t, co); c.Hold == nil || c.Hold.Kind != credit.HoldOverdue || c.Outstanding.Amount != "100.00" {
		t.Errorf("a disputed overdue invoice: company %+v, want the overdue hold and 100.00 outstanding", c)
	}
	feedMid := len(env.feed(t))
	res, err = env.Service.Invoices.ResolveDispute(key, inv)
	if err != nil || res.Invoice.Dispute != nil {
		t.Fatalf("resolved: %+v %v", res.Invoice.Dispute, err)
	}
	if _, err := env.Service.Invoices.ResolveDispute(key, inv); err != nil {
		t.Fatalf("resolving no dispute: %v", err)
	}
	want := []string{string(credit.EventTypeInvoiceDisputed), string(credit.EventTypeInvoiceDisputed)}
	if got := env.feedTypes(t, feedBefore)[:2]; !slices.Equal(got, want) {
		t.Fatalf("feed %v, want %v first", got, want)
	}
	if got := env.feedTypes(t, feedMid); !slices.Equal(got, []string{string(credit.EventTypeInvoiceDisputeResolved)}) {
		t.Fatalf("feed after resolving %v", got)
	}
	feed := env.feed(t)
	if prev := eventPrevious(t, feed[feedBefore+1]); !strings.Contains(string(prev["dispute"]), "two crates arrived broken") {
		t.Errorf("the replacing dispute's previous = %s", prev["dispute"])
	}
	wantTimeline := []string{"invoice_disputed by ERP sync", "invoice_disputed by test staff", "overdue_hold_placed by system", "dispute_resolved by ERP sync", "dispute_resolved by ERP sync"}
	if got := env.timelineTypes(t, co, timelineBefore); !slices.Equal(got, wantTimeline) {
		t.Errorf("timeline %v, want %v", got, wantTimeline)
	}
}

// TestInvoiceWriteRefusals: bad input is refused naming its parameter, a settled invoice with
// invoice_not_open, another store's or an unknown invoice with not_found, a key without
// write_credit with insufficient_scope; none of them writes anything.
func TestInvoiceWriteRefusals(t *testing.T) {
	t.Parallel()
	env := newRuleEnv(t, "EUR") // today is 2026-03-02
	co, inv := env.openInvoice(t, "Open GmbH")
	env.MustRecord(t, orderEntry(co, 2, "10.00"))
	env.MustRecord(t, credit.LedgerEntryInput{CompanyID: co, Kind: credit.KindPayment, Amount: "-10.00", OrderGID: orderGID(2)})
	env.MustRecord(t, orderEntry(co, 3, "10.00"))
	env.MustRecord(t, credit.LedgerEntryInput{CompanyID: co, Kind: credit.KindCancellation, Amount: "-10.00", OrderGID: orderGID(3)})
	invoices := env.invoices(t, co)
	paid, cancelled := invoices[1].ID, invoices[2].ID
	otherStore := env.MustStore(t, "Other", "EUR")
	otherCo := env.MustCompany(t, otherStore, "Elsewhere", "100.00").ID
	env.MustRecord(t, orderEntry(otherCo, 1, "5.00"))
	foreign := env.invoicesOf(t, otherStore, otherCo)[0].ID

	long := strings.Repeat("x", 501)
	max := strings.Repeat("é", 500)
	readOnly := apiKey(env.store, credit.ScopeReadCredit)
	promise := func(id, day string, note *string) func() error {
		return func() error {
			_, err := env.Service.Invoices.RecordPromise(env.staff, credit.PromiseInput{InvoiceID: id, PromisedFor: day, Note: note})
			return err
		}
	}
	dispute := func(id, reason string) func() error {
		return func() error {
			_, err := env.Service.Invoices.OpenDispute(env.staff, credit.DisputeInput{InvoiceID: id, Reason: reason})
			return err
		}
	}
	empty := ""
	for _, tc := range []struct {
		name  string
		write func() error
		code  credit.Code
		param string
	}{
		{"a promise for yesterday", promise(inv, "2026-03-01", nil), credit.CodeValidationFailed, "promised_for"},
		{"a promise 91 days ahead", promise(inv, "2026-06-01", nil), credit.CodeValidationFailed, "promised_for"},
		{"a promise without a date", promise(inv, "", nil), credit.CodeValidationFailed, "promised_for"},
		{"a promise for no date", promise(inv, "2026-02-30", nil), credit.CodeValidationFailed, "promised_for"},
		{"a promise with a time", promise(inv, "2026-03-05T10:00:00Z", nil), credit.CodeValidationFailed, "promised_for"},
		{"a promise with a 501-character note", promise(inv, "2026-03-05", &long), credit.CodeValidationFailed, "note"},
		{"a promise with an empty note", promise(inv, "2026-03-05", &empty), credit.CodeValidationFailed, "note"},
		{"a dispute without a reason", dispute(inv, ""), credit.CodeValidationFailed, "reason"},
		{"a dispute with a blank reason", dispute(inv, "  "), credit.CodeValidationFailed, "reason"},
		{"a dispute with a 501-character reason", dispute(inv, long), credit.CodeValidationFailed, "reason"},
		{"a promise on a paid invoice", promise(paid, "2026-03-05", nil), credit.CodeInvoiceNotOpen, ""},
		{"a dispute on a cancelled invoice", dispute(cancelled, "wrong"), credit.CodeInvoiceNotOpen, ""},
		{"withdrawing on a paid invoice", func() error { _, err := env.Service.Invoices.WithdrawPromise(env.staff, paid); return err }, credit.CodeInvoiceNotOpen, ""},
		{"resolving on a cancelled invoice", func() error { _, err := env.Service.Invoices.ResolveDispute(env.staff, cancelled); return err }, credit.CodeInvoiceNotOpen, ""},
		{"another store's invoice", promise(foreign, "2026-03-05", nil), credit.CodeNotFound, ""},
		{"another store's invoice, resolved", func() error { _, err := env.Service.Invoices.ResolveDispute(env.staff, foreign); return err }, credit.CodeNotFound, ""},
		{"an unknown invoice", dispute("inv_000000000000000000000", "wrong"), credit.CodeNotFound, ""},
		{"a company's ID", dispute(co, "wrong"), credit.CodeNotFound, ""},
		{"a key without write_credit", func() error {
			_, err := env.Service.Invoices.OpenDispute(readOnly, credit.DisputeInput{InvoiceID: inv, Reason: "wrong"})
			return err
		}, credit.CodeInsufficientScope, ""},
	} {
		feedBefore, timelineBefore := len(env.feed(t)), len(env.timeline(t, co))
		wantError(t, tc.name, tc.write(), tc.code, tc.param)
		if n := len(env.feed(t)); n != feedBefore {
			t.Errorf("%s: appended %d events", tc.name, n-feedBefore)
		}
		if n := len(env.timeline(t, co)); n != timelineBefore {
			t.Errorf("%s: appended %d timeline events", tc.name, n-timelineBefore)
		}
	}
	if got := env.invoices(t, co)[0]; got.Promise != nil || got.Dispute != nil {
		t.Errorf("after the refusals: %+v", got)
	}
	// The bounds themselves are taken: today, 90 days ahead, a 500-character note and reason.
	for _, day := range []string{"2026-03-02", "2026-05-31"} {
		if err := promise(inv, day, &max)(); err != nil {
			t.Errorf("a promise for %s: %v", day, err)
		}
	}
	if err := dispute(inv, max)(); err != nil {
		t.Errorf("a 500-character reason: %v", err)
	}
}

// invoicesOf returns a company's invoices as the staff of store see them.
func (e *ruleEnv) invoicesOf(t testing.TB, store, companyID string) []credit.Invoice {
	t.Helper()
	p, err := e.Service.Invoices.List(credittest.Staff(store), companyID, credit.InvoiceListParams{})
	if err != nil {
		t.Fatalf("invoices of %s: %v", companyID, err)
	}
	return p.Data
}
