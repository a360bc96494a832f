package server_test

import (
	"encoding/json"
	"log/slog"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
	"github.com/creditd/creditd/httpapi"
	"github.com/creditd/creditd/server"
)

// failedAuthMessage is what the failed-authentication limit's 429 says, in part: it names
// that limit, never "this store".
const failedAuthMessage = "the failed-authentication limit is 30 a minute"

// TestValidKeysAreNeverRefusedByTheFailedAuthenticationLimit is issue 32's lock-out: one
// client at an address sends 100 requests with bad credentials (a revoked key, as an ERP that
// was never reconfigured does, an unknown key, a malformed one, none at all; REST reads and
// writes and GraphQL), interleaved with requests with a valid key from the same address. Every
// valid one is answered 200; the bad ones are 401 up to 30 in the minute and 429 beyond,
// with Retry-After and a message naming the failed-authentication limit (contract §2 as
// amended 2026-11-27). A minute later the address has its failures back.
func TestValidKeysAreNeverRefusedByTheFailedAuthenticationLimit(t *testing.T) {
	t.Parallel()
	env := credittest.New(t)
	st := env.MustStore(t, "Acme", "EUR")
	co := env.MustCompany(t, st, "Buyer GmbH", "1000.00")
	valid := env.MustKey(t, st, "dashboard", credit.ScopeReadCredit)
	revoked := env.MustIssuedKey(t, st, "old ERP", credit.ScopeReadCredit, credit.ScopeWriteCredit)
	// The revoked key was in use, so its authentication may be in the key cache.
	env.Get(t, revoked.Secret, "/v1/companies").WantStatus(t, 200)
	if err := env.Service.Keys.Revoke(env.StaffOf(t, revoked.ID), revoked.ID); err != nil {
		t.Fatal(err)
	}
	graphQL := func(key string) *credittest.Response {
		return env.Do(t, credittest.Request{Method: "POST", Path: "/graphql", Key: key, Body: `{"query":"{ companies(first: 1) { edges { node { id } } } }"}`})
	}
	bad := []func() *credittest.Response{
		func() *credittest.Response { return env.Get(t, revoked.Secret, "/v1/companies") },
		func() *credittest.Response {
			return env.Do(t, credittest.Request{Method: "POST", Path: "/v1/companies/" + co.ID + "/adjustments", Key: revoked.Secret, Body: `{"amount":"1.00","note":"n"}`})
		},
		func() *credittest.Response { return env.Get(t, "ck_unknownUnknownUnknown", "/v1/companies/"+co.ID) },
		func() *credittest.Response { return env.Get(t, "", "/v1/companies") },
		func() *credittest.Response { return graphQL(revoked.Secret) },
	}
	good := []func() *credittest.Response{
		func() *credittest.Response { return env.Get(t, valid, "/v1/companies") },
		func() *credittest.Response { return graphQL(valid) },
	}
	for i := range 100 {
		r := bad[i%len(bad)]()
		code := r.ErrorCode()
		if i%len(bad) == 4 {
			code = graphQLErrorCode(t, r) // GraphQL's form of the error
		}
		if i < 30 {
			if r.Status != 401 || code != "unauthenticated" {
				t.Fatalf("bad request %d: %d %s, want 401 unauthenticated", i+1, r.Status, r.Body)
			}
		} else {
			if r.Status != 429 || r.Header.Get("Retry-After") != "60" || !strings.Contains(string(r.Body), failedAuthMessage) {
				t.Fatalf("bad request %d: %d Retry-After %q %s; want 429 naming the failed-authentication limit", i+1, r.Status, r.Header.Get("Retry-After"), r.Body)
			}
			if strings.Contains(string(r.Body), "store") {
				t.Fatalf("bad request %d blames a store: %s", i+1, r.Body)
			}
			if code != "rate_limited" {
				t.Fatalf("bad request %d: %s, want rate_limited", i+1, r.Body)
			}
		}
		if r := good[i%len(good)](); r.Status != 200 || strings.Contains(string(r.Body), `"errors"`) {
			t.Fatalf("valid request %d, after %d bad ones from the address: %d %s", i+1, i+1, r.Status, r.Body)
		}
	}
	metrics := string(env.Get(t, "", "/metrics").WantStatus(t, 200).Body)
	for _, want := range []string{"creditd_auth_failures_total 100\n", "creditd_auth_failures_throttled_total 70\n", "creditd_auth_throttled_addresses 1\n"} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %q", strings.TrimSpace(want))
		}
	}
	// The 30 admitted failures were all at one instant: a minute later they have left the
	// window, and the address is no longer throttled.
	env.Clock.Advance(time.Minute)
	env.Get(t, revoked.Secret, "/v1/companies").WantError(t, 401, "unauthenticated", "")
	if metrics := string(env.Get(t, "", "/metrics").Body); !strings.Contains(metrics, "creditd_auth_throttled_addresses 0\n") {
		t.Error("/metrics: the address is still counted as throttled a minute after its last refusal")
	}
}

// graphQLErrorCode is errors[0].extensions.code of a GraphQL response, or "".
func graphQLErrorCode(t *testing.T, r *credittest.Response) string {
	t.Helper()
	var body struct {
		Errors []struct {
			Extensions struct {
				Code string `json:"code"`
			} `json:"extensions"`
		} `json:"errors"`
	}
	_ = json.Unmarshal(r.Body, &body)
	if len(body.Errors) == 0 {
		return ""
	}
	return body.Errors[0].Extensions.Code
}

// TestFailedAuthenticationLimitUsesTheClientAddress: behind a trusted proxy the limit is kept
// per forwarded client address, and the access line of a failed authentication names that
// address (and no other line names one); an address over the limit leaves the next address's
// failures at 401.
func TestFailedAuthenticationLimitUsesTheClientAddress(t *testing.T) {
	t.Parallel()
	logs := &credittest.LogBuffer{}
	env := credittest.New(t, credittest.Options{ServerConfig: func(c *server.Config) {
		c.AuthFailureLimit = 2
		c.TrustedProxies = httpapi.TrustedProxies{netip.MustParsePrefix("127.0.0.1/32")}
		c.Logger = slog.New(slog.NewJSONHandler(logs, nil))
	}})
	st := env.MustStore(t, "Acme", "EUR")
	valid := env.MustKey(t, st, "dashboard", credit.ScopeReadCredit)
	from := func(client, key string) *credittest.Response {
		return env.Do(t, credittest.Request{Method: "GET", Path: "/v1/companies", Key: key, Header: map[string]string{"X-Forwarded-For": client}})
	}
	from("203.0.113.9", "ck_nope").WantError(t, 401, "unauthenticated", "")
	from("203.0.113.9", "ck_nope").WantError(t, 401, "unauthenticated", "")
	from("203.0.113.9", "ck_nope").WantError(t, 429, "rate_limited", "")
	from("198.51.100.4", "ck_nope").WantError(t, 401, "unauthenticated", "")
	from("203.0.113.9", valid).WantStatus(t, 200)

	var clients []string
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var entry struct{ Msg, Client string }
		if err := json.Unmarshal([]byte(line), &entry); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if entry.Msg == "request" {
			clients = append(clients, entry.Client)
		}
	}
	if want := []string{"203.0.113.9", "203.0.113.9", "203.0.113.9", "198.51.100.4", ""}; !slices.Equal(clients, want) {
		t.Errorf("access lines' client: %q, want %q", clients, want)
	}
}
