package graph_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/creditd/creditd/credittest"
)

// deferredLedgers is a dashboard that shows its companies first and their ledgers when they
// come.
// Its __typename is also in the fragment, as urql writes it: gqlgen computes it in place.
const deferredLedgers = `query Deferred { companies(first: 10) { edges { node { __typename id name
	outstanding { amount }
	... @defer(label: "ledger") { __typename ledger(first: 5) { edges { node { id amount { amount } } } } }
} } } }`

// inPlaceLedgers is deferredLedgers without @defer.
const inPlaceLedgers = `query InPlace { companies(first: 10) { edges { node { __typename id name
	outstanding { amount }
	ledger(first: 5) { edges { node { id amount { amount } } } }
} } } }`

// incrementalPart is one part of an incremental response.
type incrementalPart struct {
	Data        map[string]any `json:"data"`
	Errors      []gqlError     `json:"errors"`
	HasNext     *bool          `json:"hasNext"`
	Incremental []struct {
		Data   map[string]any `json:"data"`
		Path   []any          `json:"path"`
		Label  string         `json:"label"`
		Errors []gqlError     `json:"errors"`
	} `json:"incremental"`
}

// readParts reads a multipart/mixed response with Go's multipart reader.
func readParts(tb testing.TB, r *credittest.Response) []incrementalPart {
	tb.Helper()
	mt, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/mixed" {
		tb.Fatalf("Content-Type %q (%v)\n%s", r.Header.Get("Content-Type"), err, r.Body)
	}
	mr := multipart.NewReader(bytes.NewReader(r.Body), params["boundary"])
	var parts []incrementalPart
	for {
		p, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			return parts
		}
		if err != nil {
			tb.Fatalf("part %d: %v\n%q", len(parts), err, r.Body)
		}
		if ct := p.Header.Get("Content-Type"); ct != "application/json" {
			tb.Fatalf("part %d is %q", len(parts), ct)
		}
		var part incrementalPart
		if err := json.NewDecoder(p).Decode(&part); err != nil {
			tb.Fatalf("part %d: %v\n%q", len(parts), err, r.Body)
		}
		parts = append(parts, part)
	}
}

// merge applies incremental parts to the initial data, as a client does.
func merge(tb testing.TB, parts []incrementalPart) map[string]any {
	tb.Helper()
	data := parts[0].Data
	for _, p := range parts[1:] {
		for _, inc := range p.Incremental {
			path := make([]any, len(inc.Path))
			for i, p := range inc.Path {
				if n, ok := p.(float64); ok {
					p = int(n)
				}
				path[i] = p
			}
			target := at(tb, data, path...).(map[string]any)
			for k, v := range inc.Data {
				target[k] = v
			}
		}
	}
	return data
}

// TestDeferIncremental: a query with @defer whose request accepts multipart/mixed, by POST or
// GET, is answered incrementally, in the contract's format: the companies first without their
// ledgers and hasNext true, then the ledgers at their paths, hasNext false on the last part.
// Merged, the parts are the answer of the same query without @defer.
func TestDeferIncremental(t *testing.T) {
	f := newFixture(t)
	want := query(t, f.env, f.readCredit, inPlaceLedgers)
	const accept = `multipart/mixed;deferSpec=20220824,application/graphql-response+json,application/json;q=0.9` // Apollo Client 4's
	for _, method := range []string{http.MethodPost, http.MethodGet} {
		t.Run(method, func(t *testing.T) {
			req := credittest.Request{Method: method, Key: f.readCredit, Header: map[string]string{"Accept": accept},
				Path: "/graphql", Body: map[string]any{"query": deferredLedgers}}
			if method == http.MethodGet {
				req.Path, req.Body = "/graphql?query="+urlQuery(deferredLedgers), nil
			}
			r := f.env.Do(t, req).WantStatus(t, http.StatusOK)
			if ct := r.Header.Get("Content-Type"); ct != `multipart/mixed; boundary="-"; deferSpec=20220824` {
				t.Fatalf("Content-Type %q", ct)
			}
			parts := readParts(t, r)
			if len(parts) < 2 {
				t.Fatalf("%d parts:\n%s", len(parts), r.Body)
			}
			first := parts[0]
			if first.HasNext == nil || !*first.HasNext || len(first.Errors) > 0 {
				t.Fatalf("initial part: %s", r.Body)
			}
			edges := at(t, first.Data, "companies", "edges").([]any)
			if len(edges) != 2 {
				t.Fatalf("initial part has %d companies: %s", len(edges), r.Body)
			}
			for _, e := range edges {
				node := e.(map[string]any)["node"].(map[string]any)
				if _, has := node["ledger"]; has || node["__typename"] != "Company" {
					t.Fatalf("the initial part has a ledger, or no __typename: %s", r.Body)
				}
			}
			delivered := 0
			for i, p := range parts[1:] {
				last := i == len(parts)-2
				if p.HasNext == nil || *p.HasNext == last {
					t.Fatalf("part %d of %d: hasNext %v", i+1, len(parts), p.HasNext)
				}
				if len(p.Incremental) != 1 {
					t.Fatalf("part %d has %d deferred fragments, want 1 (one part per fragment):\n%s", i+1, len(p.Incremental), r.Body)
				}
				for _, inc := range p.Incremental {
					if len(inc.Path) != 4 || inc.Path[0] != "companies" || inc.Label != "ledger" || inc.Data["ledger"] == nil {
						t.Fatalf("incremental item %v", inc)
					}
					delivered++
				}
			}
			if delivered != len(edges) {
				t.Fatalf("%d ledgers delivered for %d companies", delivered, len(edges))
			}
			if got := merge(t, parts); !reflect.DeepEqual(got, want) {
				t.Fatalf("merged parts differ from the answer in place:\n%v\n%v", got, want)
			}
		})
	}
}

// TestDeferInPlace: without multipart/mixed in Accept, a query's deferred fragments run in
// place: one JSON response, the whole data, no hasNext, over POST and GET. A mutation, and a
// query without @defer, are never incremental, whatever the Accept. The same document, asked
// for incrementally in between, changes nothing (collected fields are never remembered for a
// selection set with @defer).
func TestDeferInPlace(t *testing.T) {
	f := newFixture(t)
	want := query(t, f.env, f.readCredit, inPlaceLedgers)
	check := func(t *testing.T, r *credittest.Response) {
		t.Helper()
		r.WantStatus(t, http.StatusOK)
		if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
			t.Fatalf("Content-Type %q", ct)
		}
		if m := members(t, r.Body); m["hasNext"] != nil || m["errors"] != nil {
			t.Fatalf("response: %s", r.Body)
		}
		if got := decodeGQL(t, r).Data; !reflect.DeepEqual(got, want) {
			t.Fatalf("deferred in place:\n%v\nwant\n%v", got, want)
		}
	}
	for round := range 2 {
		check(t, f.env.Do(t, credittest.Request{Method: http.MethodPost, Path: "/graphql", Key: f.readCredit, Body: map[string]any{"query": deferredLedgers}}))
		check(t, f.env.Do(t, credittest.Request{Method: http.MethodGet, Path: "/graphql?query=" + urlQuery(deferredLedgers), Key: f.readCredit,
			Header: map[string]string{"Accept": "application/json"}}))
		if round == 0 {
			r := f.env.Do(t, credittest.Request{Method: http.MethodPost, Path: "/graphql", Key: f.readCredit, Body: map[string]any{"query": deferredLedgers},
				Header: map[string]string{"Accept": "multipart/mixed"}})
			if len(readParts(t, r)) < 2 {
				t.Fatalf("not incremental: %s", r.Body)
			}
		}
	}
	// Without @defer, multipart/mixed accepted (urql accepts it on every request): one JSON.
	r := f.env.Do(t, credittest.Request{Method: http.MethodPost, Path: "/graphql", Key: f.readCredit, Body: map[string]any{"query": inPlaceLedgers},
		Header: map[string]string{"Accept": "application/graphql-response+json, application/json, multipart/mixed"}})
	if ct := r.Header.Get("Content-Type"); ct != "application/graphql-response+json" || !reflect.DeepEqual(decodeGQL(t, r).Data, want) {
		t.Fatalf("query without @defer: %q %s", ct, r.Body)
	}
	// A mutation with @defer: one JSON response, its payload whole.
	r = f.env.Do(t, credittest.Request{Method: http.MethodPost, Path: "/graphql", Key: f.full, Header: map[string]string{"Accept": "multipart/mixed"},
		Body: map[string]any{"query": `mutation($id: ID!) { placeHold(input: {companyId: $id}) { company { id ... @defer { status hold { kind } } } } }`,
			"variables": map[string]any{"id": f.brau.ID}}})
	res := decodeGQL(t, r)
	if r.Status != http.StatusOK || len(res.Errors) > 0 || at(t, res.Data, "placeHold", "company", "status") != "ON_HOLD" || members(t, r.Body)["hasNext"] != nil {
		t.Fatalf("mutation with @defer: %d %s", r.Status, r.Body)
	}
}

// TestDeferredRequestsKeepTheRules: an incremental request is refused like any other before it
// runs (no key, limits, a list's argument), and its deferred fields keep their scopes.
func TestDeferredRequestsKeepTheRules(t *testing.T) {
	f := newFixture(t)
	incremental := func(key, q string) *credittest.Response {
		return f.env.Do(t, credittest.Request{Method: http.MethodPost, Path: "/graphql", Key: key, Body: map[string]any{"query": q},
			Header: map[string]string{"Accept": "multipart/mixed;deferSpec=20220824, application/json"}})
	}
	wantRefused(t, decodeGQL(t, incremental("", deferredLedgers)), http.StatusUnauthorized, "unauthenticated", "")
	wantRefused(t, decodeGQL(t, incremental(f.readCredit, `{ companies(first: 250) { edges { node { ... @defer { ledger(first: 250) { edges { node { id } } } } } } } }`)),
		http.StatusBadRequest, "invalid_request", "")
	wantRefused(t, decodeGQL(t, incremental(f.readCredit, `{ companies { edges { node { ... @defer { ledger(first: 0) { edges { node { id } } } } } } } }`)),
		http.StatusBadRequest, "invalid_parameter", "first")
	// Scopes hold as in any query: an application and its deferred contact need
	// read_applications, which an onboarding key has and a dashboard key lacks.
	q := `query($id: ID!) { application(id: $id) { businessName ... @defer { contact { name } } } }`
	for key, code := range map[string]string{f.readApps: "", f.both: "", f.readCredit: "insufficient_scope"} {
		r := f.env.Do(t, credittest.Request{Method: http.MethodPost, Path: "/graphql", Key: key, Body: map[string]any{"query": q, "variables": map[string]any{"id": f.app.ID}},
			Header: map[string]string{"Accept": "multipart/mixed"}})
		parts := readParts(t, r)
		var codes []string
		for _, p := range parts {
			for _, e := range p.Errors {
				codes = append(codes, e.Extensions.Code)
			}
			for _, inc := range p.Incremental {
				for _, e := range inc.Errors {
					codes = append(codes, e.Extensions.Code)
				}
			}
		}
		if strings.Join(codes, ",") != code {
			t.Errorf("deferred contact: errors %v, want %q:\n%s", codes, code, r.Body)
		}
	}
}
