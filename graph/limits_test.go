package graph_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/creditd/creditd/credittest"
)

// TestHostileQueriesRefused sends queries meant to exhaust the server and checks that each is
// refused with invalid_request (or request_too_large) before any resolver reads data.
func TestHostileQueriesRefused(t *testing.T) {
	log := &sqlLog{}
	f := newFixture(t, log.Options())

	var aliases strings.Builder
	aliases.WriteString("{")
	for i := 0; i < 20; i++ {
		fmt.Fprintf(&aliases, " a%d: companies(first: 250) { edges { node { id ledger(first: 250) { edges { node { id amount { amount } } } } } } }", i)
	}
	aliases.WriteString(" }")

	var fragments strings.Builder
	fragments.WriteString("{ companies { edges { node { ...F0 } } } }\n")
	for i := 0; i < 30; i++ {
		fmt.Fprintf(&fragments, "fragment F%d on Company { id ...F%d ...F%d }\n", i, i+1, i+1)
	}
	fragments.WriteString("fragment F30 on Company { name }\n")

	// No valid query nests deeper than 8 in this schema (see TestDepthLimitRefuses); a deeper
	// one is refused by validation.
	deep := "{ companies { edges { node { ledger { edges { node { amount { amount { a { b { c { d } } } } } } } } } } } }"

	for _, tc := range []struct {
		name, query string
		status      int
		code        string
		message     string
	}{
		{"aliases times large first", aliases.String(), http.StatusBadRequest, "invalid_request", "complexity"},
		{"one list of 250 with 250 entries each", `{ companies(first: 250) { edges { node { ledger(first: 250) { edges { node { id } } } } } } }`, http.StatusBadRequest, "invalid_request", "complexity"},
		{"20k repeated directives", "{ companies" + strings.Repeat(" @a", 20000) + " { edges { node { id } } } }", http.StatusBadRequest, "invalid_request", "token limit"},
		{"fragments spread 2^30 times", fragments.String(), http.StatusBadRequest, "invalid_request", "fields once its fragments are expanded"},
		{"deeper than 10", deep, http.StatusBadRequest, "invalid_request", ""},
		{"one field repeated 4,900 times", "{" + strings.Repeat(" __typename", 4900) + " }", http.StatusBadRequest, "invalid_request", "fields"},
		{"body over 64 KiB", "{ companies { edges { node { id } } } }" + strings.Repeat(" ", 70<<10), http.StatusRequestEntityTooLarge, "request_too_large", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			log.Reset()
			start := time.Now()
			res := doGQL(t, f.env, gqlRequest{Key: f.readCredit, Query: tc.query})
			elapsed := time.Since(start)
			if res.HTTP.Status != tc.status {
				t.Fatalf("status %d, want %d: %s", res.HTTP.Status, tc.status, res.HTTP.Body)
			}
			if len(res.Errors) == 0 {
				t.Fatalf("no error: %s", res.HTTP.Body)
			}
			for _, e := range res.Errors {
				if e.Extensions.Code != tc.code {
					t.Errorf("code %q, want %q: %s", e.Extensions.Code, tc.code, e.Message)
				}
			}
			if !strings.Contains(res.Errors[0].Message, tc.message) {
				t.Errorf("message %q does not mention %q", res.Errors[0].Message, tc.message)
			}
			if res.Data != nil {
				t.Errorf("a refused query has data: %s", res.HTTP.Body)
			}
			if read := touching(log.Snapshot(), "companies", "ledger_entries", "stores"); len(read) > 0 {
				t.Errorf("a refused query read data:\n%s", strings.Join(read, "\n"))
			}
			if elapsed > 2*time.Second {
				t.Errorf("refusing took %v", elapsed)
			}
			t.Logf("refused in %v: %s", elapsed.Round(time.Millisecond), res.Errors[0].Message)
		})
	}
}

// TestQueryLimitsLeaveRoomForRealQueries checks that the limits admit what clients need: the
// dashboard query at 50 and 250 companies, and GraphiQL's full introspection query.
func TestQueryLimitsLeaveRoomForRealQueries(t *testing.T) {
	f := newFixture(t)
	for _, n := range []int{50, 250} {
		query(t, f.env, f.readCredit, dashboardQuery, map[string]any{"n": n})
	}
	data := query(t, f.env, f.readCredit, introspectionQuery)
	if at(t, data, "__schema", "queryType", "name") != "Query" {
		t.Fatalf("introspection: %v", data)
	}
}

// introspectionQuery is the query GraphiQL sends on load.
const introspectionQuery = credittest.IntrospectionQuery

// TestTransportRefusals checks the HTTP envelope: media type, body shape, GET mutations.
func TestTransportRefusals(t *testing.T) {
	f := newFixture(t)
	post := func(body any, header map[string]string) gqlResult {
		return decodeGQL(t, f.env.Do(t, credittest.Request{Method: http.MethodPost, Path: "/graphql", Key: f.full, Body: body, Header: header}))
	}
	for _, tc := range []struct {
		name   string
		res    gqlResult
		status int
		code   string
		param  string
	}{
		{"text/plain", post(`{"query":"{ companies { edges { cursor } } }"}`, map[string]string{"Content-Type": "text/plain"}), http.StatusUnsupportedMediaType, "unsupported_media_type", ""},
		{"not an object", post(`["{ companies { edges { cursor } } }"]`, nil), http.StatusBadRequest, "invalid_request", ""},
		{"not JSON", post(`{"query":`, nil), http.StatusBadRequest, "invalid_request", ""},
		{"no query", post(`{"variables":{}}`, nil), http.StatusBadRequest, "invalid_request", "query"},
		{"unknown member", post(`{"query":"{ companies { edges { cursor } } }","querry":1}`, nil), http.StatusBadRequest, "invalid_request", "querry"},
		{"query not a string", post(`{"query":5}`, nil), http.StatusBadRequest, "invalid_request", "query"},
		{"duplicated member", post(`{"query":"{ __typename }","query":"{ __typename }"}`, nil), http.StatusBadRequest, "invalid_request", "query"},
		{"variables not an object", post(`{"query":"{ __typename }","variables":[1]}`, nil), http.StatusBadRequest, "invalid_request", "variables"},
		{"syntax error", post(map[string]any{"query": "{ companies { "}, nil), http.StatusBadRequest, "invalid_request", ""},
		{"unknown field", post(map[string]any{"query": "{ companys { edges { cursor } } }"}, nil), http.StatusBadRequest, "invalid_request", ""},
		{"bad Idempotency-Key", post(map[string]any{"query": "{ __typename }"}, map[string]string{"Idempotency-Key": strings.Repeat("k", 256)}), http.StatusBadRequest, "invalid_request", "Idempotency-Key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.res.HTTP.Status != tc.status {
				t.Fatalf("status %d, want %d: %s", tc.res.HTTP.Status, tc.status, tc.res.HTTP.Body)
			}
			tc.res.wantCodes(t, tc.code)
			if tc.res.Errors[0].Extensions.Param != tc.param {
				t.Errorf("param %q, want %q", tc.res.Errors[0].Extensions.Param, tc.param)
			}
		})
	}

	t.Run("null members count as absent", func(t *testing.T) {
		res := post(`{"query":"{ __typename }","variables":null,"operationName":null}`, nil)
		if res.HTTP.Status != http.StatusOK || len(res.Errors) != 0 {
			t.Fatalf("null members: %d %s", res.HTTP.Status, res.HTTP.Body)
		}
	})
	t.Run("GET serves queries", func(t *testing.T) {
		res := decodeGQL(t, f.env.Get(t, f.readCredit, "/graphql?query="+urlQuery(`{ company(id: "`+f.alpen.ID+`") { name } }`)))
		if res.HTTP.Status != http.StatusOK || at(t, res.Data, "company", "name") != f.alpen.Name {
			t.Fatalf("GET query: %d %s", res.HTTP.Status, res.HTTP.Body)
		}
	})
	t.Run("GET refuses mutations", func(t *testing.T) {
		res := decodeGQL(t, f.env.Get(t, f.full, "/graphql?query="+urlQuery(`mutation { placeHold(input: {companyId: "`+f.alpen.ID+`"}) { company { id } } }`)))
		if res.HTTP.Status != http.StatusMethodNotAllowed || res.HTTP.Header.Get("Allow") != "POST" {
			t.Fatalf("GET mutation: %d Allow %q %s", res.HTTP.Status, res.HTTP.Header.Get("Allow"), res.HTTP.Body)
		}
		res.wantCodes(t, "method_not_allowed")
		c, err := f.env.Service.Companies.Get(viewerOf(f.store), f.alpen.ID)
		if err != nil || c.Hold != nil {
			t.Fatalf("the GET mutation placed a hold: %+v %v", c.Hold, err)
		}
	})
}
