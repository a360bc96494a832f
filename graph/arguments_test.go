package graph_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/vektah/gqlparser/v2/ast"

	"github.com/creditd/creditd/graph"
)

// wantNothingRead fails if the requests log recorded read or wrote data: a refused request
// reads nothing but its key.
func wantNothingRead(tb testing.TB, log *sqlLog) {
	tb.Helper()
	if read := touching(log.Snapshot(), "companies", "ledger_entries", "applications", "events", "timeline_events"); len(read) > 0 {
		tb.Errorf("a refused request read data:\n%s", strings.Join(read, "\n"))
	}
}

// TestConnectionArgumentsRefusedBeforeExecution: an argument a list refuses refuses the whole
// request with 400 and no data, whether written in the query or passed as a variable, at the
// top or nested; its siblings are not run.
func TestConnectionArgumentsRefusedBeforeExecution(t *testing.T) {
	log := &sqlLog{}
	f := newFixture(t, log.Options())
	foreignCursor := at(t, query(t, f.env, f.otherKey, `{ companies(first: 1) { pageInfo { endCursor } } }`), "companies", "pageInfo", "endCursor").(string)
	ledgerCursor := at(t, query(t, f.env, f.readCredit, `query($id: ID!) { company(id: $id) { ledger(first: 1) { pageInfo { endCursor } } } }`,
		map[string]any{"id": f.alpen.ID}), "company", "ledger", "pageInfo", "endCursor").(string)
	for _, tc := range []struct {
		name, query string
		vars        map[string]any
		param       string
	}{
		{"first 251", `{ a: company(id: "` + f.alpen.ID + `") { name } companies(first: 251) { edges { cursor } } }`, nil, "first"},
		{"first 251 as a variable", `query($n: Int) { a: company(id: "` + f.alpen.ID + `") { name } companies(first: $n) { edges { cursor } } }`, map[string]any{"n": 251}, "first"},
		{"first 0", `{ applications(first: 0) { edges { cursor } } }`, nil, "first"},
		{"nested ledger first 0", `{ companies { edges { node { name ledger(first: 0) { edges { cursor } } } } } }`, nil, "first"},
		{"nested in a fragment, as a variable", `query($n: Int) { companies { edges { node { ...F } } } } fragment F on Company { timeline(first: $n) { edges { cursor } } }`, map[string]any{"n": -1}, "first"},
		{"malformed after", `{ companies(after: "abc") { edges { cursor } } }`, nil, "after"},
		{"another store's cursor", `query($c: String) { companies(after: $c) { edges { cursor } } }`, map[string]any{"c": foreignCursor}, "after"},
		{"another list's cursor", `query($c: String) { events(after: $c) { edges { cursor } } }`, map[string]any{"c": ledgerCursor}, "after"},
		{"a ledger's cursor for invoices", `query($c: String) { companies { edges { node { invoices(after: $c) { edges { cursor } } } } } }`, map[string]any{"c": ledgerCursor}, "after"},
		{"afterEntry not an entry", `{ companies { edges { node { ledger(afterEntry: "co_x") { edges { cursor } } } } } }`, nil, "afterEntry"},
		{"afterEvent not an event", `query($e: ID) { events(afterEvent: $e) { edges { cursor } } }`, map[string]any{"e": "le_x"}, "afterEvent"},
		{"unknown event type", `{ events(types: ["nope"]) { edges { cursor } } }`, nil, "types"},
		{"bad updatedSince", `{ companies(updatedSince: "yesterday") { edges { cursor } } }`, nil, "updatedSince"},
		{"bad updatedSince as a variable", `query($s: DateTime) { companies(updatedSince: $s) { edges { cursor } } }`, map[string]any{"s": "2026-13-01"}, "updatedSince"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			log.Reset()
			res := doGQL(t, f.env, gqlRequest{Key: f.both, Query: tc.query, Variables: tc.vars})
			wantRefused(t, res, http.StatusBadRequest, "invalid_parameter", tc.param)
			wantNothingRead(t, log)
			if tc.param != "types" && !strings.HasPrefix(res.Errors[0].Message, tc.param+" ") {
				t.Errorf("message %q does not name %s", res.Errors[0].Message, tc.param)
			}
		})
	}
}

// TestEveryConnectionArgumentIsChecked reads the connection fields from the served schema and
// sends each a page size of 0 and a cursor that is no cursor: each is refused before execution.
// A connection added later is checked as well, or fails here.
func TestEveryConnectionArgumentIsChecked(t *testing.T) {
	f := newFixture(t)
	// How to reach a field of each type that has connections.
	around := map[string]func(field string) string{
		"Query": func(field string) string { return "{ " + field + " { edges { cursor } } }" },
		"Company": func(field string) string {
			return "{ companies(first: 1) { edges { node { " + field + " { edges { cursor } } } } } }"
		},
	}
	found := 0
	for _, def := range graph.NewExecutableSchema(graph.Config{}).Schema().Types {
		if def.Kind != ast.Object || strings.HasPrefix(def.Name, "__") {
			continue
		}
		for _, fd := range def.Fields {
			if !strings.HasSuffix(fd.Type.Name(), "Connection") {
				continue
			}
			found++
			wrap, ok := around[def.Name]
			if !ok {
				t.Errorf("%s.%s: the test does not know how to reach a %s", def.Name, fd.Name, def.Name)
				continue
			}
			for _, arg := range []struct{ name, value string }{{"first", "0"}, {"first", "251"}, {"after", `"x.y"`}} {
				if fd.Arguments.ForName(arg.name) == nil {
					t.Errorf("%s.%s has no %s argument", def.Name, fd.Name, arg.name)
					continue
				}
				q := wrap(fd.Name + "(" + arg.name + ": " + arg.value + ")")
				res := doGQL(t, f.env, gqlRequest{Key: f.full, Query: q})
				if res.HTTP.Status != http.StatusBadRequest || len(res.Errors) != 1 || res.Errors[0].Extensions.Param != arg.name {
					t.Errorf("%s: %d %s", q, res.HTTP.Status, res.HTTP.Body)
				}
			}
		}
	}
	if found < 5 {
		t.Fatalf("found %d connection fields, want at least 5", found)
	}
}

// TestRequestErrorsHaveNoData: a query that does not parse or does not validate is answered
// without a data member, over POST and GET; a variable of the wrong type too.
func TestRequestErrorsHaveNoData(t *testing.T) {
	f := newFixture(t)
	for _, tc := range []struct{ name, query string }{
		{"parse", `{ companies { `},
		{"validation", `{ companies { nope } }`},
		{"limit", `{ companies(first: 250) { edges { node { ledger(first: 250) { edges { cursor } } } } } }`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantRefused(t, doGQL(t, f.env, gqlRequest{Key: f.readCredit, Query: tc.query}), http.StatusBadRequest, "invalid_request", "")
			resp := f.env.Get(t, f.readCredit, "/graphql?query="+urlQuery(tc.query))
			wantRefused(t, decodeGQL(t, resp), http.StatusBadRequest, "invalid_request", "")
		})
	}
	res := doGQL(t, f.env, gqlRequest{Key: f.readCredit, Query: `query($n: Int) { companies(first: $n) { edges { cursor } } }`, Variables: map[string]any{"n": "ten"}})
	wantRefused(t, res, http.StatusBadRequest, "invalid_request", "")
}

// TestFieldErrorKeepsData: a valid query whose one field fails during execution is 200, with the
// other fields' data and the error.
func TestFieldErrorKeepsData(t *testing.T) {
	f := newFixture(t)
	res := doGQL(t, f.env, gqlRequest{Key: f.readCredit,
		Query: `{ missing: company(id: "co_nope") { name } companies(first: 1) { edges { node { name } } } apps: applications { edges { cursor } } }`})
	if res.HTTP.Status != http.StatusOK {
		t.Fatalf("status %d: %s", res.HTTP.Status, res.HTTP.Body)
	}
	if len(res.Errors) != 2 || res.Errors[0].Extensions.Code == res.Errors[1].Extensions.Code ||
		!strings.Contains(string(res.HTTP.Body), `"not_found"`) || !strings.Contains(string(res.HTTP.Body), `"insufficient_scope"`) {
		t.Fatalf("errors: %s", res.HTTP.Body)
	}
	if at(t, res.Data, "companies", "edges", 0, "node", "name") == nil || res.Data["missing"] != nil {
		t.Fatalf("data: %s", res.HTTP.Body)
	}
	if edges := at(t, res.Data, "apps", "edges").([]any); len(edges) != 0 {
		t.Errorf("a connection without scope: %v, want an empty connection", edges)
	}
	// An afterEntry of another company's ledger needs the ledger read to tell: a field error.
	res = doGQL(t, f.env, gqlRequest{Key: f.readCredit,
		Query:     `query($id: ID!, $le: ID) { company(id: $id) { name ledger(afterEntry: $le) { edges { cursor } } } }`,
		Variables: map[string]any{"id": f.brau.ID, "le": f.entries[0].ID}})
	if res.HTTP.Status != http.StatusOK || at(t, res.Data, "company") != nil {
		t.Fatalf("afterEntry of another ledger: %d %s", res.HTTP.Status, res.HTTP.Body)
	}
	res.wantCodes(t, "invalid_parameter")
}

// TestFieldWithoutScope holds docs/graphql.md and the README to what the server does for a
// field the key lacks the scope for: 200, an insufficient_scope error per field, a single
// object null and a (non-null) connection empty, the other fields' data kept.
func TestFieldWithoutScope(t *testing.T) {
	f := newFixture(t)
	res := doGQL(t, f.env, gqlRequest{Key: f.noRead, Query: `query($id: ID!) {
		companies { edges { cursor } pageInfo { hasNextPage endCursor } }
		applications { edges { cursor } pageInfo { hasNextPage endCursor } }
		events { edges { cursor } pageInfo { hasNextPage endCursor } }
		company(id: $id) { id }
		__typename
	}`, Variables: map[string]any{"id": f.alpen.ID}})
	if res.HTTP.Status != http.StatusOK || res.Data["__typename"] != "Query" {
		t.Fatalf("%d %s", res.HTTP.Status, res.HTTP.Body)
	}
	res.wantCodes(t, "insufficient_scope", "insufficient_scope", "insufficient_scope", "insufficient_scope")
	for _, field := range []string{"companies", "applications", "events"} {
		if edges := at(t, res.Data, field, "edges").([]any); len(edges) != 0 || at(t, res.Data, field, "pageInfo", "hasNextPage") != false {
			t.Errorf("%s without scope: %v, want an empty connection", field, res.Data[field])
		}
	}
	if v, ok := res.Data["company"]; !ok || v != nil {
		t.Errorf("company without scope: %v, want null", v)
	}
}
