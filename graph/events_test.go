package graph_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/creditd/creditd/credit"
)

// TestEventObjectIsTyped: every event type's object is its resource, typed, with the values of
// data.object under GraphQL's names; an application's never has a contact.
func TestEventObjectIsTyped(t *testing.T) {
	f := newFixture(t) // company.created, ledger_entry.created, application.created, key.created
	ctx := viewerOf(f.store)
	if _, err := f.env.Service.Companies.PlaceHold(ctx, credit.HoldInput{CompanyID: f.brau.ID}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := f.env.Service.Applications.SetStatus(ctx, credit.StatusChange{ApplicationID: f.app.ID, Status: "in_review"}); err != nil {
		t.Fatal(err)
	}
	// invoice.paid (an order, then its payment) and invoice.disputed.
	f.env.MustRecord(t, credit.LedgerEntryInput{CompanyID: f.brau.ID, Kind: credit.KindOrderPlaced, Amount: "40", OrderGID: "gid://platform/Order/901"})
	f.env.MustRecord(t, credit.LedgerEntryInput{CompanyID: f.brau.ID, Kind: credit.KindPayment, Amount: "-40", OrderGID: "gid://platform/Order/901"})
	f.env.MustRecord(t, credit.LedgerEntryInput{CompanyID: f.brau.ID, Kind: credit.KindOrderPlaced, Amount: "30", OrderGID: "gid://platform/Order/902"})
	open, err := f.env.Service.Invoices.List(ctx, f.brau.ID, credit.InvoiceListParams{Status: credit.InvoiceOpen})
	if err != nil || len(open.Data) == 0 {
		t.Fatalf("open invoices: %v %v", open, err)
	}
	if _, err := f.env.Service.Invoices.OpenDispute(ctx, credit.DisputeInput{InvoiceID: open.Data[len(open.Data)-1].ID, Reason: "wrong price"}); err != nil {
		t.Fatal(err)
	}
	data := query(t, f.env, f.both, `{ events(first: 250) { edges { node { type data object {
		__typename
		... on LedgerEntry { id kind amount { amount currency } occurredAt }
		... on CompanySnapshot { companyId name companyStatus: status hold { kind } creditLimit { amount } updatedAt }
		... on InvoiceSnapshot { invoiceId companyId invoiceStatus: status paidAt dispute { reason } reminders { level } }
		... on ApplicationEventObject { applicationId applicationStatus: status businessName vat { number } submittedAt }
		... on KeyEventObject { keyId label scopes createdAt revokedAt }
	} } } } }`)
	want := map[string]string{"ledger_entry": "LedgerEntry", "company": "CompanySnapshot", "invoice": "InvoiceSnapshot", "application": "ApplicationEventObject", "key": "KeyEventObject"}
	// The record's ID: only the ledger entry, which never changes, is the record itself.
	idField := map[string]string{"ledger_entry": "id", "company": "companyId", "invoice": "invoiceId", "application": "applicationId", "key": "keyId"}
	seen := map[string]bool{}
	for _, e := range at(t, data, "events", "edges").([]any) {
		node := e.(map[string]any)["node"].(map[string]any)
		typ := node["type"].(string)
		obj := node["object"].(map[string]any)
		rest := node["data"].(map[string]any)["object"].(map[string]any)
		resource, _, _ := strings.Cut(typ, ".")
		if obj["__typename"] != want[resource] {
			t.Errorf("%s: object is a %v, want %s", typ, obj["__typename"], want[resource])
		}
		seen[want[resource]] = true
		if obj[idField[resource]] != rest["id"] || rest["id"] == nil {
			t.Errorf("%s: object %s %v, data.object id %v", typ, idField[resource], obj[idField[resource]], rest["id"])
		}
		if _, has := obj["id"]; has != (resource == "ledger_entry") {
			t.Errorf("%s: object has an id: %v", typ, obj)
		}
		// Each value typed equals the snake_case member of data.object.
		for gql, member := range map[string]string{"kind": "kind", "name": "name", "companyStatus": "status", "invoiceStatus": "status", "paidAt": "paid_at", "applicationStatus": "status", "businessName": "business_name", "label": "label",
			"occurredAt": "occurred_at", "updatedAt": "updated_at", "submittedAt": "submitted_at", "createdAt": "created_at"} {
			v, ok := obj[gql]
			if !ok {
				continue
			}
			r := rest[member]
			if s, isString := r.(string); isString && (member == "status" || member == "kind") {
				r = strings.ToUpper(s)
			}
			if v != r {
				t.Errorf("%s: object.%s = %v, data.object.%s = %v", typ, gql, v, member, r)
			}
		}
		if _, has := rest["contact"]; has {
			t.Errorf("%s carries a contact: %v", typ, rest)
		}
		if typ == string(credit.EventTypeCompanyHoldPlaced) && at(t, obj, "hold", "kind") != "MANUAL" {
			t.Errorf("hold_placed object: %v", obj)
		}
		if typ == string(credit.EventTypeInvoiceDisputed) && (at(t, obj, "dispute", "reason") != "wrong price" || obj["companyId"] != f.brau.ID) {
			t.Errorf("invoice.disputed object: %v", obj)
		}
	}
	if len(seen) != 5 {
		b, _ := json.Marshal(data)
		t.Fatalf("object types seen: %v in %s", seen, b)
	}
}

// TestScalarsNameTheirSpecifications: introspection shows each custom scalar's @specifiedBy.
func TestScalarsNameTheirSpecifications(t *testing.T) {
	f := newFixture(t)
	for scalar, want := range map[string]string{
		"DateTime": "https://datatracker.ietf.org/doc/html/rfc3339",
		"JSON":     "https://datatracker.ietf.org/doc/html/rfc8259",
		"Decimal":  "https://github.com/creditd/creditd/blob/main/docs/contract.md#4-money",
	} {
		data := query(t, f.env, f.readCredit, `query($n: String!) { __type(name: $n) { kind specifiedByURL } }`, map[string]any{"n": scalar})
		if got := at(t, data, "__type", "specifiedByURL"); got != want {
			t.Errorf("%s: specifiedByURL %v, want %s", scalar, got, want)
		}
	}
}
