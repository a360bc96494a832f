package credit_test

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/creditd/creditd/credit"
)

// Invoice events (contract §17): invoice.paid when an invoice's open amount reaches zero, with
// the invoice as GET /v1/invoices/{id} shows it, in the transaction of the entry that paid it.

// invoiceEvents returns the store's invoice.* events after the first skip, and their objects.
func (e *ruleEnv) invoiceEvents(t testing.TB, skip int) ([]string, []credit.Invoice) {
	t.Helper()
	var types []string
	var objects []credit.Invoice
	for _, ev := range e.feed(t)[skip:] {
		if ev.Type != credit.EventTypeInvoicePaid && !slices.Contains(invoiceEventTypes, ev.Type) {
			continue
		}
		var data struct {
			Object credit.Invoice `json:"object"`
		}
		if err := json.Unmarshal(ev.Data, &data); err != nil {
			t.Fatalf("event %s: %v", ev.ID, err)
		}
		types = append(types, string(ev.Type))
		objects = append(objects, data.Object)
	}
	return types, objects
}

// invoiceEventTypes are the invoice.* types of the feed.
var invoiceEventTypes = []credit.EventType{credit.EventTypeInvoicePaid}

// TestInvoicePaidEvent: a payment that settles invoices appends invoice.paid for each, after its
// ledger_entry.created, with the invoice as Invoices.Get shows it then; a partial payment, and
// a cancellation that settles an invoice (cancelled, not paid), append none; an order covered by
// unapplied credit is paid when placed.
func TestInvoicePaidEvent(t *testing.T) {
	t.Parallel()
	env := newRuleEnv(t, "EUR")
	co := env.MustCompany(t, env.store, "Payer GmbH", "1000.00", "NET_30").ID
	env.MustRecord(t, orderEntry(co, 1, "100.00"))
	env.MustRecord(t, orderEntry(co, 2, "50.00"))
	start := len(env.feed(t))

	// 120 without an order: the first invoice is paid, 30 of the second stays open.
	env.Clock.Advance(day)
	env.MustRecord(t, credit.LedgerEntryInput{CompanyID: co, Kind: credit.KindPayment, Amount: "-120.00"})
	if got, want := env.feedTypes(t, start), []string{string(credit.EventTypeLedgerEntryCreated), string(credit.EventTypeInvoicePaid)}; !slices.Equal(got, want) {
		t.Fatalf("feed after the payment = %v, want %v", got, want)
	}
	invoices := env.invoices(t, co)
	_, objects := env.invoiceEvents(t, start)
	wantSameInvoice(t, objects[0], invoices[0])
	if objects[0].Status != credit.InvoicePaid || objects[0].PaidAt == nil || objects[0].OpenAmount.Amount != "0.00" {
		t.Errorf("invoice.paid object = %+v, want paid with paid_at and nothing open", objects[0])
	}

	// The rest of the second: paid by an entry naming its order.
	next := len(env.feed(t))
	env.MustRecord(t, credit.LedgerEntryInput{CompanyID: co, Kind: credit.KindPayment, Amount: "-30.00", OrderGID: orderGID(2)})
	if got, want := env.feedTypes(t, next), []string{string(credit.EventTypeLedgerEntryCreated), string(credit.EventTypeInvoicePaid)}; !slices.Equal(got, want) {
		t.Fatalf("feed after the second payment = %v, want %v", got, want)
	}
	_, objects = env.invoiceEvents(t, next)
	wantSameInvoice(t, objects[0], env.invoices(t, co)[1])

	// A cancellation settles an invoice: cancelled, no invoice.paid.
	env.MustRecord(t, orderEntry(co, 3, "80.00"))
	next = len(env.feed(t))
	env.MustRecord(t, credit.LedgerEntryInput{CompanyID: co, Kind: credit.KindCancellation, Amount: "-80.00", OrderGID: orderGID(3)})
	if types, _ := env.invoiceEvents(t, next); len(types) != 0 {
		t.Errorf("a cancellation appended %v, want no invoice event", types)
	}

	// Credit first, then an order it covers: paid when placed.
	env.MustRecord(t, credit.LedgerEntryInput{CompanyID: co, Kind: credit.KindPayment, Amount: "-25.00"})
	next = len(env.feed(t))
	env.MustRecord(t, orderEntry(co, 4, "25.00"))
	if got, want := env.feedTypes(t, next), []string{string(credit.EventTypeLedgerEntryCreated), string(credit.EventTypeInvoicePaid)}; !slices.Equal(got, want) {
		t.Fatalf("feed after an order covered by credit = %v, want %v", got, want)
	}
	_, objects = env.invoiceEvents(t, next)
	wantSameInvoice(t, objects[0], env.invoices(t, co)[3])
}

// wantSameInvoice fails unless the event's invoice is the invoice as read, member by member.
func wantSameInvoice(t testing.TB, got, want credit.Invoice) {
	t.Helper()
	g, _ := json.Marshal(got)
	w, _ := json.Marshal(want)
	if string(g) != string(w) {
		t.Errorf("event object\n got %s\nwant %s", g, w)
	}
}
