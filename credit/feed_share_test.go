package credit_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
)

// TestSubscribersShareFeedReads (issue 40): a store's subscribers on one instance share one
// read of the feed per wake-up, and each still receives exactly its own sequence: the events
// after its own position that its key's scopes and its types admit, in feed order, each once,
// as GET /v1/events?after= lists them. The subscribers differ in scopes (credit only; credit
// and applications), types, and positions (from now, replays from older events); writes of
// both kinds come one at a time, so each wakes the store.
func TestSubscribersShareFeedReads(t *testing.T) {
	env := credittest.NewService(t)
	store := env.MustStore(t, "Acme", "EUR")
	co := env.MustCompany(t, store, "Buyer", "100000.00")
	keys := map[string]context.Context{}
	for name, scopes := range map[string][]string{
		"credit": {credit.ScopeReadCredit},
		"all":    {credit.ScopeReadCredit, credit.ScopeReadApplications},
	} {
		ctx, err := env.Service.Keys.Authenticate(context.Background(), env.MustKey(t, store, name, scopes...))
		if err != nil {
			t.Fatal(err)
		}
		keys[name] = ctx
	}
	writer := credittest.Staff(store)
	write := func(i int) {
		if i%3 == 2 {
			env.MustApplication(t, store, credit.ApplicationInput{BusinessName: fmt.Sprintf("Applicant %d", i)})
			return
		}
		note := fmt.Sprintf("w%d", i)
		if _, err := env.Service.Ledger.CreateAdjustment(writer, credit.AdjustmentInput{CompanyID: co.ID, Amount: credit.Amount("1.00"), Note: &note}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 6 {
		write(i)
	}
	early := listEvents(t, env, keys["all"], credit.EventListParams{})
	// The last event each key can read before anyone subscribes: "from now" starts after it.
	last := map[string]string{}
	for name, ctx := range keys {
		ids := listEvents(t, env, ctx, credit.EventListParams{})
		last[name] = ids[len(ids)-1]
	}

	type subscriber struct {
		key    string
		params credit.EventSubscriptionParams
		got    []string
	}
	var subs []*subscriber
	for range 4 {
		subs = append(subs,
			&subscriber{key: "credit"},
			&subscriber{key: "all"},
			&subscriber{key: "all", params: credit.EventSubscriptionParams{Types: []string{string(credit.EventTypeApplicationCreated)}}},
			&subscriber{key: "credit", params: credit.EventSubscriptionParams{After: early[0]}},
			&subscriber{key: "all", params: credit.EventSubscriptionParams{After: early[2], Types: []string{string(credit.EventTypeLedgerEntryCreated)}}},
		)
	}
	before := env.Service.Events.SubscriptionStats().FeedReads
	done := make(chan struct{})
	var wg sync.WaitGroup
	for _, s := range subs {
		sub, err := env.Service.Events.Subscribe(keys[s.key], s.params)
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer sub.Close()
			for {
				events, more, err := sub.Next(keys[s.key])
				if err != nil {
					t.Error(err)
					return
				}
				for _, e := range events {
					s.got = append(s.got, e.ID)
				}
				if more {
					continue
				}
				select {
				case <-sub.Wake():
				case <-done:
					// One last read: whatever the last wake-up announced.
					events, _, err := sub.Next(keys[s.key])
					if err != nil {
						t.Error(err)
					}
					for _, e := range events {
						s.got = append(s.got, e.ID)
					}
					return
				}
			}
		}()
	}
	const writes = 30
	for i := 6; i < 6+writes; i++ {
		write(i)
		time.Sleep(20 * time.Millisecond) // each write its own wake-up
	}
	time.Sleep(500 * time.Millisecond)
	close(done)
	wg.Wait()
	reads := env.Service.Events.SubscriptionStats().FeedReads - before

	for i, s := range subs {
		p := credit.EventListParams{After: s.params.After, Types: s.params.Types}
		if p.After == "" {
			p.After = last[s.key] // from now: after the last event before it subscribed
		}
		want := listEvents(t, env, keys[s.key], p)
		if !slices.Equal(s.got, want) {
			t.Errorf("subscriber %d (%s key, after %q, types %v) received %d events, want %d:\ngot  %v\nwant %v", i, s.key, s.params.After, s.params.Types, len(s.got), len(want), s.got, want)
		}
	}
	// Reading alone, each subscriber would read at each wake-up: len(subs) × writes at least.
	t.Logf("%d subscribers, %d writes: %d reads of the feed", len(subs), writes, reads)
	if limit := int64(2*writes + 2*len(subs)); reads > limit {
		t.Errorf("%d reads of the feed for %d subscribers and %d writes, want at most %d: the subscribers do not share them", reads, len(subs), writes, limit)
	}
}

// listEvents lists every event GET /v1/events returns for the key of ctx, through every page.
func listEvents(t *testing.T, env *credittest.ServiceEnv, ctx context.Context, p credit.EventListParams) []string {
	t.Helper()
	var ids []string
	for {
		page, err := env.Service.Events.List(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range page.Data {
			ids = append(ids, e.ID)
		}
		if len(page.Data) == 0 || !page.HasMore {
			return ids
		}
		p.After = ids[len(ids)-1]
	}
}
