package graph

import (
	"bytes"
	"sync"
	"sync/atomic"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
)

// collectFields is graphql.CollectFields, remembered per selection set. gqlgen collects an
// object's selected fields anew for every object it marshals: for a dashboard, once for each of
// its 50 companies, 150 amounts and 250 ledger entries, the same fields each time. generated.go
// calls this instead (graph/internal/rewrite).
//
// The fields of a selection set depend only on the selection set, the fragments of its
// document, the object type and the variables of @skip, @include and @defer. So an entry is
// keyed by the selection set's identity (the address and length of its slice, which lives in
// gqlgen's cached parsed document) and the object type, and holds that selection set, so that
// its address cannot be reused for another while the entry exists. A selection set with one of
// those three directives anywhere in it, or in a fragment it merges, is never remembered: its
// fields are collected every time, with the request's variables.
//
// The fields returned are shared between requests: callers only read them (generated.go's
// FieldSets do).
//
// Performance code, part of the executor rewrites measured in issue 23 ("GraphQL executor" in
// BENCHMARKS.md: a dashboard's 43,662 → 22,037 allocations with the rewrites together). Tied
// to generated.go through graph/internal/rewrite, which fails when gqlgen's output changes
// shape.
func collectFields(oc *graphql.OperationContext, sel ast.SelectionSet, satisfies []string) []graphql.CollectedField {
	if len(sel) == 0 || len(satisfies) == 0 {
		return inPlace(oc, graphql.CollectFields(oc, sel, satisfies))
	}
	key := collectKey{first: &sel[0], n: len(sel), typ: satisfies[0]}
	if e, ok := collected.m.Load(key); ok {
		e := e.(*collectEntry)
		if e.fields != nil {
			return e.fields
		}
		return inPlace(oc, ownSelections(graphql.CollectFields(oc, sel, satisfies)))
	}
	fields := ownSelections(graphql.CollectFields(oc, sel, satisfies))
	e := &collectEntry{sel: sel}
	if !usesVariableDirective(oc.Doc, sel, 0) {
		fields = fields[:len(fields):len(fields)] // an append (FieldSet.AddField) copies it
		e.fields = fields
	} else {
		fields = inPlace(oc, fields) // graph/incremental.go
	}
	if collected.n.Add(1) > maxCollected {
		collected.m.Clear()
		collected.n.Store(1)
	}
	collected.m.Store(key, e)
	return fields
}

// maxCollected bounds the remembered selection sets: past it they are all forgotten. A
// document's selection sets are a few dozen; gqlgen caches 1,000 documents (NewHandler).
const maxCollected = 20_000

var collected struct {
	m sync.Map // collectKey -> *collectEntry
	n atomic.Int64
}

type collectKey struct {
	first *ast.Selection
	n     int
	typ   string
}

type collectEntry struct {
	sel    ast.SelectionSet // held so that the key's address is not reused
	fields []graphql.CollectedField
}

// ownSelections gives each collected field that appears once in its selection set the
// document's own selection set below it, the same selections: gqlgen copies it, which would
// give the fields below a new identity on every call.
func ownSelections(fields []graphql.CollectedField) []graphql.CollectedField {
	for i := range fields {
		f := &fields[i]
		if f.Field == nil || len(f.Selections) == 0 || len(f.Selections) != len(f.Field.SelectionSet) {
			continue
		}
		same := true
		for j, s := range f.Selections {
			same = same && s == f.Field.SelectionSet[j]
		}
		if same {
			f.Selections = f.Field.SelectionSet
		}
	}
	return fields
}

// usesVariableDirective reports whether sel, or a fragment it merges, has @skip, @include or
// @defer anywhere in it: directives whose effect on the fields collected depends on the
// request's variables.
func usesVariableDirective(doc *ast.QueryDocument, sel ast.SelectionSet, depth int) bool {
	if depth > 64 { // deeper than any document the limits let through; do not remember it
		return true
	}
	for _, s := range sel {
		var dirs ast.DirectiveList
		var below ast.SelectionSet
		switch s := s.(type) {
		case *ast.Field:
			dirs, below = s.Directives, s.SelectionSet
		case *ast.InlineFragment:
			dirs, below = s.Directives, s.SelectionSet
		case *ast.FragmentSpread:
			dirs = s.Directives
			var def *ast.FragmentDefinition
			if doc != nil {
				def = doc.Fragments.ForName(s.Name)
			}
			if def == nil {
				return true
			}
			if variableDirective(def.Directives) {
				return true
			}
			below = def.SelectionSet
		default:
			return true
		}
		if variableDirective(dirs) || usesVariableDirective(doc, below, depth+1) {
			return true
		}
	}
	return false
}

func variableDirective(dirs ast.DirectiveList) bool {
	for _, d := range dirs {
		switch d.Name {
		case "skip", "include", "defer":
			return true
		}
	}
	return false
}

// responseBuffer is the buffer a query's data is written into, sized from the same operation's
// last response (responseWritten): a dashboard's is about 60 KB, which a buffer growing from
// nothing reaches in a dozen allocations and copies. The size is a hint only: the buffer grows
// as it must, and the response is the same.
func responseBuffer(oc *graphql.OperationContext) *bytes.Buffer {
	if oc.Operation != nil {
		if n, ok := responseSizes.m.Load(oc.Operation); ok {
			return bytes.NewBuffer(make([]byte, 0, n.(int)))
		}
	}
	return new(bytes.Buffer)
}

// responseWritten remembers the size of a query's response for its operation's next one.
func responseWritten(oc *graphql.OperationContext, size int) {
	if oc.Operation == nil || size > maxResponseHint {
		return
	}
	hint := size + size/8
	n, ok := responseSizes.m.Load(oc.Operation)
	if ok && size <= n.(int) && hint >= n.(int)/2 {
		return // the hint still fits
	}
	if !ok && responseSizes.n.Add(1) > maxCollected {
		responseSizes.m.Clear()
		responseSizes.n.Store(1)
	}
	responseSizes.m.Store(oc.Operation, hint)
}

// maxResponseHint is the largest response whose size is remembered.
const maxResponseHint = 4 << 20

var responseSizes struct {
	m sync.Map // *ast.OperationDefinition (held, so its address is not reused) -> int
	n atomic.Int64
}
