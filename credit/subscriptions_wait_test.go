package credit_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
	"github.com/creditd/creditd/database"
)

// slowToStopWatcher is the database, whose feed watcher takes a while to return once told to
// stop, as one in the middle of a read would.
type slowToStopWatcher struct {
	*database.DB
	returned atomic.Bool
}

func (w *slowToStopWatcher) WatchFeed(ctx context.Context, poll time.Duration, changed func(stores []string, all bool)) error {
	err := w.DB.WatchFeed(ctx, poll, changed)
	time.Sleep(200 * time.Millisecond)
	w.returned.Store(true)
	return err
}

// TestWaitSubscriptionsWaitsForSubscribersAndTheWatcher: after EndSubscriptions, a shutdown's
// WaitSubscriptions returns only once every subscriber has closed its subscription and the
// feed watcher has returned (so nothing of the subscriptions outlives the database), or when
// its context ends first.
func TestWaitSubscriptionsWaitsForSubscribersAndTheWatcher(t *testing.T) {
	env := credittest.NewService(t)
	db := &slowToStopWatcher{DB: env.DB}
	svc := credit.New(db, credit.Options{Now: env.Clock.Now})
	store := env.MustStore(t, "Acme", "EUR")
	secret := env.MustKey(t, store, "dashboard", credit.ScopeReadCredit)
	ctx, err := svc.Keys.Authenticate(context.Background(), secret)
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Events.WaitSubscriptions(context.Background()); err != nil {
		t.Fatalf("with no subscription ever opened: %v", err)
	}
	sub, err := svc.Events.Subscribe(ctx, credit.EventSubscriptionParams{})
	if err != nil {
		t.Fatal(err)
	}

	svc.Events.EndSubscriptions()
	<-sub.Done()
	short, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := svc.Events.WaitSubscriptions(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("with a subscription still open: %v, want the context's deadline", err)
	}
	waited := make(chan error, 1)
	go func() { waited <- svc.Events.WaitSubscriptions(context.Background()) }()
	sub.Close()
	select {
	case err := <-waited:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("WaitSubscriptions did not return once the subscription closed")
	}
	if !db.returned.Load() {
		t.Fatal("WaitSubscriptions returned before the feed watcher did")
	}
}
