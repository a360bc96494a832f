package graph_test

import (
	"testing"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
)

// The invoice mutations (contract §17): the transport only; credit's tests own the rules.
func TestInvoiceMutations(t *testing.T) {
	f := newFixture(t)
	f.env.MustRecord(t, credit.LedgerEntryInput{CompanyID: f.alpen.ID, Kind: credit.KindOrderPlaced, Amount: "40", OrderGID: "gid://platform/Order/77"})
	invoices, err := f.env.Service.Invoices.List(credittest.Staff(f.store), f.alpen.ID, credit.InvoiceListParams{Status: credit.InvoiceOpen})
	if err != nil || len(invoices.Data) == 0 {
		t.Fatalf("invoices: %v %v", invoices, err)
	}
	inv := invoices.Data[len(invoices.Data)-1].ID
	const fields = `invoice { id promise { promisedFor note recordedBy brokenAt } dispute { reason openedBy } }`

	got := mutate(t, f, f.full, `mutation($in: RecordPromiseInput!) { recordPromise(input: $in) { `+fields+` } }`,
		in("invoiceId", inv, "promisedFor", "2026-03-20", "note", "after the fair"))["recordPromise"]
	if mustJSON(t, at(t, got, "invoice", "promise")) != `{"brokenAt":null,"note":"after the fair","promisedFor":"2026-03-20","recordedBy":"erp"}` {
		t.Errorf("recordPromise: %v", got)
	}
	got = mutate(t, f, f.full, `mutation($in: InvoiceWriteInput!) { withdrawPromise(input: $in) { `+fields+` } }`, in("invoiceId", inv))["withdrawPromise"]
	if at(t, got, "invoice", "promise") != nil {
		t.Errorf("withdrawPromise: %v", got)
	}
	got = mutate(t, f, f.full, `mutation($in: OpenDisputeInput!) { openDispute(input: $in) { `+fields+` } }`, in("invoiceId", inv, "reason", "wrong price"))["openDispute"]
	if mustJSON(t, at(t, got, "invoice", "dispute")) != `{"openedBy":"erp","reason":"wrong price"}` {
		t.Errorf("openDispute: %v", got)
	}
	got = mutate(t, f, f.full, `mutation($in: InvoiceWriteInput!) { resolveDispute(input: $in) { `+fields+` } }`, in("invoiceId", inv))["resolveDispute"]
	if at(t, got, "invoice", "dispute") != nil {
		t.Errorf("resolveDispute: %v", got)
	}

	// A bad date names the GraphQL input; another store's invoice is not_found.
	res := doGQL(t, f.env, gqlRequest{Key: f.full, Query: `mutation($in: RecordPromiseInput!) { recordPromise(input: $in) { invoice { id } } }`,
		Variables: in("invoiceId", inv, "promisedFor", "2026-01-01")})
	if len(res.Errors) != 1 || res.Errors[0].Extensions.Code != "validation_failed" || res.Errors[0].Extensions.Param != "promisedFor" {
		t.Errorf("a promise in the past: %s", res.HTTP.Body)
	}
	res = doGQL(t, f.env, gqlRequest{Key: f.otherKey, Query: `mutation($in: OpenDisputeInput!) { openDispute(input: $in) { invoice { id } } }`,
		Variables: in("invoiceId", inv, "reason", "x")})
	if len(res.Errors) != 1 || res.Errors[0].Extensions.Code != "not_found" {
		t.Errorf("another store's invoice: %s", res.HTTP.Body)
	}
}
