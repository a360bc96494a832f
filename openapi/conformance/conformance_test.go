package conformance_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
	"github.com/creditd/creditd/openapi/conformance"
)

// exchange is one real request and response, which the cases below alter before checking.
type exchange struct {
	req    *http.Request
	status int
	header http.Header
	body   []byte
}

// record runs req against env and captures the exchange as the conformance hook saw it.
func record(t *testing.T, env *credittest.Env, req credittest.Request) exchange {
	t.Helper()
	var mu sync.Mutex
	var got exchange
	previous := credittest.Observe
	credittest.Observe = func(tb testing.TB, r *http.Request, resp *credittest.Response) {
		previous(tb, r, resp) // the real check still runs: the unaltered exchange must pass
		mu.Lock()
		defer mu.Unlock()
		got = exchange{req: r, status: resp.Status, header: resp.Header.Clone(), body: resp.Body}
	}
	defer func() { credittest.Observe = previous }()
	env.Do(t, req)
	return got
}

// TestMismatchesFail proves the check works: each case takes an exchange the server really
// made, which conforms, alters the response or request the way a server bug would, and expects
// the check to fail.
func TestMismatchesFail(t *testing.T) {
	v, err := conformance.Default()
	if err != nil {
		t.Fatal(err)
	}
	env := credittest.New(t)
	st := env.MustStore(t, "Acme", "EUR")
	key := env.MustKey(t, st, "erp", credit.ScopeReadCredit, credit.ScopeWriteCredit)
	readOnly := env.MustKey(t, st, "dashboard", credit.ScopeReadCredit)
	co := env.MustCompany(t, st, "Buyer GmbH", "1000.00")

	list := record(t, env, credittest.Request{Method: "GET", Path: "/v1/companies", Key: key})
	company := record(t, env, credittest.Request{Method: "GET", Path: "/v1/companies/" + co.ID, Key: key})
	adjust := record(t, env, credittest.Request{Method: "POST", Path: "/v1/companies/" + co.ID + "/adjustments", Key: key,
		Body: `{"amount":"-5.00","note":"goodwill"}`})
	scope := record(t, env, credittest.Request{Method: "POST", Path: "/v1/companies/" + co.ID + "/hold", Key: readOnly})
	unauth := record(t, env, credittest.Request{Method: "GET", Path: "/v1/companies"})
	unknownRoute := record(t, env, credittest.Request{Method: "GET", Path: "/v1/nope", Key: key})
	wrongMethod := record(t, env, credittest.Request{Method: "PATCH", Path: "/v1/companies/" + co.ID, Key: key})

	for _, x := range []exchange{list, company, adjust, scope, unauth, unknownRoute, wrongMethod} {
		if err := v.Check(x.req, x.status, x.header, x.body); err != nil {
			t.Fatalf("the unaltered exchange %s %s fails: %v", x.req.Method, x.req.URL.Path, err)
		}
	}

	// replaceJSON rewrites one member of a JSON body.
	replaceJSON := func(body []byte, edit func(m map[string]any)) []byte {
		var m map[string]any
		if err := json.Unmarshal(body, &m); err != nil {
			t.Fatal(err)
		}
		edit(m)
		b, _ := json.Marshal(m)
		return b
	}
	withHeader := func(h http.Header, name, value string) http.Header {
		h = h.Clone()
		if value == "" {
			h.Del(name)
		} else {
			h.Set(name, value)
		}
		return h
	}

	cases := []struct {
		name string
		x    exchange
		want string // a fragment of the failure
	}{
		{"undocumented member", exchange{company.req, 200, company.header, replaceJSON(company.body, func(m map[string]any) { m["internal_score"] = 7 })}, "internal_score"},
		{"amount as a number", exchange{company.req, 200, company.header, replaceJSON(company.body, func(m map[string]any) {
			m["credit_limit"] = map[string]any{"amount": 1000, "currency": "EUR"}
		})}, "amount"},
		{"timestamp without microseconds", exchange{company.req, 200, company.header, replaceJSON(company.body, func(m map[string]any) { m["updated_at"] = "2026-03-02T09:00:00Z" })}, "updated_at"},
		{"unknown status value", exchange{company.req, 200, company.header, replaceJSON(company.body, func(m map[string]any) { m["status"] = "suspended" })}, "status"},
		{"missing required member", exchange{company.req, 200, company.header, replaceJSON(company.body, func(m map[string]any) { delete(m, "hold") })}, "hold"},
		{"list envelope without next_cursor", exchange{list.req, 200, list.header, replaceJSON(list.body, func(m map[string]any) { delete(m, "next_cursor") })}, "next_cursor"},
		{"missing X-Request-Id", exchange{company.req, 200, withHeader(company.header, "X-Request-Id", ""), company.body}, "X-Request-Id"},
		{"missing X-RateLimit-Remaining", exchange{company.req, 200, withHeader(company.header, "X-RateLimit-Remaining", ""), company.body}, "X-RateLimit-Remaining"},
		{"undocumented status", exchange{company.req, 202, company.header, company.body}, "status"},
		{"success as 200 instead of 201", exchange{adjust.req, 200, adjust.header, adjust.body}, "status"},
		{"error code of another status", exchange{scope.req, 403, scope.header, []byte(`{"error":{"code":"not_found","message":"this call needs scope write_credit"}}`)}, "not_found"},
		{"error code not listed for the response", exchange{adjust.req, 422, adjust.header, []byte(`{"error":{"code":"limit_below_zero","message":"credit limit must be zero or greater","param":"amount"}}`)}, "limit_below_zero"},
		{"403 not naming the scope", exchange{scope.req, 403, scope.header, []byte(`{"error":{"code":"insufficient_scope","message":"forbidden"}}`)}, "scope"},
		{"error without message", exchange{scope.req, 403, scope.header, []byte(`{"error":{"code":"insufficient_scope"}}`)}, "message"},
		{"401 without WWW-Authenticate", exchange{unauth.req, 401, withHeader(unauth.header, "WWW-Authenticate", ""), unauth.body}, "WWW-Authenticate"},
		{"unknown route answered 200", exchange{unknownRoute.req, 200, unknownRoute.header, []byte(`{}`)}, "404"},
		{"unknown route with another code", exchange{unknownRoute.req, 404, unknownRoute.header, []byte(`{"error":{"code":"hold_not_found","message":"x"}}`)}, "hold_not_found"},
		{"405 with a wrong Allow", exchange{wrongMethod.req, 405, withHeader(wrongMethod.header, "Allow", "GET, POST"), wrongMethod.body}, "Allow"},
		{"405 without Allow", exchange{wrongMethod.req, 405, withHeader(wrongMethod.header, "Allow", ""), wrongMethod.body}, "Allow"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := v.Check(c.x.req, c.x.status, c.x.header, c.x.body)
			if err == nil {
				t.Fatalf("the altered exchange passed")
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Fatalf("failure does not mention %q: %v", c.want, err)
			}
		})
	}

	// A request the server accepted must itself match the document: an undocumented body member
	// accepted by a lenient server is a mismatch.
	t.Run("accepted request with an undocumented member", func(t *testing.T) {
		req, _ := http.NewRequest("POST", adjust.req.URL.String(), strings.NewReader(`{"amount":"-5.00","note":"goodwill","memo":"x"}`))
		req.Header = adjust.req.Header.Clone()
		err := v.Check(req, adjust.status, adjust.header, adjust.body)
		if err == nil || !strings.Contains(err.Error(), "memo") {
			t.Fatalf("want a request mismatch naming memo, got %v", err)
		}
	})
	// A refused request is not held to the document; its response is.
	t.Run("refused request is not checked", func(t *testing.T) {
		req, _ := http.NewRequest("POST", adjust.req.URL.String(), strings.NewReader(`{"amount":"-5.00","note":"goodwill","memo":"x"}`))
		req.Header = adjust.req.Header.Clone()
		body := []byte(`{"error":{"code":"invalid_request","message":"unknown field \"memo\"","param":"memo"}}`)
		if err := v.Check(req, 400, adjust.header, body); err != nil {
			t.Fatalf("a 400 for an invalid request must conform: %v", err)
		}
	})
}

// TestObserveReportsThroughTheTest checks the hook credittest installs turns a mismatch into a
// test failure.
func TestObserveReportsThroughTheTest(t *testing.T) {
	env := credittest.New(t)
	st := env.MustStore(t, "Acme", "EUR")
	key := env.MustKey(t, st, "erp", credit.ScopeReadCredit)
	x := record(t, env, credittest.Request{Method: "GET", Path: "/v1/companies", Key: key})
	rec := &recordingTB{TB: t}
	conformance.Observe(rec, x.req, x.status, x.header, []byte(`{"data":[],"has_more":"no","next_cursor":null}`))
	if len(rec.errors) != 1 || !strings.Contains(rec.errors[0], "has_more") {
		t.Fatalf("want one reported mismatch about has_more, got %q", rec.errors)
	}
}

// recordingTB records Errorf instead of failing.
type recordingTB struct {
	testing.TB
	errors []string
}

func (r *recordingTB) Helper() {}

func (r *recordingTB) Errorf(format string, args ...any) {
	r.errors = append(r.errors, strings.TrimSpace(fmt.Sprintf(format, args...)))
}

// BenchmarkCheck measures what the check adds to each exchange of the test suite.
func BenchmarkCheck(b *testing.B) {
	v, err := conformance.Default()
	if err != nil {
		b.Fatal(err)
	}
	env := credittest.New(b)
	st := env.MustStore(b, "Acme", "EUR")
	key := env.MustKey(b, st, "erp", credit.ScopeReadCredit)
	for i := 0; i < 50; i++ {
		env.MustCompany(b, st, fmt.Sprintf("Buyer %d", i), "1000.00")
	}
	var x exchange
	previous := credittest.Observe
	credittest.Observe = func(tb testing.TB, r *http.Request, resp *credittest.Response) {
		x = exchange{req: r, status: resp.Status, header: resp.Header, body: resp.Body}
	}
	env.Get(b, key, "/v1/companies")
	credittest.Observe = previous
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := v.Check(x.req, x.status, x.header, x.body); err != nil {
			b.Fatal(err)
		}
	}
}
