package server_test

import (
	"testing"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
)

// TestDatabaseDownAnswers503 shows a database outage is answered 503 unavailable with
// Retry-After, on reads, writes and readiness, never 500.
func TestDatabaseDownAnswers503(t *testing.T) {
	env := credittest.New(t)
	st := env.MustStore(t, "s", "EUR")
	key := env.MustKey(t, st, "k", credit.AllScopes...)
	co := env.MustCompany(t, st, "c", "10")
	if err := env.DB.SQL.Close(); err != nil {
		t.Fatal(err)
	}
	for _, req := range []credittest.Request{
		{Method: "GET", Path: "/v1/companies", Key: key},
		{Method: "POST", Path: "/v1/companies/" + co.ID + "/hold", Key: key},
		{Method: "GET", Path: "/readyz"},
	} {
		r := env.Do(t, req)
		if r.Status != 503 || r.ErrorCode() != "unavailable" || r.Header.Get("Retry-After") == "" {
			t.Fatalf("%s %s: %d %v %s", req.Method, req.Path, r.Status, r.Header, r.Body)
		}
	}
	if r := env.Get(t, "", "/healthz"); r.Status != 200 {
		t.Fatalf("healthz: %d", r.Status)
	}
}
