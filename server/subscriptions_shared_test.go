package server_test

import (
	"encoding/json"
	"fmt"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
)

// sharedDocument is the subscription of TestSubscriptionsSharePayloads: its payload depends on
// its variables ($full) as well as on the event.
const sharedDocument = `subscription($types: [String!], $full: Boolean!) {
  events(types: $types) { id type data @include(if: $full) company { id name } }
}`

// sharedNode reads one event with sharedDocument's selection: what a message of it must hold.
const sharedNode = `query($id: ID!, $full: Boolean!) {
  node(id: $id) { ... on Event { id type data @include(if: $full) company { id name } } }
}`

// TestSubscriptionsSharePayloads (issue 40): the subscribers of one store that run the same
// document with the same variables under keys of the same scopes share each event's payload,
// executed once for all of them; subscribers that differ in anything that decides the bytes
// (scopes, with or without personal data; variables; types) or in store do not, and every
// subscriber, whatever its position, receives exactly its own sequence (the events after its
// position that its key and types admit, in feed order, each once, as GET /v1/events lists
// them) and its own payloads (each as node(id:) answers its key the same selection).
// /metrics counts the payloads executed: one per group and event, not one per message.
func TestSubscriptionsSharePayloads(t *testing.T) {
	env := credittest.New(t)
	one := env.MustStore(t, "One", "EUR")
	two := env.MustStore(t, "Two", "EUR")
	coOne := env.MustCompany(t, one, "Buyer", "100000.00")
	coTwo := env.MustCompany(t, two, "Other buyer", "100000.00")
	keys := map[string]string{
		"credit": env.MustKey(t, one, "credit", credit.ScopeReadCredit), // no personal data
		"all":    env.MustKey(t, one, "all", credit.ScopeReadCredit, credit.ScopeReadApplications),
		"two":    env.MustKey(t, two, "two", credit.ScopeReadCredit),
	}
	adjust := func(co credit.Company, note string) {
		t.Helper()
		if _, err := env.Service.Ledger.CreateAdjustment(env.StaffOf(t, co.ID),
			credit.AdjustmentInput{CompanyID: co.ID, Amount: credit.Amount("1.00"), Note: &note}); err != nil {
			t.Fatal(err)
		}
	}
	apply := func(name string) {
		t.Helper()
		env.MustApplication(t, one, credit.ApplicationInput{BusinessName: name})
	}
	// The feed before anyone subscribes: replays start inside it.
	adjust(coOne, "early 0")
	apply("Early applicant")
	adjust(coOne, "early 1")
	adjust(coOne, "early 2")
	adjust(coTwo, "early two")
	feed := func(key, after string, types []string) []string {
		q := url.Values{"limit": {"250"}}
		if after != "" {
			q.Set("after", after)
		}
		for _, typ := range types {
			q.Add("type", typ)
		}
		var ids []string
		for _, p := range env.WalkPages(t, key, "/v1/events?"+q.Encode(), nil) {
			ids = append(ids, p.IDs(t)...)
		}
		return ids
	}
	creditEarly, allEarly, twoEarly := feed(keys["credit"], "", nil), feed(keys["all"], "", nil), feed(keys["two"], "", nil)
	last := func(ids []string) string { return ids[len(ids)-1] }

	type subscriber struct {
		group string // the payloads it may share: those of its group's other members
		key   string
		after string // its connection's position
		vars  map[string]any
		conn  *credittest.WSConn
		got   []string
	}
	var subs []*subscriber
	add := func(n int, group, key, after string, vars map[string]any) {
		for range n {
			subs = append(subs, &subscriber{group: group, key: key, after: after, vars: vars})
		}
	}
	full := map[string]any{"full": true}
	add(3, "credit", "credit", last(creditEarly), full)
	// The same group at other positions: replays from the first and the second event.
	add(1, "credit", "credit", creditEarly[0], full)
	add(1, "credit", "credit", creditEarly[1], full)
	add(3, "all", "all", last(allEarly), full)
	add(2, "all, no data", "all", last(allEarly), map[string]any{"full": false})
	add(2, "all, applications", "all", allEarly[0], map[string]any{"full": true, "types": []string{string(credit.EventTypeApplicationCreated)}})
	add(2, "two", "two", last(twoEarly), full)

	executed := func() int64 {
		t.Helper()
		for _, line := range strings.Split(string(env.Get(t, "", "/metrics").WantStatus(t, 200).Body), "\n") {
			if v, ok := strings.CutPrefix(line, "creditd_subscription_payloads_executed_total "); ok {
				n, err := strconv.ParseFloat(v, 64)
				if err != nil {
					t.Fatal(err)
				}
				return int64(n)
			}
		}
		t.Fatal("/metrics lacks creditd_subscription_payloads_executed_total")
		return 0
	}
	for i, s := range subs {
		s.conn = credittest.MustDialWS(t, env.Server.URL, keys[s.key], credittest.WSOptions{AfterEvent: s.after})
		s.conn.Subscribe(t, fmt.Sprint(i+1), sharedDocument, s.vars)
	}
	// receive reads each subscriber's messages until it has its feed after its position, and
	// checks them; it returns how many distinct events the groups received, each group
	// counted apart, beyond the first from[s] messages of each subscriber s.
	receive := func(from map[*subscriber]int) (perGroup int) {
		received := map[string]map[string]bool{} // group -> events its members received
		for i, s := range subs {
			var types []string
			if ts, ok := s.vars["types"].([]string); ok {
				types = ts
			}
			want := feed(keys[s.key], s.after, types)
			for len(s.got) < len(want) {
				m := s.conn.Read(t, 10*time.Second)
				if m == nil || m.Type != "next" || m.ID != fmt.Sprint(i+1) {
					t.Fatalf("subscriber %d (%s): want a next message, got %+v", i+1, s.group, m)
				}
				var p struct {
					Data   struct{ Events json.RawMessage }
					Errors []any
				}
				if err := json.Unmarshal(m.Payload, &p); err != nil || len(p.Errors) > 0 {
					t.Fatalf("subscriber %d (%s): %s", i+1, s.group, m.Payload)
				}
				var ev struct{ ID string }
				if err := json.Unmarshal(p.Data.Events, &ev); err != nil {
					t.Fatal(err)
				}
				s.got = append(s.got, ev.ID)
				// Its own payload: as node(id:) shows the event to its key, with its variables.
				node := graphQL(t, env, keys[s.key], sharedNode, map[string]any{"id": ev.ID, "full": s.vars["full"]})
				if !jsonEqual(t, p.Data.Events, node["node"]) {
					t.Errorf("subscriber %d (%s): event %s\nreceived %s\nnode(id:) %s", i+1, s.group, ev.ID, p.Data.Events, node["node"])
				}
				if len(s.got) <= from[s] {
					continue
				}
				if received[s.group] == nil {
					received[s.group] = map[string]bool{}
				}
				if !received[s.group][ev.ID] {
					received[s.group][ev.ID] = true
					perGroup++
				}
			}
			if strings.Join(s.got, ",") != strings.Join(want, ",") {
				t.Fatalf("subscriber %d (%s, after %s): received %v\nfeed %v", i+1, s.group, s.after, s.got, want)
			}
		}
		return perGroup
	}
	// The replays first: two subscribers of a group that joined apart may each execute an
	// event, when the first had passed it before the second joined.
	receive(nil)
	from := map[*subscriber]int{}
	for _, s := range subs {
		from[s] = len(s.got)
	}
	before := executed()
	// Live events of both stores and both kinds, one at a time, so each wakes the subscribers.
	for i := range 3 {
		adjust(coOne, fmt.Sprintf("live %d", i))
		apply(fmt.Sprintf("Live applicant %d", i))
		adjust(coTwo, fmt.Sprintf("live two %d", i))
		time.Sleep(50 * time.Millisecond)
	}
	perGroup := receive(from)
	for i, s := range subs {
		// (A read that times out leaves its connection unusable: once, at the end.)
		if m := s.conn.Read(t, 200*time.Millisecond); m != nil {
			t.Fatalf("subscriber %d (%s): a message beyond its feed: %+v", i+1, s.group, m)
		}
	}
	// One execution per group and event: the subscribers received two to five times as many
	// messages.
	if got := executed() - before; got != int64(perGroup) {
		t.Errorf("payloads executed: %d, want %d (one per group and live event)", got, perGroup)
	}
}

// graphQL runs a GraphQL query with key that must succeed and returns its data.
func graphQL(tb testing.TB, env *credittest.Env, key, q string, vars map[string]any) map[string]json.RawMessage {
	tb.Helper()
	resp := env.Do(tb, credittest.Request{Method: "POST", Path: "/graphql", Key: key, Body: map[string]any{"query": q, "variables": vars}})
	var out struct {
		Data   map[string]json.RawMessage
		Errors []any
	}
	if err := json.Unmarshal(resp.Body, &out); err != nil || resp.Status != 200 || len(out.Errors) > 0 {
		tb.Fatalf("query: status %d %s", resp.Status, resp.Body)
	}
	return out.Data
}

func jsonEqual(tb testing.TB, a, b json.RawMessage) bool {
	tb.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		tb.Fatal(err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		tb.Fatal(err)
	}
	return reflect.DeepEqual(x, y)
}

// TestSharedPayloadsAndRevocation (issue 40): subscribers that share payloads still confirm
// their own keys before each message. Of a group (one document, keys of the same scopes), the
// subscriber whose key is revoked gets its unauthenticated error in place of its next event and
// its connection closes with 4401, while the others receive the events after the revocation.
func TestSharedPayloadsAndRevocation(t *testing.T) {
	f := newSubsFixture(t)
	other := f.env.MustKey(t, f.store, "other", credit.ScopeReadCredit, credit.ScopeWriteCredit)
	doc := `subscription { events { id type company { id name } } }`
	var kept []*credittest.WSConn
	for range 2 {
		c := credittest.MustDialWS(t, f.env.Server.URL, other, credittest.WSOptions{})
		c.Subscribe(t, "1", doc, nil)
		kept = append(kept, c)
	}
	revoked := credittest.MustDialWS(t, f.env.Server.URL, f.key, credittest.WSOptions{})
	revoked.Subscribe(t, "1", doc, nil)
	time.Sleep(200 * time.Millisecond) // the subscriptions have started
	f.adjust(t, f.env.Server.URL, "before")
	for _, c := range append(kept, revoked) {
		credittest.NextEvent(t, c.Read(t, 5*time.Second))
	}
	if err := f.env.Service.Keys.Revoke(f.env.StaffOf(t, f.keyID), f.keyID); err != nil {
		t.Fatal(err)
	}
	f.env.MustRecord(t, credit.LedgerEntryInput{CompanyID: f.company, Kind: "adjustment", Amount: "2.00", Note: "after"})
	var feed []string
	for _, p := range f.env.WalkPages(t, other, "/v1/events?limit=250", nil) {
		feed = append(feed, p.IDs(t)...)
	}
	// The revocation's own event (key.revoked), then the entry.
	for i, c := range kept {
		for _, want := range feed[len(feed)-2:] {
			if ev := credittest.NextEvent(t, c.Read(t, 5*time.Second)); ev.ID != want {
				t.Fatalf("subscriber %d of the kept key: %+v, want %s of feed %v", i+1, ev, want, feed)
			}
		}
	}
	m := revoked.Read(t, 5*time.Second)
	if m == nil || m.Type != "error" || strings.Join(credittest.ErrorCodes(m), ",") != "unauthenticated" {
		t.Fatalf("the revoked key's subscriber after the revocation: %+v (close %v)", m, revoked.Closed)
	}
	if m := revoked.Read(t, 5*time.Second); m != nil || revoked.Closed == nil || revoked.Closed.Code != 4401 {
		t.Fatalf("after the error: %+v, close %v", m, revoked.Closed)
	}
}
