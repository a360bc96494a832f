package delivery_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
	"github.com/creditd/creditd/database"
	"github.com/creditd/creditd/delivery"
	"github.com/creditd/creditd/webhook"
)

// TestTryLockOnSQLite: on SQLite, TryLock excludes another handle of the same file (as another
// process would be), per name, until released.
func TestTryLockOnSQLite(t *testing.T) {
	credittest.RequireSQLite(t)
	env := credittest.New(t)
	other, err := database.Open(context.Background(), env.DBPath)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	ctx := context.Background()
	release, ok, err := env.DB.TryLock(ctx, "webhook endpoint we_1")
	if err != nil || !ok {
		t.Fatalf("first lock: %v %v", ok, err)
	}
	if _, ok, err := other.TryLock(ctx, "webhook endpoint we_1"); err != nil || ok {
		t.Fatalf("a second holder of a held lock: ok %v, err %v", ok, err)
	}
	releaseOther, ok, err := other.TryLock(ctx, "webhook endpoint we_2")
	if err != nil || !ok {
		t.Fatalf("another name: %v %v", ok, err)
	}
	releaseOther()
	release()
	releaseOther, ok, err = other.TryLock(ctx, "webhook endpoint we_1")
	if err != nil || !ok {
		t.Fatalf("after release: %v %v", ok, err)
	}
	releaseOther()
}

// TestTwoWorkersOnOneSQLiteFileDeliverOnce runs two webhook workers, each on its own handle of
// one SQLite file as two overlapping serve processes would, against a slow receiver: each
// event reaches the endpoint exactly once (without the lock, both workers sent the same
// deliveries).
func TestTwoWorkersOnOneSQLiteFileDeliverOnce(t *testing.T) {
	credittest.RequireSQLite(t)
	var mu sync.Mutex
	received := map[string]int{}
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(20 * time.Millisecond)
		mu.Lock()
		received[r.Header.Get("webhook-id")]++
		mu.Unlock()
	}))
	defer recv.Close()
	sealer := credittest.NewSealer(t)
	opts := func(o *credit.Options) {
		o.WebhookSealer = func() (*webhook.Sealer, error) { return sealer, nil }
		o.AllowPrivateWebhooks = true
	}
	env := credittest.New(t, credittest.Options{ServiceOptions: opts})
	st := env.MustStore(t, "Two", "EUR")
	if _, err := env.Service.Webhooks.CreateEndpoint(credittest.Staff(st), credit.WebhookEndpointInput{URL: recv.URL + "/hooks"}); err != nil {
		t.Fatal(err)
	}
	const companies = 15
	for i := range companies {
		env.MustCompany(t, st, "Buyer "+string(rune('A'+i)), "100.00")
	}

	db2, err := database.Open(context.Background(), env.DBPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	o2 := credit.Options{Now: env.Clock.Now}
	opts(&o2)
	svc2 := credit.New(db2, o2)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for _, w := range []delivery.Config{
		{Queue: env.Service.WebhookQueue, Lock: env.DB.TryLock},
		{Queue: svc2.WebhookQueue, Lock: db2.TryLock},
	} {
		w.Client = webhook.NewClient(webhook.Options{AllowPrivate: true, Now: env.Clock.Now})
		w.PollInterval, w.Logger = 5*time.Millisecond, quiet
		worker := delivery.New(w)
		wg.Go(func() { worker.Run(ctx) })
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		mu.Lock()
		n := len(received)
		mu.Unlock()
		if n >= companies || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond) // a duplicate in flight would land now
	cancel()
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	if len(received) != companies {
		t.Fatalf("%d events received, want %d", len(received), companies)
	}
	for id, n := range received {
		if n != 1 {
			t.Errorf("event %s received %d times", id, n)
		}
	}
}
