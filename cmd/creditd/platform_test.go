package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// platformSecret is the shop's app secret in these tests.
const platformSecret = "shpss_e2e_0123456789abcdef0123456789"

// platformCLI runs one creditd command in-process at the clock's time with stdin, against
// ls's database, and decodes its --json.
func (ls *liveServer) platformCLI(t *testing.T, stdin string, args ...string) map[string]any {
	t.Helper()
	var out, errOut bytes.Buffer
	m := NewMain(strings.NewReader(stdin), &out, &errOut)
	m.Now = ls.clock.Now
	defer m.Close()
	if code := m.Run(context.Background(), append(args, "--db", ls.db, "--json")); code != 0 {
		t.Fatalf("creditd %s: exit %d: %s", strings.Join(args, " "), code, errOut.String())
	}
	var v map[string]any
	if err := json.Unmarshal(out.Bytes(), &v); err != nil {
		t.Fatalf("creditd %s printed %q: %v", strings.Join(args, " "), out.String(), err)
	}
	return v
}

// platformSend writes body to a file and posts it with `creditd platform send`, as an operator
// trying the connector would, and returns the inbox row the server answered.
func (ls *liveServer) platformSend(t *testing.T, store, topic, body string, extra ...string) map[string]any {
	t.Helper()
	path := filepath.Join(t.TempDir(), "body.json")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return ls.platformCLI(t, "", append([]string{"platform", "send", "--store", store, "--topic", topic, "--file", path, "--url", ls.base}, extra...)...)
}

// companyJSON reads a company through the API.
func (ls *liveServer) companyJSON(t *testing.T, secret, id string) map[string]any {
	t.Helper()
	var c map[string]any
	if err := json.Unmarshal(httpGet(t, ls.base+"/v1/companies/"+id, secret, 200), &c); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestPlatformLoopEndToEnd is the whole loop through real HTTP only: the platform sends an
// order on NET_14 (signed by `creditd platform send`), the ERP's webhook receiver gets
// ledger_entry.created; the clock passes the due date and the sweep places the overdue hold
// (company.hold_placed delivered); the platform sends the payment and the hold is lifted
// (company.hold_lifted delivered); the API shows the balances at each step.
func TestPlatformLoopEndToEnd(t *testing.T) {
	t.Parallel()
	ws := startWebhookServe(t, "--sweep-interval", "20ms")
	erp := newHookReceiver(t, nil)
	ws.endpoint(t, erp.URL(), "--events", "ledger_entry.created,company.hold_placed,company.hold_lifted")
	co := ws.company(t, "Kessler KG") // gid://platform/Company/7, NET_30, limit 1000.00
	key := ws.cli(t, "key", "create", "--store", ws.store, "--label", "ERP", "--scopes", "read_credit")["secret"].(string)
	conn := ws.platformCLI(t, platformSecret+"\n", "platform", "connect", "--store", ws.store, "--shop-domain", "kessler.myplatform.com", "--secret-stdin")
	mustKeys(t, "platform connect", conn, "id", "store_id", "shop_domain", "previous_secret_expires_at", "created_at", "updated_at")

	balances := func(step, outstanding, available, status string) {
		t.Helper()
		c := ws.companyJSON(t, key, co)
		if c["outstanding"].(map[string]any)["amount"] != outstanding || c["available_credit"].(map[string]any)["amount"] != available || c["status"] != status {
			t.Fatalf("%s: company %v, want outstanding %s, available %s, %s", step, c, outstanding, available, status)
		}
	}
	balances("before", "0.00", "950.00", "approved")

	created := ws.clock.Now().Format(time.RFC3339)
	d := ws.platformSend(t, ws.store, "orders/create", `{"id": "gid://platform/Order/9001", "company_id": "gid://platform/Company/7",
		"payment_terms": {"type": "NET", "due_in_days": 14}, "total": {"amount": "400.00", "currency": "EUR"}, "created_at": "`+created+`"}`)
	if d["status"] != "applied" {
		t.Fatalf("order delivery: %v", d)
	}
	got := erp.waitFor(t, 1)
	if got[0].Type() != "ledger_entry.created" || !bytes.Contains(got[0].Body, []byte("gid://platform/Order/9001")) {
		t.Fatalf("the ERP got %s %s", got[0].Type(), got[0].Body)
	}
	balances("after the order", "400.00", "550.00", "approved")

	// NET_14 from the order, not the company's NET_30: on day 15 the sweep places the hold.
	ws.clock.Advance(14*24*time.Hour + time.Minute)
	got = erp.waitFor(t, 2)
	if got[1].Type() != "company.hold_placed" || !bytes.Contains(got[1].Body, []byte(`"kind":"overdue"`)) {
		t.Fatalf("the ERP got %s %s", got[1].Type(), got[1].Body)
	}
	balances("overdue", "400.00", "550.00", "on_hold")

	d = ws.platformSend(t, ws.store, "payments/create", `{"id": "gid://platform/Payment/77", "order_id": "gid://platform/Order/9001",
		"company_id": "gid://platform/Company/7", "amount": {"amount": "400.00", "currency": "EUR"}, "processed_at": "`+ws.clock.Now().Format(time.RFC3339)+`"}`)
	if d["status"] != "applied" {
		t.Fatalf("payment delivery: %v", d)
	}
	got = erp.waitFor(t, 4)
	types := []string{got[2].Type(), got[3].Type()}
	if types[0] != "ledger_entry.created" || types[1] != "company.hold_lifted" {
		t.Fatalf("after the payment the ERP got %v", types)
	}
	balances("paid", "0.00", "950.00", "approved")

	// A retry of the payment (same webhook id) and the inbox: each delivery once.
	first := d["webhook_id"].(string)
	again := ws.platformSend(t, ws.store, "payments/create", `{"id": "gid://platform/Payment/77", "order_id": "gid://platform/Order/9001",
		"company_id": "gid://platform/Company/7", "amount": {"amount": "400.00", "currency": "EUR"}, "processed_at": "2026-05-18T08:00:00Z"}`, "--webhook-id", first)
	if again["id"] != d["id"] {
		t.Fatalf("a retry answered another row: %v", again)
	}
	inbox := ws.platformCLI(t, "", "platform", "inbox", "--store", ws.store)
	if rows := inbox["data"].([]any); len(rows) != 2 {
		t.Fatalf("inbox: %v", inbox)
	}
	balances("after the retry", "0.00", "950.00", "approved")
}
