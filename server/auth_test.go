package server_test

import (
	"strings"
	"testing"
	"time"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
	"github.com/creditd/creditd/server"
)

// newAuthEnv starts creditd with failed authentications unlimited, so a test may fail many.
func newAuthEnv(t *testing.T) *credittest.Env {
	t.Helper()
	return credittest.New(t, credittest.Options{ServerConfig: func(c *server.Config) {
		c.AuthFailureLimit = 1_000_000
		c.RateLimit = 1_000_000
	}})
}

func TestEveryUnusableKeyGetsTheSame401(t *testing.T) {
	t.Parallel()
	env := newAuthEnv(t)
	st := env.MustStore(t, "Store", "EUR")
	good := env.MustIssuedKey(t, st, "good", credit.ScopeReadCredit)
	revoked := env.MustIssuedKey(t, st, "revoked", credit.ScopeReadCredit)
	if err := env.Service.Keys.Revoke(env.StaffOf(t, revoked.ID), revoked.ID); err != nil {
		t.Fatal(err)
	}
	rotated := env.MustIssuedKey(t, st, "rotated", credit.ScopeReadCredit)
	fresh, err := env.Service.Keys.Rotate(env.StaffOf(t, rotated.ID), rotated.ID, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	// A well-formed secret with a valid checksum that this database never issued.
	elsewhere := credittest.New(t)
	unknown := elsewhere.MustKey(t, elsewhere.MustStore(t, "Elsewhere", "EUR"), "k", credit.ScopeReadCredit)

	get := func(authorization string) *credittest.Response {
		t.Helper()
		req := credittest.Request{Method: "GET", Path: "/v1/companies"}
		if authorization != "<none>" {
			req.Header = map[string]string{"Authorization": authorization}
		}
		return env.Do(t, req)
	}
	for _, ok := range []string{"Bearer " + good.Secret, "bearer " + good.Secret, "BEARER " + good.Secret, "Bearer  " + good.Secret + " ", "Bearer " + rotated.Secret, "Bearer " + fresh.Secret} {
		get(ok).ListPage(t)
	}

	// The rotated-out secret works for the grace period, then stops.
	env.Clock.Advance(time.Hour - time.Microsecond)
	get("Bearer " + rotated.Secret).ListPage(t)
	env.Clock.Advance(time.Microsecond)

	flipped := []byte(good.Secret)
	flipped[len(flipped)-1] ^= 1 // another base62 character: the checksum no longer matches
	cases := map[string]string{
		"missing":                "<none>",
		"empty":                  "",
		"basic scheme":           "Basic Z29vZDprZXk=",
		"scheme only":            "Bearer",
		"scheme and space":       "Bearer ",
		"token scheme":           "Token " + good.Secret,
		"no scheme":              good.Secret,
		"not a secret":           "Bearer hello",
		"truncated":              "Bearer " + good.Secret[:len(good.Secret)-1],
		"extended":               "Bearer " + good.Secret + "x",
		"wrong checksum":         "Bearer " + string(flipped),
		"two tokens":             "Bearer " + good.Secret + " " + good.Secret,
		"upper-case prefix":      "Bearer CK_" + good.Secret[3:],
		"another database's key": "Bearer " + unknown,
		"revoked":                "Bearer " + revoked.Secret,
		"expired after rotation": "Bearer " + rotated.Secret,
		"hash instead of secret": "Bearer " + strings.Repeat("a", 64),
		"tab instead of space":   "Bearer\t" + good.Secret,
	}
	var reference *credittest.Response
	for name, authorization := range cases {
		r := get(authorization)
		r.WantError(t, 401, "unauthenticated", "")
		if got := r.Header.Get("WWW-Authenticate"); got != `Bearer realm="credit"` {
			t.Errorf("%s: WWW-Authenticate %q", name, got)
		}
		if r.Header.Get("X-Request-Id") == "" {
			t.Errorf("%s: no X-Request-Id", name)
		}
		if reference == nil {
			reference = r
			continue
		}
		if string(r.Body) != string(reference.Body) {
			t.Errorf("%s answers %s, unlike another unusable key %s: the answer must not tell which", name, r.Body, reference.Body)
		}
	}
	// The fresh secret of the rotated key, and the good key, still work.
	get("Bearer " + fresh.Secret).ListPage(t)
	get("Bearer " + good.Secret).ListPage(t)
}

func TestEveryRouteNeedsAKey(t *testing.T) {
	t.Parallel()
	env := newAuthEnv(t)
	s := mustStoreWithData(t, env, "Store")
	revoked := env.MustIssuedKey(t, s.id, "revoked", credit.AllScopes...)
	if err := env.Service.Keys.Revoke(env.StaffOf(t, revoked.ID), revoked.ID); err != nil {
		t.Fatal(err)
	}
	var reference string
	for _, rt := range routesWithCases(t) {
		rc := routeCases[rt.Pattern]
		id := ""
		if rc.idKind != "" {
			id = s.idOf(rc.idKind)
		}
		for _, key := range []string{"", revoked.Secret} {
			req := routeRequest(rt.Pattern, id, key)
			r := env.Do(t, req)
			r.WantError(t, 401, "unauthenticated", "")
			if reference == "" {
				reference = string(r.Body)
			} else if string(r.Body) != reference {
				t.Errorf("%s answers %s, unlike %s", rt.Pattern, r.Body, reference)
			}
			// Authentication comes before anything about the request is looked at.
			if id != "" {
				req.Path = strings.ReplaceAll(req.Path, id, "nonsense")
			}
			req.Path += "?limit=abc"
			if rc.body != nil {
				req.Body = "{not json"
			}
			env.Do(t, req).WantError(t, 401, "unauthenticated", "")
		}
	}
	// Nothing was written by the refused requests.
	var c credit.Company
	env.Get(t, s.key, "/v1/companies/"+s.company).WantStatus(t, 200).Decode(t, &c)
	if c.Outstanding.Amount != "350.00" || c.Hold == nil || c.CreditLimit.Amount != "5000.00" {
		t.Errorf("unauthenticated writes changed the company: %+v", c)
	}
}

// TestReadsDoNotWriteTheDatabase checks that a key's last use is written on its first use and
// then at most once a minute, so reads cost no database write: SQLite's data_version, seen
// from a connection of its own, moves only when another connection commits.
func TestReadsDoNotWriteTheDatabase(t *testing.T) {
	t.Parallel()
	credittest.RequireSQLite(t)
	env := newAuthEnv(t)
	s := mustStoreWithData(t, env, "Store")
	key := env.MustIssuedKey(t, s.id, "reader", credit.ScopeReadCredit, credit.ScopeReadApplications)
	lastUsed := func() string {
		t.Helper()
		keys, err := env.Service.Keys.List(credittest.Staff(s.id), credit.DefaultStaleAfter)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range keys {
			if k.ID == key.ID {
				if k.LastUsedAt == nil {
					return "never"
				}
				return k.LastUsedAt.String()
			}
		}
		t.Fatalf("key %s not listed", key.ID)
		return ""
	}
	conn, err := env.DB.SQL.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	dataVersion := func() int64 {
		t.Helper()
		var v int64
		if err := conn.QueryRowContext(t.Context(), "PRAGMA data_version").Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	reads := []string{"/v1/companies", "/v1/companies/" + s.company, "/v1/companies/" + s.company + "/ledger", "/v1/applications", "/v1/applications/" + s.application}

	if got := lastUsed(); got != "never" {
		t.Fatalf("a new key's last use: %s", got)
	}
	before := dataVersion()
	env.Clock.Advance(time.Hour)
	env.Get(t, key.Secret, "/v1/companies").WantStatus(t, 200)
	first := env.Clock.Now().Format(credit.TimestampLayout)
	if got := lastUsed(); got != first {
		t.Fatalf("last use after the first request: %s, want %s", got, first)
	}
	if dataVersion() == before {
		t.Fatal("the first use was not written")
	}

	quiet := dataVersion()
	for i := range 30 {
		env.Clock.Advance(59 * time.Second / 30) // the last read 59 s after the first use
		env.Get(t, key.Secret, reads[i%len(reads)]).WantStatus(t, 200)
	}
	if v := dataVersion(); v != quiet {
		t.Errorf("30 reads within the minute wrote the database (data_version %d → %d)", quiet, v)
	}
	if got := lastUsed(); got != first {
		t.Errorf("last use moved within the minute: %s, want %s", got, first)
	}

	env.Clock.Advance(2 * time.Second) // more than a minute after the first use
	env.Get(t, key.Secret, "/v1/companies").WantStatus(t, 200)
	if got, want := lastUsed(), env.Clock.Now().Format(credit.TimestampLayout); got != want {
		t.Errorf("last use a minute later: %s, want %s", got, want)
	}
}

// TestCachedKeyIsConfirmedByTheRead revokes a key that the cache trusts and checks that the
// very next request is refused, on the reads that confirm a cached key inside their own
// statement (a company, its ledger, the list) as on those confirmed before their answer is
// written (an unknown company, the applications), and that another key's revocation, which
// moves the count every cached key was confirmed under, costs a valid key nothing: not a 404,
// not an empty list.
func TestCachedKeyIsConfirmedByTheRead(t *testing.T) {
	t.Parallel()
	env := newAuthEnv(t)
	s := mustStoreWithData(t, env, "Store")
	unknown := "/v1/companies/co_" + strings.Repeat("0", 22)
	paths := []string{
		"/v1/companies/" + s.company,
		"/v1/companies/" + s.company + "/ledger",
		"/v1/companies?limit=250",
		"/v1/companies?status=approved", // an empty list
		unknown,
		"/v1/applications",
		"/v1/events",
	}
	var refusal string
	for _, path := range paths {
		k := env.MustIssuedKey(t, s.id, "cached", credit.AllScopes...)
		for range 2 {
			if r := env.Get(t, k.Secret, path); r.Status != 200 && path != unknown {
				t.Fatalf("%s: %d %s", path, r.Status, r.Body)
			}
		}
		if err := env.Service.Keys.Revoke(env.StaffOf(t, k.ID), k.ID); err != nil {
			t.Fatal(err)
		}
		r := env.Get(t, k.Secret, path)
		r.WantError(t, 401, "unauthenticated", "")
		if r.Header.Get("ETag") != "" || r.Header.Get("Cache-Control") != "" {
			t.Errorf("%s: the refusal carries the read's headers: %v", path, r.Header)
		}
		if refusal == "" {
			refusal = string(r.Body)
		} else if string(r.Body) != refusal {
			t.Errorf("%s refuses with %s, unlike %s", path, r.Body, refusal)
		}
		env.Get(t, k.Secret, path).WantError(t, 401, "unauthenticated", "")
	}

	// Another key's revocation moves the count under which s.key was cached.
	want := map[string]string{}
	for _, path := range paths {
		want[path] = string(env.Get(t, s.key, path).Body)
	}
	for _, path := range paths {
		other := env.MustIssuedKey(t, s.id, "other", credit.ScopeReadCredit)
		if err := env.Service.Keys.Revoke(env.StaffOf(t, other.ID), other.ID); err != nil {
			t.Fatal(err)
		}
		r := env.Get(t, s.key, path)
		wantStatus := 200
		if path == unknown {
			wantStatus = 404
		}
		r.WantStatus(t, wantStatus)
		if path != "/v1/events" && string(r.Body) != want[path] {
			t.Errorf("%s after another key's revocation: %s, want %s", path, r.Body, want[path])
		}
	}
}
