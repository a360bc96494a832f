package graph_test

import (
	"testing"
)

// TestSameDocumentWithOtherVariables runs each document twice with other variables: the fields
// of its selection sets are remembered per selection set of the cached document
// (graph/collect.go), so one whose @skip, @include or @defer depend on the variables (in it,
// in a fragment spread or in an inline fragment) must be collected again each time.
func TestSameDocumentWithOtherVariables(t *testing.T) {
	f := newFixture(t)
	for _, tc := range []struct{ name, doc string }{
		{"field", `query($id: ID!, $a: Boolean!) { company(id: $id) { id name @include(if: $a) } }`},
		{"skip", `query($id: ID!, $a: Boolean!) { company(id: $id) { id name @skip(if: $a) } }`},
		{"below", `query($id: ID!, $a: Boolean!) { company(id: $id) { id creditLimit { currency amount @include(if: $a) } } }`},
		{"named fragment", `query($id: ID!, $a: Boolean!) { company(id: $id) { id ...F } } fragment F on Company { name @include(if: $a) }`},
		{"nested fragment", `query($id: ID!, $a: Boolean!) { company(id: $id) { ...G } } fragment G on Company { id ...F } fragment F on Company { name @include(if: $a) }`},
		{"inline fragment", `query($id: ID!, $a: Boolean!) { company(id: $id) { id ... on Company { name @include(if: $a) } } }`},
		{"inline fragment's own", `query($id: ID!, $a: Boolean!) { company(id: $id) { id ... @include(if: $a) { name } } }`},
		{"spread's own", `query($id: ID!, $a: Boolean!) { company(id: $id) { id ...F @include(if: $a) } } fragment F on Company { name }`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			skip := tc.name == "skip"
			for i, a := range []bool{true, false, true, false} {
				data := query(t, f.env, f.readCredit, tc.doc, map[string]any{"id": f.alpen.ID, "a": a})
				company := at(t, data, "company").(map[string]any)
				var got bool
				if tc.name == "below" {
					_, got = at(t, company, "creditLimit").(map[string]any)["amount"]
				} else {
					_, got = company["name"]
				}
				if want := a != skip; got != want {
					t.Fatalf("run %d with a=%v: field shown %v, want %v: %v", i, a, got, want, company)
				}
			}
		})
	}
	// The same fields without directives, collected from the remembered selection sets, twice.
	for range 2 {
		data := query(t, f.env, f.readCredit, `query($id: ID!) { company(id: $id) { id ...F ... on Company { creditLimit { amount } } } } fragment F on Company { name }`, map[string]any{"id": f.alpen.ID})
		if at(t, data, "company", "name") != f.alpen.Name || at(t, data, "company", "creditLimit", "amount") != "25000.00" {
			t.Fatalf("company: %v", data)
		}
	}
}
