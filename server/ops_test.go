package server_test

import (
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
	"github.com/creditd/creditd/server"
)

func TestHealthAndReadiness(t *testing.T) {
	t.Parallel()
	env := credittest.New(t)
	mustJSONEqual(t, env.Get(t, "", "/healthz").WantStatus(t, 200).Body, `{"status":"ok"}`)
	mustJSONEqual(t, env.Get(t, "", "/readyz").WantStatus(t, 200).Body, `{"status":"ready"}`)

	// A database that cannot answer makes the instance unready, while it stays alive.
	if err := env.DB.SQL.Close(); err != nil {
		t.Fatal(err)
	}
	r := env.Get(t, "", "/readyz")
	r.WantError(t, 503, "unavailable", "")
	if r.Header.Get("Retry-After") == "" {
		t.Error("503 without Retry-After")
	}
	env.Get(t, "", "/healthz").WantStatus(t, 200)
}

func TestMetricsCountRequestsByRoutePattern(t *testing.T) {
	t.Parallel()
	env := credittest.New(t)
	st := env.MustStore(t, "Store", "EUR")
	key := env.MustKey(t, st, "reader", credit.ScopeReadCredit)
	co := env.MustCompany(t, st, "Buyer", "1000")
	for range 2 {
		env.Get(t, key, "/v1/companies/"+co.ID).WantStatus(t, 200)
	}
	env.Get(t, key, "/v1/companies/co_0000000000000000000000").WantStatus(t, 404)
	env.Get(t, "", "/v1/companies").WantStatus(t, 401)
	env.Get(t, key, "/v1/nowhere/"+co.ID).WantStatus(t, 404)

	r := env.Get(t, "", "/metrics").WantStatus(t, 200)
	body := string(r.Body)
	for _, want := range []string{
		`creditd_http_requests_total{method="GET",route="GET /v1/companies/{id}",status="200"} 2`,
		`creditd_http_requests_total{method="GET",route="GET /v1/companies/{id}",status="404"} 1`,
		`creditd_http_requests_total{method="GET",route="GET /v1/companies",status="401"} 1`,
		`creditd_http_requests_total{method="GET",route="unmatched",status="404"} 1`,
		`creditd_http_request_duration_seconds_count{method="GET",route="GET /v1/companies/{id}"} 3`,
		`go_goroutines `,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
	if strings.Contains(body, co.ID) || strings.Contains(body, "nowhere") {
		t.Error("metrics carry raw paths or IDs in their labels")
	}
	if !strings.HasPrefix(r.Header.Get("Content-Type"), "text/plain") {
		t.Errorf("metrics Content-Type %q", r.Header.Get("Content-Type"))
	}
}

func TestOperationalEndpointsNeedNoKeyAndNoAllowance(t *testing.T) {
	t.Parallel()
	env := credittest.New(t, credittest.Options{ServerConfig: func(c *server.Config) { c.AuthFailureLimit = 1 }})
	env.Get(t, "", "/v1/companies").WantStatus(t, 401)
	env.Get(t, "", "/v1/companies").WantError(t, 429, "rate_limited", "") // this address used its failed authentications
	for range 5 {
		for _, path := range []string{"/healthz", "/readyz", "/metrics"} {
			env.Get(t, "", path).WantStatus(t, 200)
		}
	}
}

func TestUnknownRoutesAndMethods(t *testing.T) {
	t.Parallel()
	env := credittest.New(t)
	st := env.MustStore(t, "Store", "EUR")
	key := env.MustKey(t, st, "full", credit.AllScopes...)
	for _, path := range []string{"/", "/v1", "/v1/", "/v1/nowhere", "/v1/companies/co_x/ledger/extra", "/v2/companies", "/V1/companies", "/v1/companies/co_x/timeline"} {
		for _, k := range []string{"", key} {
			r := env.Get(t, k, path)
			e := r.WantError(t, 404, "not_found", "")
			if want := "no such route: GET " + path; e.Message != want {
				t.Errorf("GET %s: message %q, want %q", path, e.Message, want)
			}
		}
	}
	for _, tc := range []struct{ method, path, allow string }{
		{"POST", "/v1/companies", "GET, HEAD"},
		{"DELETE", "/v1/companies", "GET, HEAD"},
		{"PUT", "/v1/companies/co_x", "GET, HEAD"},
		{"POST", "/v1/companies/co_x/ledger", "GET, HEAD"},
		{"GET", "/v1/companies/co_x/adjustments", "POST"},
		{"POST", "/v1/companies/co_x/credit-limit", "PUT"},
		{"PATCH", "/v1/companies/co_x/hold", "DELETE, POST"},
		{"GET", "/v1/companies/co_x/hold", "DELETE, POST"},
		{"POST", "/v1/applications/app_x", "GET, HEAD"},
		{"POST", "/healthz", "GET, HEAD"},
		{"DELETE", "/metrics", "GET, HEAD"},
	} {
		for _, k := range []string{"", key} {
			r := env.Do(t, credittest.Request{Method: tc.method, Path: tc.path, Key: k})
			r.WantError(t, 405, "method_not_allowed", "")
			if got := r.Header.Get("Allow"); got != tc.allow {
				t.Errorf("%s %s: Allow %q, want %q", tc.method, tc.path, got, tc.allow)
			}
		}
	}
}

func TestRequestIDs(t *testing.T) {
	t.Parallel()
	env := credittest.New(t)
	st := env.MustStore(t, "Store", "EUR")
	key := env.MustKey(t, st, "reader", credit.ScopeReadCredit)
	generated := regexp.MustCompile(`^req_[0-9A-Za-z]{22}$`)
	requests := []credittest.Request{
		{Method: "GET", Path: "/v1/companies", Key: key},
		{Method: "GET", Path: "/v1/companies"},
		{Method: "GET", Path: "/v1/companies/co_0000000000000000000000", Key: key},
		{Method: "POST", Path: "/v1/companies"},
		{Method: "GET", Path: "/nowhere"},
		{Method: "GET", Path: "/healthz"},
		{Method: "GET", Path: "/metrics"},
	}
	seen := map[string]bool{}
	for _, req := range requests {
		for _, tc := range []struct{ sent, want string }{
			{"", "<generated>"},
			{"abc-123_XYZ.1:2/3", "abc-123_XYZ.1:2/3"},
			{strings.Repeat("r", 128), strings.Repeat("r", 128)},
			{strings.Repeat("r", 129), "<generated>"},
			{"has space", "<generated>"},
			{"tab\there", "<generated>"},
			{"naïve", "<generated>"},
		} {
			req.Header = nil
			if tc.sent != "" {
				req.Header = map[string]string{"X-Request-Id": tc.sent}
			}
			got := env.Do(t, req).Header.Get("X-Request-Id")
			switch {
			case tc.want == "<generated>" && !generated.MatchString(got):
				t.Errorf("%s %s with X-Request-Id %q: answered %q, want a generated req_ id", req.Method, req.Path, tc.sent, got)
			case tc.want == "<generated>" && seen[got]:
				t.Errorf("%s %s: generated request id %q twice", req.Method, req.Path, got)
			case tc.want != "<generated>" && got != tc.want:
				t.Errorf("%s %s with X-Request-Id %q: answered %q, want it echoed", req.Method, req.Path, tc.sent, got)
			}
			seen[got] = true
		}
	}
}

// TestValidationOrder pins the order the README documents for a write:
// authentication → scope → body (400) → company (404) → fields (422) → state (409).
func TestValidationOrder(t *testing.T) {
	t.Parallel()
	env := newAuthEnv(t)
	st := env.MustStore(t, "Store", "EUR")
	full := env.MustKey(t, st, "full", credit.AllScopes...)
	read := env.MustKey(t, st, "read", credit.ScopeReadCredit)
	co := env.MustCompany(t, st, "Buyer", "1000")
	mustStaffHold(t, env, st, co.ID, "held")
	unknown := "/v1/companies/co_0000000000000000000000/hold"
	known := "/v1/companies/" + co.ID + "/hold"
	long := fmt.Sprintf(`{"note":%q}`, strings.Repeat("n", 501))
	for _, tc := range []struct {
		name, key, path, body string
		status                int
		code                  string
	}{
		{"no key beats everything", "", unknown, "{bad", 401, "unauthenticated"},
		{"scope beats the body", read, unknown, "{bad", 403, "insufficient_scope"},
		{"the body beats the company", full, unknown, "{bad", 400, "invalid_request"},
		{"the company beats the fields", full, unknown, long, 404, "not_found"},
		{"the fields beat the state", full, known, long, 422, "validation_failed"},
		{"the state comes last", full, known, `{"note":"again"}`, 409, "hold_exists"},
	} {
		r := env.Do(t, credittest.Request{Method: "POST", Path: tc.path, Key: tc.key, Body: tc.body})
		if r.Status != tc.status || r.ErrorCode() != tc.code {
			t.Errorf("%s: %d %s, want %d %s", tc.name, r.Status, r.Body, tc.status, tc.code)
		}
	}
}

func TestHEADAndBodiesOfReads(t *testing.T) {
	t.Parallel()
	env := credittest.New(t)
	st := env.MustStore(t, "Store", "EUR")
	key := env.MustKey(t, st, "reader", credit.ScopeReadCredit)
	req, err := http.NewRequest("HEAD", env.Server.URL+"/v1/companies", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := env.Server.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || len(raw) != 0 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		t.Errorf("HEAD /v1/companies: %d %q %q", resp.StatusCode, resp.Header.Get("Content-Type"), raw)
	}
	// A body on a read is not an error: GET ignores it, as HTTP says it has no meaning.
	env.Do(t, credittest.Request{Method: "GET", Path: "/v1/companies", Key: key, Body: `{"status":"on_hold"}`}).ListPage(t)
}
