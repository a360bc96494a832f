package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creditd/creditd/database"
	"github.com/creditd/creditd/ent"
	"github.com/creditd/creditd/ent/event"
	"github.com/creditd/creditd/tenant"
	"github.com/creditd/creditd/webhook"
)

// hookRequest is one webhook a test receiver got.
type hookRequest struct {
	Header http.Header
	Body   []byte
	// Status is what the receiver answered.
	Status int
}

func (h hookRequest) ID() string { return h.Header.Get(webhook.HeaderID) }

// Type is the event's type, read from the body.
func (h hookRequest) Type() string {
	var ev struct{ Type string }
	_ = json.Unmarshal(h.Body, &ev)
	return ev.Type
}

// hookReceiver is a real HTTP server receiving webhooks; respond decides each answer from the
// request's number (1 for the first) and may block.
type hookReceiver struct {
	srv     *httptest.Server
	mu      sync.Mutex
	got     []hookRequest
	respond func(n int, r *http.Request) int
}

func newHookReceiver(t *testing.T, respond func(n int, r *http.Request) int) *hookReceiver {
	t.Helper()
	h := &hookReceiver{respond: respond}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		h.mu.Lock()
		n := len(h.got) + 1
		h.got = append(h.got, hookRequest{Header: r.Header.Clone(), Body: body})
		h.mu.Unlock()
		status := http.StatusOK
		if h.respond != nil {
			status = h.respond(n, r)
		}
		h.mu.Lock()
		h.got[n-1].Status = status
		h.mu.Unlock()
		w.WriteHeader(status)
	}))
	t.Cleanup(h.srv.Close)
	return h
}

func (h *hookReceiver) URL() string { return h.srv.URL + "/hooks" }

func (h *hookReceiver) requests() []hookRequest {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.got)
}

// waitFor waits until the receiver has answered n requests and returns them.
func (h *hookReceiver) waitFor(t *testing.T, n int) []hookRequest {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		got := h.requests()
		answered := 0
		for _, r := range got {
			if r.Status != 0 {
				answered++
			}
		}
		if answered >= n {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("the receiver got %d answered webhooks, want %d", answered, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// webhookServe is `creditd serve --allow-private-webhooks` in-process (a liveServer) with one
// store.
type webhookServe struct {
	*liveServer
	store string
	// companies counts the companies made, each with a platform company GID of its own.
	companies int
}

func startWebhookServe(t *testing.T, extra ...string) *webhookServe {
	t.Helper()
	ws := &webhookServe{liveServer: startLiveServer(t, append([]string{"--allow-private-webhooks", "--webhook-poll-interval", "20ms"}, extra...)...)}
	ws.store = ws.cli(t, "store", "create", "--name", "Hooks", "--currency", "EUR")["id"].(string)
	return ws
}

// run runs one creditd command on the server's database at the shared clock's time.
func (ws *webhookServe) run(t *testing.T, args ...string) cliRun {
	t.Helper()
	return runCreditdAt(t, ws.clock.Now(), append(args, "--db", ws.db)...)
}

// endpoint creates an endpoint for url and returns its id and secret.
func (ws *webhookServe) endpoint(t *testing.T, url string, args ...string) (id, secret string) {
	t.Helper()
	w := ws.cli(t, append([]string{"webhook", "create", "--store", ws.store, "--url", url, "--allow-private-webhooks"}, args...)...)
	mustKeys(t, "webhook create", w, "id", "secret")
	return w["id"].(string), w["secret"].(string)
}

// company creates a company and returns its id.
func (ws *webhookServe) company(t *testing.T, name string) string {
	t.Helper()
	ws.companies++
	return ws.cli(t, "company", "create", "--store", ws.store, "--name", name, "--platform-company-gid", fmt.Sprintf("gid://platform/Company/%d", 6+ws.companies),
		"--payment-terms", "NET_30", "--credit-limit", "1000.00")["id"].(string)
}

func (ws *webhookServe) order(t *testing.T, company, amount string) {
	t.Helper()
	ws.cli(t, "ledger", "record", "--company", company, "--kind", "order_placed", "--amount", amount, "--order", "gid://platform/Order/9")
}

// waitAttempts waits until the endpoint's deliveries report shows n recorded attempts, and
// returns the report.
func (ws *webhookServe) waitAttempts(t *testing.T, endpoint string, n int) map[string]any {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		report := ws.cli(t, "webhook", "deliveries", endpoint, "--limit", "1000")
		if len(report["attempts"].([]any)) >= n {
			return report
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d attempts recorded, want %d: %v", len(report["attempts"].([]any)), n, report)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// events reads the store's events in feed order, as (id, type) pairs.
// feedEvents reads every store's events from the database dsn, by store and in feed order.
func feedEvents(t *testing.T, dsn string) []*ent.Event {
	t.Helper()
	db, err := database.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	evs, err := db.Client.Event.Query().Order(ent.Asc(event.FieldStoreID), ent.Asc(event.FieldSeq)).All(tenant.System(context.Background()))
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

func hookIDs(reqs []hookRequest) []string {
	out := make([]string, len(reqs))
	for i, r := range reqs {
		out[i] = r.ID()
	}
	return out
}

// TestWebhooksDeliverEveryEventSignedAndInOrder: every event written after an endpoint is
// created reaches it once, in feed order, signed so that the Standard Webhooks verifier
// accepts it, with the event's JSON as the body; an endpoint filtered to one type gets only
// those; a disabled endpoint gets nothing; and the metrics count the deliveries.
func TestWebhooksDeliverEveryEventSignedAndInOrder(t *testing.T) {
	t.Parallel()
	ws := startWebhookServe(t)
	all, filtered, disabled := newHookReceiver(t, nil), newHookReceiver(t, nil), newHookReceiver(t, nil)
	early := ws.company(t, "Before Any Endpoint") // not sent: endpoints get events from their creation on
	allID, allSecret := ws.endpoint(t, all.URL(), "--description", "ERP")
	ws.endpoint(t, filtered.URL(), "--events", "ledger_entry.created")
	offID, _ := ws.endpoint(t, disabled.URL())
	if got := ws.cli(t, "webhook", "disable", offID); got["status"] != "disabled" {
		t.Fatalf("disable: %v", got)
	}

	co := ws.company(t, "Kessler KG")
	ws.order(t, co, "10.00")
	ws.order(t, early, "20.00")
	ws.cli(t, "hold", "place", co, "--staff", "Ana", "--note", "check")
	ws.cli(t, "hold", "lift", co, "--staff", "Ana")
	app := ws.cli(t, "application", "create", "--store", ws.store, "--business-name", "Neu GmbH", "--vat-number", "DE123456789",
		"--contact-name", "Eva Muster", "--contact-email", "eva@example.com")["id"].(string)
	ws.cli(t, "application", "set-status", app, "--status", "in_review")
	key := ws.cli(t, "key", "create", "--store", ws.store, "--label", "ERP", "--scopes", "read_credit")["id"].(string)
	ws.cli(t, "key", "revoke", key)

	evs := feedEvents(t, ws.db)
	var want []string
	var wantLedger []string
	for _, e := range evs[1:] { // the first is the early company's creation
		want = append(want, e.ID)
		if e.Type == "ledger_entry.created" {
			wantLedger = append(wantLedger, e.ID)
		}
	}
	if len(want) < 8 || len(wantLedger) != 2 {
		t.Fatalf("the writes made %d events (%d ledger entries): %v", len(want), len(wantLedger), evs)
	}
	got := all.waitFor(t, len(want))
	if !slices.Equal(hookIDs(got), want) {
		t.Fatalf("delivered %v\nwant the feed's order %v", hookIDs(got), want)
	}
	for i, r := range got {
		if err := webhook.Verify(allSecret, r.Header, r.Body, 5*time.Minute, ws.clock.Now()); err != nil {
			t.Errorf("webhook %s: %v", r.ID(), err)
		}
		if strings.Count(r.Header.Get(webhook.HeaderSignature), "v1,") != 1 {
			t.Errorf("webhook %s signature %q: want one v1 signature", r.ID(), r.Header.Get(webhook.HeaderSignature))
		}
		var body map[string]any
		if err := json.Unmarshal(r.Body, &body); err != nil {
			t.Fatal(err)
		}
		mustKeys(t, "webhook body", body, "id", "type", "occurred_at", "data")
		if body["id"] != evs[i+1].ID || body["type"] != evs[i+1].Type {
			t.Errorf("webhook %d body is %s, want event %s %s", i, r.Body, evs[i+1].ID, evs[i+1].Type)
		}
		if bytes.Contains(r.Body, []byte("eva@example.com")) || bytes.Contains(r.Body, []byte("Eva Muster")) {
			t.Errorf("webhook %s carries personal data: %s", r.ID(), r.Body)
		}
		if ct := r.Header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("Content-Type %q", ct)
		}
	}
	if got := hookIDs(filtered.waitFor(t, len(wantLedger))); !slices.Equal(got, wantLedger) {
		t.Errorf("the ledger_entry.created endpoint got %v, want %v", got, wantLedger)
	}

	// Nothing more arrives: no duplicates, nothing for the disabled endpoint.
	time.Sleep(300 * time.Millisecond)
	if n := len(all.requests()); n != len(want) {
		t.Errorf("the endpoint got %d webhooks, want %d", n, len(want))
	}
	if n := len(filtered.requests()); n != len(wantLedger) {
		t.Errorf("the filtered endpoint got %d webhooks, want %d", n, len(wantLedger))
	}
	if n := len(disabled.requests()); n != 0 {
		t.Errorf("the disabled endpoint got %d webhooks", n)
	}

	report := ws.waitAttempts(t, allID, len(want))
	mustKeys(t, "webhook deliveries", report, "endpoint", "pending", "attempts")
	if attempts := report["attempts"].([]any); len(attempts) != len(want) || attempts[0].(map[string]any)["outcome"] != "success" {
		t.Errorf("webhook deliveries shows %d attempts, want %d successes: %v", len(attempts), len(want), report)
	}
	// Every enabled endpoint is up to date: the queue's age is 0 however old the events are.
	ws.clock.Advance(time.Minute)
	metrics := string(httpGet(t, ws.base+"/metrics", "", 200))
	if !strings.Contains(metrics, `creditd_webhook_deliveries_total{outcome="success"} `) {
		t.Errorf("metrics lack the webhook deliveries:\n%s", grepLines(metrics, "webhook"))
	}
	if age := metricValue(t, metrics, "creditd_webhook_oldest_pending_event_age_seconds"); age != 0 {
		t.Errorf("queue age %v s with every enabled endpoint up to date (the disabled one's events do not count)", age)
	}
}

// metricValue is the value of the unlabelled metric name in a /metrics text.
func metricValue(t *testing.T, metrics, name string) float64 {
	t.Helper()
	for _, l := range strings.Split(metrics, "\n") {
		if v, ok := strings.CutPrefix(l, name+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("%s: %v", l, err)
			}
			return f
		}
	}
	t.Fatalf("no %s in the metrics:\n%s", name, grepLines(metrics, name))
	return 0
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// TestWebhookRetriesKeepOrder: a receiver that fails three times gets the event a fourth time
// on the retry schedule and then once successfully, the attempts are recorded with their
// status and next retry, and the event behind it waits for it.
func TestWebhookRetriesKeepOrder(t *testing.T) {
	t.Parallel()
	ws := startWebhookServe(t)
	recv := newHookReceiver(t, func(n int, r *http.Request) int {
		if n <= 3 {
			return http.StatusServiceUnavailable
		}
		return http.StatusNoContent
	})
	id, _ := ws.endpoint(t, recv.URL())
	ws.company(t, "First")
	ws.company(t, "Second")
	evs := feedEvents(t, ws.db)

	for attempt := 1; attempt <= 3; attempt++ {
		recv.waitFor(t, attempt)
		report := ws.waitAttempts(t, id, attempt)
		time.Sleep(100 * time.Millisecond) // long enough for a wrong worker to send the second event
		got := recv.requests()
		if len(got) != attempt || got[attempt-1].ID() != evs[0].ID {
			t.Fatalf("after %d failures the receiver got %v, want only %s", attempt, hookIDs(got), evs[0].ID)
		}
		pending := report["pending"].([]any)
		if len(pending) != 1 || pending[0].(map[string]any)["event_id"] != evs[0].ID || pending[0].(map[string]any)["attempts"] != float64(attempt) {
			t.Fatalf("after attempt %d, pending deliveries %v", attempt, pending)
		}
		last := report["attempts"].([]any)[0].(map[string]any)
		if last["outcome"] != "http_503" || last["status_code"] != float64(503) || last["next_attempt_at"] == nil {
			t.Fatalf("attempt %d recorded as %v", attempt, last)
		}
		// The retry comes on the schedule (5 s, 5 min, 30 min, ±20%), not before.
		next, err := time.Parse(time.RFC3339Nano, last["next_attempt_at"].(string))
		if err != nil {
			t.Fatal(err)
		}
		wantDelay := []time.Duration{5 * time.Second, 5 * time.Minute, 30 * time.Minute}[attempt-1]
		if d := next.Sub(ws.clock.Now()); d < wantDelay*8/10 || d > wantDelay*12/10 {
			t.Fatalf("retry %d scheduled after %s, want %s ±20%%", attempt, d, wantDelay)
		}
		if attempt == 2 {
			// While the first event waits for its retry, the queue's age is how long ago it
			// occurred, by the service clock.
			metrics := string(httpGet(t, ws.base+"/metrics", "", 200))
			want := ws.clock.Now().Sub(evs[0].OccurredAt).Seconds()
			if age := metricValue(t, metrics, "creditd_webhook_oldest_pending_event_age_seconds"); want < 4 || math.Abs(age-want) > 0.001 {
				t.Errorf("queue age %v s while the first event waits, want %v s", age, want)
			}
		}
		ws.clock.Set(next)
	}
	got := recv.waitFor(t, 5)
	if want := []string{evs[0].ID, evs[0].ID, evs[0].ID, evs[0].ID, evs[1].ID}; !slices.Equal(hookIDs(got), want) {
		t.Fatalf("the receiver got %v, want %v", hookIDs(got), want)
	}
	successes := 0
	for _, r := range got {
		if r.ID() == evs[0].ID && r.Status < 300 {
			successes++
		}
	}
	if successes != 1 {
		t.Errorf("event %s succeeded %d times, want once", evs[0].ID, successes)
	}
	report := ws.waitAttempts(t, id, 5)
	if len(report["pending"].([]any)) != 0 || len(report["attempts"].([]any)) != 5 {
		t.Errorf("after success: %v", report)
	}
	if ep := report["endpoint"].(map[string]any); ep["failing_since"] != nil || ep["status"] != "enabled" {
		t.Errorf("endpoint after success: %v", ep)
	}
	human := ws.run(t, "webhook", "deliveries", id).mustSucceed(t).stdout
	if !strings.Contains(human, "http_503") || !strings.Contains(human, "success") {
		t.Errorf("webhook deliveries prints:\n%s", human)
	}
}

// TestWebhookEndpointDisabledAfterFiveDaysOfFailures: an endpoint whose every attempt fails for
// five days is disabled with the reason, and sent nothing more.
func TestWebhookEndpointDisabledAfterFiveDaysOfFailures(t *testing.T) {
	t.Parallel()
	ws := startWebhookServe(t)
	recv := newHookReceiver(t, func(int, *http.Request) int { return http.StatusInternalServerError })
	id, _ := ws.endpoint(t, recv.URL())
	ws.company(t, "One")
	start := ws.clock.Now()
	n := 0
	for {
		n++
		recv.waitFor(t, n)
		ws.waitAttempts(t, id, n)
		ws.clock.Advance(13 * time.Hour) // past any retry's jitter
		if ep := ws.cli(t, "webhook", "list", "--store", ws.store)["data"].([]any)[0].(map[string]any); ep["status"] == "disabled" {
			if r, _ := ep["disabled_reason"].(string); !strings.Contains(r, "every attempt failed since") {
				t.Errorf("disabled with reason %q", r)
			}
			// The attempt that disabled it is recorded in the same transaction.
			n = len(ws.cli(t, "webhook", "deliveries", id, "--limit", "1000")["attempts"].([]any))
			// Disabled at the first attempt 5 days or more after the first failure; the clock
			// moves 13 hours a step, so that attempt is less than 13 hours past the 5 days.
			at, err := time.Parse(time.RFC3339Nano, ep["disabled_at"].(string))
			if d := at.Sub(start); err != nil || d < 5*24*time.Hour || d >= 5*24*time.Hour+13*time.Hour {
				t.Errorf("disabled %s after the first failure (%v), want at the first attempt at least 5 days after it", d, err)
			}
			break
		}
		if n > 20 {
			t.Fatal("the endpoint was never disabled")
		}
	}
	time.Sleep(200 * time.Millisecond)
	if got := len(recv.requests()); got != n {
		t.Errorf("a disabled endpoint got %d more webhooks", got-n)
	}
	if ep := ws.cli(t, "webhook", "enable", id); ep["status"] != "enabled" || ep["failing_since"] != nil {
		t.Errorf("enable: %v", ep)
	}
	recv.waitFor(t, n+1) // the pending retry is due at once
}

// TestWebhookSecretRotation: during the grace both secrets sign (two v1 signatures, each
// verifying with its secret); after it only the new one does.
func TestWebhookSecretRotation(t *testing.T) {
	t.Parallel()
	ws := startWebhookServe(t)
	recv := newHookReceiver(t, nil)
	id, oldSecret := ws.endpoint(t, recv.URL())
	rotated := ws.cli(t, "webhook", "rotate-secret", id, "--grace", "1h")
	newSecret := rotated["secret"].(string)
	if rotated["id"] != id || newSecret == oldSecret || !strings.HasPrefix(newSecret, "whsec_") {
		t.Fatalf("rotate-secret: %v", rotated)
	}
	ws.company(t, "During Grace")
	r := recv.waitFor(t, 1)[0]
	if sig := r.Header.Get(webhook.HeaderSignature); len(strings.Fields(sig)) != 2 || strings.Count(sig, "v1,") != 2 {
		t.Errorf("during the grace the signature header is %q, want two v1 signatures", sig)
	}
	for _, secret := range []string{oldSecret, newSecret} {
		if err := webhook.Verify(secret, r.Header, r.Body, 5*time.Minute, ws.clock.Now()); err != nil {
			t.Errorf("during the grace: %v", err)
		}
	}
	ws.clock.Advance(time.Hour + time.Second)
	ws.company(t, "After Grace")
	r = recv.waitFor(t, 2)[1]
	if sig := r.Header.Get(webhook.HeaderSignature); strings.Count(sig, "v1,") != 1 {
		t.Errorf("after the grace the signature header is %q, want one", sig)
	}
	if err := webhook.Verify(newSecret, r.Header, r.Body, 5*time.Minute, ws.clock.Now()); err != nil {
		t.Errorf("new secret after the grace: %v", err)
	}
	if err := webhook.Verify(oldSecret, r.Header, r.Body, 5*time.Minute, ws.clock.Now()); err == nil {
		t.Error("the old secret still signs after the grace")
	}
}

// TestWebhookRedeliverAndDelete: redeliver sends a delivered event again with the same
// webhook-id; a deleted endpoint is sent nothing more.
func TestWebhookRedeliverAndDelete(t *testing.T) {
	t.Parallel()
	ws := startWebhookServe(t)
	recv := newHookReceiver(t, nil)
	id, _ := ws.endpoint(t, recv.URL())
	ws.company(t, "One")
	first := recv.waitFor(t, 1)[0]
	d := ws.cli(t, "webhook", "redeliver", first.ID(), "--endpoint", id, "--allow-private-webhooks")
	// Sent at once, or, while serve still holds the endpoint's lock (it records the first
	// attempt under it; on SQLite too since the lock is a lock file), queued for serve to send.
	if d["event_id"] != first.ID() || (d["status"] != "succeeded" && d["status"] != "pending") {
		t.Errorf("redeliver: %v", d)
	}
	again := recv.waitFor(t, 2)[1]
	if again.ID() != first.ID() || !bytes.Equal(again.Body, first.Body) {
		t.Errorf("redelivered %s %s, want %s %s", again.ID(), again.Body, first.ID(), first.Body)
	}
	ws.cli(t, "webhook", "delete", id)
	ws.company(t, "Two")
	time.Sleep(300 * time.Millisecond)
	if n := len(recv.requests()); n != 2 {
		t.Errorf("a deleted endpoint got %d webhooks, want 2", n)
	}
	if list := ws.cli(t, "webhook", "list", "--store", ws.store)["data"].([]any); len(list) != 0 {
		t.Errorf("list after delete: %v", list)
	}
}

// TestWebhookCommandsRefuseBadInput: refused commands exit 2 with one line saying what is
// wrong, and create nothing.
func TestWebhookCommandsRefuseBadInput(t *testing.T) {
	t.Parallel()
	d := newCLIDB(t)
	recvURL := "https://hooks.example.com/creditd"
	ok := d.json(t, "webhook", "create", "--store", d.store, "--url", recvURL, "--events", "company.created, ledger_entry.created")
	we := ok["id"].(string)
	if s, _ := ok["secret"].(string); !strings.HasPrefix(s, "whsec_") || webhook.ValidateSecret(s) != nil {
		t.Errorf("secret %q", s)
	}
	before := d.dump(t)
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"webhook", "create", "--url", recvURL}, "--store is required"},
		{[]string{"webhook", "create", "--store", d.store}, "--url is required"},
		{[]string{"webhook", "create", "--store", d.store, "--url", "http://hooks.example.com/x"}, "--allow-private-webhooks, given to webhook create and to serve, lifts this"},
		{[]string{"webhook", "create", "--store", d.store, "--url", "https://user:pw@hooks.example.com/x"}, "without user:password"},
		{[]string{"webhook", "create", "--store", d.store, "--url", "https://127.0.0.1/x"}, "not a public internet address"},
		{[]string{"webhook", "create", "--store", d.store, "--url", "https://10.1.2.3/x"}, "not a public internet address"},
		{[]string{"webhook", "create", "--store", d.store, "--url", "https://169.254.169.254/latest"}, "not a public internet address"},
		{[]string{"webhook", "create", "--store", d.store, "--url", "https://[::1]:8443/x"}, "not a public internet address"},
		{[]string{"webhook", "create", "--store", d.store, "--url", "https://localhost/x"}, "not a public internet address"},
		{[]string{"webhook", "create", "--store", d.store, "--url", "ftp://hooks.example.com/x"}, "only HTTPS"},
		{[]string{"webhook", "create", "--store", d.store, "--url", "http://127.0.0.1:9977/hook"}, "--allow-private-webhooks"},
		{[]string{"webhook", "create", "--store", d.store, "--url", "https://127.1/x"}, "not a public internet address"},
		{[]string{"webhook", "create", "--store", d.store, "--url", "https://2130706433/x"}, "not a public internet address"},
		{[]string{"webhook", "create", "--store", d.store, "--url", "https://0x7f000001/x"}, "not a public internet address"},
		{[]string{"webhook", "create", "--store", d.store, "--url", "https://0177.0.0.1/x"}, "not a public internet address"},
		{[]string{"webhook", "create", "--store", d.store, "--url", "https://0/x"}, "not a public internet address"},
		{[]string{"webhook", "create", "--store", d.store, "--url", "https://ｌｏｃａｌｈｏｓｔ/x"}, "not a public internet address"},
		{[]string{"webhook", "create", "--store", d.store, "--url", "https://hooks.example.com/x#frag"}, "a fragment (#...) is never sent"},
		{[]string{"webhook", "create", "--store", d.store, "--url", "https://hooks.example.com:0/x"}, "the port must be 1-65535"},
		{[]string{"webhook", "create", "--store", d.store, "--url", "https://hooks.example.com:99999/x"}, "the port must be 1-65535"},
		{[]string{"webhook", "create", "--store", d.store, "--url", recvURL, "--events", "company.created,company.deleted"}, `unknown event type "company.deleted"`},
		{[]string{"webhook", "create", "--store", "st_nope", "--url", recvURL}, "no such store"},
		{[]string{"webhook", "disable", "we_unknown1234567890123456"}, "no such webhook endpoint"},
		{[]string{"webhook", "rotate-secret", we, "--grace", "-1h"}, "grace must not be negative"},
		{[]string{"webhook", "deliveries", we, "--limit", "0"}, "limit must be between 1 and 1000"},
		{[]string{"webhook", "redeliver", "ev_00000000000000000000aa", "--endpoint", we}, "no such event"},
		{[]string{"webhook", "redeliver", "ev_00000000000000000000aa"}, "--endpoint is required"},
		{[]string{"webhook", "delete"}, "expected 1 argument(s): WE"},
	} {
		r := d.run(t, tt.args...)
		line := r.wantOneLine(t, exitBadInput)
		if !strings.Contains(line, tt.want) {
			t.Errorf("creditd %s:\n got %s\nwant it to say %q", strings.Join(tt.args, " "), line, tt.want)
		}
	}
	if after := d.dump(t); after != before {
		t.Error("a refused webhook command wrote to the database")
	}
	list := d.json(t, "webhook", "list", "--store", d.store)["data"].([]any)
	if len(list) != 1 {
		t.Fatalf("list: %v", list)
	}
	ep := list[0].(map[string]any)
	mustKeys(t, "endpoint", ep, "id", "store_id", "url", "description", "event_types", "status", "disabled_reason", "disabled_at",
		"failing_since", "previous_secret_expires_at", "created_at")
	if ep["url"] != recvURL || len(ep["event_types"].([]any)) != 2 {
		t.Errorf("listed %v", ep)
	}
	if strings.Contains(d.dump(t), ok["secret"].(string)) {
		t.Error("the signing secret is stored in the clear")
	}
	human := d.run(t, "webhook", "list", "--store", d.store).mustSucceed(t).stdout
	if !strings.Contains(human, we) || !strings.Contains(human, "company.created,ledger_entry.created") {
		t.Errorf("webhook list prints:\n%s", human)
	}
}

// TestWebhookGoneDisablesAtOnce: a receiver answering 410 Gone asks to stop, and the endpoint
// is disabled after that one attempt, with the reason.
func TestWebhookGoneDisablesAtOnce(t *testing.T) {
	t.Parallel()
	ws := startWebhookServe(t)
	recv := newHookReceiver(t, func(int, *http.Request) int { return http.StatusGone })
	id, _ := ws.endpoint(t, recv.URL())
	ws.company(t, "One")
	ws.company(t, "Two")
	recv.waitFor(t, 1)
	report := ws.waitAttempts(t, id, 1)
	ep := report["endpoint"].(map[string]any)
	if ep["status"] != "disabled" || ep["disabled_reason"] != "the receiver answered 410 Gone" {
		t.Errorf("after 410 the endpoint is %v", ep)
	}
	time.Sleep(200 * time.Millisecond)
	if n := len(recv.requests()); n != 1 {
		t.Errorf("the receiver got %d webhooks after answering 410, want 1", n)
	}
}

// TestWebhookEndpointsStayInTheirStore: a store's endpoints are not listed for another store,
// and an event of another store cannot be redelivered to an endpoint (not found, like an
// unknown event).
func TestWebhookEndpointsStayInTheirStore(t *testing.T) {
	t.Parallel()
	d := newCLIDB(t)
	other := d.json(t, "store", "create", "--name", "Other", "--currency", "EUR")["id"].(string)
	we := d.json(t, "webhook", "create", "--store", d.store, "--url", "https://hooks.example.com/a")["id"].(string)
	d.json(t, "company", "create", "--store", other, "--name", "Theirs", "--platform-company-gid", "gid://platform/Company/2",
		"--payment-terms", "NET_30", "--credit-limit", "10.00")
	evs := feedEvents(t, d.path)
	if len(evs) == 0 || evs[len(evs)-1].StoreID != other {
		t.Fatalf("events %v", evs)
	}
	theirs := evs[len(evs)-1].ID
	if got := d.run(t, "webhook", "redeliver", theirs, "--endpoint", we).wantOneLine(t, exitBadInput); !strings.Contains(got, "no such event") {
		t.Errorf("redelivering another store's event: %s", got)
	}
	if list := d.json(t, "webhook", "list", "--store", other)["data"].([]any); len(list) != 0 {
		t.Errorf("the other store lists %v", list)
	}
}
