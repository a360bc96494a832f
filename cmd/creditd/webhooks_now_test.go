package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/creditd/creditd/webhook"
)

// TestWebhookOfAnAdjustmentNamesItsCompanyAndIsTheFeedsBody: an adjustment made through the
// API reaches a real receiver as ledger_entry.created naming the company written to, and the
// delivered body is byte for byte GET /v1/events/{id}'s, so a signature verifies over either.
func TestWebhookOfAnAdjustmentNamesItsCompanyAndIsTheFeedsBody(t *testing.T) {
	t.Parallel()
	ws := startWebhookServe(t)
	recv := newHookReceiver(t, nil)
	_, secret := ws.endpoint(t, recv.URL(), "--events", "ledger_entry.created")
	ws.company(t, "Other GmbH")
	co := ws.company(t, "Kessler KG")
	key := ws.cli(t, "key", "create", "--store", ws.store, "--label", "ERP", "--scopes", "read_credit,write_credit")["secret"].(string)

	req, _ := http.NewRequest("POST", ws.base+"/v1/companies/"+co+"/adjustments", strings.NewReader(`{"amount":"-12.50","note":"goodwill <&> credit"}`))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	created, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 201 {
		t.Fatalf("adjustment: %d %s", resp.StatusCode, created)
	}

	hook := recv.waitFor(t, 1)[0]
	var ev struct {
		Type string
		Data struct {
			Object struct {
				ID        string `json:"id"`
				CompanyID string `json:"company_id"`
				Note      string `json:"note"`
			}
		}
	}
	if err := json.Unmarshal(hook.Body, &ev); err != nil {
		t.Fatal(err)
	}
	if ev.Type != "ledger_entry.created" || ev.Data.Object.CompanyID != co || ev.Data.Object.Note != "goodwill <&> credit" {
		t.Errorf("the webhook names company %q (want %s): %s", ev.Data.Object.CompanyID, co, hook.Body)
	}
	if !bytes.Contains(created, []byte(`"company_id":"`+co+`"`)) {
		t.Errorf("the adjustment's answer does not name its company: %s", created)
	}

	feed := httpGet(t, ws.base+"/v1/events/"+hook.ID(), key, 200)
	if !bytes.Equal(hook.Body, feed) {
		t.Errorf("the delivered body is not GET /v1/events/%s's:\nwebhook %q\nGET     %q", hook.ID(), hook.Body, feed)
	}
	if err := webhook.Verify(secret, hook.Header, feed, 5*time.Minute, ws.clock.Now()); err != nil {
		t.Errorf("the signature does not verify over the GET body: %v", err)
	}
	var list struct{ Data []json.RawMessage }
	if err := json.Unmarshal(httpGet(t, ws.base+"/v1/events?type=ledger_entry.created", key, 200), &list); err != nil || len(list.Data) != 1 {
		t.Fatalf("feed: %v %v", list, err)
	}
	if !bytes.Contains(list.Data[0], []byte(`"company_id":"`+co+`"`)) {
		t.Errorf("the feed's event does not name %s: %s", co, list.Data[0])
	}
}

// TestWebhookTestSendsASignedPingNow: `webhook test WE` posts a ping at once, with no serve
// running, signed like every delivery; its attempt is in `webhook deliveries`; a failing
// receiver neither gets a retry nor marks the endpoint failing; the ping is not in the feed.
func TestWebhookTestSendsASignedPingNow(t *testing.T) {
	t.Parallel()
	d := newCLIDB(t)
	answer := http.StatusNoContent
	recv := newHookReceiver(t, func(n int, r *http.Request) int { return answer })
	ep := d.json(t, "webhook", "create", "--store", d.store, "--url", recv.URL(), "--allow-private-webhooks", "--description", "ERP sync")
	we, secret := ep["id"].(string), ep["secret"].(string)
	if human := d.run(t, "webhook", "list", "--store", d.store).mustSucceed(t).stdout; !strings.Contains(human, "ERP sync") {
		t.Errorf("webhook list does not show the description:\n%s", human)
	}

	a := d.json(t, "webhook", "test", we, "--allow-private-webhooks")
	got := recv.requests()
	if len(got) != 1 {
		t.Fatalf("the receiver got %d requests when the command returned, want the ping", len(got))
	}
	ping := got[0]
	if err := webhook.Verify(secret, ping.Header, ping.Body, 5*time.Minute, cliStart); err != nil {
		t.Errorf("the ping's signature: %v", err)
	}
	var body map[string]any
	if err := json.Unmarshal(ping.Body, &body); err != nil {
		t.Fatal(err)
	}
	mustKeys(t, "ping", body, "id", "type", "occurred_at", "data")
	if body["type"] != "ping" || body["id"] != ping.ID() || !strings.HasPrefix(ping.ID(), "ev_") ||
		body["data"].(map[string]any)["object"].(map[string]any)["endpoint_id"] != we {
		t.Errorf("ping body %s (webhook-id %s)", ping.Body, ping.ID())
	}
	if a["event_id"] != ping.ID() || a["outcome"] != "success" || a["status_code"] != float64(204) || a["next_attempt_at"] != nil {
		t.Errorf("webhook test printed %v", a)
	}
	report := d.json(t, "webhook", "deliveries", we)
	if attempts := report["attempts"].([]any); len(attempts) != 1 || attempts[0].(map[string]any)["event_id"] != ping.ID() {
		t.Errorf("webhook deliveries: %v", report)
	}
	for _, ev := range feedEvents(t, d.path) {
		if ev.ID == ping.ID() || ev.Type == "ping" {
			t.Errorf("the ping is in the feed: %v", ev)
		}
	}

	// A failing receiver: the attempt says so, no retry is scheduled, the endpoint stays as it was.
	answer = http.StatusServiceUnavailable
	failed := d.json(t, "webhook", "test", we, "--allow-private-webhooks")
	if failed["outcome"] != "http_503" || failed["next_attempt_at"] != nil {
		t.Errorf("failed ping: %v", failed)
	}
	report = d.json(t, "webhook", "deliveries", we)
	if pending := report["pending"].([]any); len(pending) != 0 || len(report["attempts"].([]any)) != 2 {
		t.Errorf("after a failed ping: %v", report)
	}
	if e := report["endpoint"].(map[string]any); e["failing_since"] != nil || e["status"] != "enabled" {
		t.Errorf("a failed ping changed the endpoint: %v", e)
	}
}

// TestWebhookRedeliverGoesNow: with no serve running, `webhook redeliver` makes the attempt
// before it returns: a receiver that failed gets the event again at once once it is fixed,
// not at the retry minutes later, and the events behind it stay behind it.
func TestWebhookRedeliverGoesNow(t *testing.T) {
	t.Parallel()
	d := newCLIDB(t)
	recv := newHookReceiver(t, func(n int, r *http.Request) int {
		if n == 1 {
			return http.StatusServiceUnavailable
		}
		return http.StatusOK
	})
	we := d.json(t, "webhook", "create", "--store", d.store, "--url", recv.URL(), "--allow-private-webhooks")["id"].(string)
	co := d.json(t, "company", "create", "--store", d.store, "--name", "Kessler KG", "--platform-company-gid", "gid://platform/Company/7",
		"--payment-terms", "NET_30", "--credit-limit", "1000.00")["id"].(string)
	d.json(t, "ledger", "record", "--company", co, "--kind", "order_placed", "--amount", "10.00", "--order", "gid://platform/Order/9")
	evs := feedEvents(t, d.path)
	first, second := evs[len(evs)-2].ID, evs[len(evs)-1].ID

	failed := d.json(t, "webhook", "redeliver", first, "--endpoint", we, "--allow-private-webhooks")
	attempt, _ := failed["attempt"].(map[string]any)
	if attempt["outcome"] != "http_503" || attempt["next_attempt_at"] == nil || failed["status"] != "pending" {
		t.Errorf("redeliver to a failing receiver printed %v", failed)
	}
	if got := hookIDs(recv.requests()); !slices.Equal(got, []string{first}) {
		t.Fatalf("the receiver got %v when the command returned, want %s", got, first)
	}
	// The receiver is fixed; the retry is minutes away; redeliver sends it now.
	ok := d.json(t, "webhook", "redeliver", first, "--endpoint", we, "--allow-private-webhooks")
	if attempt, _ := ok["attempt"].(map[string]any); attempt["outcome"] != "success" || ok["status"] != "succeeded" {
		t.Errorf("redeliver printed %v", ok)
	}
	if got := hookIDs(recv.requests()); !slices.Equal(got[:2], []string{first, first}) || slices.Contains(got[:2], second) {
		t.Errorf("the receiver got %v, want %s twice before anything else", got, first)
	}
	human := d.run(t, "webhook", "redeliver", first, "--endpoint", we, "--allow-private-webhooks").mustSucceed(t).stdout
	if !strings.Contains(human, first+" attempt 1: success") {
		t.Errorf("redeliver says %q", human)
	}
}
