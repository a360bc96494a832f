package graph

import (
	"context"
	"strings"
	"testing"

	"github.com/creditd/creditd/httpapi"

	"github.com/99designs/gqlgen/complexity"
	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"
	"github.com/vektah/gqlparser/v2/validator"
)

// These tests measure queries directly. The schema has no cycles, so no valid query nests
// deeper than 8 and the depth limit can only be shown on a syntax tree.

func TestMeasureDepth(t *testing.T) {
	for _, tc := range []struct {
		query string
		depth int
	}{
		{"{ a }", 1},
		{"{ a { b { c } } d }", 3},
		{"{ a { ...F } } fragment F on T { b { c { d } } }", 4},
		{"{ a { ... on T { b { c } } } }", 3},
		{"{ __schema { types { fields { type { ofType { ofType { name } } } } } } a { b } }", 2},
		{"{ " + strings.Repeat("a { ", 11) + "b" + strings.Repeat(" }", 11) + " }", 12},
	} {
		doc, err := parser.ParseQuery(&ast.Source{Input: tc.query})
		if err != nil {
			t.Fatalf("%s: %v", tc.query, err)
		}
		m := measurer{fragments: doc.Fragments, memo: map[fragmentKey]shape{}}
		if got := m.selectionSet(doc.Operations[0].SelectionSet, false).depth; got != tc.depth {
			t.Errorf("%s: depth %d, want %d", tc.query, got, tc.depth)
		}
	}
}

// TestDepthLimitRefuses runs the limit on an 11-deep query: refused before execution.
func TestDepthLimitRefuses(t *testing.T) {
	doc := mustParse(t, "{ "+strings.Repeat("a { ", 10)+"b"+strings.Repeat(" }", 10)+" }")
	l := &queryLimits{}
	err := l.MutateOperationContext(context.Background(), &graphql.OperationContext{Doc: doc, Operation: doc.Operations[0]})
	if err == nil || !strings.Contains(err.Message, "11 levels deep") {
		t.Fatalf("an 11-deep query: %v", err)
	}
	if code := presentError(context.Background(), err).Extensions["code"]; code != httpapi.CodeInvalidRequest {
		t.Fatalf("code %v, want invalid_request", code)
	}
}

// TestComplexityOfRealQueries checks what the limits are sized for: the dashboard query at
// 50 and at 250 companies fits under MaxComplexity.
func TestComplexityOfRealQueries(t *testing.T) {
	es := NewExecutableSchema(Config{Resolvers: &Resolver{}, Complexity: complexityRoot()})
	for _, n := range []int{50, 250} {
		doc := mustParse(t, dashboard)
		if errs := validator.ValidateWithRules(es.Schema(), doc, nil); len(errs) > 0 {
			t.Fatal(errs)
		}
		vars, err := validator.VariableValues(es.Schema(), doc.Operations[0], map[string]any{"n": n})
		if err != nil {
			t.Fatal(err)
		}
		c := complexity.Calculate(context.Background(), es, doc.Operations[0], vars)
		t.Logf("dashboard of %d companies: complexity %d", n, c)
		if c > MaxComplexity {
			t.Errorf("dashboard of %d companies: complexity %d over %d", n, c, MaxComplexity)
		}
	}
}

func mustParse(t *testing.T, q string) *ast.QueryDocument {
	t.Helper()
	doc, err := parser.ParseQuery(&ast.Source{Input: q})
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

const dashboard = `query Dashboard($n: Int!) {
  companies(first: $n) {
    edges {
      node {
        id name status paymentTerms updatedAt
        creditLimit { amount currency }
        outstanding { amount currency }
        availableCredit { amount currency }
        hold { kind note placedAt placedBy }
        ledger(first: 5) {
          edges { cursor node { id kind amount { amount currency } platformOrderGid note occurredAt } }
          pageInfo { hasNextPage endCursor }
        }
      }
    }
    pageInfo { hasNextPage endCursor }
  }
}`

// TestEveryConnectionIsPricedByItsPageSize: a list field added without a price would cost 1
// whatever its page size. The connection fields are read from the served schema, so a new one
// fails here until it is priced and has a case.
func TestEveryConnectionIsPricedByItsPageSize(t *testing.T) {
	c := complexityRoot()
	first := 250
	costs := map[string]int{
		"Query.companies":    c.Query.Companies(2, &first, nil, nil, nil, nil, nil),
		"Query.applications": c.Query.Applications(2, &first, nil, nil),
		"Query.events":       c.Query.Events(2, &first, nil, nil, nil),
		"Company.ledger":     c.Company.Ledger(2, &first, nil, nil),
		"Company.timeline":   c.Company.Timeline(2, &first, nil),
		"Company.invoices":   c.Company.Invoices(2, &first, nil, nil),
	}
	schema := NewExecutableSchema(Config{}).Schema()
	found := 0
	for _, def := range schema.Types {
		if def.Kind != ast.Object || strings.HasPrefix(def.Name, "__") {
			continue
		}
		for _, f := range def.Fields {
			if !strings.HasSuffix(f.Type.Name(), "Connection") {
				continue
			}
			found++
			name := def.Name + "." + f.Name
			cost, ok := costs[name]
			switch {
			case !ok:
				t.Errorf("%s returns a connection and has no price case here", name)
			case cost != 1+250*2:
				t.Errorf("%s with first 250 and 2 per item costs %d, want %d", name, cost, 1+250*2)
			}
		}
	}
	if found != len(costs) {
		t.Errorf("the schema has %d connection fields, the cases %d", found, len(costs))
	}
}
