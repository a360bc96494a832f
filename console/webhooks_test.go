package console_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/creditd/creditd/console"
	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
	"github.com/creditd/creditd/delivery"
	"github.com/creditd/creditd/webhook"
)

// TestWebhooksPage: a staff member adds an endpoint (refusals next to their fields, the secret
// shown once), sees it listed with its description, disables and enables it, rotates its
// secret, reads its deliveries and asks for an event again.
func TestWebhooksPage(t *testing.T) {
	f := newFixture(t)
	b := f.browser(t)
	b.mustSignIn("anna@example.com", password)
	b.get("/webhooks").wantStatus(t, http.StatusOK).wantText(t, "Canary hooks of "+f.store).wantNoText(t, "Canary hooks of "+f.otherStore)

	b.post("/webhooks", url.Values{"url": {"ftp://example.com"}, "description": {"ERP"}}).wantStatus(t, http.StatusUnprocessableEntity).
		wantText(t, `id="webhook-url-error">`, `value="ERP"`)
	b.post("/webhooks", url.Values{"url": {"http://127.0.0.1:9/erp"}, "events": {"no.such_type"}}).wantStatus(t, http.StatusUnprocessableEntity).
		wantText(t, `id="webhook-events-error">`)
	created := b.post("/webhooks", url.Values{"url": {"http://127.0.0.1:9/erp"}, "description": {"ERP sync"}, "events": {"company.hold_placed"}}).wantStatus(t, http.StatusOK)
	created.wantText(t, "Endpoint “ERP sync” added", "shown only once")
	if created.Header.Get("Cache-Control") != "no-store" {
		t.Error("the secret's page may be cached")
	}
	secret := regexp.MustCompile(`id="secret" type="text" readonly value="(whsec_[^"]+)"`).FindStringSubmatch(created.Body)
	id := regexp.MustCompile(`Endpoint ID <code>(we_[0-9A-Za-z]+)</code>`).FindStringSubmatch(created.Body)
	if secret == nil || id == nil {
		t.Fatalf("no secret or ID on the page:\n%s", created.Body)
	}
	list := b.get("/webhooks").wantText(t, "ERP sync", "http://127.0.0.1:9/erp", "company.hold_placed", "Enabled").wantNoText(t, secret[1])
	_ = list

	b.follow(b.post("/webhooks/"+id[1]+"/disable", nil)).wantText(t, "Endpoint "+id[1]+" is disabled", `id="enable-`+id[1]+`"`)
	b.follow(b.post("/webhooks/"+id[1]+"/enable", nil)).wantText(t, "Endpoint "+id[1]+" is enabled", `id="disable-`+id[1]+`"`)
	b.post("/webhooks/"+id[1]+"/rotate", url.Values{"grace": {"forever"}}).wantStatus(t, http.StatusUnprocessableEntity).
		wantText(t, `id="grace-`+id[1]+`-error">Grace must be a duration such as 24h.`)
	rotated := b.post("/webhooks/"+id[1]+"/rotate", url.Values{"grace": {"1h"}}).wantStatus(t, http.StatusOK)
	rotated.wantText(t, "New signing secret for endpoint "+id[1], "keeps signing beside it until", "a grace of 1h0m0s").wantNoText(t, secret[1])

	// Deliveries: none yet; then an event of its type waits, and an event is asked for again.
	b.get("/webhooks/"+id[1]).wantStatus(t, http.StatusOK).wantText(t, "ERP sync", "Nothing is waiting.", "No delivery was attempted yet.")
	if _, err := f.Service.Companies.PlaceHold(credittest.Staff(f.store), credit.HoldInput{CompanyID: f.company.ID}); err != nil {
		t.Fatal(err)
	}
	events, err := f.Service.Events.List(credittest.Staff(f.store), credit.EventListParams{Types: []string{"company.hold_placed"}})
	if err != nil || len(events.Data) != 1 {
		t.Fatalf("events: %+v %v", events, err)
	}
	event := events.Data[0].ID
	b.get("/webhooks/" + id[1])
	b.post("/webhooks/"+id[1]+"/redeliver", url.Values{"event": {"ev_0000000000000000000000"}}).wantStatus(t, http.StatusNotFound).
		wantText(t, `id="redeliver-event-error">`, `value="ev_0000000000000000000000"`)
	b.follow(b.post("/webhooks/"+id[1]+"/redeliver", url.Values{"event": {event}})).
		wantText(t, "Event "+event+" will be delivered again shortly.", `id="pending"`, "<td><code>"+event+"</code></td>")
}

// TestWebhookTestEvent: "Send a test event" posts a signed ping to the endpoint now, as
// `creditd webhook test` does, says how it went and lists its attempt; a console that cannot
// send (no SendWebhookNow) shows no button, and another store's endpoint is not found.
func TestWebhookTestEvent(t *testing.T) {
	var mu sync.Mutex
	var got []*http.Request
	var bodies []string
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		got, bodies = append(got, r), append(bodies, string(body))
		mu.Unlock()
	}))
	t.Cleanup(receiver.Close)
	f := newFixture(t, withWebhookSender)
	b := f.browser(t)
	b.mustSignIn("anna@example.com", password)
	created := b.post("/webhooks", url.Values{"url": {receiver.URL + "/hook"}, "description": {"ERP"}}).wantStatus(t, http.StatusOK)
	id := regexp.MustCompile(`Endpoint ID <code>(we_[0-9A-Za-z]+)</code>`).FindStringSubmatch(created.Body)
	if id == nil {
		t.Fatalf("no endpoint ID on the page:\n%s", created.Body)
	}
	b.get("/webhooks/"+id[1]).wantText(t, `id="send-test"`, "No delivery was attempted yet.")
	sent := b.follow(b.post("/webhooks/"+id[1]+"/test", nil))
	sent.wantText(t, "Test event ", " sent: ", "(HTTP 200)", `id="attempts"`, `<div class="notice" role="status">Test event`).
		wantText(t, `id="endpoint-events">Events: every event`).wantNoText(t, `notice-failed`)
	// The recent events are offered for a redelivery.
	if !regexp.MustCompile(`<select id="redeliver-pick" name="event"><option value="ev_`).MatchString(sent.Body) {
		t.Errorf("no recent event to pick for a redelivery:\n%s", sent.Body)
	}
	mu.Lock()
	if len(got) != 1 || got[0].Header.Get("webhook-signature") == "" || !strings.Contains(bodies[0], `"type":"ping"`) {
		t.Errorf("the receiver got %d requests, want one signed ping: %v", len(got), bodies)
	}
	mu.Unlock()

	// An endpoint whose receiver is gone: the test's result is an alert, not a success.
	gone := httptest.NewServer(http.NotFoundHandler())
	goneURL := gone.URL
	gone.Close()
	created = b.post("/webhooks", url.Values{"url": {goneURL + "/hook"}, "description": {"Gone"}}).wantStatus(t, http.StatusOK)
	goneID := regexp.MustCompile(`Endpoint ID <code>(we_[0-9A-Za-z]+)</code>`).FindStringSubmatch(created.Body)
	b.get("/webhooks/" + goneID[1])
	failed := b.follow(b.post("/webhooks/"+goneID[1]+"/test", nil))
	failed.wantText(t, `<div class="alert notice-failed" role="alert">Test event `, " was not delivered: ").wantNoText(t, `<div class="notice" role="status">`)

	// Another store's endpoint: not found, and nothing is sent.
	other := f.endpoints[f.otherKey.ID]
	b.get("/webhooks/" + id[1])
	b.post("/webhooks/"+other+"/test", nil).wantStatus(t, http.StatusNotFound)
	mu.Lock()
	if len(got) != 1 {
		t.Errorf("a test event of another store's endpoint was sent: %d requests", len(got))
	}
	mu.Unlock()

	// Without a sender the page has no button.
	plain := newFixture(t)
	pb := plain.browser(t)
	pb.mustSignIn("anna@example.com", password)
	pb.get("/webhooks/"+plain.endpoints[plain.key.ID]).wantStatus(t, http.StatusOK).wantNoText(t, `id="send-test"`)
}

// withWebhookSender gives the console a webhook worker's SendNow, as serve does, delivering to
// loopback.
func withWebhookSender(cfg *console.Config) {
	w := delivery.New(delivery.Config{
		Queue:  cfg.Service.WebhookQueue,
		Lock:   func(context.Context, string) (func(), bool, error) { return func() {}, true, nil },
		Client: webhook.NewClient(webhook.Options{AllowPrivate: true}),
		Logger: slog.New(slog.DiscardHandler),
	})
	cfg.SendWebhookNow = w.SendNow
}
