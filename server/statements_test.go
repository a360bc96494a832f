package server_test

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
)

// TestAdjustmentStatements: an adjustment with an Idempotency-Key runs exactly these
// statements, on each database. Each is a round trip on PostgreSQL, where the store's writers
// take turns from the event's numbered INSERT to the commit, so that INSERT comes last; this
// fails when a statement comes back (a SAVEPOINT for the request's first operation, the
// store's lock as a statement of its own, an event's number apart from its row) or the event
// moves back into the transaction (a longer turn for every write of the store).
func TestAdjustmentStatements(t *testing.T) {
	t.Parallel()
	log := &credittest.SQLLog{Transactions: true}
	env := credittest.New(t, log.Options())
	st := env.MustStore(t, "Store", "EUR")
	key := env.MustKey(t, st, "erp", credit.AllScopes...)
	co := env.MustCompany(t, st, "Buyer", "1000.00").ID
	held := env.MustCompany(t, st, "Held", "1000.00").ID
	// adjust makes an adjustment and returns its statements from the claim of the
	// Idempotency-Key on.
	adjust := func(co, idemKey string) []string {
		t.Helper()
		log.Reset()
		r := env.Do(t, credittest.Request{Method: "POST", Path: "/v1/companies/" + co + "/adjustments", Key: key,
			Header: map[string]string{"Idempotency-Key": idemKey},
			Body:   map[string]string{"amount": "10.00", "note": "goodwill"}})
		if r.Status != 201 {
			t.Fatalf("adjustment: %d %s", r.Status, r.Body)
		}
		var got []string
		for _, q := range log.Snapshot() {
			got = append(got, short(q))
		}
		for i, s := range got {
			if strings.HasSuffix(s, " idempotency_records") {
				if i > 0 && got[i-1] == "BEGIN" {
					i-- // SQLite: the transaction that reads the key
				}
				return got[i:]
			}
		}
		return got
	}
	adjust(co, "first") // the key's first use also records when it was last used
	got := adjust(co, "second")
	// PostgreSQL: one INSERT claims the key; then one transaction writes the entry, the
	// company and the timeline event, completes the record, and inserts the event last, just
	// before the commit (database.InsertNumberedAtCommit). SQLite, whose
	// writers take turns: one transaction reads the key, writes, and records the response
	// (a claim committed ahead of the write would be a commit and a turn of the writer more).
	want := []string{
		"INSERT idempotency_records", "BEGIN", "SELECT companies", "INSERT ledger_entries", "UPDATE companies",
		"SELECT invoices", "WITH companies INSERT timeline_events",
		"UPDATE idempotency_records", "WITH stores INSERT events", "COMMIT",
	}
	if credittest.Backend() != "postgres" {
		want = []string{
			"BEGIN", "SELECT idempotency_records",
			"SAVEPOINT", "SELECT companies", "INSERT ledger_entries", "UPDATE companies",
			"UPDATE stores", "INSERT events", "SELECT invoices", "UPDATE companies", "INSERT timeline_events",
			"RELEASE", "INSERT idempotency_records", "COMMIT",
		}
	}
	check := func(what string, got, want []string) {
		t.Helper()
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s, %s: %d statements, want %d:\n%s\nwant:\n%s", what, credittest.Backend(), len(got), len(want), strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
	check("adjustment", got, want)

	// Under a manual hold the invoices are not read: whatever they say, the manual hold stays
	// and no overdue hold is placed or lifted (contract §5).
	if r := env.Do(t, credittest.Request{Method: "POST", Path: "/v1/companies/" + held + "/hold", Key: key, Body: map[string]string{"note": "check"}}); r.Status != 200 {
		t.Fatalf("hold: %d %s", r.Status, r.Body)
	}
	check("adjustment under a manual hold", adjust(held, "held"), slices.DeleteFunc(want, func(s string) bool { return s == "SELECT invoices" }))
}

// short is a statement in short: the verb, and the tables the statement names in order
// (WITH n AS (UPDATE "stores" …) INSERT INTO "events" … is "WITH stores INSERT events").
func short(query string) string {
	verb, _, _ := strings.Cut(strings.TrimSpace(query), " ")
	verb = strings.ToUpper(verb)
	var tables []string
	switch verb {
	case "SAVEPOINT", "RELEASE", "ROLLBACK", "BEGIN", "COMMIT":
	default:
		// The tables are the names after FROM, INTO, UPDATE (and JOIN).
		for _, m := range regexp.MustCompile(`(?i)(?:FROM|INTO|UPDATE|JOIN)\s+["`+"`"+`]([a-z_]+)["`+"`"+`]`).FindAllStringSubmatch(query, -1) {
			if len(tables) == 0 || tables[len(tables)-1] != m[1] {
				tables = append(tables, m[1])
			}
		}
	}
	short := verb
	if verb == "WITH" && len(tables) == 2 && strings.Contains(query, "INSERT INTO") {
		short = fmt.Sprintf("WITH %s INSERT %s", tables[0], tables[1])
	} else if len(tables) > 0 {
		short += " " + tables[0]
	}
	return short
}
