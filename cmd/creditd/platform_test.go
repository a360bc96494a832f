package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creditd/creditd/credittest"
	"github.com/creditd/creditd/database"
	"github.com/creditd/creditd/ids"
	"github.com/creditd/creditd/webhook"
)

// platformSecret is the shop's app secret in these tests.
const platformSecret = "shpss_e2e_0123456789abcdef0123456789"

// platformSend writes body to a file and posts it with `creditd platform send`, as an operator
// trying the connector would, and returns the inbox row the server answered.
func (ls *liveServer) platformSend(t *testing.T, store, topic, body string, extra ...string) map[string]any {
	t.Helper()
	path := filepath.Join(t.TempDir(), "body.json")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return ls.cliWithStdin(t, "", append([]string{"platform", "send", "--store", store, "--topic", topic, "--file", path, "--url", ls.base}, extra...)...)
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
	conn := ws.cliWithStdin(t, platformSecret+"\n", "platform", "connect", "--store", ws.store, "--shop-domain", "kessler.myplatform.com", "--secret-stdin")
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
	inbox := ws.cliWithStdin(t, "", "platform", "inbox", "--store", ws.store)
	if rows := inbox["data"].([]any); len(rows) != 2 {
		t.Fatalf("inbox: %v", inbox)
	}
	balances("after the retry", "0.00", "950.00", "approved")

	// A delivery for a company creditd does not know yet fails; `platform retry` applies it
	// once the company exists, and refuses a second retry.
	failed := ws.platformSend(t, ws.store, "orders/create", `{"id": "gid://platform/Order/9002", "company_id": "gid://platform/Company/8",
		"payment_terms": {"type": "NET", "due_in_days": 30}, "total": {"amount": "10.00", "currency": "EUR"}, "created_at": "`+created+`"}`)
	if failed["status"] != "failed" || failed["reason"] != "unknown_company" {
		t.Fatalf("order for an unknown company: %v", failed)
	}
	if rows := ws.cli(t, "platform", "inbox", "--store", ws.store, "--status", "failed")["data"].([]any); len(rows) != 1 {
		t.Fatalf("failed inbox: %v", rows)
	}
	late := ws.company(t, "Late KG") // gid://platform/Company/8
	if d := ws.cli(t, "platform", "retry", failed["id"].(string)); d["status"] != "applied" || d["company_id"] != late {
		t.Fatalf("platform retry: %v", d)
	}
	if r := ws.run(t, "platform", "retry", failed["id"].(string)); r.code != exitBadInput {
		t.Fatalf("a second retry: exit %d %s", r.code, r.stderr)
	}
	if c := ws.companyJSON(t, key, late); c["outstanding"].(map[string]any)["amount"] != "10.00" {
		t.Fatalf("the retried order: %v", c)
	}
}

// platformEvent is one event of the platform's, as the convergence test sends it.
type platformEvent struct {
	topic, webhookID, body string
}

// platformHistory makes the 200 events of 20 companies: 4 orders each, on the platform's
// terms, of which some are paid in two payments, some partly paid and refunded, some
// cancelled (with nothing paid, so what the cancellation reverses does not depend on arrival
// order) and some left open with a small payment; every company's first order is 40 days old
// on NET_14, so companies whose first order stays open end on an overdue hold.
func platformHistory(now time.Time) []platformEvent {
	var evs []platformEvent
	add := func(topic, body string) {
		evs = append(evs, platformEvent{topic: topic, webhookID: fmt.Sprintf("wh-%03d", len(evs)), body: body})
	}
	money := func(cents int) string {
		return fmt.Sprintf(`{"amount": "%d.%02d", "currency": "EUR"}`, cents/100, cents%100)
	}
	payment, refund := 0, 0
	for c := 1; c <= 20; c++ {
		company := fmt.Sprintf("gid://platform/Company/%d", c)
		for k := 1; k <= 4; k++ {
			order := fmt.Sprintf("gid://platform/Order/%d", c*10+k)
			total := (100*(k+1) + c) * 100
			created, days := now.Add(-24*time.Hour), 30
			if k == 1 {
				created, days = now.Add(-40*24*time.Hour), 14
			}
			at := func(d time.Duration) string { return created.Add(d).Format(time.RFC3339) }
			add("orders/create", fmt.Sprintf(`{"id": %q, "company_id": %q, "payment_terms": {"type": "NET", "due_in_days": %d}, "total": %s, "created_at": %q}`,
				order, company, days, money(total), at(0)))
			pay := func(cents int, d time.Duration) {
				payment++
				add("payments/create", fmt.Sprintf(`{"id": "gid://platform/Payment/%d", "order_id": %q, "company_id": %q, "amount": %s, "processed_at": %q}`,
					payment, order, company, money(cents), at(d)))
			}
			switch (c + k) % 4 {
			case 0: // paid in full, in two payments
				pay(total*6/10, time.Hour)
				pay(total-total*6/10, 2*time.Hour)
			case 1: // partly paid, partly refunded
				pay(total*3/10, time.Hour)
				refund++
				add("refunds/create", fmt.Sprintf(`{"id": "gid://platform/Refund/%d", "order_id": %q, "company_id": %q, "amount": %s, "created_at": %q}`,
					refund, order, company, money(total/10), at(2*time.Hour)))
			case 2: // cancelled
				add("orders/cancelled", fmt.Sprintf(`{"id": %q, "company_id": %q, "cancelled_at": %q}`, order, company, at(3*time.Hour)))
			case 3: // open, a small payment on it
				pay(100, time.Hour)
			}
		}
	}
	return evs
}

// platformStore is a store connected to its shop with the 20 companies of platformHistory.
type platformStore struct {
	dsn, store, key string
}

func newPlatformStore(t *testing.T, clock *credittest.Clock, dsn string) platformStore {
	t.Helper()
	cli := func(stdin string, args ...string) map[string]any {
		t.Helper()
		var out, errOut bytes.Buffer
		m := NewMain(strings.NewReader(stdin), &out, &errOut)
		m.Now = clock.Now
		defer m.Close()
		if code := m.Run(context.Background(), append(args, "--db", dsn, "--json")); code != 0 {
			t.Fatalf("creditd %s: exit %d: %s", strings.Join(args, " "), code, errOut.String())
		}
		var v map[string]any
		if out.Len() > 0 {
			if err := json.Unmarshal(out.Bytes(), &v); err != nil {
				t.Fatalf("creditd %s printed %q", strings.Join(args, " "), out.String())
			}
		}
		return v
	}
	cli("", "migrate")
	ps := platformStore{dsn: dsn}
	ps.store = cli("", "store", "create", "--name", "Converge", "--currency", "EUR")["id"].(string)
	ps.key = cli("", "key", "create", "--store", ps.store, "--label", "ERP", "--scopes", "read_credit")["secret"].(string)
	for c := 1; c <= 20; c++ {
		cli("", "company", "create", "--store", ps.store, "--name", fmt.Sprintf("Buyer %d", c), "--platform-company-gid",
			fmt.Sprintf("gid://platform/Company/%d", c), "--payment-terms", "NET_30", "--credit-limit", "100000.00")
	}
	cli(platformSecret+"\n", "platform", "connect", "--store", ps.store, "--shop-domain", "converge.myplatform.com", "--secret-stdin")
	return ps
}

// postDelivery posts one event to base as the platform, signed with platformSecret.
func postDelivery(t *testing.T, base string, ev platformEvent, webhookID string, now time.Time) {
	t.Helper()
	status, body, err := postPlatform(context.Background(), base+"/platform/webhooks", PlatformRequest{
		ShopDomain: "converge.myplatform.com", Secret: platformSecret, Topic: ev.topic, WebhookID: webhookID, TriggeredAt: now, Body: []byte(ev.body),
	})
	if err != nil || status != 200 {
		t.Errorf("deliver %s: %d %s %v", webhookID, status, body, err)
	}
}

// platformOutcome is what the convergence test compares: per platform company GID, the
// company's figures and hold, and its ledger as a sorted list (arrival order differs).
type platformOutcome map[string]string

func readPlatformOutcome(t *testing.T, base string, ps platformStore) platformOutcome {
	t.Helper()
	out := platformOutcome{}
	var companies struct {
		Data []struct {
			ID          string            `json:"id"`
			GID         string            `json:"platform_company_gid"`
			Outstanding map[string]string `json:"outstanding"`
			Available   map[string]string `json:"available_credit"`
			Hold        *struct {
				Kind     string `json:"kind"`
				OrderGID string `json:"platform_order_gid"`
			} `json:"hold"`
		} `json:"data"`
	}
	if err := json.Unmarshal(httpGet(t, base+"/v1/companies?limit=250", ps.key, 200), &companies); err != nil {
		t.Fatal(err)
	}
	for _, c := range companies.Data {
		var ledger struct {
			Data []struct {
				Kind       string            `json:"kind"`
				Amount     map[string]string `json:"amount"`
				OrderGID   *string           `json:"platform_order_gid"`
				OccurredAt string            `json:"occurred_at"`
			} `json:"data"`
		}
		if err := json.Unmarshal(httpGet(t, base+"/v1/companies/"+c.ID+"/ledger?limit=250", ps.key, 200), &ledger); err != nil {
			t.Fatal(err)
		}
		var entries []string
		for _, e := range ledger.Data {
			entries = append(entries, fmt.Sprintf("%s %s %s %s", e.Kind, e.Amount["amount"], deref(e.OrderGID), e.OccurredAt))
		}
		slices.Sort(entries)
		hold := "none"
		if c.Hold != nil {
			hold = c.Hold.Kind + " " + c.Hold.OrderGID
		}
		out[c.GID] = fmt.Sprintf("outstanding %s available %s hold %s\n  %s", c.Outstanding["amount"], c.Available["amount"], hold, strings.Join(entries, "\n  "))
	}
	return out
}

// TestPlatformDeliveriesConverge: the 200 events of platformHistory, shuffled, 30% of them
// sent two or three times under the same or another webhook id, spread over two `serve`
// instances on one database, end in the same ledgers, balances and holds as the events sent
// once, in order, to one instance; and the inbox records each delivery once: 200 applied, one
// duplicate row per copy under another webhook id, nothing waiting or failed.
func TestPlatformDeliveriesConverge(t *testing.T) {
	t.Setenv("CREDITD_WEBHOOK_KEY", webhook.GenerateMasterKey()) // one master key, as PostgreSQL needs
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			clock := credittest.NewClock(time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC))
			dsn := func(name string) string {
				if backend == "sqlite" {
					return filepath.Join(t.TempDir(), name+".db")
				}
				dsn, drop, err := database.ScratchSchema(context.Background(), credittest.PostgresURL(t), "plat_"+strings.ToLower(ids.Random(10)))
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(drop)
				return dsn
			}
			history := platformHistory(clock.Now())
			if len(history) != 200 {
				t.Fatalf("%d events, want 200", len(history))
			}

			// The reference: each event once, in order, to one instance.
			ref := newPlatformStore(t, clock, dsn("reference"))
			refBase := startServe(t, clock, "--db", ref.dsn, "--addr", "127.0.0.1:0")
			for _, ev := range history {
				postDelivery(t, refBase, ev, ev.webhookID, clock.Now())
			}
			want := readPlatformOutcome(t, refBase, ref)

			// The platform's way: shuffled, repeated, two instances, concurrently.
			ps := newPlatformStore(t, clock, dsn("converge"))
			bases := []string{
				startServe(t, clock, "--db", ps.dsn, "--addr", "127.0.0.1:0"),
				startServe(t, clock, "--db", ps.dsn, "--addr", "127.0.0.1:0"),
			}
			rng := rand.New(rand.NewPCG(20, 11))
			type delivery struct {
				ev platformEvent
				id string
			}
			var sends []delivery
			otherIDs := 0
			for _, ev := range history {
				sends = append(sends, delivery{ev, ev.webhookID})
				if rng.IntN(10) < 3 {
					for copy := range 1 + rng.IntN(2) {
						id := ev.webhookID // a retry of the platform's
						if rng.IntN(2) == 0 {
							id = fmt.Sprintf("%s-again-%d", ev.webhookID, copy) // the same object, another webhook id
							otherIDs++
						}
						sends = append(sends, delivery{ev, id})
					}
				}
			}
			rng.Shuffle(len(sends), func(i, j int) { sends[i], sends[j] = sends[j], sends[i] })
			work := make(chan int)
			var wg sync.WaitGroup
			for w := range 6 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range work {
						postDelivery(t, bases[(i+w)%2], sends[i].ev, sends[i].id, clock.Now())
					}
				}()
			}
			for i := range sends {
				work <- i
			}
			close(work)
			wg.Wait()

			got := readPlatformOutcome(t, bases[0], ps)
			holds := 0
			for gid, w := range want {
				if got[gid] != w {
					t.Errorf("%s:\n got %s\nwant %s", gid, got[gid], w)
				}
				if !strings.Contains(w, "hold none") {
					holds++
				}
			}
			if len(got) != 20 || holds == 0 || holds == 20 {
				t.Fatalf("%d companies, %d on hold: the history should put some, not all, on hold", len(got), holds)
			}

			// The inbox: each delivery once.
			for status, n := range map[string]int{"applied": 200, "duplicate": otherIDs, "waiting": 0, "failed": 0, "ignored": 0} {
				var page struct {
					Data []struct {
						WebhookID string `json:"webhook_id"`
					} `json:"data"`
				}
				var out, errOut bytes.Buffer
				m := NewMain(nil, &out, &errOut)
				if code := m.Run(context.Background(), []string{"platform", "inbox", "--db", ps.dsn, "--store", ps.store, "--status", status, "--limit", "250", "--json"}); code != 0 {
					t.Fatalf("platform inbox: %s", errOut.String())
				}
				m.Close()
				if err := json.Unmarshal(out.Bytes(), &page); err != nil {
					t.Fatal(err)
				}
				seen := map[string]bool{}
				for _, d := range page.Data {
					if seen[d.WebhookID] {
						t.Errorf("webhook id %s twice in the inbox", d.WebhookID)
					}
					seen[d.WebhookID] = true
				}
				if len(page.Data) != n {
					t.Errorf("inbox %s: %d rows, want %d", status, len(page.Data), n)
				}
			}
		})
	}
}

// TestServeDemoPrintsAPlatformSendLine: `serve --demo` connects the demo store and prints a
// platform send line that, run as printed, puts an order on a demo company.
func TestServeDemoPrintsAPlatformSendLine(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "demo.db")
	ctx, cancel := context.WithCancel(context.Background())
	out := &credittest.LogBuffer{}
	m := NewMain(strings.NewReader(""), out, &credittest.LogBuffer{})
	ready := make(chan string, 1)
	m.Ready = func(addr string) { ready <- addr }
	done := make(chan int, 1)
	go func() { done <- m.Run(ctx, []string{"serve", "--demo", "--db", db, "--addr", "127.0.0.1:0"}) }()
	t.Cleanup(func() {
		cancel()
		<-done
		m.Close()
	})
	select {
	case <-ready:
	case <-time.After(60 * time.Second):
		t.Fatal("serve --demo did not start")
	}
	line := regexp.MustCompile(`(?m)^\s+echo '(.*)' \| .*? (platform send .*)$`).FindStringSubmatch(out.String())
	if line == nil {
		t.Fatalf("serve --demo printed no platform send line:\n%s", out.String())
	}
	var o, e bytes.Buffer
	send := NewMain(strings.NewReader(line[1]), &o, &e)
	defer send.Close()
	if code := send.Run(context.Background(), append(strings.Fields(line[2]), "--json")); code != 0 {
		t.Fatalf("the printed line: exit %d: %s", code, e.String())
	}
	var d map[string]any
	if err := json.Unmarshal(o.Bytes(), &d); err != nil || d["status"] != "applied" || d["ledger_entry_id"] == nil {
		t.Fatalf("the printed line's delivery: %s (%v)", o.String(), err)
	}
}
