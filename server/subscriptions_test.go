package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
	"github.com/creditd/creditd/database"
	"github.com/creditd/creditd/server"
)

// subsFixture is a store with a company and a key that reads and writes credit.
type subsFixture struct {
	env     *credittest.Env
	store   string
	company string
	key     string
	keyID   string
}

func newSubsFixture(t *testing.T, opts ...credittest.Options) *subsFixture {
	t.Helper()
	env := credittest.New(t, opts...)
	f := &subsFixture{env: env}
	f.store = env.MustStore(t, "Live", "EUR")
	f.company = env.MustCompany(t, f.store, "Buyer", "1000.00").ID
	k := env.MustIssuedKey(t, f.store, "dashboard", credit.ScopeReadCredit, credit.ScopeWriteCredit)
	f.key, f.keyID = k.Secret, k.ID
	return f
}

// adjust makes an adjustment through REST on base and returns the ledger entry's ID.
func (f *subsFixture) adjust(t *testing.T, base, note string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, base+"/v1/companies/"+f.company+"/adjustments",
		strings.NewReader(`{"amount":"1.00","note":"`+note+`"}`))
	req.Header.Set("Authorization", "Bearer "+f.key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("adjustment: %d", resp.StatusCode)
	}
}

// feedIDs lists the store's feed through REST.
func (f *subsFixture) feedIDs(t *testing.T) []string {
	t.Helper()
	var ids []string
	for _, p := range f.env.WalkPages(t, f.key, "/v1/events?limit=250", nil) {
		ids = append(ids, p.IDs(t)...)
	}
	return ids
}

// secondInstance serves the fixture's database from another server, with its own database
// handle and service, as another process would.
func secondInstance(t *testing.T, env *credittest.Env) string {
	t.Helper()
	db, err := database.Open(context.Background(), env.DSN)
	if err != nil {
		t.Fatal(err)
	}
	svc := credit.New(db, credit.Options{})
	ts := httptest.NewServer(server.New(server.Config{Service: svc, DB: db, Logger: slog.New(slog.NewJSONHandler(io.Discard, nil))}))
	t.Cleanup(func() {
		ts.Close()
		db.Close()
	})
	return ts.URL
}

// TestSubscriptionReplayThenLive: with afterEvent the feed after it is replayed, then events
// written on another instance arrive live, each once, in feed order, as GET /v1/events shows
// them.
func TestSubscriptionReplayThenLive(t *testing.T) {
	f := newSubsFixture(t)
	other := secondInstance(t, f.env)
	for i := range 3 {
		f.adjust(t, f.env.Server.URL, fmt.Sprintf("before %d", i))
	}
	before := f.feedIDs(t)
	c := credittest.MustDialWS(t, f.env.Server.URL, f.key, credittest.WSOptions{})
	c.Subscribe(t, "1", credittest.EventsSubscription, map[string]any{"after": before[1]})
	var got []string
	for range len(before) - 2 {
		got = append(got, credittest.NextEvent(t, c.Read(t, 10*time.Second)).ID)
	}
	for i := range 3 {
		f.adjust(t, other, fmt.Sprintf("live %d", i))
		// Each live event arrives before the next is written, well within the subscriber's
		// periodic re-read (5 s): the other instance's commit woke it.
		got = append(got, credittest.NextEvent(t, c.Read(t, 2*time.Second)).ID)
	}
	want := f.feedIDs(t)[2:]
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("received %v\nfeed after the second event %v", got, want)
	}
	if m := c.Read(t, 300*time.Millisecond); m != nil {
		t.Fatalf("a message beyond the feed: %+v", m)
	}
}

// TestSubscriptionFromNow: without afterEvent only events written after subscribing arrive.
func TestSubscriptionFromNow(t *testing.T) {
	f := newSubsFixture(t)
	f.adjust(t, f.env.Server.URL, "old")
	c := credittest.MustDialWS(t, f.env.Server.URL, f.key, credittest.WSOptions{})
	c.Subscribe(t, "1", credittest.EventsSubscription, map[string]any{"types": []string{credit.EventTypeLedgerEntryCreated}})
	time.Sleep(200 * time.Millisecond) // the subscription has started
	f.adjust(t, f.env.Server.URL, "new")
	ev := credittest.NextEvent(t, c.Read(t, 2*time.Second))
	feed := f.feedIDs(t)
	if ev.ID != feed[len(feed)-1] || ev.Type != credit.EventTypeLedgerEntryCreated {
		t.Fatalf("got %+v, feed %v", ev, feed)
	}
}

// TestSubscriptionWebSocketOrigin: a handshake from a browser origin that is neither the API's
// nor a --cors-origin is refused with 403; a --cors-origin, the API's own and none are accepted.
func TestSubscriptionWebSocketOrigin(t *testing.T) {
	f := newSubsFixture(t, withCORSOrigins("https://dashboard.example.com"))
	_, resp, err := credittest.DialWS(t, f.env.Server.URL, credittest.WSOptions{Origin: "https://evil.example.com"})
	if err == nil || resp == nil || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("foreign origin: err %v, response %+v", err, resp)
	}
	for _, origin := range []string{"https://dashboard.example.com", f.env.Server.URL, ""} {
		credittest.MustDialWS(t, f.env.Server.URL, f.key, credittest.WSOptions{Origin: origin})
	}
}

// TestSubscriptionBadKey: connection_init with a wrong key closes the socket with 4401.
func TestSubscriptionBadKey(t *testing.T) {
	f := newSubsFixture(t)
	c, _, err := credittest.DialWS(t, f.env.Server.URL, credittest.WSOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c.Send(t, credittest.WSMessage{Type: "connection_init", Payload: json.RawMessage(`{"Authorization":"Bearer ck_nope"}`)})
	if m := c.Read(t, 5*time.Second); m != nil || c.Closed == nil || c.Closed.Code != 4401 {
		t.Fatalf("message %+v, close %v", m, c.Closed)
	}
}
