package graph_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/creditd/creditd/credittest"
	"github.com/creditd/creditd/server"
)

// TestRequestErrorsMediaType: every request error of /graphql (401, 413, 415, 429, 400 before
// execution, 405) is application/graphql-response+json when the request's Accept prefers it
// (Apollo Client 4 reads a code only from it), else application/json, with the same status and
// body either way.
func TestRequestErrorsMediaType(t *testing.T) {
	const limit = 40 // above the requests of the tests below, for their store
	f := newFixture(t, credittest.Options{ServerConfig: func(c *server.Config) { c.RateLimit = limit }})
	limited := f.env.MustKey(t, f.env.MustStore(t, "Limited", "EUR"), "limited", "read_credit")
	for range limit {
		query(t, f.env, limited, `{ receivables { companiesOverdue } }`)
	}
	big := `{ companies { edges { node { name } } } }` + strings.Repeat(" ", 70<<10)
	for _, tc := range []struct {
		name        string
		req         credittest.Request
		status      int
		code, param string
	}{
		{"no key", credittest.Request{Method: http.MethodPost, Body: map[string]any{"query": "{ __typename }"}}, http.StatusUnauthorized, "unauthenticated", ""},
		{"too large", credittest.Request{Method: http.MethodPost, Key: f.readCredit, Body: map[string]any{"query": big}}, http.StatusRequestEntityTooLarge, "request_too_large", ""},
		{"not JSON", credittest.Request{Method: http.MethodPost, Key: f.readCredit, Body: "query=x", Header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}}, http.StatusUnsupportedMediaType, "unsupported_media_type", ""},
		{"rate limit", credittest.Request{Method: http.MethodPost, Key: limited, Body: map[string]any{"query": "{ __typename }"}}, http.StatusTooManyRequests, "rate_limited", ""},
		{"parse", credittest.Request{Method: http.MethodPost, Key: f.readCredit, Body: map[string]any{"query": "{ companies {"}}, http.StatusBadRequest, "invalid_request", ""},
		{"validation, GET", credittest.Request{Method: http.MethodGet, Key: f.readCredit, Path: "/graphql?query=" + urlQuery("{ nope }")}, http.StatusBadRequest, "invalid_request", ""},
		{"argument", credittest.Request{Method: http.MethodPost, Key: f.readCredit, Body: map[string]any{"query": "{ companies(first: 0) { edges { cursor } } }"}}, http.StatusBadRequest, "invalid_parameter", "first"},
		{"envelope", credittest.Request{Method: http.MethodPost, Key: f.readCredit, Body: map[string]any{"query": "{ __typename }", "other": 1}}, http.StatusBadRequest, "invalid_request", "other"},
		{"mutation over GET", credittest.Request{Method: http.MethodGet, Key: f.full, Path: "/graphql?query=" + urlQuery(`mutation { liftHold(input: {companyId: "co_x"}) { company { id } } }`)}, http.StatusMethodNotAllowed, "method_not_allowed", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for accept, want := range map[string]string{
				"":                 "application/json",
				"application/json": "application/json",
				"application/graphql-response+json,application/json;q=0.9":                                    "application/graphql-response+json",
				"multipart/mixed;deferSpec=20220824,application/graphql-response+json,application/json;q=0.9": "application/graphql-response+json",
			} {
				req := tc.req
				if req.Path == "" {
					req.Path = "/graphql"
				}
				req.Header = map[string]string{}
				for k, v := range tc.req.Header {
					req.Header[k] = v
				}
				if accept != "" {
					req.Header["Accept"] = accept
				}
				r := f.env.Do(t, req)
				wantRefused(t, decodeGQL(t, r), tc.status, tc.code, tc.param)
				if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, want) || strings.HasPrefix(want, "application/json") && strings.Contains(ct, "graphql") {
					t.Errorf("Accept %q: Content-Type %q, want %s", accept, ct, want)
				}
			}
		})
	}
}
