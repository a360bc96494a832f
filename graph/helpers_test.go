package graph_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
	"github.com/creditd/creditd/tenant"
)

// gqlError is one entry of a GraphQL response's errors.
type gqlError struct {
	Message    string `json:"message"`
	Path       []any  `json:"path"`
	Extensions struct {
		Code  string `json:"code"`
		Param string `json:"param"`
	} `json:"extensions"`
}

// gqlResult is a decoded GraphQL response with its HTTP exchange.
type gqlResult struct {
	HTTP   *credittest.Response
	Data   map[string]any
	Errors []gqlError
}

// gqlRequest is a GraphQL request for doGQL.
type gqlRequest struct {
	Key       string
	Query     string
	Variables map[string]any
	Header    map[string]string
}

// doGQL posts a GraphQL request through the real handler and decodes the response.
func doGQL(tb testing.TB, env *credittest.Env, req gqlRequest) gqlResult {
	tb.Helper()
	body := map[string]any{"query": req.Query}
	if req.Variables != nil {
		body["variables"] = req.Variables
	}
	resp := env.Do(tb, credittest.Request{Method: http.MethodPost, Path: "/graphql", Key: req.Key, Body: body, Header: req.Header})
	return decodeGQL(tb, resp)
}

func decodeGQL(tb testing.TB, resp *credittest.Response) gqlResult {
	tb.Helper()
	var out struct {
		Data   map[string]any `json:"data"`
		Errors []gqlError     `json:"errors"`
	}
	if err := json.Unmarshal(resp.Body, &out); err != nil {
		tb.Fatalf("GraphQL response is not JSON (status %d): %v\n%s", resp.Status, err, resp.Body)
	}
	return gqlResult{HTTP: resp, Data: out.Data, Errors: out.Errors}
}

// query posts a query that must succeed without errors and returns its data.
func query(tb testing.TB, env *credittest.Env, key, q string, vars ...map[string]any) map[string]any {
	tb.Helper()
	req := gqlRequest{Key: key, Query: q}
	if len(vars) > 0 {
		req.Variables = vars[0]
	}
	res := doGQL(tb, env, req)
	if res.HTTP.Status != http.StatusOK || len(res.Errors) > 0 {
		tb.Fatalf("query failed: status %d\n%s", res.HTTP.Status, res.HTTP.Body)
	}
	return res.Data
}

// wantErrors fails unless the response has exactly these error codes, in order.
func (r gqlResult) wantCodes(tb testing.TB, codes ...string) {
	tb.Helper()
	var got []string
	for _, e := range r.Errors {
		got = append(got, e.Extensions.Code)
	}
	if strings.Join(got, ",") != strings.Join(codes, ",") {
		tb.Fatalf("error codes %v, want %v\n%s", got, codes, r.HTTP.Body)
	}
}

// members decodes a response body's top-level members, to tell an absent data member from
// "data": null.
func members(tb testing.TB, body []byte) map[string]json.RawMessage {
	tb.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		tb.Fatalf("not a JSON object: %v\n%s", err, body)
	}
	return m
}

// wantRefused fails unless res refuses the whole request (contract §14, GraphQL over HTTP):
// the status, one error with code and param, and no data member, which a client would read as
// an executed request whose every field failed. Every refusal of a whole request is held to
// it: before execution (parse, validation, limits, arguments), before GraphQL runs
// (authentication, rate limit) and by the mutation middleware (rate limit, Idempotency-Key).
func wantRefused(tb testing.TB, res gqlResult, status int, code, param string) {
	tb.Helper()
	if res.HTTP.Status != status {
		tb.Fatalf("status %d, want %d: %s", res.HTTP.Status, status, res.HTTP.Body)
	}
	if _, ok := members(tb, res.HTTP.Body)["data"]; ok {
		tb.Errorf("a refused request has a data member: %s", res.HTTP.Body)
	}
	if len(res.Errors) != 1 || res.Errors[0].Extensions.Code != code || res.Errors[0].Extensions.Param != param {
		tb.Fatalf("errors %+v, want one %s (param %q): %s", res.Errors, code, param, res.HTTP.Body)
	}
}

// wantData fails unless res has a data member: a request that ran keeps it, null or not, with
// its field errors beside it.
func wantData(tb testing.TB, res gqlResult) {
	tb.Helper()
	if _, ok := members(tb, res.HTTP.Body)["data"]; !ok {
		tb.Errorf("a request that ran has no data member: %s", res.HTTP.Body)
	}
}

// at walks a decoded JSON value along a path of object keys and array indexes.
func at(tb testing.TB, v any, path ...any) any {
	tb.Helper()
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				tb.Fatalf("at %v: not an object: %v", path, v)
			}
			v = m[k]
		case int:
			a, ok := v.([]any)
			if !ok || k >= len(a) {
				tb.Fatalf("at %v: not an array with index %d: %v", path, k, v)
			}
			v = a[k]
		}
	}
	return v
}

// fixture is a store with companies, ledgers and applications, another store with a company
// and an application of its own, and keys of every useful scope.
type fixture struct {
	env                                *credittest.Env
	store, other                       string
	readCredit, readApps, full, noRead string
	both, otherKey                     string
	alpen, brau                        credit.Company
	foreignCompany                     credit.Company
	entries                            []credit.LedgerEntry
	app, foreignApp                    credit.Application
}

func newFixture(tb testing.TB, opts ...credittest.Options) *fixture {
	tb.Helper()
	env := credittest.New(tb, opts...)
	f := &fixture{env: env}
	f.store = env.MustStore(tb, "Demo Wholesale", "EUR")
	f.other = env.MustStore(tb, "Other Store", "EUR")
	f.readCredit = env.MustKey(tb, f.store, "dashboard", credit.ScopeReadCredit)
	f.readApps = env.MustKey(tb, f.store, "onboarding", credit.ScopeReadApplications)
	f.both = env.MustKey(tb, f.store, "reader", credit.ScopeReadCredit, credit.ScopeReadApplications)
	f.full = env.MustKey(tb, f.store, "erp", credit.ScopeReadCredit, credit.ScopeReadApplications, credit.ScopeWriteCredit)
	f.noRead = env.MustKey(tb, f.store, "writer", credit.ScopeWriteCredit)
	f.otherKey = env.MustKey(tb, f.other, "other", credit.ScopeReadCredit, credit.ScopeReadApplications, credit.ScopeWriteCredit)
	f.alpen = env.MustCompany(tb, f.store, "Alpenblick Hotels AG", "25000.00")
	f.brau = env.MustCompany(tb, f.store, "Brauhaus Kessler KG", "8000.00", "NET_14")
	f.foreignCompany = env.MustCompany(tb, f.other, "Foreign GmbH", "1000.00")
	for _, in := range []credit.LedgerEntryInput{
		{Kind: credit.KindOpeningBalance, Amount: "1200.00"},
		{Kind: credit.KindOrderPlaced, Amount: "4800.00", OrderGID: "gid://platform/Order/5001"},
		{Kind: credit.KindPayment, Amount: "-1200.00"},
	} {
		in.CompanyID = f.alpen.ID
		f.entries = append(f.entries, env.MustRecord(tb, in))
	}
	f.app = env.MustApplication(tb, f.store, credit.ApplicationInput{BusinessName: "Café Morgenrot", ContactName: "Ada Buyer", ContactEmail: "ada@example.com"})
	f.foreignApp = env.MustApplication(tb, f.other, credit.ApplicationInput{BusinessName: "Foreign Café"})
	return f
}

// sqlLog records the SQL statements a service sends, and can make some of them fail
// (credittest.SQLLog; a log's Options give it to the server).
type sqlLog = credittest.SQLLog

// touching returns the statements that read or write one of tables.
func touching(statements []string, tables ...string) []string {
	var out []string
	for _, s := range statements {
		for _, t := range tables {
			if strings.Contains(s, "`"+t+"`") || strings.Contains(s, `"`+t+`"`) {
				out = append(out, s)
				break
			}
		}
	}
	return out
}

func urlQuery(q string) string { return url.QueryEscape(q) }

// viewerOf is a staff context for a store, for setting up and checking data behind the API's
// back.
func viewerOf(store string) context.Context {
	return tenant.Staff(context.Background(), store, "test")
}

// mutate posts a mutation that must succeed without errors and returns its data.
func mutate(tb testing.TB, f *fixture, key, q string, vars map[string]any) map[string]any {
	tb.Helper()
	return query(tb, f.env, key, q, vars)
}

func credittestAdmin() context.Context { return credittest.Admin() }
