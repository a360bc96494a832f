package reliability_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/vektah/gqlparser/v2/ast"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
	"github.com/creditd/creditd/graph"
	"github.com/creditd/creditd/ids"
	"github.com/creditd/creditd/rest"
)

// The isolation matrix: three stores full of canary values; every /v1 route, every GraphQL
// root field and every GraphQL field that takes an ID is called with each store's key and every
// ID (and cursor) of the two other stores. Pass: each such call answers exactly as it would for
// an ID that exists nowhere (404 not_found in REST; null, or a not_found error, in GraphQL; 400
// invalid_parameter for an ID or cursor given as a query parameter), no answer carries a byte
// of another store's data, headers included, and no other store's data changed. The routes
// come from rest.API.Routes and the fields from the served GraphQL schema, and each must have a
// case below: a route or field added without one fails the test.

// restCase says how the matrix calls one /v1 route.
type restCase struct {
	// body is a valid body for a write.
	body string
	// idParams are the query parameters that name a record or a position in another list:
	// each is called with the other stores' values.
	idParams []string
	// query is a query string the route needs to answer 200 ("{today}" is the clock's UTC
	// day), sent with every call of the route on a record.
	query string
}

var restIsolationCases = map[string]restCase{
	"GET /v1/companies":                        {idParams: []string{"cursor"}},
	"GET /v1/companies/{id}":                   {},
	"GET /v1/companies/{id}/ledger":            {idParams: []string{"cursor", "after"}},
	"GET /v1/companies/{id}/invoices":          {}, // one invoice per canary company: no second page to take a cursor from
	"GET /v1/invoices/{id}":                    {},
	"GET /v1/companies/{id}/statement":         {query: "from={today}&to={today}"},
	"GET /v1/companies/{id}/payment-behaviour": {},
	"GET /v1/applications":                     {idParams: []string{"cursor"}},
	"GET /v1/applications/{id}":                {},
	"POST /v1/companies/{id}/adjustments":      {body: `{"amount":"1.00","note":"isolation probe"}`},
	"PUT /v1/companies/{id}/credit-limit":      {body: `{"amount":"1.00","reason":"isolation probe"}`},
	"POST /v1/companies/{id}/hold":             {body: `{"note":"isolation probe"}`},
	"DELETE /v1/companies/{id}/hold":           {},
	"POST /v1/invoices/{id}/promise":           {body: `{"promised_for":"2026-03-10","note":"isolation probe"}`},
	"DELETE /v1/invoices/{id}/promise":         {},
	"POST /v1/invoices/{id}/dispute":           {body: `{"reason":"isolation probe"}`},
	"DELETE /v1/invoices/{id}/dispute":         {},
	"GET /v1/events":                           {idParams: []string{"cursor", "after"}},
	"GET /v1/events/{id}":                      {},
	// The whole store in one stream: it must hold the store's own records and none of another's.
	"GET /v1/export": {},
}

// gqlCase says what a GraphQL field that takes IDs is: a look-up answers null for a foreign ID
// (with not_found, or silently for node); a list refuses another store's cursor like a tampered
// one; a mutation answers not_found; a nested field is reached through one of the caller's own
// records and treats a foreign ID like an unknown one.
type gqlCase string

const (
	gqlLookup   gqlCase = "lookup"
	gqlList     gqlCase = "list"
	gqlMutation gqlCase = "mutation"
	gqlNested   gqlCase = "nested"
	// gqlAggregate is a figure over the caller's store that takes no ID: it answers without
	// errors and shows nothing of another store.
	gqlAggregate gqlCase = "aggregate"
	// gqlSubscription is a subscription (over a WebSocket) whose ID argument is a position in
	// the caller's feed: another store's ID is refused like an unknown one.
	gqlSubscription gqlCase = "subscription"
)

// graphqlIsolationCases lists every root field and every other field with an ID argument.
var graphqlIsolationCases = map[string]gqlCase{
	"Query.node":                gqlLookup,
	"Query.company":             gqlLookup,
	"Query.companies":           gqlList,
	"Query.application":         gqlLookup,
	"Query.applications":        gqlList,
	"Query.events":              gqlList,
	"Query.receivables":         gqlAggregate,
	"Mutation.createAdjustment": gqlMutation,
	"Mutation.setCreditLimit":   gqlMutation,
	"Mutation.placeHold":        gqlMutation,
	"Mutation.liftHold":         gqlMutation,
	"Mutation.recordPromise":    gqlMutation,
	"Mutation.withdrawPromise":  gqlMutation,
	"Mutation.openDispute":      gqlMutation,
	"Mutation.resolveDispute":   gqlMutation,
	"Company.ledger":            gqlNested,
	"Subscription.events":       gqlSubscription,
}

// unknownLike returns an ID of the same kind as id that no store has.
func unknownLike(id string) string {
	prefix, _, _ := strings.Cut(id, "_")
	return ids.New(prefix)
}

// tampered returns cursor with one character of its signature changed: a cursor no store
// signed.
func tampered(cursor string) string {
	i := strings.LastIndexByte(cursor, '.') + 3
	repl := byte('A')
	if cursor[i] == 'A' {
		repl = 'B'
	}
	return cursor[:i] + string(repl) + cursor[i+1:]
}

// exchange is one request's answer as the matrix compares it.
type exchange struct {
	status int
	header http.Header
	body   []byte
}

// bytesOf renders the answer's headers and body, the bytes scanned for canaries.
func (x exchange) bytesOf() []byte {
	var b bytes.Buffer
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range x.header {
			if !yield(k) {
				return
			}
		}
	}) {
		fmt.Fprintf(&b, "%s: %s\n", k, strings.Join(x.header[k], ", "))
	}
	b.Write(x.body)
	return b.Bytes()
}

// comparable returns the answer with what legitimately differs between two requests removed:
// the request id, the rate-limit counter, and the probed value itself.
func (x exchange) comparable(probe string) string {
	h := x.header.Clone()
	h.Del("X-Request-Id")
	h.Del("X-Ratelimit-Remaining")
	h.Del("Date")
	return fmt.Sprintf("%d %v %s", x.status, h, bytes.ReplaceAll(x.body, []byte(probe), []byte("<probe>")))
}

type matrix struct {
	t      *testing.T
	env    *credittest.Env
	stores []canaryStore
	calls  int
}

func (m *matrix) send(method, target, key string, body string) exchange {
	m.t.Helper()
	m.calls++
	var b []byte
	hdr := http.Header{}
	if body != "" {
		b = []byte(body)
		hdr.Set("Content-Type", "application/json")
	}
	rec := serve(m.env.Handler, method, target, key, hdr, b)
	return exchange{status: rec.Code, header: rec.Header(), body: rec.Body.Bytes()}
}

// others returns every store but i.
func (m *matrix) others(i int) []canaryStore {
	var out []canaryStore
	for j, s := range m.stores {
		if j != i {
			out = append(out, s)
		}
	}
	return out
}

// checkNoLeak fails when x carries a canary of a store other than the caller's.
func (m *matrix) checkNoLeak(i int, what string, x exchange) {
	m.t.Helper()
	if found := leaks(x.bytesOf(), m.others(i)...); len(found) > 0 {
		m.t.Errorf("store %d: %s: answer carries %v:\n%s", i, what, found, x.bytesOf())
	}
}

// checkLikeUnknown fails unless the answer for a foreign value equals the answer for an unknown
// one, byte for byte but for the probed value, and has the expected status and code.
func (m *matrix) checkLikeUnknown(i int, what string, foreign, unknown exchange, foreignProbe, unknownProbe string, status int, code string) {
	m.t.Helper()
	if got, want := foreign.comparable(foreignProbe), unknown.comparable(unknownProbe); got != want {
		m.t.Errorf("store %d: %s: a foreign value answers differently from an unknown one:\nforeign %s\nunknown %s", i, what, got, want)
	}
	var e struct{ Error apiError }
	_ = json.Unmarshal(foreign.body, &e)
	if foreign.status != status || e.Error.Code != code {
		m.t.Errorf("store %d: %s: %d %s, want %d %s", i, what, foreign.status, foreign.body, status, code)
	}
}

// restCursor returns the next_cursor of store s's first one-item page of a list.
func (m *matrix) restCursor(s canaryStore, path string) string {
	m.t.Helper()
	x := m.send(http.MethodGet, path+"?limit=1", s.key, "")
	var page struct {
		NextCursor *string `json:"next_cursor"`
	}
	if err := json.Unmarshal(x.body, &page); err != nil || x.status != 200 || page.NextCursor == nil {
		m.t.Fatalf("store %d: %s?limit=1: no next_cursor: %d %s", s.n, path, x.status, x.body)
	}
	return *page.NextCursor
}

// snapshot is what each store's own key reads of its data, to prove nothing changed.
func (m *matrix) snapshot() map[string]string {
	m.t.Helper()
	out := map[string]string{}
	for _, s := range m.stores {
		for _, p := range []string{"/v1/companies", "/v1/companies/" + s.company + "/ledger", "/v1/companies/" + s.company2 + "/ledger", "/v1/applications"} {
			x := m.send(http.MethodGet, p+"?limit=250", s.key, "")
			out[s.id+p] = fmt.Sprintf("%d %s", x.status, x.body)
		}
		for _, c := range []string{s.company, s.company2} {
			tl, err := m.env.Service.Timeline.List(credittest.Admin(), c, credit.ListParams{})
			if err != nil {
				m.t.Fatal(err)
			}
			b, _ := json.Marshal(tl.Data)
			out[s.id+" timeline "+c] = string(b)
		}
	}
	return out
}

func TestIsolationMatrix(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	m := &matrix{t: t, env: env}
	for n := range 3 {
		m.stores = append(m.stores, mustCanaryStore(t, env, n))
	}
	before := m.snapshot()
	restCalls := m.restMatrix()
	gqlCalls := m.graphqlMatrix()
	after := m.snapshot()
	for k, v := range before {
		if after[k] != v {
			t.Errorf("%s changed while other stores probed it:\nbefore %s\nafter  %s", k, v, after[k])
		}
	}
	t.Logf("isolation matrix: %d stores, %d REST calls, %d GraphQL calls", len(m.stores), restCalls, gqlCalls)
}

// restMatrix runs the REST half and returns how many calls it made.
func (m *matrix) restMatrix() int {
	t := m.t
	start := m.calls
	routes := rest.NewWith(rest.Services{}).Routes()
	for _, rt := range routes {
		if _, ok := restIsolationCases[rt.Pattern]; !ok {
			t.Errorf("route %q has no case in restIsolationCases: say how the isolation matrix calls it", rt.Pattern)
		}
	}
	if t.Failed() {
		t.FailNow()
	}
	for i, me := range m.stores {
		for _, rt := range routes {
			rc := restIsolationCases[rt.Pattern]
			method, pattern, _ := strings.Cut(rt.Pattern, " ")
			query := ""
			if rc.query != "" {
				query = "?" + strings.ReplaceAll(rc.query, "{today}", m.env.Clock.Now().UTC().Format(time.DateOnly))
			}
			if strings.Contains(pattern, "{id}") {
				// The caller's own record answers (so the matrix is not vacuous)...
				own := me.company
				if strings.HasPrefix(pattern, "/v1/applications/") {
					own = me.application
				}
				if strings.HasPrefix(pattern, "/v1/events/") {
					own = me.feedEvents[0]
				}
				if strings.HasPrefix(pattern, "/v1/invoices/") {
					own = me.invoice
				}
				if method == http.MethodGet {
					x := m.send(method, strings.ReplaceAll(pattern, "{id}", own)+query, me.key, "")
					if x.status != 200 {
						t.Errorf("store %d: %s on its own record: %d %s", i, rt.Pattern, x.status, x.body)
					}
					m.checkNoLeak(i, rt.Pattern+" own record", x)
				}
				// ...and every ID of every other store answers like an ID that exists nowhere.
				for _, other := range m.others(i) {
					for _, id := range other.allIDs() {
						unknown := unknownLike(id)
						what := fmt.Sprintf("%s with store %d's %s", rt.Pattern, other.n, id)
						fx := m.send(method, strings.ReplaceAll(pattern, "{id}", id)+query, me.key, rc.body)
						ux := m.send(method, strings.ReplaceAll(pattern, "{id}", unknown)+query, me.key, rc.body)
						m.checkNoLeak(i, what, fx)
						m.checkLikeUnknown(i, what, fx, ux, id, unknown, http.StatusNotFound, string(credit.CodeNotFound))
					}
				}
			} else {
				x := m.send(method, pattern, me.key, "")
				m.checkNoLeak(i, rt.Pattern, x)
				if x.status != 200 || !bytes.Contains(x.body, []byte(me.tag)) {
					t.Errorf("store %d: %s does not list the store's own records: %d %s", i, rt.Pattern, x.status, x.body)
				}
			}
			// Query parameters that carry another store's IDs or cursors.
			path := strings.ReplaceAll(pattern, "{id}", me.company)
			for _, param := range rc.idParams {
				for _, other := range m.others(i) {
					var probes []string
					switch param {
					case "cursor":
						probes = []string{m.restCursor(other, strings.ReplaceAll(pattern, "{id}", other.company))}
					case "after":
						probes = other.entries
						if strings.HasPrefix(pattern, "/v1/events") {
							probes = other.feedEvents
						}
					default:
						t.Fatalf("%s: no probe values for query parameter %q", rt.Pattern, param)
					}
					for _, probe := range probes {
						unknown := unknownLike(probe)
						if param == "cursor" {
							unknown = tampered(m.restCursor(me, path))
						}
						what := fmt.Sprintf("%s?%s= store %d's %s", rt.Pattern, param, other.n, probe)
						fx := m.send(method, path+"?"+url.Values{param: {probe}}.Encode(), me.key, "")
						ux := m.send(method, path+"?"+url.Values{param: {unknown}}.Encode(), me.key, "")
						m.checkNoLeak(i, what, fx)
						m.checkLikeUnknown(i, what, fx, ux, probe, unknown, http.StatusBadRequest, string(credit.CodeInvalidParameter))
					}
				}
			}
		}
	}
	return m.calls - start
}

// gqlSchema is the schema /graphql serves.
func gqlSchema() *ast.Schema { return graph.NewExecutableSchema(graph.Config{}).Schema() }

// selection builds a selection set of every field of typ down to depth levels, giving list
// fields a small page, skipping fields with required arguments: everything a response could
// carry, so a leak anywhere in the type shows. Each record type (a Node) is expanded once per
// document, where it first appears: its fields are checked there, and a record reached again
// through another (LedgerEntry.company inside Company.ledger, Event.object) would only repeat
// them and push the query over the field limit.
func selection(s *ast.Schema, typ string, depth int) string {
	return aliasedSelection(s, typ, depth, "", map[string]bool{})
}

// aliasedSelection is selection with each top-level field aliased alias+name, so that the
// fragments of an interface's types never select one name with two types. expanded holds the
// record types the document already selects.
func aliasedSelection(s *ast.Schema, typ string, depth int, alias string, expanded map[string]bool) string {
	def := s.Types[typ]
	if def == nil || depth <= 0 {
		return ""
	}
	if def.Kind == ast.Object && slices.Contains(def.Interfaces, "Node") {
		if expanded[typ] {
			return ""
		}
		expanded[typ] = true
	}
	switch def.Kind {
	case ast.Scalar, ast.Enum:
		return ""
	case ast.Interface, ast.Union:
		parts := []string{"__typename"}
		if def.Kind == ast.Interface {
			for _, f := range def.Fields {
				if f.Type.Name() != "" && isLeaf(s, f.Type.Name()) {
					parts = append(parts, f.Name)
				}
			}
		}
		for _, p := range s.GetPossibleTypes(def) {
			if sel := aliasedSelection(s, p.Name, depth, p.Name+"_", expanded); sel != "" {
				parts = append(parts, "... on "+p.Name+" "+sel)
			}
		}
		return "{ " + strings.Join(parts, " ") + " }"
	}
	var parts []string
	for _, f := range def.Fields {
		if strings.HasPrefix(f.Name, "__") {
			continue
		}
		var args []string
		required := false
		for _, a := range f.Arguments {
			switch {
			case a.Type.NonNull && a.DefaultValue == nil:
				required = true
			case a.Name == "first":
				args = append(args, "first: 2")
			}
		}
		if required {
			continue
		}
		call := f.Name
		if alias != "" {
			call = alias + f.Name + ": " + f.Name
		}
		if len(args) > 0 {
			call += "(" + strings.Join(args, ", ") + ")"
		}
		if isLeaf(s, f.Type.Name()) {
			parts = append(parts, call)
		} else if sel := aliasedSelection(s, f.Type.Name(), depth-1, "", expanded); sel != "" {
			parts = append(parts, call+" "+sel)
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "{ " + strings.Join(parts, " ") + " }"
}

func isLeaf(s *ast.Schema, typ string) bool {
	def := s.Types[typ]
	return def != nil && (def.Kind == ast.Scalar || def.Kind == ast.Enum)
}

// gqlValue is a GraphQL literal for an argument of type t: probe for IDs, and for an input
// object, an object of its required fields. ok is false for a type the matrix cannot fill.
func gqlValue(s *ast.Schema, t *ast.Type, probe string) (string, bool) {
	switch t.Name() {
	case "ID":
		return fmt.Sprintf("%q", probe), true
	case "Decimal":
		return `"1.00"`, true
	case "String":
		return `"isolation probe"`, true
	case "Int":
		return "2", true
	}
	def := s.Types[t.Name()]
	if def == nil || def.Kind != ast.InputObject {
		return "", false
	}
	var fields []string
	for _, f := range def.Fields {
		if !f.Type.NonNull || f.DefaultValue != nil {
			continue
		}
		v, ok := gqlValue(s, f.Type, probe)
		if !ok {
			return "", false
		}
		fields = append(fields, f.Name+": "+v)
	}
	return "{" + strings.Join(fields, ", ") + "}", true
}

// gqlCall is a document calling field of root (query or mutation) with its required arguments
// filled from probe, plus extra arguments, selecting everything below it.
func gqlCall(t *testing.T, s *ast.Schema, op string, f *ast.FieldDefinition, probe string, extra ...string) string {
	t.Helper()
	args := extra
	for _, a := range f.Arguments {
		if !a.Type.NonNull || a.DefaultValue != nil {
			continue
		}
		v, ok := gqlValue(s, a.Type, probe)
		if !ok {
			t.Fatalf("%s.%s: argument %s of type %s: the isolation matrix does not know how to fill it; teach gqlValue", op, f.Name, a.Name, a.Type)
		}
		args = append(args, a.Name+": "+v)
	}
	call := f.Name
	if len(args) > 0 {
		call += "(" + strings.Join(args, ", ") + ")"
	}
	if !isLeaf(s, f.Type.Name()) {
		call += " " + selection(s, f.Type.Name(), 6)
	}
	return op + " { " + call + " }"
}

// gql posts a document as key.
func (m *matrix) gql(key, doc string) (exchange, gqlResponse) {
	m.t.Helper()
	body, _ := json.Marshal(map[string]string{"query": doc})
	x := m.send(http.MethodPost, "/graphql", key, string(body))
	var g gqlResponse
	if err := json.Unmarshal(x.body, &g); err != nil || x.status >= 500 {
		m.t.Fatalf("graphql %s: %d %s", doc, x.status, x.body)
	}
	return x, g
}

// checkNullOrNotFound fails unless the answer gives field no data and reports only not_found
// (or nothing, for node).
func (m *matrix) checkNullOrNotFound(i int, what, field string, x exchange, g gqlResponse) {
	m.t.Helper()
	if v, ok := g.Data[field]; ok && string(v) != "null" {
		m.t.Errorf("store %d: %s: data %s, want null: %s", i, what, v, x.body)
	}
	for _, c := range g.codes() {
		if c != string(credit.CodeNotFound) {
			m.t.Errorf("store %d: %s: error %s, want only not_found: %s", i, what, c, x.body)
		}
	}
	if x.status != http.StatusOK {
		m.t.Errorf("store %d: %s: status %d: %s", i, what, x.status, x.body)
	}
}

// graphqlMatrix runs the GraphQL half and returns how many calls it made.
func (m *matrix) graphqlMatrix() int {
	t := m.t
	start := m.calls
	s := gqlSchema()
	type field struct {
		name string // Parent.field
		op   string // query, mutation, or the parent type for nested fields
		def  *ast.FieldDefinition
	}
	var fields []field
	for _, root := range []*ast.Definition{s.Query, s.Mutation, s.Subscription} {
		if root == nil {
			continue
		}
		for _, f := range root.Fields {
			if !strings.HasPrefix(f.Name, "__") {
				fields = append(fields, field{root.Name + "." + f.Name, strings.ToLower(root.Name), f})
			}
		}
	}
	// Any other field that takes an ID could be handed another store's.
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for n := range s.Types {
			if !yield(n) {
				return
			}
		}
	}) {
		def := s.Types[name]
		if def.Kind != ast.Object || def == s.Query || def == s.Mutation || def == s.Subscription || strings.HasPrefix(name, "__") {
			continue
		}
		for _, f := range def.Fields {
			for _, a := range f.Arguments {
				if a.Type.Name() == "ID" {
					fields = append(fields, field{name + "." + f.Name, name, f})
					break
				}
			}
		}
	}
	sort.Slice(fields, func(a, b int) bool { return fields[a].name < fields[b].name })
	for _, f := range fields {
		if _, ok := graphqlIsolationCases[f.name]; !ok {
			t.Errorf("GraphQL field %s has no case in graphqlIsolationCases: say how the isolation matrix calls it", f.name)
		}
	}
	if t.Failed() {
		t.FailNow()
	}

	for i, me := range m.stores {
		ownOf := map[string]string{"Company": me.company, "LedgerEntry": me.entries[0], "TimelineEvent": me.events[0], "Application": me.application, "Event": me.feedEvents[0]}
		for _, f := range fields {
			switch graphqlIsolationCases[f.name] {
			case gqlLookup, gqlMutation:
				if graphqlIsolationCases[f.name] == gqlLookup {
					// The caller's own records answer (not vacuous).
					for typ, own := range ownOf {
						if f.def.Type.Name() != typ && f.def.Type.Name() != "Node" {
							continue
						}
						x, g := m.gql(me.key, gqlCall(t, s, f.op, f.def, own))
						if string(g.Data[f.def.Name]) == "null" || len(g.Errors) > 0 {
							t.Errorf("store %d: %s on its own %s: %s", i, f.name, typ, x.body)
						}
						m.checkNoLeak(i, f.name+" own "+typ, x)
					}
				}
				for _, other := range m.others(i) {
					for _, id := range other.allIDs() {
						unknown := unknownLike(id)
						what := fmt.Sprintf("%s with store %d's %s", f.name, other.n, id)
						fx, fg := m.gql(me.key, gqlCall(t, s, f.op, f.def, id))
						ux, _ := m.gql(me.key, gqlCall(t, s, f.op, f.def, unknown))
						m.checkNoLeak(i, what, fx)
						m.checkNullOrNotFound(i, what, f.def.Name, fx, fg)
						if got, want := fx.comparable(id), ux.comparable(unknown); got != want {
							t.Errorf("store %d: %s answers differently from an unknown ID:\nforeign %s\nunknown %s", i, what, got, want)
						}
					}
				}
			case gqlSubscription:
				m.subscriptionIsolation(i, me, f.name)
			case gqlAggregate:
				x, g := m.gql(me.key, gqlCall(t, s, f.op, f.def, ""))
				m.checkNoLeak(i, f.name, x)
				if len(g.Errors) > 0 || string(g.Data[f.def.Name]) == "null" {
					t.Errorf("store %d: %s: %s", i, f.name, x.body)
				}
			case gqlList:
				x, g := m.gql(me.key, gqlCall(t, s, f.op, f.def, ""))
				m.checkNoLeak(i, f.name, x)
				if len(g.Errors) > 0 || !bytes.Contains(x.body, []byte(me.tag)) {
					t.Errorf("store %d: %s does not list the store's own records: %s", i, f.name, x.body)
				}
				restPath := map[string]string{"companies": "/v1/companies", "applications": "/v1/applications", "events": "/v1/events"}[f.def.Name]
				if restPath == "" {
					t.Fatalf("%s: no REST list to take another store's cursor from", f.name)
				}
				for _, other := range m.others(i) {
					cursor := m.restCursor(other, restPath)
					unknown := tampered(m.restCursor(me, restPath))
					what := fmt.Sprintf("%s(after: store %d's cursor)", f.name, other.n)
					fx, fg := m.gql(me.key, gqlCall(t, s, f.op, f.def, "", fmt.Sprintf("after: %q", cursor)))
					ux, _ := m.gql(me.key, gqlCall(t, s, f.op, f.def, "", fmt.Sprintf("after: %q", unknown)))
					m.checkNoLeak(i, what, fx)
					if got, want := fx.comparable(cursor), ux.comparable(unknown); got != want {
						t.Errorf("store %d: %s answers differently from a tampered cursor:\nforeign %s\nunknown %s", i, what, got, want)
					}
					if c := fg.codes(); len(c) != 1 || c[0] != string(credit.CodeInvalidParameter) {
						t.Errorf("store %d: %s: errors %v, want invalid_parameter: %s", i, what, c, fx.body)
					}
				}
			case gqlNested:
				parent := f.op
				own, ok := ownOf[parent]
				if !ok {
					t.Fatalf("%s: no own %s to reach it through", f.name, parent)
				}
				var idArg string
				for _, a := range f.def.Arguments {
					if a.Type.Name() == "ID" {
						idArg = a.Name
					}
				}
				for _, other := range m.others(i) {
					for _, id := range other.allIDs() {
						unknown := unknownLike(id)
						doc := func(probe string) string {
							return fmt.Sprintf("query { node(id: %q) { ... on %s { %s(%s: %q) %s } } }", own, parent, f.def.Name, idArg, probe, selection(s, f.def.Type.Name(), 5))
						}
						what := fmt.Sprintf("%s(%s: store %d's %s)", f.name, idArg, other.n, id)
						fx, _ := m.gql(me.key, doc(id))
						ux, _ := m.gql(me.key, doc(unknown))
						m.checkNoLeak(i, what, fx)
						if got, want := fx.comparable(id), ux.comparable(unknown); got != want {
							t.Errorf("store %d: %s answers differently from an unknown ID:\nforeign %s\nunknown %s", i, what, got, want)
						}
					}
				}
			}
		}
	}
	return m.calls - start
}

// subscriptionIsolation subscribes to the events of store i over a WebSocket: after one of its
// own events the replay shows nothing of another store, and after another store's ID (of any
// kind) the answer is the one an unknown ID gets, invalid_parameter.
func (m *matrix) subscriptionIsolation(i int, me canaryStore, name string) {
	t := m.t
	subscribe := func(after string) *credittest.WSMessage {
		t.Helper()
		m.calls++
		c := credittest.MustDialWS(t, m.env.Server.URL, me.key, credittest.WSOptions{})
		defer c.Close()
		c.Subscribe(t, "1", credittest.EventsSubscription, map[string]any{"after": after})
		msg := c.Read(t, 10*time.Second)
		if msg == nil {
			t.Fatalf("store %d: %s(afterEvent: %s): no answer", i, name, after)
		}
		return msg
	}
	own := subscribe(me.feedEvents[0])
	if own.Type != "next" || len(credittest.ErrorCodes(own)) > 0 {
		t.Errorf("store %d: %s after its own event: %+v", i, name, own)
	}
	if found := leaks(own.Payload, m.others(i)...); len(found) > 0 {
		t.Errorf("store %d: %s after its own event carries %v", i, name, found)
	}
	for _, other := range m.others(i) {
		for _, id := range other.allIDs() {
			unknown := unknownLike(id)
			what := fmt.Sprintf("%s(afterEvent: store %d's %s)", name, other.n, id)
			f, u := subscribe(id), subscribe(unknown)
			if found := leaks(f.Payload, m.others(i)...); len(found) > 0 {
				t.Errorf("store %d: %s carries %v", i, what, found)
			}
			if got, want := strings.ReplaceAll(string(f.Payload), id, "<id>"), strings.ReplaceAll(string(u.Payload), unknown, "<id>"); got != want {
				t.Errorf("store %d: %s answers differently from an unknown ID:\nforeign %s\nunknown %s", i, what, got, want)
			}
			if c := credittest.ErrorCodes(f); len(c) != 1 || c[0] != string(credit.CodeInvalidParameter) {
				t.Errorf("store %d: %s: %+v, want invalid_parameter", i, what, f)
			}
		}
	}
}
