package graph

import (
	"context"
	"math"

	"github.com/99designs/gqlgen/complexity"
	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/parser"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/graph/model"
)

// Limits on what one GraphQL request may ask for, checked after parsing and validation and
// before any resolver runs, so a hostile query costs a parse and a walk of its syntax tree,
// never a database read.
const (
	// MaxTokens bounds the parser: a query of more lexical tokens is refused while it is read
	// (20,000 repeated directives never reach validation). GraphiQL's introspection query has
	// about 300.
	MaxTokens = 5000
	// MaxDepth bounds how deeply selections nest. The dashboard query (companies, edges, node,
	// ledger, edges, node, amount, amount) is 8 deep. Introspection (__schema, __type) is
	// exempt: the validator bounds it with its own rule.
	MaxDepth = 10
	// MaxFields bounds the fields written in a query document, before validation: the
	// validator compares same-named sibling fields pairwise, so thousands of repeats of one
	// field would cost seconds of CPU (4,900 cost 3.7 s; 300 cost about 12 ms). Real queries have
	// tens; GraphiQL's introspection query has about 70.
	MaxFields = 300
	// MaxSelections bounds the number of fields a query selects once its fragments are
	// expanded, so fragments that spread other fragments many times over cannot make the
	// complexity walk, or the execution, explode.
	MaxSelections = 2000
	// MaxComplexity bounds the work of a query: every field costs 1, and a list field costs its
	// page size (first, default 50) times what it selects for each item. The dashboard query,
	// 50 companies with their credit figures, hold and last 5 ledger entries, costs 4,751;
	// 250 companies with their last 5 entries fit, 250 companies with 250 entries each do not.
	MaxComplexity = 25000
)

// complexityRoot prices the list fields by the page size they ask for.
func complexityRoot() ComplexityRoot {
	var c ComplexityRoot
	c.Query.Companies = func(child int, first *int, _ *string, _ *string, _ *credit.Timestamp, _ *model.CompanyOrder, _ *string) int {
		return listCost(child, first)
	}
	c.Query.Applications = func(child int, first *int, _ *string, _ *string) int {
		return listCost(child, first)
	}
	c.Query.Events = func(child int, first *int, _ *string, _ *string, _ []string) int {
		return listCost(child, first)
	}
	c.Company.Ledger = func(child int, first *int, _ *string, _ *string) int {
		return listCost(child, first)
	}
	c.Company.Timeline = func(child int, first *int, _ *string) int {
		return listCost(child, first)
	}
	c.Company.Invoices = func(child int, first *int, _ *string, _ *string) int {
		return listCost(child, first)
	}
	// A statement's entries and open invoices are not paged (up to 5 years of a ledger): it is
	// priced as a list of the largest page, so one statement fits and a page of companies'
	// statements does not.
	c.Company.Statement = func(child int, _ string, _ string) int {
		largest := credit.MaxPageSize
		return listCost(child, &largest)
	}
	return c
}

// listCost is 1 plus the page size times the cost of one item. A first outside 1 to 250 is
// priced as the bound it breaks: the list refuses it anyway, with invalid_parameter.
func listCost(child int, first *int) int {
	n := credit.DefaultPageSize
	if first != nil {
		n = min(max(*first, 1), credit.MaxPageSize)
	}
	if child > (math.MaxInt-1)/n {
		return math.MaxInt
	}
	return 1 + n*child
}

// documentLimits refuses, before validation, documents with more than MaxFields fields. It
// parses the query once more, which costs microseconds; validating an oversized one costs
// seconds.
type documentLimits struct{}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationParameterMutator
} = documentLimits{}

func (documentLimits) ExtensionName() string                   { return "DocumentLimits" }
func (documentLimits) Validate(graphql.ExecutableSchema) error { return nil }

// MutateOperationParameters counts the fields of the document as written, without expanding
// fragments (that is measured after validation, which refuses fragment cycles).
func (documentLimits) MutateOperationParameters(ctx context.Context, p *graphql.RawParams) *gqlerror.Error {
	doc, err := parser.ParseQueryWithTokenLimit(&ast.Source{Input: p.Query}, MaxTokens)
	if err != nil {
		return nil // the executor parses again and reports the error
	}
	n := 0
	for _, op := range doc.Operations {
		n += countFields(op.SelectionSet)
	}
	for _, f := range doc.Fragments {
		n += countFields(f.SelectionSet)
	}
	if n > MaxFields {
		return refusal("the query has %d fields; at most %d are allowed", n, MaxFields)
	}
	return nil
}

func countFields(set ast.SelectionSet) int {
	n := 0
	for _, sel := range set {
		switch sel := sel.(type) {
		case *ast.Field:
			n += 1 + countFields(sel.SelectionSet)
		case *ast.InlineFragment:
			n += countFields(sel.SelectionSet)
		}
	}
	return n
}

// queryLimits refuses operations beyond MaxDepth, MaxSelections or MaxComplexity.
type queryLimits struct{ es graphql.ExecutableSchema }

var _ interface {
	graphql.HandlerExtension
	graphql.OperationContextMutator
} = &queryLimits{}

func (*queryLimits) ExtensionName() string { return "QueryLimits" }

func (l *queryLimits) Validate(es graphql.ExecutableSchema) error {
	l.es = es
	return nil
}

// MutateOperationContext measures the operation and refuses it when it is too big. The shape
// is measured first, with each fragment measured once, so that the complexity walk, which
// expands fragments every time they are spread, only runs on a query of bounded size.
func (l *queryLimits) MutateOperationContext(ctx context.Context, oc *graphql.OperationContext) *gqlerror.Error {
	m := measurer{fragments: oc.Doc.Fragments, memo: map[fragmentKey]shape{}}
	s := m.selectionSet(oc.Operation.SelectionSet, false)
	if s.depth > MaxDepth {
		return refusal("the query is %d levels deep; at most %d are allowed", s.depth, MaxDepth)
	}
	if s.selections > MaxSelections {
		return refusal("the query selects %d fields once its fragments are expanded; at most %d are allowed", s.selections, MaxSelections)
	}
	if c := complexity.Calculate(ctx, l.es, oc.Operation, oc.Variables); c > MaxComplexity {
		return refusal("the query's complexity is %d; at most %d is allowed. Each list counts its page size (first, default %d) times the fields asked for each item: ask for fewer items or fields, and page with after", c, MaxComplexity, credit.DefaultPageSize)
	}
	return nil
}

// shape is how deep a selection set nests and how many fields it selects, fragments expanded.
type shape struct{ depth, selections int }

type measurer struct {
	fragments ast.FragmentDefinitionList
	memo      map[fragmentKey]shape
}

// fragmentKey names a fragment as spread inside or outside introspection, which measure
// depth differently.
type fragmentKey struct {
	name          string
	introspection bool
}

// selectionSet measures a selection set. Under introspection fields depth is not counted.
func (m *measurer) selectionSet(set ast.SelectionSet, introspection bool) shape {
	var s shape
	for _, sel := range set {
		var child shape
		switch sel := sel.(type) {
		case *ast.Field:
			in := introspection || sel.Name == "__schema" || sel.Name == "__type"
			child = m.selectionSet(sel.SelectionSet, in)
			child.selections = saturatingAdd(child.selections, 1)
			if !in {
				child.depth++
			}
		case *ast.InlineFragment:
			child = m.selectionSet(sel.SelectionSet, introspection)
		case *ast.FragmentSpread:
			child = m.fragment(sel.Name, introspection)
		}
		s.depth = max(s.depth, child.depth)
		s.selections = saturatingAdd(s.selections, child.selections)
	}
	return s
}

// fragment measures a named fragment once per context. Validation has already refused
// unknown fragments and cycles.
func (m *measurer) fragment(name string, introspection bool) shape {
	key := fragmentKey{name, introspection}
	if s, ok := m.memo[key]; ok {
		return s
	}
	var s shape
	if def := m.fragments.ForName(name); def != nil {
		s = m.selectionSet(def.SelectionSet, introspection)
	}
	m.memo[key] = s
	return s
}

func saturatingAdd(a, b int) int {
	if a > math.MaxInt-b {
		return math.MaxInt
	}
	return a + b
}
