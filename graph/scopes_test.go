package graph_test

import (
	"strings"
	"testing"

	"github.com/creditd/creditd/credit"
)

// TestScopesPerField checks that each key gets the fields its scopes allow and an
// insufficient_scope error for the others, with a null object or an empty connection: the
// rest of the query still returns.
func TestScopesPerField(t *testing.T) {
	f := newFixture(t)
	const q = `query($co: ID!, $app: ID!) {
	  companies { edges { node { id } } }
	  company(id: $co) { id }
	  applications { edges { node { id contact { email } } } }
	  application(id: $app) { id contact { name } }
	}`
	vars := map[string]any{"co": f.alpen.ID, "app": f.app.ID}
	for _, tc := range []struct {
		key       string
		name      string
		null      []string
		wantScope string
	}{
		{f.readCredit, "read_credit", []string{"applications", "application"}, credit.ScopeReadApplications},
		{f.readApps, "read_applications", []string{"companies", "company"}, credit.ScopeReadCredit},
		{f.both, "both", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := doGQL(t, f.env, gqlRequest{Key: tc.key, Query: q, Variables: vars})
			if res.HTTP.Status != 200 {
				t.Fatalf("status %d: %s", res.HTTP.Status, res.HTTP.Body)
			}
			if len(res.Errors) != len(tc.null) {
				t.Fatalf("%d errors, want %d: %s", len(res.Errors), len(tc.null), res.HTTP.Body)
			}
			// Root fields of a query run concurrently: errors come in any order.
			byField := map[any]gqlError{}
			for _, e := range res.Errors {
				if len(e.Path) > 0 {
					byField[e.Path[0]] = e
				}
			}
			for i, field := range tc.null {
				e := byField[field]
				if e.Extensions.Code != "insufficient_scope" || len(e.Path) != 1 || e.Path[0] != field || e.Message != "this call needs scope "+tc.wantScope {
					t.Errorf("error %d: %+v, want insufficient_scope on %s naming %s", i, e, field, tc.wantScope)
				}
				// A single object is null; a connection is empty (its type is non-null).
				want := "null"
				if field == "companies" || field == "applications" {
					want = `{"edges":[]}`
				}
				if got := mustJSON(t, res.Data[field]); got != want {
					t.Errorf("%s is %s, want %s", field, got, want)
				}
			}
			for _, field := range []string{"companies", "company", "applications", "application"} {
				denied := false
				for _, n := range tc.null {
					denied = denied || n == field
				}
				if !denied && res.Data[field] == nil {
					t.Errorf("%s is null for a key that may read it", field)
				}
			}
		})
	}
	t.Run("write only", func(t *testing.T) {
		res := doGQL(t, f.env, gqlRequest{Key: f.noRead, Query: q, Variables: vars})
		res.wantCodes(t, "insufficient_scope", "insufficient_scope", "insufficient_scope", "insufficient_scope")
	})
}

// TestPersonalData checks the personal-data rules: contact only on applications, nullable,
// visible with read_applications, and redacted after erasure.
func TestPersonalData(t *testing.T) {
	f := newFixture(t)
	const q = `query($id: ID!) { application(id: $id) { contact { name email redacted } } }`
	contact := at(t, query(t, f.env, f.readApps, q, map[string]any{"id": f.app.ID}), "application", "contact")
	if mustJSON(t, contact) != `{"email":"ada@example.com","name":"Ada Buyer","redacted":false}` {
		t.Fatalf("contact %v", contact)
	}
	if _, err := f.env.Service.Applications.ErasePerson(viewerOf(f.store), "ADA@example.com"); err != nil {
		t.Fatal(err)
	}
	contact = at(t, query(t, f.env, f.readApps, q, map[string]any{"id": f.app.ID}), "application", "contact")
	if mustJSON(t, contact) != `{"email":null,"name":null,"redacted":true}` {
		t.Fatalf("contact after erasure %v", contact)
	}

	// The schema: personal fields are nullable, and only Contact has them.
	schema := query(t, f.env, f.readCredit, `{ __schema { types { name fields { name type { kind name } } } } }`)
	for _, ty := range at(t, schema, "__schema", "types").([]any) {
		name := at(t, ty, "name").(string)
		fields, _ := at(t, ty, "fields").([]any)
		for _, fl := range fields {
			fname := at(t, fl, "name").(string)
			kind := at(t, fl, "type", "kind")
			switch {
			case name == "Contact" && (fname == "name" || fname == "email") && kind == "NON_NULL":
				t.Errorf("Contact.%s is non-null; personal data must be nullable", fname)
			case name == "Application" && fname == "contact" && kind == "NON_NULL":
				t.Error("Application.contact is non-null; it is null without read_applications")
			case name != "Contact" && name != "Application" && !strings.HasPrefix(name, "__") &&
				(strings.Contains(strings.ToLower(fname), "email") || fname == "contact"):
				t.Errorf("%s.%s: personal data outside applications", name, fname)
			}
		}
	}
}

// TestForeignIDs checks tenant isolation: another store's IDs are null (not_found where the
// field names one object), never its data, and writes to them are not_found.
func TestForeignIDs(t *testing.T) {
	f := newFixture(t)
	foreignEntry := f.env.MustRecord(t, credit.LedgerEntryInput{CompanyID: f.foreignCompany.ID, Kind: credit.KindOpeningBalance, Amount: "10.00"})

	res := doGQL(t, f.env, gqlRequest{Key: f.full, Query: `query($co: ID!, $app: ID!) { company(id: $co) { id } application(id: $app) { id } }`,
		Variables: map[string]any{"co": f.foreignCompany.ID, "app": f.foreignApp.ID}})
	res.wantCodes(t, "not_found", "not_found")
	if res.Data["company"] != nil || res.Data["application"] != nil {
		t.Fatalf("foreign objects shown: %s", res.HTTP.Body)
	}

	for _, id := range []string{f.foreignCompany.ID, f.foreignApp.ID, foreignEntry.ID, "co_unknown", "xx_123", ""} {
		res := doGQL(t, f.env, gqlRequest{Key: f.full, Query: `query($id: ID!) { node(id: $id) { id } }`, Variables: map[string]any{"id": id}})
		if len(res.Errors) > 0 || res.Data["node"] != nil {
			t.Errorf("node(%q): %s, want null without error", id, res.HTTP.Body)
		}
	}
	// The same IDs, asked by their own store, are there.
	for _, id := range []string{f.foreignCompany.ID, f.foreignApp.ID, foreignEntry.ID} {
		data := query(t, f.env, f.otherKey, `query($id: ID!) { node(id: $id) { id } }`, map[string]any{"id": id})
		if at(t, data, "node", "id") != id {
			t.Errorf("node(%s) for its own store: %v", id, data)
		}
	}

	res = doGQL(t, f.env, gqlRequest{Key: f.full, Query: `query($co: ID!, $le: ID) { company(id: $co) { ledger(afterEntry: $le) { edges { cursor } } } }`,
		Variables: map[string]any{"co": f.alpen.ID, "le": foreignEntry.ID}})
	res.wantCodes(t, "invalid_parameter")
	if res.Errors[0].Extensions.Param != "afterEntry" {
		t.Errorf("param %q, want afterEntry", res.Errors[0].Extensions.Param)
	}

	// A cursor minted for the other store does not page this one.
	other := query(t, f.env, f.otherKey, `{ companies(first: 1) { pageInfo { endCursor } } }`)
	res = doGQL(t, f.env, gqlRequest{Key: f.full, Query: `query($after: String) { companies(after: $after) { edges { cursor } } }`,
		Variables: map[string]any{"after": at(t, other, "companies", "pageInfo", "endCursor")}})
	res.wantCodes(t, "invalid_parameter")
	if res.Errors[0].Extensions.Param != "after" {
		t.Errorf("param %q, want after", res.Errors[0].Extensions.Param)
	}

	for name, m := range map[string]string{
		"createAdjustment": `mutation($id: ID!) { createAdjustment(input: {companyId: $id, amount: "5.00", note: "x"}) { company { id } } }`,
		"setCreditLimit":   `mutation($id: ID!) { setCreditLimit(input: {companyId: $id, amount: "5.00"}) { company { id } } }`,
		"placeHold":        `mutation($id: ID!) { placeHold(input: {companyId: $id}) { company { id } } }`,
		"liftHold":         `mutation($id: ID!) { liftHold(input: {companyId: $id}) { company { id } } }`,
	} {
		res := doGQL(t, f.env, gqlRequest{Key: f.full, Query: m, Variables: map[string]any{"id": f.foreignCompany.ID}})
		if len(res.Errors) != 1 || res.Errors[0].Extensions.Code != "not_found" {
			t.Errorf("%s on another store's company: %s", name, res.HTTP.Body)
		}
	}
	c, err := f.env.Service.Companies.Get(viewerOf(f.other), f.foreignCompany.ID)
	if err != nil || c.Hold != nil || c.CreditLimit.Amount != "1000.00" || c.Outstanding.Amount != "10.00" {
		t.Fatalf("the other store's company changed: %+v %v", c, err)
	}
}
