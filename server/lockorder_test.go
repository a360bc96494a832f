package server_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
	"github.com/creditd/creditd/server"
)

// TestMultiCompanyRequestsNeverFailWith500: a GraphQL request with an Idempotency-Key runs its
// mutations in one transaction, locking two companies (in either order), while single writes
// lock one company and all of them lock the store's event counter, last. On PostgreSQL that
// could deadlock unless locks follow one order (database/txstate.go): a transaction that locks
// several companies takes its store's turn first (credit.SeveralWrites), and the data layer
// refuses a second company without it. Every request must succeed, never 500 nor a deadlock
// victim's 503, and each must apply all it reported: two entries per GraphQL request, one per
// REST write. (Before the lock order, 2 of 8 writes answered 500; then 503s. Without the
// store's turn for the GraphQL requests, each of them answers internal_error.)
func TestMultiCompanyRequestsNeverFailWith500(t *testing.T) {
	t.Parallel()
	env := credittest.New(t, credittest.Options{ServerConfig: func(c *server.Config) { c.RateLimit = 1_000_000 }})
	st := env.MustStore(t, "Store", "EUR")
	key := env.MustKey(t, st, "erp", credit.AllScopes...)
	a := env.MustCompany(t, st, "A", "100000").ID
	b := env.MustCompany(t, st, "B", "100000").ID
	var mu sync.Mutex
	statuses := map[string]int{}
	count := func(what string, status int, body []byte) {
		mu.Lock()
		defer mu.Unlock()
		statuses[fmt.Sprintf("%s %d", what, status)]++
		if status >= 300 || strings.Contains(string(body), `"errors"`) {
			t.Errorf("%s: %d %s", what, status, body)
		}
	}
	const rounds = 25 // per goroutine: 100 GraphQL requests and 100 REST writes in all
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range rounds {
				first, second := a, b
				if w%2 == 1 {
					first, second = b, a
				}
				r := env.Do(t, credittest.Request{Method: "POST", Path: "/graphql", Key: key,
					Header: map[string]string{"Idempotency-Key": fmt.Sprintf("multi-%d-%d", w, i)},
					Body:   map[string]any{"query": fmt.Sprintf(`mutation { x: createAdjustment(input: {companyId: %q, amount: "1.00", note: "x"}) { ledgerEntry { id } } y: createAdjustment(input: {companyId: %q, amount: "1.00", note: "y"}) { ledgerEntry { id } } }`, first, second)}})
				count("graphql", r.Status, r.Body)
			}
		}()
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range rounds {
				co := a
				if w%2 == 1 {
					co = b
				}
				r := env.Do(t, credittest.Request{Method: "POST", Path: "/v1/companies/" + co + "/adjustments", Key: key, Body: map[string]string{"amount": "1.00", "note": "single"}})
				count("rest", r.Status, r.Body)
			}
		}()
	}
	wg.Wait()
	t.Logf("%s: %v", credittest.Backend(), statuses)
	// Nothing lost or half-applied: every answered write is in the ledgers, and nothing else.
	entries := 0
	for _, co := range []string{a, b} {
		for _, p := range env.WalkPages(t, key, "/v1/companies/"+co+"/ledger?limit=250", nil) {
			entries += len(p.Data)
		}
	}
	if want := 2*statuses["graphql 200"] + statuses["rest 201"]; entries != want {
		t.Errorf("%d ledger entries, want %d (2 per GraphQL request, 1 per REST write)", entries, want)
	}
}
