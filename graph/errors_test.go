package graph_test

import (
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
	"github.com/creditd/creditd/server"
)

// TestErrorCodesMatchREST provokes each error through both APIs, on the same data, and
// checks that GraphQL reports REST's code, message, and the param under GraphQL's name.
func TestErrorCodesMatchREST(t *testing.T) {
	f := newFixture(t)
	held := f.env.MustCompany(t, f.store, "Held AG", "100.00")
	if _, err := f.env.Service.Companies.PlaceHold(viewerOf(f.store), credit.HoldInput{CompanyID: held.ID}); err != nil {
		t.Fatal(err)
	}
	overdue := f.env.MustCompany(t, f.store, "Overdue KG", "1000.00", "NET_14")
	f.env.MustRecord(t, credit.LedgerEntryInput{CompanyID: overdue.ID, Kind: credit.KindOrderPlaced, Amount: "500.00", OrderGID: "gid://platform/Order/9001"})
	f.env.Clock.Advance(15 * 24 * time.Hour)
	if _, err := f.env.Service.Maintenance.SweepHolds(credittestAdmin()); err != nil {
		t.Fatal(err)
	}

	co, app := f.alpen.ID, f.app.ID
	companyQ := `query($first: Int, $after: String, $since: DateTime) { companies(first: $first, after: $after, updatedSince: $since) { edges { cursor } } }`
	ledgerQ := `query($id: ID!, $le: ID, $first: Int) { company(id: $id) { ledger(afterEntry: $le, first: $first) { edges { cursor } } } }`
	adjust := `mutation($in: CreateAdjustmentInput!) { createAdjustment(input: $in) { ledgerEntry { id } } }`
	limit := `mutation($in: SetCreditLimitInput!) { setCreditLimit(input: $in) { company { id } } }`
	place := `mutation($id: ID!) { placeHold(input: {companyId: $id}) { company { id } } }`
	lift := `mutation($id: ID!) { liftHold(input: {companyId: $id}) { company { id } } }`
	long := strings.Repeat("x", 501)

	for _, tc := range []struct {
		name      string
		key       string
		rest      credittest.Request
		query     string
		vars      map[string]any
		code      string
		restParam string
		gqlParam  string
	}{
		{"first 0", f.readCredit, get("/v1/companies?limit=0"), companyQ, map[string]any{"first": 0}, "invalid_parameter", "limit", "first"},
		{"first 251", f.readCredit, get("/v1/companies?limit=251"), companyQ, map[string]any{"first": 251}, "invalid_parameter", "limit", "first"},
		{"bad cursor", f.readCredit, get("/v1/companies?cursor=abc"), companyQ, map[string]any{"after": "abc"}, "invalid_parameter", "cursor", "after"},
		{"bad updated_since", f.readCredit, get("/v1/companies?updated_since=yesterday"), companyQ, map[string]any{"since": "yesterday"}, "invalid_parameter", "updated_since", "updatedSince"},
		{"unknown company", f.readCredit, get("/v1/companies/co_nope"), `{ company(id: "co_nope") { id } }`, nil, "not_found", "", ""},
		{"unknown application", f.readApps, get("/v1/applications/app_nope"), `{ application(id: "app_nope") { id } }`, nil, "not_found", "", ""},
		{"ledger after unknown entry", f.readCredit, get("/v1/companies/" + co + "/ledger?after=le_nope"), ledgerQ, map[string]any{"id": co, "le": "le_nope"}, "invalid_parameter", "after", "afterEntry"},
		{"ledger limit 300", f.readCredit, get("/v1/companies/" + co + "/ledger?limit=300"), ledgerQ, map[string]any{"id": co, "first": 300}, "invalid_parameter", "limit", "first"},
		{"too many decimals", f.full, post("/v1/companies/"+co+"/adjustments", `{"amount":"12.345","note":"x"}`), adjust, in("companyId", co, "amount", "12.345", "note", "x"), "invalid_amount", "amount", "amount"},
		{"not a decimal", f.full, post("/v1/companies/"+co+"/adjustments", `{"amount":"1e3","note":"x"}`), adjust, in("companyId", co, "amount", "1e3", "note", "x"), "invalid_amount", "amount", "amount"},
		{"empty amount", f.full, post("/v1/companies/"+co+"/adjustments", `{"amount":"","note":"x"}`), adjust, in("companyId", co, "amount", "", "note", "x"), "validation_failed", "amount", "amount"},
		{"empty limit", f.full, put("/v1/companies/"+co+"/credit-limit", `{"amount":""}`), limit, in("companyId", co, "amount", ""), "validation_failed", "amount", "amount"},
		{"amount as a JSON number", f.full, post("/v1/companies/"+co+"/adjustments", `{"amount":12.5,"note":"x"}`), adjust, in("companyId", co, "amount", 12.5, "note", "x"), "invalid_amount", "amount", "amount"},
		{"amount as a literal number", f.full, post("/v1/companies/"+co+"/adjustments", `{"amount":12,"note":"x"}`), `mutation { createAdjustment(input: {companyId: "` + co + `", amount: 12, note: "x"}) { ledgerEntry { id } } }`, nil, "invalid_amount", "amount", "amount"},
		{"number for an unknown company", f.full, post("/v1/companies/co_nope/adjustments", `{"amount":12.5,"note":"x"}`), adjust, in("companyId", "co_nope", "amount", 12.5, "note", "x"), "not_found", "", ""},
		{"limit as a number", f.full, put("/v1/companies/"+co+"/credit-limit", `{"amount":100}`), limit, in("companyId", co, "amount", 100), "invalid_amount", "amount", "amount"},
		{"zero adjustment", f.full, post("/v1/companies/"+co+"/adjustments", `{"amount":"0.00","note":"x"}`), adjust, in("companyId", co, "amount", "0.00", "note", "x"), "invalid_amount", "amount", "amount"},
		{"empty note", f.full, post("/v1/companies/"+co+"/adjustments", `{"amount":"1.00","note":" "}`), adjust, in("companyId", co, "amount", "1.00", "note", " "), "validation_failed", "note", "note"},
		{"note too long", f.full, post("/v1/companies/"+co+"/adjustments", `{"amount":"1.00","note":"`+long+`"}`), adjust, in("companyId", co, "amount", "1.00", "note", long), "validation_failed", "note", "note"},
		{"currency mismatch", f.full, post("/v1/companies/"+co+"/adjustments", `{"amount":"1.00","note":"x","currency":"USD"}`), adjust, in("companyId", co, "amount", "1.00", "note", "x", "currency", "USD"), "currency_mismatch", "currency", "currency"},
		{"adjust unknown company", f.full, post("/v1/companies/co_nope/adjustments", `{"amount":"1.00","note":"x"}`), adjust, in("companyId", "co_nope", "amount", "1.00", "note", "x"), "not_found", "", ""},
		{"limit below zero", f.full, put("/v1/companies/"+co+"/credit-limit", `{"amount":"-1.00"}`), limit, in("companyId", co, "amount", "-1.00"), "limit_below_zero", "amount", "amount"},
		{"reason too long", f.full, put("/v1/companies/"+co+"/credit-limit", `{"amount":"1.00","reason":"`+long+`"}`), limit, in("companyId", co, "amount", "1.00", "reason", long), "validation_failed", "reason", "reason"},
		{"hold exists", f.full, post("/v1/companies/"+held.ID+"/hold", `{}`), place, map[string]any{"id": held.ID}, "hold_exists", "", ""},
		{"no hold to lift", f.full, del("/v1/companies/" + co + "/hold"), lift, map[string]any{"id": co}, "hold_not_found", "", ""},
		{"overdue hold not liftable", f.full, del("/v1/companies/" + overdue.ID + "/hold"), lift, map[string]any{"id": overdue.ID}, "hold_not_liftable", "", ""},
		{"write without write_credit", f.both, post("/v1/companies/"+co+"/hold", `{}`), place, map[string]any{"id": co}, "insufficient_scope", "", ""},
		{"read without read_credit", f.readApps, get("/v1/companies/" + co), `{ company(id: "` + co + `") { id } }`, nil, "insufficient_scope", "", ""},
		{"applications without read_applications", f.readCredit, get("/v1/applications"), `{ applications { edges { cursor } } }`, nil, "insufficient_scope", "", ""},
		{"application without read_applications", f.readCredit, get("/v1/applications/" + app), `{ application(id: "` + app + `") { id } }`, nil, "insufficient_scope", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.rest.Key = tc.key
			restErr := f.env.Do(t, tc.rest).APIError()
			res := doGQL(t, f.env, gqlRequest{Key: tc.key, Query: tc.query, Variables: tc.vars})
			if len(res.Errors) != 1 {
				t.Fatalf("GraphQL: %d errors, want 1: %s", len(res.Errors), res.HTTP.Body)
			}
			gqlErr := res.Errors[0]
			if restErr.Code != tc.code || gqlErr.Extensions.Code != tc.code {
				t.Fatalf("codes: REST %q, GraphQL %q, want %q (%s)", restErr.Code, gqlErr.Extensions.Code, tc.code, res.HTTP.Body)
			}
			if restErr.Param != tc.restParam || gqlErr.Extensions.Param != tc.gqlParam {
				t.Errorf("params: REST %q, GraphQL %q, want %q and %q", restErr.Param, gqlErr.Extensions.Param, tc.restParam, tc.gqlParam)
			}
			if tc.restParam == tc.gqlParam && restErr.Message != gqlErr.Message {
				t.Errorf("messages differ:\nREST    %s\nGraphQL %s", restErr.Message, gqlErr.Message)
			}
		})
	}
	if c, err := f.env.Service.Companies.Get(viewerOf(f.store), co); err != nil || c.Outstanding.Amount != "4800.00" || c.CreditLimit.Amount != "25000.00" || c.Hold != nil {
		t.Fatalf("a refused write changed the company: %+v %v", c, err)
	}
}

// TestRequestLevelErrors checks refusals before GraphQL runs: GraphQL's error form with the
// contract's status and headers.
func TestRequestLevelErrors(t *testing.T) {
	f := newFixture(t, credittest.Options{ServerConfig: func(cfg *server.Config) { cfg.RateLimit = 3 }})
	q := gqlRequest{Query: `{ __typename }`}
	for _, key := range []string{"", "ck_notakey", f.readCredit + "x"} {
		q.Key = key
		res := doGQL(t, f.env, q)
		if res.HTTP.Header.Get("WWW-Authenticate") != `Bearer realm="credit"` {
			t.Fatalf("key %q: %d %v %s", key, res.HTTP.Status, res.HTTP.Header, res.HTTP.Body)
		}
		wantRefused(t, res, http.StatusUnauthorized, "unauthenticated", "")
	}
	q.Key = f.readCredit
	for i := 0; i < 3; i++ {
		if res := doGQL(t, f.env, q); res.HTTP.Status != http.StatusOK {
			t.Fatalf("request %d: %d %s", i, res.HTTP.Status, res.HTTP.Body)
		}
	}
	res := doGQL(t, f.env, q)
	if res.HTTP.Header.Get("Retry-After") == "" {
		t.Fatalf("over the limit: %d %v %s", res.HTTP.Status, res.HTTP.Header, res.HTTP.Body)
	}
	wantRefused(t, res, http.StatusTooManyRequests, "rate_limited", "")
	// REST and GraphQL share the allowance.
	if got := f.env.Get(t, f.readCredit, "/v1/companies").Status; got != http.StatusTooManyRequests {
		t.Fatalf("REST after GraphQL spent the allowance: %d", got)
	}
}

// TestInternalErrors checks that an unexpected failure is internal_error with a generic
// message, never its text, and is logged once with the request id.
func TestInternalErrors(t *testing.T) {
	var logs credittest.LogBuffer
	sqlLog := &sqlLog{}
	f := newFixture(t, sqlLog.Options(func(cfg *server.Config) {
		cfg.Logger = slog.New(slog.NewJSONHandler(&logs, nil))
	}))
	query(t, f.env, f.readCredit, `{ __typename }`) // the key's first use writes last_used_at
	sqlLog.Fail = func(statement string) error {
		if strings.Contains(statement, "ledger_entries") {
			return fmt.Errorf("disk I/O error near SELECT secret_column")
		}
		return nil
	}
	res := doGQL(t, f.env, gqlRequest{Key: f.readCredit,
		Query:     `query($a: ID!, $b: ID!) { failing: company(id: $a) { ledger { edges { cursor } } } other: company(id: $b) { name } }`,
		Variables: map[string]any{"a": f.alpen.ID, "b": f.brau.ID}, Header: map[string]string{"X-Request-Id": "req-graphql-internal"}})
	res.wantCodes(t, "internal_error")
	if strings.Contains(string(res.HTTP.Body), "disk") || strings.Contains(string(res.HTTP.Body), "SELECT") {
		t.Fatalf("the error's text leaked: %s", res.HTTP.Body)
	}
	if res.Errors[0].Message != "something went wrong on our side; the request id identifies it in our logs" {
		t.Errorf("message %q", res.Errors[0].Message)
	}
	if res.Data["failing"] != nil || at(t, res.Data, "other", "name") != f.brau.Name {
		t.Errorf("the rest of the query is lost: %s", res.HTTP.Body)
	}
	if n := strings.Count(logs.String(), "disk I/O error"); n != 1 {
		t.Fatalf("the error is logged %d times, want once:\n%s", n, logs.String())
	}
	if !strings.Contains(logs.String(), `"request_id":"req-graphql-internal"`) {
		t.Errorf("the log line lacks the request id:\n%s", logs.String())
	}

	// A batched read that fails fails every company of the page: one log line for them all.
	res = doGQL(t, f.env, gqlRequest{Key: f.readCredit, Query: `{ companies { edges { node { ledger { edges { cursor } } } } } }`,
		Header: map[string]string{"X-Request-Id": "req-graphql-batch"}})
	if len(res.Errors) != 2 || res.Data["companies"] != nil {
		t.Fatalf("batched failure: %s", res.HTTP.Body)
	}
	for _, e := range res.Errors {
		if e.Extensions.Code != "internal_error" {
			t.Errorf("code %q", e.Extensions.Code)
		}
	}
	if n := strings.Count(logs.String(), `"request_id":"req-graphql-batch","path"`); n != 1 {
		t.Fatalf("the batch's error is logged %d times, want once:\n%s", n, logs.String())
	}
}

func get(path string) credittest.Request {
	return credittest.Request{Method: http.MethodGet, Path: path}
}
func post(path, body string) credittest.Request {
	return credittest.Request{Method: http.MethodPost, Path: path, Body: body, Header: map[string]string{"Content-Type": "application/json"}}
}
func put(path, body string) credittest.Request {
	return credittest.Request{Method: http.MethodPut, Path: path, Body: body, Header: map[string]string{"Content-Type": "application/json"}}
}
func del(path string) credittest.Request {
	return credittest.Request{Method: http.MethodDelete, Path: path}
}

// in builds a mutation's input variable from name, value pairs.
func in(kv ...any) map[string]any {
	m := map[string]any{}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	return map[string]any{"in": m}
}
