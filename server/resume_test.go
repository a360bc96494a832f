package server_test

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/creditd/creditd/credittest"
)

// TestSubscriptionResumesFromTheConnection: the position travels with the connection
// (contract §16, amended 2026-11-28): a subscription starts after the later of its afterEvent
// variable and its WebSocket's connection_init afterEvent, so a client library that reconnects
// by itself and re-sends the original variables neither skips nor repeats an event. A position
// that is no event of the feed (unknown, purged) or not an ID is refused like
// a bad afterEvent, naming connection_init's afterEvent.
func TestSubscriptionResumesFromTheConnection(t *testing.T) {
	f := newSubsFixture(t)
	for i := range 5 {
		f.adjust(t, f.env.Server.URL, fmt.Sprintf("e%d", i))
	}
	feed := f.feedIDs(t)
	// feed[0] is the company's creation and the key's events may come first: take the last five.
	e := feed[len(feed)-5:]

	for _, tc := range []struct {
		name       string
		connection any
		variable   any
		first      string // the first event received; "" when refused
		param      string
	}{
		{"connection later than the variable", e[2], e[0], e[3], ""},
		{"connection earlier than the variable", e[0], e[2], e[3], ""},
		{"connection only, the variable re-sent as from now", e[1], nil, e[2], ""},
		{"variable only", nil, e[1], e[2], ""},
		{"unknown connection position", "ev_unknown", e[0], "", "afterEvent"},
		{"connection position not an ID", 42, nil, "", "afterEvent"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := credittest.MustDialWS(t, f.env.Server.URL, f.key, credittest.WSOptions{AfterEvent: tc.connection})
			vars := map[string]any{}
			if tc.variable != nil {
				vars["after"] = tc.variable
			}
			c.Subscribe(t, "1", credittest.EventsSubscription, vars)
			m := c.Read(t, 5*time.Second)
			if tc.first == "" {
				if m == nil || strings.Join(credittest.ErrorCodes(m), ",") != "invalid_parameter" ||
					!strings.Contains(string(m.Payload), `"param":"`+tc.param+`"`) {
					t.Fatalf("want invalid_parameter naming %s, got %+v", tc.param, m)
				}
				return
			}
			if got := credittest.NextEvent(t, m).ID; got != tc.first {
				t.Fatalf("first event %s, want %s", got, tc.first)
			}
		})
	}

	// A position per subscription: connection_init's afterEvent as an object from subscription
	// ID to event ID, for a connection whose subscriptions are at different places. A
	// subscription the object does not name has no connection position.
	t.Run("a position per subscription", func(t *testing.T) {
		c := credittest.MustDialWS(t, f.env.Server.URL, f.key, credittest.WSOptions{AfterEvent: map[string]any{"fast": e[3], "slow": e[0]}})
		want := map[string]string{"fast": e[4], "slow": e[1], "other": e[2]}
		c.Subscribe(t, "fast", credittest.EventsSubscription, nil)
		c.Subscribe(t, "slow", credittest.EventsSubscription, map[string]any{"after": e[0]})
		c.Subscribe(t, "other", credittest.EventsSubscription, map[string]any{"after": e[1]})
		got := map[string]string{}
		for len(got) < len(want) {
			m := c.Read(t, 5*time.Second)
			if m == nil {
				t.Fatalf("first events so far %v, want %v", got, want)
			}
			if _, seen := got[m.ID]; !seen {
				got[m.ID] = credittest.NextEvent(t, m).ID
			}
		}
		for id, first := range want {
			if got[id] != first {
				t.Errorf("subscription %s started with %s, want %s", id, got[id], first)
			}
		}
	})
	t.Run("a subscription's position not an ID", func(t *testing.T) {
		c := credittest.MustDialWS(t, f.env.Server.URL, f.key, credittest.WSOptions{AfterEvent: map[string]any{"1": 42}})
		c.Subscribe(t, "1", credittest.EventsSubscription, nil)
		if m := c.Read(t, 5*time.Second); m == nil || strings.Join(credittest.ErrorCodes(m), ",") != "invalid_parameter" || !strings.Contains(string(m.Payload), `"param":"afterEvent"`) {
			t.Fatalf("want invalid_parameter naming afterEvent, got %+v", m)
		}
	})

	// Purged: an event older than the retention is no position any more.
	f.env.Clock.Advance(f.env.Service.Maintenance.EventRetention() + time.Hour)
	if _, err := f.env.Service.Maintenance.PurgeEvents(context.Background()); err != nil {
		t.Fatal(err)
	}
	c := credittest.MustDialWS(t, f.env.Server.URL, f.key, credittest.WSOptions{AfterEvent: e[0]})
	c.Subscribe(t, "1", credittest.EventsSubscription, nil)
	if m := c.Read(t, 5*time.Second); m == nil || strings.Join(credittest.ErrorCodes(m), ",") != "invalid_parameter" || !strings.Contains(string(m.Payload), `"param":"afterEvent"`) {
		t.Fatalf("a purged connection position: %+v", m)
	}
}

// TestSSEEventIDsAndLastEventID: over SSE every next carries the SSE id: field set to its
// event's ID, and a request's Last-Event-ID header is a position (contract §16, amended
// 2026-11-28): EventSource sends it by itself, graphql-sse's headers function can.
func TestSSEEventIDsAndLastEventID(t *testing.T) {
	f := newSubsFixture(t)
	for i := range 4 {
		f.adjust(t, f.env.Server.URL, fmt.Sprintf("e%d", i))
	}
	feed := f.feedIDs(t)
	e := feed[len(feed)-4:]

	// sse opens a stream with the headers and variables given and returns its reader.
	sse := func(t *testing.T, lastEventID string, vars string) *bufio.Reader {
		ctx, cancel := context.WithCancel(context.Background())
		t.Cleanup(cancel)
		body := `{"query":"subscription($after: ID) { events(afterEvent: $after) { id } }","variables":` + vars + `}`
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, f.env.Server.URL+"/graphql", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+f.key)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "text/event-stream")
		if lastEventID != "" {
			req.Header.Set("Last-Event-ID", lastEventID)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return bufio.NewReader(resp.Body)
	}
	// message reads the next SSE message's fields, skipping comments.
	message := func(t *testing.T, r *bufio.Reader) map[string]string {
		fields := map[string]string{}
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				t.Fatalf("stream ended: %v (%v)", err, fields)
			}
			line = strings.TrimRight(line, "\n")
			switch {
			case line == "" && len(fields) > 0:
				return fields
			case line == "" || strings.HasPrefix(line, ":"):
			default:
				name, value, _ := strings.Cut(line, ": ")
				fields[name] = value
			}
		}
	}

	// Every next carries its event's ID; Last-Event-ID is later than the variable here.
	r := sse(t, e[1], `{"after":"`+e[0]+`"}`)
	for _, want := range e[2:] {
		m := message(t, r)
		if m["event"] != "next" || m["id"] != want || !strings.Contains(m["data"], `"id":"`+want+`"`) {
			t.Fatalf("want the next of %s with id: %s, got %v", want, want, m)
		}
	}
	f.adjust(t, f.env.Server.URL, "live")
	live := f.feedIDs(t)
	if m := message(t, r); m["id"] != live[len(live)-1] {
		t.Fatalf("a live next: %v, want id %s", m, live[len(live)-1])
	}

	// Last-Event-ID with a "from now" variable resumes after it.
	r = sse(t, e[2], `{}`)
	if m := message(t, r); m["id"] != e[3] {
		t.Fatalf("resuming from Last-Event-ID: %v, want %s", m, e[3])
	}

	// An unknown Last-Event-ID is refused, naming the header.
	r = sse(t, "ev_unknown", `{}`)
	if m := message(t, r); m["event"] != "next" || !strings.Contains(m["data"], `"code":"invalid_parameter"`) ||
		!strings.Contains(m["data"], `"param":"Last-Event-ID"`) || m["id"] != "" {
		t.Fatalf("an unknown Last-Event-ID: %v", m)
	}
}
