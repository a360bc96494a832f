package main

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creditd/creditd/credittest"
	"github.com/creditd/creditd/database"
	"github.com/creditd/creditd/ids"
)

// feedIDs reads every event of a database in feed order.
func feedIDs(t *testing.T, dsn string) []string {
	t.Helper()
	var out []string
	for _, e := range feedEvents(t, dsn) {
		out = append(out, e.ID)
	}
	return out
}

// firstSuccesses lists the ids a receiver answered 2xx, each at its first success, in order.
func firstSuccesses(reqs []hookRequest) []string {
	var out []string
	for _, r := range reqs {
		if r.Status >= 200 && r.Status < 300 && !slices.Contains(out, r.ID()) {
			out = append(out, r.ID())
		}
	}
	return out
}

// TestWebhookDeliverySurvivesSIGKILL kills `creditd serve` while a receiver holds a delivery
// open: nothing was recorded, so the restarted server sends the same event again (same
// webhook-id) before the events behind it, and every event arrives. A SIGTERM while a
// delivery hangs stops serve promptly.
func TestWebhookDeliverySurvivesSIGKILL(t *testing.T) {
	credittest.RequireSQLite(t)
	bin, err := instancesBinary()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	db := filepath.Join(dir, "kill.db")
	runCLI(t, bin, "migrate", "--db", db)
	st := runCLI(t, bin, "store", "create", "--db", db, "--name", "Kill", "--currency", "EUR")["id"].(string)

	// The receiver holds the next request open while hang is set, until it is closed or the
	// connection ends.
	var mu sync.Mutex
	release := make(chan struct{})
	hang := release
	stuck := make(chan string, 10)
	recv := newHookReceiver(t, func(n int, r *http.Request) int {
		mu.Lock()
		h := hang
		hang = nil
		mu.Unlock()
		if h != nil {
			stuck <- r.Header.Get("webhook-id")
			select {
			case <-h:
			case <-r.Context().Done():
			}
		}
		return http.StatusOK
	})
	we := runCLI(t, bin, "webhook", "create", "--db", db, "--store", st, "--url", recv.URL(), "--allow-private-webhooks")["id"].(string)
	for i := range 3 {
		runCLI(t, bin, "company", "create", "--db", db, "--store", st, "--name", fmt.Sprintf("Buyer %d", i),
			"--platform-company-gid", fmt.Sprintf("gid://platform/Company/%d", i+1), "--payment-terms", "NET_30", "--credit-limit", "10.00")
	}
	serveArgs := []string{"serve", "--db", db, "--addr", "127.0.0.1:0", "--allow-private-webhooks", "--webhook-poll-interval", "50ms"}

	p := startCreditd(t, bin, dir, serveArgs...)
	p.waitForListening(t)
	var first string
	select {
	case first = <-stuck:
	case <-time.After(20 * time.Second):
		t.Fatal("no delivery started")
	}
	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	lines := p.lines
	go func() {
		for range lines {
		}
	}()
	_ = p.cmd.Wait()
	close(release)
	if attempts := runCLI(t, bin, "webhook", "deliveries", "--db", db, we)["attempts"].([]any); len(attempts) != 0 {
		t.Fatalf("the killed delivery was recorded: %v", attempts)
	}
	// More events while serve is down.
	runCLI(t, bin, "company", "create", "--db", db, "--store", st, "--name", "While Down",
		"--platform-company-gid", "gid://platform/Company/4", "--payment-terms", "NET_30", "--credit-limit", "10.00")
	feed := feedIDs(t, db)
	if first != feed[0] {
		t.Fatalf("the first delivery was %s, want the first event %s", first, feed[0])
	}

	p = startCreditd(t, bin, dir, serveArgs...)
	p.waitForListening(t)
	got := recv.waitFor(t, len(feed)+1)
	if ids := hookIDs(got); ids[0] != first || ids[1] != first {
		t.Errorf("after the restart the receiver got %v, want %s again first", ids, first)
	}
	if s := firstSuccesses(got); !slices.Equal(s, feed) {
		t.Errorf("successful deliveries %v, want every event in order %v", s, feed)
	}
	// The receiver hangs from now on (the channel is never closed: the delivery hangs until
	// serve stops); set before the redelivery exists, so the worker cannot deliver it first.
	mu.Lock()
	hang = make(chan struct{})
	mu.Unlock()
	runCLI(t, bin, "webhook", "redeliver", "--db", db, feed[1], "--endpoint", we)
	select {
	case <-stuck:
	case <-time.After(20 * time.Second):
		t.Fatal("the redelivery did not start")
	}
	start := time.Now()
	p.stop(t)
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("serve took %s to stop with a delivery under way", d)
	}
}

// TestTwoInstancesDeliverEachEventOnce runs two `creditd serve` processes on one PostgreSQL
// database with two endpoints while events are written: each endpoint gets every event once,
// in feed order, although both instances work on both endpoints.
func TestTwoInstancesDeliverEachEventOnce(t *testing.T) {
	pgURL := credittest.PostgresURL(t)
	bin, err := instancesBinary()
	if err != nil {
		t.Fatal(err)
	}
	dsn, drop, err := database.ScratchSchema(context.Background(), pgURL, "hooks_"+strings.ToLower(ids.Random(10)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(drop)
	t.Setenv(webhookKeyEnv, "Hkm2Zr6ZQYuGxZf0m4nHzVQ5dqGd6oWjSx2g4f0n0Lw=") // both instances and the CLI share the master key
	runCLI(t, bin, "migrate", "--db", dsn)
	st := runCLI(t, bin, "store", "create", "--db", dsn, "--name", "Two", "--currency", "EUR")["id"].(string)
	key := runCLI(t, bin, "key", "create", "--db", dsn, "--store", st, "--label", "ERP", "--scopes", "read_credit,write_credit")["secret"].(string)
	co := runCLI(t, bin, "company", "create", "--db", dsn, "--store", st, "--name", "Buyer",
		"--platform-company-gid", "gid://platform/Company/1", "--payment-terms", "NET_30", "--credit-limit", "100000.00")["id"].(string)
	a, b := newHookReceiver(t, nil), newHookReceiver(t, nil)
	runCLI(t, bin, "webhook", "create", "--db", dsn, "--store", st, "--url", a.URL(), "--allow-private-webhooks")
	runCLI(t, bin, "webhook", "create", "--db", dsn, "--store", st, "--url", b.URL(), "--allow-private-webhooks", "--events", "ledger_entry.created")

	args := []string{"--db", dsn, "--allow-private-webhooks", "--webhook-poll-interval", "10ms"}
	bases := []string{serveProcess(t, bin, args...), serveProcess(t, bin, args...)}
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 10 {
				body := `{"amount":"1.00","currency":"EUR","note":"n"}`
				status, _ := send(t, "POST", bases[(w+i)%2]+"/v1/companies/"+co+"/adjustments", key, body,
					map[string]string{"Idempotency-Key": fmt.Sprintf("w%d-%d", w, i)})
				if status != 201 {
					t.Errorf("adjustment: %d", status)
				}
			}
		}()
	}
	wg.Wait()
	feed := feedIDs(t, dsn)
	if len(feed) < 40 {
		t.Fatalf("%d events", len(feed))
	}
	// Nothing but the 40 adjustments was written after the endpoints were created.
	a.waitFor(t, 40)
	time.Sleep(300 * time.Millisecond)
	if ids := hookIDs(a.requests()); len(ids) != 40 || !slices.Equal(ids, feed[len(feed)-40:]) {
		t.Errorf("endpoint A got %d webhooks %v\nwant the 40 adjustments once each, in order %v", len(ids), ids, feed[len(feed)-40:])
	}
	b.waitFor(t, 40)
	if ids := hookIDs(b.requests()); len(ids) != 40 || !slices.Equal(ids, feed[len(feed)-40:]) {
		t.Errorf("endpoint B got %d webhooks, want the 40 adjustments once each, in order", len(ids))
	}
}
