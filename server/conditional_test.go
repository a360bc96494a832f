package server_test

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
	"github.com/creditd/creditd/server"
)

// getWith is a GET with extra headers.
func getWith(tb testing.TB, env *credittest.Env, key, path string, header ...string) *credittest.Response {
	tb.Helper()
	h := map[string]string{}
	for i := 0; i+1 < len(header); i += 2 {
		h[header[i]] = header[i+1]
	}
	return env.Do(tb, credittest.Request{Method: http.MethodGet, Path: path, Key: key, Header: h})
}

// gunzip decompresses a gzip body.
func gunzip(tb testing.TB, b []byte) []byte {
	tb.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		tb.Fatalf("not gzip: %v", err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		tb.Fatalf("gunzip: %v", err)
	}
	return out
}

// TestGzip: bodies over 1 KiB are gzip-compressed for a client that accepts it and decompress
// to the identity body; small bodies, errors and /metrics stay as they were.
func TestGzip(t *testing.T) {
	env := credittest.New(t)
	st := env.MustStore(t, "Store", "EUR")
	key := env.MustKey(t, st, "reader", credit.ScopeReadCredit)
	var co credit.Company
	for i := range 10 {
		co = env.MustCompany(t, st, fmt.Sprintf("Company %d GmbH", i), "1000.00")
	}

	plain := getWith(t, env, key, "/v1/companies", "Accept-Encoding", "identity").WantStatus(t, http.StatusOK)
	if plain.Header.Get("Content-Encoding") != "" || len(plain.Body) < 1024 {
		t.Fatalf("identity: Content-Encoding %q, %d bytes", plain.Header.Get("Content-Encoding"), len(plain.Body))
	}
	zipped := getWith(t, env, key, "/v1/companies", "Accept-Encoding", "gzip").WantStatus(t, http.StatusOK)
	if zipped.Header.Get("Content-Encoding") != "gzip" || !strings.Contains(zipped.Header.Get("Vary"), "Accept-Encoding") {
		t.Fatalf("gzip accepted: headers %v", zipped.Header)
	}
	if len(zipped.Body) >= len(plain.Body)/2 {
		t.Errorf("compressed %d bytes to %d", len(plain.Body), len(zipped.Body))
	}
	if got := gunzip(t, zipped.Body); !bytes.Equal(got, plain.Body) {
		t.Fatalf("the body does not round-trip:\n%s\n%s", got, plain.Body)
	}
	if zipped.Header.Get("X-Request-Id") == "" || zipped.Header.Get("X-RateLimit-Remaining") == "" {
		t.Errorf("headers lost: %v", zipped.Header)
	}

	// GraphQL answers are compressed too.
	gql := env.Do(t, credittest.Request{Method: http.MethodPost, Path: "/graphql", Key: key, Header: map[string]string{"Accept-Encoding": "gzip"},
		Body: map[string]any{"query": "{ companies { edges { node { id name creditLimit { amount currency } } } } }"}}).WantStatus(t, http.StatusOK)
	if gql.Header.Get("Content-Encoding") != "gzip" || !bytes.Contains(gunzip(t, gql.Body), []byte(co.ID)) {
		t.Errorf("GraphQL: %v", gql.Header)
	}

	// Small bodies and errors are sent as they are.
	small := getWith(t, env, key, "/v1/companies/"+co.ID, "Accept-Encoding", "gzip").WantStatus(t, http.StatusOK)
	if small.Header.Get("Content-Encoding") != "" || !bytes.Contains(small.Body, []byte(co.ID)) {
		t.Errorf("a %d-byte body: Content-Encoding %q", len(small.Body), small.Header.Get("Content-Encoding"))
	}
	getWith(t, env, key, "/v1/companies/co_nope", "Accept-Encoding", "gzip").WantError(t, http.StatusNotFound, "not_found", "")
	getWith(t, env, "", "/v1/companies", "Accept-Encoding", "gzip").WantError(t, http.StatusUnauthorized, "unauthenticated", "")

	// /metrics compresses itself; it is not compressed twice.
	m := getWith(t, env, "", "/metrics", "Accept-Encoding", "gzip").WantStatus(t, http.StatusOK)
	body := m.Body
	if m.Header.Get("Content-Encoding") == "gzip" {
		body = gunzip(t, body)
	}
	if !bytes.Contains(body, []byte("creditd_http_requests_total")) {
		t.Fatalf("/metrics with gzip: %v %q", m.Header, body[:min(len(body), 200)])
	}
}

// TestConditionalGet: every GET resource and list carries a strong ETag, If-None-Match with it
// is 304 without a body, and across writes of every kind the tag changes exactly when the body
// does, under each key (scopes change what a URL shows) and compressed or not. On PostgreSQL with
// CREDITD_TEST_BACKEND=postgres.
func TestConditionalGet(t *testing.T) {
	env := credittest.New(t, credittest.Options{ServerConfig: func(c *server.Config) { c.RateLimit = 1_000_000 }})
	st := env.MustStore(t, "Store", "EUR")
	credit1 := env.MustKey(t, st, "credit", credit.ScopeReadCredit)
	both := env.MustKey(t, st, "both", credit.ScopeReadCredit, credit.ScopeReadApplications)
	apps := env.MustKey(t, st, "apps", credit.ScopeReadApplications)
	full := env.MustIssuedKey(t, st, "erp", credit.ScopeReadCredit, credit.ScopeWriteCredit)
	co := env.MustCompany(t, st, "Alpenblick Hotels AG", "25000.00")
	other := env.MustCompany(t, st, "Brauhaus Kessler KG", "8000.00")
	entry := env.MustRecord(t, credit.LedgerEntryInput{CompanyID: co.ID, Kind: credit.KindOrderPlaced, Amount: "100.00", OrderGID: "gid://platform/Order/1"})
	app := env.MustApplication(t, st, credit.ApplicationInput{BusinessName: "Café Morgenrot", ContactEmail: "ada@example.com"})
	ev := env.Get(t, credit1, "/v1/events?limit=1").ListPage(t).IDs(t)[0]

	type target struct{ key, path string }
	var targets []target
	for _, key := range []string{credit1, both} {
		for _, path := range []string{"/v1/companies", "/v1/companies?status=on_hold", "/v1/companies/" + co.ID, "/v1/companies/" + other.ID,
			"/v1/companies/" + co.ID + "/ledger", "/v1/companies/" + co.ID + "/ledger?after=" + entry.ID, "/v1/events", "/v1/events/" + ev, "/v1/openapi.json"} {
			targets = append(targets, target{key, path})
		}
	}
	for _, key := range []string{both, apps} {
		targets = append(targets, target{key, "/v1/applications"}, target{key, "/v1/applications/" + app.ID}, target{key, "/v1/events"})
	}

	type seen struct{ tag, body string }
	fetch := func(t *testing.T, tg target) seen {
		t.Helper()
		r := getWith(t, env, tg.key, tg.path, "Accept-Encoding", "identity").WantStatus(t, http.StatusOK)
		tag := r.Header.Get("ETag")
		if !strings.HasPrefix(tag, `"`) || !strings.HasSuffix(tag, `"`) || len(tag) < 10 {
			t.Fatalf("%s: ETag %q is not a strong tag", tg.path, tag)
		}
		return seen{tag, string(r.Body)}
	}
	state := map[target]seen{}
	for _, tg := range targets {
		s := fetch(t, tg)
		state[tg] = s
		// The same tag: 304, no body, the tag again; also among other tags and weakly compared.
		for _, inm := range []string{s.tag, `"other", ` + s.tag, "W/" + s.tag, "*"} {
			nm := getWith(t, env, tg.key, tg.path, "If-None-Match", inm, "Accept-Encoding", "identity")
			if nm.Status != http.StatusNotModified || len(nm.Body) != 0 || nm.Header.Get("ETag") != s.tag {
				t.Fatalf("%s with If-None-Match %s: %d %v %q", tg.path, inm, nm.Status, nm.Header, nm.Body)
			}
		}
		if r := getWith(t, env, tg.key, tg.path, "If-None-Match", `"stale"`, "Accept-Encoding", "identity"); r.Status != http.StatusOK || r.Header.Get("ETag") != s.tag {
			t.Fatalf("%s with a stale tag: %d", tg.path, r.Status)
		}
	}
	// A URL whose body differs between keys has different tags.
	if a, b := state[target{credit1, "/v1/events"}], state[target{both, "/v1/events"}]; a.body == b.body || a.tag == b.tag {
		t.Errorf("/v1/events under read_credit and read_applications: same body %v, same tag %v", a.body == b.body, a.tag == b.tag)
	}

	// The compressed representation has its own strong tag, and If-None-Match knows it.
	zipped := getWith(t, env, credit1, "/v1/openapi.json", "Accept-Encoding", "gzip").WantStatus(t, http.StatusOK)
	gzTag := zipped.Header.Get("ETag")
	if zipped.Header.Get("Content-Encoding") != "gzip" || gzTag != strings.TrimSuffix(state[target{credit1, "/v1/openapi.json"}].tag, `"`)+`-gzip"` {
		t.Fatalf("compressed: %v", zipped.Header)
	}
	if nm := getWith(t, env, credit1, "/v1/openapi.json", "Accept-Encoding", "gzip", "If-None-Match", gzTag); nm.Status != http.StatusNotModified || nm.Header.Get("ETag") != gzTag {
		t.Fatalf("If-None-Match with the gzip tag: %d %v", nm.Status, nm.Header)
	}

	sc := env.StaffOf(t, co.ID)
	write := func(path, method, body string) func(t *testing.T) {
		return func(t *testing.T) {
			r := env.Do(t, credittest.Request{Method: method, Path: path, Key: full.Secret, Body: body})
			if r.Status >= 300 {
				t.Fatalf("%s %s: %d %s", method, path, r.Status, r.Body)
			}
		}
	}
	changes := []struct {
		name string
		do   func(t *testing.T)
		// changed must have a new body (and tag) afterwards.
		changed []string
	}{
		{"adjustment", write("/v1/companies/"+co.ID+"/adjustments", http.MethodPost, `{"amount":"-20.00","note":"goodwill"}`), []string{"/v1/companies/" + co.ID, "/v1/companies/" + co.ID + "/ledger"}},
		{"limit change", write("/v1/companies/"+other.ID+"/credit-limit", http.MethodPut, `{"amount":"9000.00"}`), []string{"/v1/companies/" + other.ID, "/v1/companies"}},
		{"same limit again", write("/v1/companies/"+other.ID+"/credit-limit", http.MethodPut, `{"amount":"9000.00"}`), nil},
		{"hold placed", write("/v1/companies/"+co.ID+"/hold", http.MethodPost, `{"note":"check"}`), []string{"/v1/companies?status=on_hold"}},
		{"hold lifted", write("/v1/companies/"+co.ID+"/hold", http.MethodDelete, ""), []string{"/v1/companies?status=on_hold"}},
		{"ledger entry recorded", func(t *testing.T) {
			env.MustRecord(t, credit.LedgerEntryInput{CompanyID: co.ID, Kind: credit.KindPayment, Amount: "-50.00"})
		}, []string{"/v1/companies/" + co.ID + "/ledger?after=" + entry.ID}},
		{"application status", func(t *testing.T) {
			if _, _, err := env.Service.Applications.SetStatus(sc, credit.StatusChange{ApplicationID: app.ID, Status: "in_review"}); err != nil {
				t.Fatal(err)
			}
		}, []string{"/v1/applications/" + app.ID}},
		{"person erased", func(t *testing.T) {
			if _, err := env.Service.Applications.ErasePerson(sc, "ada@example.com"); err != nil {
				t.Fatal(err)
			}
		}, []string{"/v1/applications/" + app.ID, "/v1/applications"}},
		{"key rotated", func(t *testing.T) {
			if _, err := env.Service.Keys.Rotate(sc, full.ID, 0); err != nil {
				t.Fatal(err)
			}
			full = env.MustIssuedKey(t, st, "erp2", credit.ScopeReadCredit, credit.ScopeWriteCredit)
		}, []string{"/v1/events"}},
		{"nothing", func(t *testing.T) {}, nil},
	}
	for _, c := range changes {
		t.Run(c.name, func(t *testing.T) {
			c.do(t)
			changed := map[string]bool{}
			for _, tg := range targets {
				before, after := state[tg], fetch(t, tg)
				if (before.body == after.body) != (before.tag == after.tag) {
					t.Errorf("%s: body changed %v, tag changed %v", tg.path, before.body != after.body, before.tag != after.tag)
				}
				nm := getWith(t, env, tg.key, tg.path, "If-None-Match", before.tag, "Accept-Encoding", "identity")
				if want := map[bool]int{true: http.StatusNotModified, false: http.StatusOK}[before.body == after.body]; nm.Status != want {
					t.Errorf("%s with the tag from before: %d, want %d", tg.path, nm.Status, want)
				}
				changed[tg.path] = changed[tg.path] || before.tag != after.tag
				state[tg] = after
			}
			for _, path := range c.changed {
				if !changed[path] {
					t.Errorf("%s did not change", path)
				}
			}
		})
	}
}
