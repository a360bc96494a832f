package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
	"github.com/creditd/creditd/server"
)

func withCORSOrigins(origins ...string) credittest.Options {
	return credittest.Options{ServerConfig: func(c *server.Config) { c.CORSOrigins = origins }}
}

// TestCORSHeaders: with --cors-origin, a listed origin's preflight is 204 with the methods and
// headers allowed, before authentication and the rate limit; its answers expose the headers a
// dashboard reads. An unlisted origin gets no CORS header. Without the flag nothing changes.
func TestCORSHeaders(t *testing.T) {
	const origin = "https://dashboard.example.com"
	env := credittest.New(t, credittest.Options{ServerConfig: func(c *server.Config) {
		c.CORSOrigins = []string{origin, "http://localhost:3000"}
		c.RateLimit = 2
	}})
	st := env.MustStore(t, "Store", "EUR")
	key := env.MustKey(t, st, "dashboard", credit.ScopeReadCredit)

	preflight := func(origin, method, headers string) *credittest.Response {
		return env.Do(t, credittest.Request{Method: http.MethodOptions, Path: "/v1/companies", Header: map[string]string{
			"Origin": origin, "Access-Control-Request-Method": method, "Access-Control-Request-Headers": headers,
		}})
	}
	for range 5 { // more than the rate limit: preflights are not counted
		r := preflight(origin, http.MethodPost, "authorization,content-type,idempotency-key")
		if r.Status != http.StatusNoContent || r.Header.Get("Access-Control-Allow-Origin") != origin ||
			!strings.Contains(r.Header.Get("Access-Control-Allow-Methods"), "POST") ||
			!strings.Contains(strings.ToLower(r.Header.Get("Access-Control-Allow-Headers")), "idempotency-key") {
			t.Fatalf("preflight: %d %v", r.Status, r.Header)
		}
	}
	// A subscription over SSE sends its position (contract §16, amended 2026-11-28).
	if r := preflight(origin, http.MethodPost, "authorization,content-type,last-event-id"); r.Status != http.StatusNoContent ||
		!strings.Contains(strings.ToLower(r.Header.Get("Access-Control-Allow-Headers")), "last-event-id") {
		t.Fatalf("an SSE subscription's preflight: %d %v", r.Status, r.Header)
	}
	if r := preflight("https://evil.example.com", http.MethodGet, "authorization"); r.Header.Get("Access-Control-Allow-Origin") != "" || r.Header.Get("Access-Control-Allow-Headers") != "" {
		t.Fatalf("an unlisted origin's preflight: %d %v", r.Status, r.Header)
	}

	get := func(origin string) *credittest.Response {
		return env.Do(t, credittest.Request{Method: http.MethodGet, Path: "/v1/companies", Key: key, Header: map[string]string{"Origin": origin}})
	}
	r := get(origin).WantStatus(t, http.StatusOK)
	exposed := strings.ToLower(r.Header.Get("Access-Control-Expose-Headers"))
	for _, h := range []string{"x-request-id", "x-ratelimit-limit", "x-ratelimit-remaining", "retry-after", "idempotent-replayed", "etag"} {
		if !strings.Contains(exposed, h) {
			t.Errorf("%s is not exposed: %q", h, exposed)
		}
	}
	if r.Header.Get("Access-Control-Allow-Origin") != origin || r.Header.Get("X-RateLimit-Remaining") != "1" {
		t.Errorf("a listed origin's GET: %v", r.Header)
	}
	if r := get("https://evil.example.com"); r.Header.Get("Access-Control-Allow-Origin") != "" || r.Header.Get("Access-Control-Expose-Headers") != "" {
		t.Errorf("an unlisted origin's GET has CORS headers: %v", r.Header)
	}

	// Without origins there is no CORS: an OPTIONS is 405 as before.
	off := credittest.New(t)
	r = off.Do(t, credittest.Request{Method: http.MethodOptions, Path: "/v1/companies", Header: map[string]string{"Origin": origin, "Access-Control-Request-Method": "GET"}})
	if r.Status != http.StatusMethodNotAllowed || r.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("CORS off: %d %v", r.Status, r.Header)
	}
}

func TestCheckCORSOrigin(t *testing.T) {
	for _, ok := range []string{"https://dashboard.example.com", "http://localhost:3000", "http://127.0.0.1:8081"} {
		if err := server.CheckCORSOrigin(ok); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "*", "dashboard.example.com", "https://*.example.com", "https://example.com/", "https://example.com/app",
		"ftp://example.com", "https://user@example.com", "https://Example.com", "https://example.com?x", "null"} {
		if err := server.CheckCORSOrigin(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// corsPage is a dashboard page that calls the API on another origin with a key: a GET whose
// X-RateLimit-Remaining it reads, a write with Idempotency-Key, and a GraphQL query. Each
// outcome lands in window.results.
const corsPage = `<!doctype html><meta charset="utf-8"><title>dashboard</title><script>
window.results = {};
const api = %q, key = %q, company = %q;
const auth = {"Authorization": "Bearer " + key};
function record(name, p) {
  p.then(v => { window.results[name] = v; }, e => { window.results[name] = {error: String(e)}; });
}
record("get", fetch(api + "/v1/companies", {headers: auth}).then(async r => ({
  status: r.status, remaining: r.headers.get("X-RateLimit-Remaining"), requestId: r.headers.get("X-Request-Id"),
  etag: r.headers.get("ETag"), count: (await r.json()).data.length})));
record("write", fetch(api + "/v1/companies/" + company + "/adjustments", {method: "POST",
  headers: Object.assign({"Content-Type": "application/json", "Idempotency-Key": "page-1"}, auth),
  body: JSON.stringify({amount: "10.00", note: "from the dashboard"})}).then(r => ({status: r.status})));
record("graphql", fetch(api + "/graphql", {method: "POST", headers: Object.assign({"Content-Type": "application/json"}, auth),
  body: JSON.stringify({query: "{ companies { edges { node { name } } } }"})}).then(async r => ({status: r.status, body: await r.text()})));
</script>`

// TestCORSInBrowser serves a dashboard page from one origin that calls the API on another, in
// headless Chromium: with the page's origin listed the calls succeed and the page reads
// X-RateLimit-Remaining; from an unlisted origin the browser refuses them.
func TestCORSInBrowser(t *testing.T) {
	var page string
	pages := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, page)
	}))
	defer pages.Close()
	unlisted := httptest.NewServer(pages.Config.Handler)
	defer unlisted.Close()

	env := credittest.New(t, withCORSOrigins(pages.URL))
	st := env.MustStore(t, "Store", "EUR")
	key := env.MustKey(t, st, "dashboard", credit.ScopeReadCredit, credit.ScopeWriteCredit)
	co := env.MustCompany(t, st, "Alpenblick Hotels AG", "25000.00")
	page = fmt.Sprintf(corsPage, env.Server.URL, key, co.ID)

	ctx := credittest.Browser(t, 800, 600)
	type outcome struct {
		Status    int    `json:"status"`
		Remaining string `json:"remaining"`
		RequestID string `json:"requestId"`
		ETag      string `json:"etag"`
		Count     int    `json:"count"`
		Body      string `json:"body"`
		Error     string `json:"error"`
	}
	run := func(url string) map[string]outcome {
		var raw string
		err := chromedp.Run(ctx,
			chromedp.Navigate(url),
			chromedp.Poll(`Object.keys(window.results || {}).length == 3 && JSON.stringify(window.results)`, &raw, chromedp.WithPollingTimeout(20*time.Second)),
		)
		if err != nil {
			t.Fatalf("%s: %v", url, err)
		}
		var out map[string]outcome
		if err := json.Unmarshal([]byte(raw), &out); err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		return out
	}

	got := run(pages.URL)
	if g := got["get"]; g.Status != 200 || g.Remaining == "" || g.RequestID == "" || g.ETag == "" || g.Count != 1 {
		t.Errorf("GET from the listed origin: %+v", g)
	}
	if w := got["write"]; w.Status != http.StatusCreated {
		t.Errorf("write from the listed origin: %+v", w)
	}
	if g := got["graphql"]; g.Status != 200 || !strings.Contains(g.Body, co.Name) {
		t.Errorf("GraphQL from the listed origin: %+v", g)
	}
	c, err := env.Service.Companies.Get(credittest.Staff(st), co.ID)
	if err != nil || c.Outstanding.Amount != "10.00" {
		t.Fatalf("the page's write: %+v %v", c, err)
	}

	got = run(unlisted.URL)
	for name, o := range got {
		if o.Error == "" || o.Status != 0 {
			t.Errorf("%s from an unlisted origin was not refused by the browser: %+v", name, o)
		}
	}
	if c, _ := env.Service.Companies.Get(credittest.Staff(st), co.ID); c.Outstanding.Amount != "10.00" {
		t.Errorf("an unlisted origin's write reached the server: outstanding %s", c.Outstanding.Amount)
	}
}
