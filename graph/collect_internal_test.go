package graph

import (
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
)

// TestResponseBufferSizedByLastResponse: a query's response buffer starts at its operation's
// last response size (with room to spare), another operation's starts empty, and a response
// that outgrows the hint raises it.
func TestResponseBufferSizedByLastResponse(t *testing.T) {
	op, other := &ast.OperationDefinition{Name: "A"}, &ast.OperationDefinition{Name: "B"}
	oc := &graphql.OperationContext{Operation: op}
	if c := responseBuffer(oc).Cap(); c != 0 {
		t.Fatalf("first buffer's capacity %d, want 0", c)
	}
	responseWritten(oc, 60_000)
	if c := responseBuffer(oc).Cap(); c < 60_000 || c > 70_000 {
		t.Fatalf("buffer after a 60,000-byte response has capacity %d", c)
	}
	if c := responseBuffer(&graphql.OperationContext{Operation: other}).Cap(); c != 0 {
		t.Fatalf("another operation's buffer has capacity %d", c)
	}
	before := responseBuffer(oc).Cap()
	responseWritten(oc, 50_000) // still fits: the hint stays
	if c := responseBuffer(oc).Cap(); c != before {
		t.Fatalf("buffer after a smaller response has capacity %d, want %d", c, before)
	}
	responseWritten(oc, 80_000)
	if c := responseBuffer(oc).Cap(); c < 80_000 {
		t.Fatalf("buffer after an 80,000-byte response has capacity %d", c)
	}
}

// TestCollectFieldsRemembers: the fields of a selection set without variable directives are
// collected once and then given back (the same slice), one level down too; those of a
// selection set with @include are collected anew on every call, with the call's variables.
func TestCollectFieldsRemembers(t *testing.T) {
	schema := gqlparser.MustLoadSchema(&ast.Source{Input: `type Query { c: C } type C { id: ID name: String d: D } type D { x: String }`})
	collect := func(doc string, vars map[string]any) (root, below []graphql.CollectedField) {
		t.Helper()
		q, err := gqlparser.LoadQueryWithRules(schema, doc, nil)
		if err != nil {
			t.Fatal(err)
		}
		oc := &graphql.OperationContext{Doc: q, Operation: q.Operations[0], Variables: vars}
		sel := q.Operations[0].SelectionSet[0].(*ast.Field).SelectionSet
		a, b := collectFields(oc, sel, []string{"C"}), collectFields(oc, sel, []string{"C"})
		if len(a) == 0 || &a[0] != &b[0] {
			return nil, nil
		}
		for _, f := range a {
			if f.Name == "d" {
				x, y := collectFields(oc, f.Selections, []string{"D"}), collectFields(oc, f.Selections, []string{"D"})
				if &x[0] != &y[0] {
					t.Errorf("%s: the fields below d are collected anew", doc)
				}
				below = x
			}
		}
		return a, below
	}
	if root, below := collect(`{ c { id name d { x } } }`, nil); root == nil || below == nil {
		t.Errorf("a selection set without directives is collected anew on every call")
	}
	// Each call parses the document again: a new selection set, its own entry.
	doc := `query($a: Boolean!) { c { id name @include(if: $a) } }`
	if root, _ := collect(doc, map[string]any{"a": true}); root != nil {
		t.Errorf("a selection set with @include is remembered")
	}
}
