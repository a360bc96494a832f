package graph_test

import (
	"testing"
	"time"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
)

// TestInvoicePaidAt checks the transport of Invoice.paidAt and expectedPaymentAt: null while
// open and nothing was paid, then the moment the domain gives (credit's tests own the rules).
func TestInvoicePaidAt(t *testing.T) {
	env := credittest.New(t)
	st := env.MustStore(t, "Paid", "EUR")
	key := env.MustKey(t, st, "dash", credit.ScopeReadCredit)
	co := env.MustCompany(t, st, "Payer", "1000").ID
	env.MustRecord(t, credit.LedgerEntryInput{CompanyID: co, Kind: credit.KindOrderPlaced, Amount: "10", OrderGID: "gid://platform/Order/1"})
	invoices, err := env.Service.Invoices.List(credittest.Staff(st), co, credit.InvoiceListParams{})
	if err != nil || len(invoices.Data) != 1 {
		t.Fatalf("invoices: %v %v", invoices, err)
	}
	id := invoices.Data[0].ID
	const q = `query($id: ID!) { node(id: $id) { ... on Invoice { status paidAt expectedPaymentAt } } }`
	if got := at(t, query(t, env, key, q, map[string]any{"id": id}), "node"); got.(map[string]any)["paidAt"] != nil || got.(map[string]any)["expectedPaymentAt"] != nil {
		t.Errorf("an open invoice of a company that paid nothing = %v, want paidAt and expectedPaymentAt null", got)
	}
	env.Clock.Advance(90 * time.Minute)
	env.MustRecord(t, credit.LedgerEntryInput{CompanyID: co, Kind: credit.KindPayment, Amount: "-10"})
	inv, err := env.Service.Invoices.Get(credittest.Staff(st), id)
	if err != nil || inv.PaidAt == nil {
		t.Fatalf("invoice: %+v %v", inv, err)
	}
	if got := at(t, query(t, env, key, q, map[string]any{"id": id}), "node", "paidAt"); got != inv.PaidAt.String() {
		t.Errorf("paidAt = %v, want %s", got, inv.PaidAt)
	}
}
