package server_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
	"github.com/creditd/creditd/server"
)

// feedEvent is one event of GET /v1/events, its data decoded.
type feedEvent struct {
	ID         string `json:"id"`
	Type       string `json:"type"`
	OccurredAt string `json:"occurred_at"`
	Data       struct {
		Object   json.RawMessage            `json:"object"`
		Previous map[string]json.RawMessage `json:"previous"`
	} `json:"data"`
}

// mustFeed walks GET /v1/events (with query, e.g. "?type=...") in pages of pageSize and
// returns every event, checking each page's raw JSON has exactly the contract's members.
func mustFeed(t *testing.T, env *credittest.Env, key, query string, pageSize int) ([]feedEvent, string) {
	t.Helper()
	path := "/v1/events" + query
	path = credittest.WithQuery(path, "limit", fmt.Sprint(pageSize))
	var out []feedEvent
	var raw strings.Builder
	for _, p := range env.WalkPages(t, key, path, nil) {
		for _, item := range p.Data {
			raw.Write(item)
			var members map[string]json.RawMessage
			if err := json.Unmarshal(item, &members); err != nil || len(members) != 4 {
				t.Fatalf("an event has exactly id, type, occurred_at and data: %s", item)
			}
			var e feedEvent
			if err := json.Unmarshal(item, &e); err != nil {
				t.Fatal(err)
			}
			out = append(out, e)
		}
	}
	return out, raw.String()
}

func eventTypes(events []feedEvent) []string {
	var out []string
	for _, e := range events {
		out = append(out, e.Type)
	}
	return out
}

// TestEventObjectsAreTheAnswers: an event's object is the resource exactly as the write's
// REST answer shows it, for REST's writes and GraphQL's, and GET /v1/events/{id} answers each
// event as listed. That every write appends its event, with what it replaced, is the domain's
// rule (credit's TestEveryWriteAppendsItsEvent).
func TestEventObjectsAreTheAnswers(t *testing.T) {
	t.Parallel()
	env := credittest.New(t)
	st := env.MustStore(t, "Store", "EUR")
	full := env.MustIssuedKey(t, st, "erp", credit.AllScopes...)
	co := env.MustCompany(t, st, "Hotel Adler", "1000.00")
	path := "/v1/companies/" + co.ID
	var adj struct {
		LedgerEntry json.RawMessage `json:"ledger_entry"`
	}
	env.Do(t, credittest.Request{Method: "POST", Path: path + "/adjustments", Key: full.Secret, Body: map[string]string{"amount": "-12.50", "note": "goodwill"}}).WantStatus(t, 201).Decode(t, &adj)
	var limit, placed, lifted struct {
		Company json.RawMessage `json:"company"`
	}
	env.Do(t, credittest.Request{Method: "PUT", Path: path + "/credit-limit", Key: full.Secret, Body: map[string]string{"amount": "2000.00", "reason": "good payer"}}).WantStatus(t, 200).Decode(t, &limit)
	env.Do(t, credittest.Request{Method: "POST", Path: path + "/hold", Key: full.Secret, Body: map[string]string{"note": "dispute"}}).WantStatus(t, 200).Decode(t, &placed)
	env.Do(t, credittest.Request{Method: "DELETE", Path: path + "/hold", Key: full.Secret}).WantStatus(t, 200).Decode(t, &lifted)
	gql := env.Do(t, credittest.Request{Method: "POST", Path: "/graphql", Key: full.Secret, Body: map[string]any{
		"query": fmt.Sprintf(`mutation { createAdjustment(input: {companyId: %q, amount: "5.00", note: "via graphql"}) { ledgerEntry { id } } }`, co.ID),
	}}).WantStatus(t, 200)
	var viaGraphQL struct {
		Data struct {
			CreateAdjustment struct{ LedgerEntry struct{ ID string } }
		}
		Errors []any
	}
	gql.Decode(t, &viaGraphQL)
	if len(viaGraphQL.Errors) > 0 {
		t.Fatalf("graphql mutation: %s", gql.Body)
	}

	events, _ := mustFeed(t, env, full.Secret, "", 4)
	if got, want := eventTypes(events[2:]), []string{string(credit.EventTypeLedgerEntryCreated), string(credit.EventTypeCompanyCreditLimitChanged),
		string(credit.EventTypeCompanyHoldPlaced), string(credit.EventTypeCompanyHoldLifted), string(credit.EventTypeLedgerEntryCreated)}; !slices.Equal(got, want) {
		t.Fatalf("the writes' events\n got %v\nwant %v", got, want)
	}
	mustJSONEqual(t, events[2].Data.Object, string(adj.LedgerEntry))
	mustJSONEqual(t, events[3].Data.Object, string(limit.Company))
	mustJSONEqual(t, events[4].Data.Object, string(placed.Company))
	mustJSONEqual(t, events[5].Data.Object, string(lifted.Company))
	entry := env.Get(t, full.Secret, "/v1/companies/"+co.ID+"/ledger?limit=1").ListPage(t)
	if len(entry.Data) != 1 || !strings.Contains(string(entry.Data[0]), viaGraphQL.Data.CreateAdjustment.LedgerEntry.ID) {
		t.Fatalf("the GraphQL adjustment's entry: %s", entry.Data)
	}
	mustJSONEqual(t, events[6].Data.Object, string(entry.Data[0]))

	for _, ev := range events {
		var e feedEvent
		env.Get(t, full.Secret, "/v1/events/"+ev.ID).WantStatus(t, 200).Decode(t, &e)
		if e.ID != ev.ID || e.Type != ev.Type || e.OccurredAt != ev.OccurredAt || string(e.Data.Object) != string(ev.Data.Object) {
			t.Errorf("GET /v1/events/%s: %+v, listed %+v", ev.ID, e, ev)
		}
	}
}

// TestEventScopes: each key sees the types its scopes allow, in the domain's filter: lists,
// single events, type filters and GraphQL alike.
func TestEventScopes(t *testing.T) {
	t.Parallel()
	env := credittest.New(t)
	st := env.MustStore(t, "Store", "EUR")
	env.MustCompany(t, st, "Buyer", "100")
	app := env.MustApplication(t, st, credit.ApplicationInput{BusinessName: "Applicant", ContactName: "Jo Doe", ContactEmail: "jo@example.com"})
	creditKey := env.MustKey(t, st, "credit", credit.ScopeReadCredit)
	appKey := env.MustKey(t, st, "apps", credit.ScopeReadApplications)
	writeKey := env.MustKey(t, st, "write", credit.ScopeWriteCredit)

	all, _ := mustFeed(t, env, env.MustKey(t, st, "all", credit.AllScopes...), "", 50)
	var appEvent string
	for _, e := range all {
		if e.Type == string(credit.EventTypeApplicationCreated) {
			appEvent = e.ID
		}
	}
	if appEvent == "" {
		t.Fatalf("no application.created in %v", eventTypes(all))
	}
	creditEvents, raw := mustFeed(t, env, creditKey, "", 50)
	for _, e := range creditEvents {
		if strings.HasPrefix(e.Type, "application.") {
			t.Errorf("a read_credit key sees %s", e.Type)
		}
	}
	if strings.Contains(raw, app.ID) || strings.Contains(raw, "Applicant") {
		t.Errorf("a read_credit key sees the application: %s", raw)
	}
	env.Get(t, creditKey, "/v1/events/"+appEvent).WantError(t, 404, "not_found", "")
	env.Get(t, creditKey, "/v1/events?type=application.created").WantError(t, 403, "insufficient_scope", "")
	env.Get(t, creditKey, "/v1/events?after="+appEvent).WantError(t, 400, "invalid_parameter", "after")
	mixed, _ := mustFeed(t, env, creditKey, "?type=application.created,company.created", 50)
	if got := eventTypes(mixed); !slices.Equal(got, []string{string(credit.EventTypeCompanyCreated)}) {
		t.Errorf("read_credit key, both types asked: %v", got)
	}
	// after= is a position in the feed: an event of a type the filter leaves out is fine.
	keys, _ := mustFeed(t, env, creditKey, "?type=key.created&after="+mixed[0].ID, 50)
	if got := eventTypes(keys); len(got) != 4 || got[0] != string(credit.EventTypeKeyCreated) {
		t.Errorf("key.created after company.created: %v", got)
	}

	appEvents, _ := mustFeed(t, env, appKey, "", 50)
	if got := eventTypes(appEvents); !slices.Equal(got, []string{string(credit.EventTypeApplicationCreated)}) {
		t.Errorf("a read_applications key sees %v", got)
	}
	env.Get(t, appKey, "/v1/events/"+appEvent).WantStatus(t, 200)
	e := env.Get(t, writeKey, "/v1/events").WantError(t, 403, "insufficient_scope", "")
	if e.Message != "this call needs scope read_credit or read_applications" {
		t.Errorf("403 message %q", e.Message)
	}
	env.Get(t, writeKey, "/v1/events/"+appEvent).WantError(t, 403, "insufficient_scope", "")

	// GraphQL: the same filter.
	gql := func(key, q string) string {
		t.Helper()
		return string(env.Do(t, credittest.Request{Method: "POST", Path: "/graphql", Key: key, Body: map[string]any{"query": q}}).WantStatus(t, 200).Body)
	}
	body := gql(creditKey, `{ events(first: 50) { edges { node { id type data } } pageInfo { hasNextPage } } }`)
	if strings.Contains(body, "application.") || !strings.Contains(body, "company.created") {
		t.Errorf("graphql events for a read_credit key: %s", body)
	}
	body = gql(creditKey, `{ events(types: ["application.created"]) { edges { node { id } } } }`)
	if !strings.Contains(body, `"insufficient_scope"`) || strings.Contains(body, appEvent) {
		t.Errorf("graphql types the key may not read: %s", body)
	}
	body = gql(appKey, fmt.Sprintf(`{ node(id: %q) { ... on Event { id type data } } }`, appEvent))
	if !strings.Contains(body, `"application.created"`) || strings.Contains(body, "jo@example.com") {
		t.Errorf("graphql node(ev_) for an application event: %s", body)
	}
	body = gql(creditKey, fmt.Sprintf(`{ node(id: %q) { id } }`, appEvent))
	if !strings.Contains(body, `"node":null`) {
		t.Errorf("graphql node of an application event for a read_credit key: %s", body)
	}
}

// TestEventFeedBadInput: every bad query value is a 400 naming it, in REST and GraphQL.
func TestEventFeedBadInput(t *testing.T) {
	t.Parallel()
	env := credittest.New(t)
	st := env.MustStore(t, "Store", "EUR")
	co := env.MustCompany(t, st, "Buyer", "100")
	entry := env.MustRecord(t, credit.LedgerEntryInput{CompanyID: co.ID, Kind: credit.KindOpeningBalance, Amount: "1"})
	key := env.MustKey(t, st, "reader", credit.ScopeReadCredit, credit.ScopeReadApplications)
	other := credittest.New(t)
	ost := other.MustStore(t, "Other", "EUR")
	other.MustCompany(t, ost, "Theirs", "1")
	page := env.Get(t, key, "/v1/events?limit=1").ListPage(t)
	for _, c := range []struct{ query, param string }{
		{"limit=0", "limit"},
		{"limit=251", "limit"},
		{"limit=x", "limit"},
		{"type=", "type"},
		{"type=company.deleted", "type"},
		{"type=company.created,", "type"},
		{"type=COMPANY.CREATED", "type"},
		{"after=", "after"},
		{"after=ev_unknown000000000000000", "after"},
		{"after=" + entry.ID, "after"},
		{"after=" + co.ID, "after"},
		{"cursor=" + flipChar(*page.NextCursor, 3), "cursor"},
		{"cursor=" + *page.NextCursor + "&type=company.created", "cursor"},
		{"since=2026-01-01", "since"},
	} {
		env.Get(t, key, "/v1/events?"+c.query).WantError(t, 400, "invalid_parameter", c.param)
	}
	env.Get(t, key, "/v1/events/ev_unknown000000000000000").WantError(t, 404, "not_found", "")
	env.Get(t, key, "/v1/events/"+entry.ID).WantError(t, 404, "not_found", "")
	body := string(env.Do(t, credittest.Request{Method: "POST", Path: "/graphql", Key: key, Body: map[string]any{
		"query": `{ events(afterEvent: "ev_unknown000000000000000", types: ["nope"]) { edges { node { id } } } }`,
	}}).WantStatus(t, 400).Body) // refused before execution (contract §14)
	if !strings.Contains(body, `"param":"types"`) {
		t.Errorf("graphql unknown type: %s", body)
	}
	body = string(env.Do(t, credittest.Request{Method: "POST", Path: "/graphql", Key: key, Body: map[string]any{
		"query": `{ events(afterEvent: "ev_unknown000000000000000") { edges { node { id } } } }`,
	}}).WantStatus(t, 200).Body)
	if !strings.Contains(body, `"param":"afterEvent"`) || !strings.Contains(body, "afterEvent must be") {
		t.Errorf("graphql unknown afterEvent: %s", body)
	}
}

// TestEventFeedSyncUnderConcurrentWriters: eight writers append events while a reader follows
// the feed with after=, as an integration would; the reader ends with every event exactly once,
// in append order. On PostgreSQL (CREDITD_TEST_BACKEND=postgres) the writers run on separate
// connections, where late commits could be skipped if numbering did not follow commit order.
func TestEventFeedSyncUnderConcurrentWriters(t *testing.T) {
	t.Parallel()
	env := credittest.New(t, credittest.Options{ServerConfig: func(c *server.Config) { c.RateLimit = 1_000_000 }})
	st := env.MustStore(t, "Store", "EUR")
	key := env.MustKey(t, st, "erp", credit.AllScopes...)
	var companies []string
	for i := range 4 {
		companies = append(companies, env.MustCompany(t, st, fmt.Sprintf("Buyer %d", i), "100000").ID)
	}
	const writers, writes = 8, 25
	var wg sync.WaitGroup
	done := make(chan struct{})
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range writes {
				// Two writers per company: they queue on its lock; the four companies do not.
				co := companies[w%len(companies)]
				var r *credittest.Response
				if i%5 == 4 {
					r = env.Do(t, credittest.Request{Method: "PUT", Path: "/v1/companies/" + co + "/credit-limit", Key: key, Body: map[string]string{"amount": fmt.Sprintf("%d.00", 100000+100*w+i)}}) // each a change: a limit set to its value appends no event
				} else {
					r = env.Do(t, credittest.Request{Method: "POST", Path: "/v1/companies/" + co + "/adjustments", Key: key, Body: map[string]string{"amount": "1.00", "note": fmt.Sprintf("w%d-%d", w, i)}})
				}
				if r.Status != 200 && r.Status != 201 {
					t.Errorf("write: %d %s", r.Status, r.Body)
					return
				}
			}
		}()
	}
	go func() { wg.Wait(); close(done) }()

	var seen []string
	after := ""
	follow := func() {
		for {
			path := "/v1/events?limit=7"
			if after != "" {
				path += "&after=" + after
			}
			p := env.Get(t, key, path).ListPage(t)
			ids := p.IDs(t)
			seen = append(seen, ids...)
			if len(ids) > 0 {
				after = ids[len(ids)-1]
			}
			if !p.HasMore {
				return
			}
		}
	}
	polls := 0
	for running := true; running; {
		select {
		case <-done:
			running = false
		default:
		}
		follow()
		polls++
	}
	follow()

	all, _ := mustFeed(t, env, key, "", 250)
	var allIDs []string
	for _, e := range all {
		allIDs = append(allIDs, e.ID)
	}
	if want := len(companies) + 1 + writers*writes; len(allIDs) != want {
		t.Fatalf("%d events, want %d", len(allIDs), want)
	}
	if !slices.Equal(seen, allIDs) {
		dup := map[string]int{}
		for _, id := range seen {
			dup[id]++
		}
		missing := 0
		for _, id := range allIDs {
			if dup[id] == 0 {
				missing++
			}
		}
		t.Fatalf("the after= reader saw %d events (%d missing), the feed has %d", len(seen), missing, len(allIDs))
	}
	t.Logf("%d writers x %d writes on %s: the reader followed all %d events in %d polls", writers, writes, credittest.Backend(), len(allIDs), polls)
}

// TestEventRetention: the sweep's purge deletes events older than the retention (never less
// than 30 days) and keeps the rest, whose sync goes on; an after= naming a purged event is
// refused.
func TestEventRetention(t *testing.T) {
	t.Parallel()
	env := credittest.New(t, credittest.Options{ServiceOptions: func(o *credit.Options) { o.EventRetention = time.Hour }})
	if env.Service.Maintenance.EventRetention() != credit.DefaultEventRetention {
		t.Fatalf("retention %s: a shorter one must be raised to 30 days", env.Service.Maintenance.EventRetention())
	}
	st := env.MustStore(t, "Store", "EUR")
	key := env.MustKey(t, st, "erp", credit.ScopeReadCredit)
	old := env.MustCompany(t, st, "Old", "1")
	env.Clock.Advance(29 * 24 * time.Hour)
	env.MustCompany(t, st, "Newer", "1")
	first := env.Get(t, key, "/v1/events").ListPage(t).IDs(t)
	if len(first) != 3 {
		t.Fatalf("events %v", first)
	}
	if n, err := env.Service.Maintenance.PurgeEvents(credittest.Admin()); err != nil || n != 0 {
		t.Fatalf("purge at 29 days: %d %v", n, err)
	}
	env.Clock.Advance(24*time.Hour + time.Second)
	if n, err := env.Service.Maintenance.PurgeEvents(credittest.Admin()); err != nil || n != 2 {
		t.Fatalf("purge after 30 days: %d %v (want the key's and %s's events)", n, err, old.ID)
	}
	if got := env.Get(t, key, "/v1/events").ListPage(t).IDs(t); !slices.Equal(got, first[2:]) {
		t.Errorf("after the purge: %v, want %v", got, first[2:])
	}
	env.Get(t, key, "/v1/events?after="+first[0]).WantError(t, 400, "invalid_parameter", "after")
	env.Get(t, key, "/v1/events/"+first[0]).WantError(t, 404, "not_found", "")
	// Numbering goes on from the last event, not from the first kept.
	env.MustCompany(t, st, "Newest", "1")
	if got := env.Get(t, key, "/v1/events?after="+first[2]).ListPage(t).IDs(t); len(got) != 1 {
		t.Errorf("after the last kept event: %v", got)
	}
}

func mustMarshal(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestEventFeedStaysInItsStore: another store's events are never listed, and naming one (as
// afterEvent in GraphQL, or node) answers exactly like an unknown event; REST's after= and
// GET /v1/events/{id} are in the isolation matrices.
func TestEventFeedStaysInItsStore(t *testing.T) {
	t.Parallel()
	env := credittest.New(t)
	mine := mustStoreWithData(t, env, "Mine")
	theirs := mustStoreWithData(t, env, "Theirs")
	gql := func(q string) string {
		t.Helper()
		return string(env.Do(t, credittest.Request{Method: "POST", Path: "/graphql", Key: mine.key, Body: map[string]any{"query": q}}).WantStatus(t, 200).Body)
	}
	listed := gql(`{ events(first: 250) { edges { node { id type data } } } }`)
	for _, id := range slices.Concat(theirs.events, []string{theirs.company, theirs.application}) {
		if strings.Contains(listed, id) {
			t.Errorf("events lists another store's %s", id)
		}
	}
	for _, id := range mine.events {
		if !strings.Contains(listed, id) {
			t.Errorf("events misses the store's own %s", id)
		}
	}
	unknown := "ev_Unknown0000000000000000"
	for _, q := range []string{
		`{ events(afterEvent: %q) { edges { node { id } } } }`,
		`{ node(id: %q) { id } }`,
	} {
		foreign := gql(fmt.Sprintf(q, theirs.events[0]))
		if want := strings.ReplaceAll(gql(fmt.Sprintf(q, unknown)), unknown, theirs.events[0]); foreign != want {
			t.Errorf("another store's event answers\n%s\nan unknown one\n%s", foreign, want)
		}
	}
}
