package graph_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
	"github.com/creditd/creditd/server"
)

const (
	adjustMutation = `mutation($in: CreateAdjustmentInput!) { createAdjustment(input: $in) {
	  ledgerEntry { id kind amount { amount currency } note platformOrderGid }
	  company { id outstanding { amount } availableCredit { amount } ledger(first: 1) { edges { node { id } } } } } }`
	limitMutation = `mutation($in: SetCreditLimitInput!) { setCreditLimit(input: $in) {
	  company { creditLimit { amount currency } availableCredit { amount } } previousCreditLimit { amount currency } } }`
	placeMutation = `mutation($in: PlaceHoldInput!) { placeHold(input: $in) { company { status hold { kind note placedBy } } } }`
	liftMutation  = `mutation($in: LiftHoldInput!) { liftHold(input: $in) { company { status hold { kind } } } }`
)

// TestMutations runs each mutation and checks its payload, its effect as REST shows it, and
// its timeline attribution to the key's label.
func TestMutations(t *testing.T) {
	f := newFixture(t)
	co := f.alpen.ID

	adj := mutate(t, f, f.full, adjustMutation, in("companyId", co, "amount", "-250.50", "note", "goodwill credit"))["createAdjustment"]
	entry := at(t, adj, "ledgerEntry").(map[string]any)
	if entry["kind"] != "ADJUSTMENT" || at(t, entry, "amount", "amount") != "-250.50" || entry["note"] != "goodwill credit" || entry["platformOrderGid"] != nil {
		t.Errorf("ledger entry %v", entry)
	}
	if at(t, adj, "company", "outstanding", "amount") != "4549.50" {
		t.Errorf("outstanding %v, want 4549.50", at(t, adj, "company", "outstanding"))
	}
	if at(t, adj, "company", "ledger", "edges", 0, "node", "id") != entry["id"] {
		t.Errorf("the payload's ledger does not start with the new entry: %v", adj)
	}

	lim := mutate(t, f, f.full, limitMutation, in("companyId", co, "amount", "30000", "reason", "annual review"))["setCreditLimit"]
	if at(t, lim, "previousCreditLimit", "amount") != "25000.00" || at(t, lim, "company", "creditLimit", "amount") != "30000.00" {
		t.Errorf("limit change %v", lim)
	}

	held := mutate(t, f, f.full, placeMutation, map[string]any{"in": map[string]any{"companyId": co, "note": "audit"}})["placeHold"]
	if mustJSON(t, at(t, held, "company")) != `{"hold":{"kind":"MANUAL","note":"audit","placedBy":"erp"},"status":"ON_HOLD"}` {
		t.Errorf("placed hold %v", held)
	}
	lifted := mutate(t, f, f.full, liftMutation, map[string]any{"in": map[string]any{"companyId": co}})["liftHold"]
	if mustJSON(t, at(t, lifted, "company")) != `{"hold":null,"status":"APPROVED"}` {
		t.Errorf("lifted hold %v", lifted)
	}

	var rest map[string]any
	f.env.Get(t, f.readCredit, "/v1/companies/"+co).WantStatus(t, http.StatusOK).Decode(t, &rest)
	if at(t, rest, "outstanding", "amount") != "4549.50" || at(t, rest, "credit_limit", "amount") != "30000.00" || rest["hold"] != nil {
		t.Errorf("REST sees %v", rest)
	}
	var events []any
	for _, e := range at(t, query(t, f.env, f.readCredit, `query($id: ID!) { company(id: $id) { timeline { edges { node { type actor { type label } } } } } }`, map[string]any{"id": co}), "company", "timeline", "edges").([]any) {
		if at(t, e, "node", "type") != string(credit.TimelineLedgerEntryRecorded) { // the fixture's entries, recorded as staff
			events = append(events, e)
		}
	}
	want := []string{string(credit.TimelineHoldLifted), string(credit.TimelineHoldPlaced), string(credit.TimelineCreditLimitChanged), string(credit.TimelineAdjustmentCreated)}
	if len(events) != len(want) {
		t.Fatalf("timeline %v", events)
	}
	for i, e := range events {
		if at(t, e, "node", "type") != want[i] || mustJSON(t, at(t, e, "node", "actor")) != `{"label":"erp","type":"API_KEY"}` {
			t.Errorf("event %d: %v, want %s by the key erp", i, e, want[i])
		}
	}
}

// TestSeveralMutationsInOneRequest runs mutation fields in order, each on its own, and counts
// each beyond the first against the rate limit.
func TestSeveralMutationsInOneRequest(t *testing.T) {
	f := newFixture(t, credittest.Options{ServerConfig: func(cfg *server.Config) { cfg.RateLimit = 5 }})
	const three = `mutation($id: ID!) {
	  a: createAdjustment(input: {companyId: $id, amount: "10.00", note: "one"}) { company { outstanding { amount } } }
	  b: createAdjustment(input: {companyId: $id, amount: "10.00", note: "two"}) { company { outstanding { amount } } }
	  c: placeHold(input: {companyId: $id}) { company { status } } }`
	res := doGQL(t, f.env, gqlRequest{Key: f.full, Query: three, Variables: map[string]any{"id": f.alpen.ID}})
	if len(res.Errors) > 0 {
		t.Fatalf("%s", res.HTTP.Body)
	}
	if at(t, res.Data, "a", "company", "outstanding", "amount") != "4810.00" || at(t, res.Data, "b", "company", "outstanding", "amount") != "4820.00" || at(t, res.Data, "c", "company", "status") != "ON_HOLD" {
		t.Errorf("fields did not run in order: %s", res.HTTP.Body)
	}
	if got := res.HTTP.Header.Get("X-RateLimit-Remaining"); got != strconv.Itoa(5-3) {
		t.Errorf("X-RateLimit-Remaining %s after a request of three mutation fields, want 2", got)
	}

	// One request left: a request with three mutation fields is refused before any runs.
	res = doGQL(t, f.env, gqlRequest{Key: f.full, Query: three, Variables: map[string]any{"id": f.brau.ID}})
	if res.HTTP.Header.Get("Retry-After") == "" {
		t.Fatalf("over the limit: %d %v %s", res.HTTP.Status, res.HTTP.Header, res.HTTP.Body)
	}
	wantRefused(t, res, http.StatusTooManyRequests, "rate_limited", "")
	if c, _ := f.env.Service.Companies.Get(viewerOf(f.store), f.brau.ID); c.Outstanding.Amount != "0.00" || c.Hold != nil {
		t.Fatalf("a refused request wrote: %+v", c)
	}
}

// TestIdempotentMutations checks Idempotency-Key on GraphQL: the whole request runs once, a
// retry replays it, and what REST would not store is not stored either.
func TestIdempotentMutations(t *testing.T) {
	f := newFixture(t)
	co := f.alpen.ID
	send := func(key, q string, vars map[string]any) gqlResult {
		t.Helper()
		return doGQL(t, f.env, gqlRequest{Key: f.full, Query: q, Variables: vars, Header: map[string]string{"Idempotency-Key": key}})
	}
	outstanding := func() string {
		c, err := f.env.Service.Companies.Get(viewerOf(f.store), co)
		if err != nil {
			t.Fatal(err)
		}
		return c.Outstanding.Amount
	}

	t.Run("replay", func(t *testing.T) {
		vars := in("companyId", co, "amount", "100.00", "note", "retry me")
		first := send("adj-1", adjustMutation, vars)
		if len(first.Errors) > 0 || first.HTTP.Header.Get("Idempotent-Replayed") != "" {
			t.Fatalf("first: %v %s", first.HTTP.Header, first.HTTP.Body)
		}
		// The payload is read inside the request's transaction: it shows the new entry.
		if at(t, first.Data, "createAdjustment", "company", "ledger", "edges", 0, "node", "id") != at(t, first.Data, "createAdjustment", "ledgerEntry", "id") {
			t.Errorf("the payload's ledger misses the new entry: %s", first.HTTP.Body)
		}
		again := send("adj-1", adjustMutation, vars)
		if again.HTTP.Header.Get("Idempotent-Replayed") != "true" || string(again.HTTP.Body) != string(first.HTTP.Body) || again.HTTP.Status != first.HTTP.Status {
			t.Fatalf("retry: %d %v\n%s\nwant\n%s", again.HTTP.Status, again.HTTP.Header, again.HTTP.Body, first.HTTP.Body)
		}
		if got := outstanding(); got != "4900.00" {
			t.Fatalf("outstanding %s after a retried adjustment of 100.00, want 4900.00", got)
		}
	})
	t.Run("same key, other request", func(t *testing.T) {
		res := send("adj-1", adjustMutation, in("companyId", co, "amount", "100.01", "note", "retry me"))
		wantRefused(t, res, http.StatusUnprocessableEntity, "idempotency_key_reused", "")
		// Keys are one namespace with REST's.
		rest := f.env.Do(t, credittest.Request{Method: http.MethodPost, Path: "/v1/companies/" + co + "/hold", Key: f.full, Body: `{}`,
			Header: map[string]string{"Idempotency-Key": "adj-1", "Content-Type": "application/json"}})
		if rest.APIError().Code != "idempotency_key_reused" {
			t.Fatalf("REST with a GraphQL request's key: %d %s", rest.Status, rest.Body)
		}
	})
	t.Run("invalid input is not stored", func(t *testing.T) {
		bad := send("adj-2", adjustMutation, in("companyId", co, "amount", "1.001", "note", "x"))
		bad.wantCodes(t, "invalid_amount")
		wantData(t, bad) // a field error: the request ran
		fixed := send("adj-2", adjustMutation, in("companyId", co, "amount", "1.00", "note", "x"))
		if len(fixed.Errors) > 0 || fixed.HTTP.Header.Get("Idempotent-Replayed") != "" {
			t.Fatalf("corrected retry with the same key: %s", fixed.HTTP.Body)
		}
		if got := outstanding(); got != "4901.00" {
			t.Fatalf("outstanding %s, want 4901.00", got)
		}
	})
	t.Run("outcomes decided by the data are stored", func(t *testing.T) {
		if _, err := f.env.Service.Companies.PlaceHold(viewerOf(f.store), credit.HoldInput{CompanyID: f.brau.ID}); err != nil {
			t.Fatal(err)
		}
		vars := map[string]any{"in": map[string]any{"companyId": f.brau.ID}}
		first := send("hold-1", placeMutation, vars)
		first.wantCodes(t, "hold_exists")
		if _, err := f.env.Service.Companies.LiftHold(viewerOf(f.store), f.brau.ID); err != nil {
			t.Fatal(err)
		}
		again := send("hold-1", placeMutation, vars)
		if again.HTTP.Header.Get("Idempotent-Replayed") != "true" || string(again.HTTP.Body) != string(first.HTTP.Body) {
			t.Fatalf("retry: %v %s", again.HTTP.Header, again.HTTP.Body)
		}
		if c, _ := f.env.Service.Companies.Get(viewerOf(f.store), f.brau.ID); c.Hold != nil {
			t.Fatal("the replayed request placed a hold")
		}
	})
	t.Run("one key for the whole request", func(t *testing.T) {
		const two = `mutation($co: ID!, $held: ID!) {
		  a: createAdjustment(input: {companyId: $co, amount: "50.00", note: "batch"}) { ledgerEntry { id } }
		  b: placeHold(input: {companyId: $held}) { company { id } } }`
		if _, err := f.env.Service.Companies.PlaceHold(viewerOf(f.store), credit.HoldInput{CompanyID: f.brau.ID}); err != nil {
			t.Fatal(err)
		}
		vars := map[string]any{"co": co, "held": f.brau.ID}
		first := send("batch-1", two, vars)
		first.wantCodes(t, "hold_exists")
		again := send("batch-1", two, vars)
		if again.HTTP.Header.Get("Idempotent-Replayed") != "true" || string(again.HTTP.Body) != string(first.HTTP.Body) {
			t.Fatalf("retry: %v %s", again.HTTP.Header, again.HTTP.Body)
		}
		if got := outstanding(); got != "4951.00" {
			t.Fatalf("outstanding %s, want 4951.00: the adjustment applied once", got)
		}
	})
	t.Run("without write_credit nothing is stored", func(t *testing.T) {
		res := doGQL(t, f.env, gqlRequest{Key: f.readCredit, Query: placeMutation, Variables: map[string]any{"in": map[string]any{"companyId": co}},
			Header: map[string]string{"Idempotency-Key": "scope-1"}})
		res.wantCodes(t, "insufficient_scope")
		ok := send("scope-1", placeMutation, map[string]any{"in": map[string]any{"companyId": co}})
		if len(ok.Errors) > 0 {
			t.Fatalf("the key was taken by a refused request: %s", ok.HTTP.Body)
		}
	})
	t.Run("payload fields read the transaction one at a time", func(t *testing.T) {
		// Sibling fields resolve concurrently; inside the key's transaction (one connection)
		// they must take turns, or PostgreSQL's driver refuses the second query in flight.
		for i := 0; i < 5; i++ {
			res := send(fmt.Sprint("payload-", i), `mutation($in: CreateAdjustmentInput!) { createAdjustment(input: $in) { company {
			  a: ledger(first: 3) { edges { node { id } } } b: timeline(first: 3) { edges { node { id } } }
			  c: ledger(first: 2) { edges { node { id } } } d: timeline(first: 1) { edges { node { id } } } } } }`,
				in("companyId", f.brau.ID, "amount", "1.00", "note", "concurrent"))
			if len(res.Errors) > 0 {
				t.Fatalf("%s", res.HTTP.Body)
			}
		}
	})
	t.Run("queries ignore the key", func(t *testing.T) {
		for i := 0; i < 2; i++ {
			res := doGQL(t, f.env, gqlRequest{Key: f.readCredit, Query: `{ companies { edges { cursor } } }`, Header: map[string]string{"Idempotency-Key": "query-1"}})
			if len(res.Errors) > 0 || res.HTTP.Header.Get("Idempotent-Replayed") != "" {
				t.Fatalf("query with a key: %v %s", res.HTTP.Header, res.HTTP.Body)
			}
		}
	})
}

// TestEveryMutationKeepsItsWriteBesideARefusedField checks, for every field of the served
// Mutation type, that its success is kept when another field of the same Idempotency-Key
// request is refused with an error REST would not store (invalid input): the request is then
// stored because a mutation succeeded, which the resolver reports with mutated. A mutation
// resolver that forgot to would have its write rolled back while the response said it was made.
// A new mutation field fails this test until it has a case below.
func TestEveryMutationKeepsItsWriteBesideARefusedField(t *testing.T) {
	f := newFixture(t)
	if _, err := f.env.Service.Companies.PlaceHold(viewerOf(f.store), credit.HoldInput{CompanyID: f.brau.ID}); err != nil {
		t.Fatal(err)
	}
	co, held := f.alpen.ID, f.brau.ID
	f.env.MustRecord(t, credit.LedgerEntryInput{CompanyID: co, Kind: credit.KindOrderPlaced, Amount: "40", OrderGID: "gid://platform/Order/881"})
	open, err := f.env.Service.Invoices.List(viewerOf(f.store), co, credit.InvoiceListParams{Status: credit.InvoiceOpen})
	if err != nil || len(open.Data) == 0 {
		t.Fatalf("open invoices: %v %v", open, err)
	}
	inv := open.Data[0].ID
	cases := map[string]string{
		"recordPromise":    `recordPromise(input: {invoiceId: "` + inv + `", promisedFor: "2026-03-20"}) { invoice { id } }`,
		"withdrawPromise":  `withdrawPromise(input: {invoiceId: "` + inv + `"}) { invoice { id } }`,
		"openDispute":      `openDispute(input: {invoiceId: "` + inv + `", reason: "kept"}) { invoice { id } }`,
		"resolveDispute":   `resolveDispute(input: {invoiceId: "` + inv + `"}) { invoice { id } }`,
		"createAdjustment": `createAdjustment(input: {companyId: "` + co + `", amount: "10.00", note: "kept"}) { ledgerEntry { id } }`,
		"setCreditLimit":   `setCreditLimit(input: {companyId: "` + co + `", amount: "30000.00"}) { company { id } }`,
		"placeHold":        `placeHold(input: {companyId: "` + co + `"}) { company { id } }`,
		"liftHold":         `liftHold(input: {companyId: "` + held + `"}) { company { id } }`,
	}
	schema := query(t, f.env, f.full, `{ __schema { mutationType { fields { name } } } }`)
	fields := at(t, schema, "__schema", "mutationType", "fields").([]any)
	if len(fields) == 0 {
		t.Fatal("the schema lists no mutation fields")
	}
	for i := range fields {
		name := at(t, fields[i], "name").(string)
		t.Run(name, func(t *testing.T) {
			field, ok := cases[name]
			if !ok {
				t.Fatalf("no case for the mutation %s: add one to this test", name)
			}
			q := `mutation { a: ` + field + `
			  b: createAdjustment(input: {companyId: "` + co + `", amount: "1.001", note: "refused"}) { ledgerEntry { id } } }`
			send := func() gqlResult {
				return doGQL(t, f.env, gqlRequest{Key: f.full, Query: q, Header: map[string]string{"Idempotency-Key": "kept-" + name}})
			}
			// The payloads are non-null, so b's error nulls the whole data (GraphQL's null
			// propagation); a succeeded when no error names it.
			first := send()
			first.wantCodes(t, "invalid_amount")
			if strings.Contains(string(first.HTTP.Body), `"path":["a"`) {
				t.Fatalf("%s did not succeed: %s", name, first.HTTP.Body)
			}
			again := send()
			if again.HTTP.Header.Get("Idempotent-Replayed") != "true" || string(again.HTTP.Body) != string(first.HTTP.Body) {
				t.Fatalf("%s's success beside a refused field was not kept: the retry ran again (%v)\n%s", name, again.HTTP.Header, again.HTTP.Body)
			}
		})
	}
}

// TestIdempotencyRefusalsHaveNoData: a request refused as a whole over its Idempotency-Key is
// answered without a data member, with REST's status and code: a key still claimed by a
// request in flight, and a key's transaction that could not commit, after which nothing is
// written and the key is free again.
func TestIdempotencyRefusalsHaveNoData(t *testing.T) {
	log := &sqlLog{}
	f := newFixture(t, log.Options())
	vars := in("companyId", f.alpen.ID, "amount", "10.00", "note", "refused")
	send := func(key string) gqlResult {
		t.Helper()
		return doGQL(t, f.env, gqlRequest{Key: f.full, Query: adjustMutation, Variables: vars, Header: map[string]string{"Idempotency-Key": key}})
	}
	outstanding := func() string {
		t.Helper()
		c, err := f.env.Service.Companies.Get(viewerOf(f.store), f.alpen.ID)
		if err != nil {
			t.Fatal(err)
		}
		return c.Outstanding.Amount
	}

	t.Run("in flight", func(t *testing.T) {
		// The key claimed by an instance that died mid-write, for this very request: the
		// fingerprint is SHA-256 of method, path and canonical body, NUL-separated.
		body, err := json.Marshal(map[string]any{"query": adjustMutation, "variables": vars})
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256([]byte("POST\x00/graphql\x00" + string(body)))
		now := f.env.Clock.Now()
		if err := f.env.DB.Client.IdempotencyRecord.Create().
			SetStoreID(f.store).SetKey("inflight").SetFingerprint(hex.EncodeToString(sum[:])).
			SetClaim("dead-instance").SetLockedUntil(now.Add(time.Minute)).SetCreatedAt(now).SetExpiresAt(now.Add(24 * time.Hour)).
			Exec(credittest.Admin()); err != nil {
			t.Fatal(err)
		}
		wantRefused(t, send("inflight"), http.StatusConflict, "idempotency_key_in_use", "")
		if got := outstanding(); got != "4800.00" {
			t.Fatalf("outstanding %s after a refused request, want 4800.00", got)
		}
	})

	t.Run("commit fails", func(t *testing.T) {
		wrote := false
		log.Fail = func(statement string) error {
			switch {
			case strings.HasPrefix(statement, "INSERT INTO") && strings.Contains(statement, "ledger_entries"):
				wrote = true
			case statement == "COMMIT" && wrote:
				wrote = false
				return errors.New("disk I/O error at commit")
			}
			return nil
		}
		res := send("commit-1")
		log.Fail = nil
		wantRefused(t, res, http.StatusInternalServerError, "internal_error", "")
		if got := outstanding(); got != "4800.00" {
			t.Fatalf("outstanding %s after a transaction that did not commit, want 4800.00", got)
		}
		// The key was released: the retry runs, once.
		if again := send("commit-1"); len(again.Errors) > 0 || again.HTTP.Header.Get("Idempotent-Replayed") != "" {
			t.Fatalf("retry after the failed commit: %v %s", again.HTTP.Header, again.HTTP.Body)
		}
		if got := outstanding(); got != "4810.00" {
			t.Fatalf("outstanding %s after the retry, want 4810.00", got)
		}
	})
}
