package credit

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/creditd/creditd/ent"
	"github.com/creditd/creditd/ent/event"
	"github.com/creditd/creditd/ent/store"
	"github.com/creditd/creditd/ids"
	"github.com/creditd/creditd/tenant"
)

// Live subscriptions to the event feed (contract §16). The feed is the truth: a subscriber
// holds only its position (the seq of the last event it read) and, whenever it is woken, reads
// the feed after that position, exactly as GET /v1/events?after= does. Since a store's events
// are numbered in commit order without gaps (see events.go), reading "seq > position" never
// skips an event nor returns one twice, whichever process wrote it and whenever it committed;
// no event payload is ever passed from writer to subscriber in memory, so nothing a subscriber
// is sent can differ from the feed.
//
// One watcher per process (database.WatchFeed: PostgreSQL LISTEN/NOTIFY, or SQLite's
// data_version) wakes the subscribers of the stores whose feed moved, and every subscriber
// when a key changed; it runs while any subscription is open. A wake-up carries nothing but
// "read again", so a lost or duplicated one costs a read, never an event; each subscriber also
// reads again every subscriptionRecheck, whatever happened.

// MaxSubscriptionsPerStore is how many subscriptions a store may hold open on one instance
// (contract §16); the next is refused with rate_limited.
const MaxSubscriptionsPerStore = 50

// subscriptionPage is the most events a subscriber reads at once: what it holds in memory
// beside its transport's buffer.
const subscriptionPage = 100

// defaultSubscriptionRead bounds each read of a subscription (the feed, the key), rather than
// one deadline for a stream that may run for days, unless Options.DBTimeout says otherwise.
const defaultSubscriptionRead = 10 * time.Second

// subscriptionRecheck is how long a subscriber waits without a wake-up before it reads its feed
// and checks its key anyway: the bound on its latency should the watcher miss something.
const subscriptionRecheck = 5 * time.Second

// codeRateLimited is httpapi.CodeRateLimited (the domain does not import the transports).
const codeRateLimited Code = "rate_limited"

// authenticatedKey is the context key of the key Authenticate resolved.
type authenticatedKey struct{}

// streamKey is what a subscription needs to check its key again: the secret's hash, the key,
// the count of key changes the key was last confirmed under and the secret's expiry.
type streamKey struct {
	hash, keyID string
	changes     int64
	until       time.Time
}

// EventSubscriptionParams are the inputs of Events.Subscribe.
type EventSubscriptionParams struct {
	// After starts the subscription after this event of the store (replayed from the feed,
	// then live); empty starts it at the moment of subscribing. Errors about it name it
	// "after" (GraphQL renames it "afterEvent").
	After string
	// Types keeps only events of these types; empty means every type the key may read.
	// Errors name it "type" (GraphQL: "types").
	Types []string
	// Resume is the position the subscriber's connection carries (contract §16, amended
	// 2026-11-28): a WebSocket's connection_init afterEvent, an SSE request's Last-Event-ID.
	// Clients such as graphql-ws and graphql-sse reconnect by themselves and re-send the
	// subscription's original variables, so the subscription starts after the later of After
	// and Resume: a re-sent original After never replays what the connection already had, and
	// a re-sent "from now" (After empty) never skips what was committed while it was away.
	// Empty means none. It is checked as After is; errors about it name ResumeParam.
	Resume string
	// ResumeParam names Resume in errors: "afterEvent" (connection_init) or "Last-Event-ID".
	ResumeParam string
}

// EventSubscription is one subscriber's position in its store's feed. Its methods are called
// from one goroutine, the subscriber's.
type EventSubscription struct {
	s       *Events
	storeID string
	key     streamKey
	types   []string
	all     bool
	seq     int64

	shared  *storeFeed    // the store's window on this instance (feed_share.go)
	wake    chan struct{} // a pending wake-up; capacity 1
	done    chan struct{} // closed when the service ends its subscriptions
	endOnce sync.Once
}

// feedHub is the process's registry of subscriptions and its one feed watcher.
type feedHub struct {
	mu      sync.Mutex
	byStore map[string]map[*EventSubscription]struct{}
	shared  map[string]*storeFeed // each store's window, while it has subscribers
	open    int
	stop    context.CancelFunc // the watcher's, while it runs
	stopped chan struct{}      // closed once the watcher started last has returned
	idle    chan struct{}      // closed when open next drops to 0, while WaitSubscriptions waits

	sent   atomic.Int64
	reads  atomic.Int64 // reads of the feed by subscribers, shared or alone
	cutOff sync.Map     // reason -> *atomic.Int64
}

// feedWatcher is the part of Storage that wakes subscribers (*database.DB).
type feedWatcher interface {
	WatchFeed(ctx context.Context, poll time.Duration, changed func(stores []string, all bool)) error
}

// Subscribe opens a subscription to the feed of the viewer's store for an API key
// authenticated by Authenticate: the events its scopes allow (and types keeps), after After
// or from now. The caller reads with Next, checks the key with Confirm before each message,
// waits with Wake and Done, and must Close it.
//
// Errors: unauthenticated (no key from Authenticate), insufficient_scope, invalid_parameter
// (after, type), rate_limited (the store's MaxSubscriptionsPerStore are open here).
func (s *Events) Subscribe(ctx context.Context, p EventSubscriptionParams) (*EventSubscription, error) {
	key, ok := ctx.Value(authenticatedKey{}).(streamKey)
	v, _ := tenant.FromContext(ctx)
	if !ok || v.StoreID == "" || v.KeyID != key.keyID {
		return nil, errUnauthenticated
	}
	if err := s.CheckListParams(EventListParams{After: p.After, Types: p.Types}); err != nil {
		return nil, err
	}
	if err := s.CheckListParams(EventListParams{After: p.Resume}); err != nil {
		if CodeOf(err) == CodeInvalidParameter {
			err = s.errResume(p.ResumeParam)
		}
		return nil, err
	}
	types, all, err := eventFilter(ctx, p.Types)
	if err != nil {
		return nil, err
	}
	sub := &EventSubscription{s: s, storeID: v.StoreID, key: key, types: types, all: all,
		wake: make(chan struct{}, 1), done: make(chan struct{})}
	if err := s.feed.add(s.db, sub); err != nil {
		return nil, err
	}
	// Registered first, positioned second: an event that commits after the position was read
	// wakes this subscriber, so none falls between the replay and the live part.
	rctx, cancel := context.WithTimeout(ctx, s.subscriptionRead)
	defer cancel()
	if sub.seq, err = s.subscriptionStart(rctx, v.StoreID, p.After, p.Resume, p.ResumeParam); err != nil {
		sub.Close()
		return nil, err
	}
	return sub, nil
}

// errResume refuses a connection's position (Resume) as errEventAfter refuses after, naming the
// input the client sent it in.
func (s *Events) errResume(param string) error {
	return ParamErrorf(CodeInvalidParameter, param,
		"%s must be the ID of an event of this store you may read, not older than the retention (%s)", param, retentionText(s.eventRetention))
}

// subscriptionStart is the position a subscription starts after: the later of after's and
// resume's seqs, where given, or else the store's latest event.
//
// Errors: invalid_parameter naming after or resumeParam, for an event that is not of the
// store, not readable by the key, or purged.
func (s *Events) subscriptionStart(ctx context.Context, storeID, after, resume, resumeParam string) (int64, error) {
	if resume != "" {
		from, err := s.subscriptionStart(ctx, storeID, resume, "", "")
		if CodeOf(err) == CodeInvalidParameter {
			return 0, s.errResume(resumeParam)
		}
		if err != nil {
			return 0, err
		}
		if after == "" {
			return from, nil
		}
		seq, err := s.subscriptionStart(ctx, storeID, after, "", "")
		if err != nil {
			return 0, err
		}
		return max(seq, from), nil
	}
	if after == "" {
		st, err := s.db.Ent().Store.Query().Where(store.ID(storeID)).Select(store.FieldEventSeq).Only(tenant.System(ctx))
		if err != nil {
			return 0, err
		}
		return st.EventSeq, nil
	}
	readable, err := readableEventTypes(ctx)
	if err != nil {
		return 0, err
	}
	if !ids.HasPrefix(after, eventIDPrefix) {
		return 0, s.errEventAfter()
	}
	e, err := s.db.Ent().Event.Query().Where(event.ID(after), event.TypeIn(readable...)).Select(event.FieldSeq).Only(ctx)
	if ent.IsNotFound(err) {
		return 0, s.errEventAfter()
	}
	if err != nil {
		return 0, err
	}
	return e.Seq, nil
}

// Next reads the events after the subscription's position, up to a page, in feed order, and
// moves the position past them. more reports a full page: more may follow at once.
// ctx must carry the subscriber's viewer; each read of the database has its own deadline
// (a subscriber that takes from its store's shared read makes none).
//
// Errors: the database's (unavailable).
func (sub *EventSubscription) Next(ctx context.Context) (events []Event, more bool, err error) {
	if sub.shared != nil {
		if events, more, ok, err := sub.shared.next(ctx, sub); ok || err != nil {
			return events, more, err
		}
	}
	ctx, cancel := context.WithTimeout(ctx, sub.s.subscriptionRead)
	defer cancel()
	sub.s.feed.reads.Add(1)
	q := sub.s.db.Ent().Event.Query().Where(event.SeqGT(sub.seq))
	if !sub.all {
		q.Where(event.TypeIn(sub.types...))
	}
	rows, err := q.Order(ent.Asc(event.FieldSeq)).Limit(subscriptionPage).All(ctx)
	if err != nil {
		return nil, false, err
	}
	events = make([]Event, len(rows))
	for i, r := range rows {
		events[i] = EventOf(r)
	}
	if len(rows) > 0 {
		sub.seq = rows[len(rows)-1].Seq
	}
	return events, len(rows) == subscriptionPage, nil
}

// Confirm checks that the subscription's key still authenticates, by a read of the count of
// key changes that starts after Confirm was called (database.KeyChanges): a revocation, or the
// end of a rotated secret's grace, that returned before the call is seen, so a subscriber that
// confirms before each message sends none after it (contract §16). When the count moved, the
// key is checked in full, as Authenticate does.
//
// Errors: unauthenticated, the database's (unavailable).
func (sub *EventSubscription) Confirm(ctx context.Context) error {
	s := sub.s
	if !sub.key.until.IsZero() && !s.clock.Now().Before(sub.key.until) {
		return errUnauthenticated
	}
	// The count is read by a read shared with the callers that came at the same time (the
	// store's subscribers confirm together after each event), which bounds its own time.
	n, err := s.db.KeyChanges(tenant.System(ctx))
	if err != nil {
		return err
	}
	if n == sub.key.changes {
		return nil
	}
	ctx, cancel := context.WithTimeout(tenant.System(ctx), s.subscriptionRead)
	defer cancel()
	k, err := s.auth.authenticate(ctx, sub.key.hash)
	if err != nil {
		return err
	}
	if k.keyID != sub.key.keyID {
		return errUnauthenticated // a secret cannot move to another key
	}
	sub.key.changes, sub.key.until = k.changes, k.until
	return nil
}

// Position is the seq of the last event of the store's feed the subscription has read past
// (or starts after, before its first Next): every event Next returns comes after it.
func (sub *EventSubscription) Position() int64 { return sub.seq }

// Wake is ready when the feed of the subscription's store may have moved or a key changed.
func (sub *EventSubscription) Wake() <-chan struct{} { return sub.wake }

// Done is closed when the service ends every subscription (EndSubscriptions): the subscriber
// completes its stream, and its client resumes elsewhere with afterEvent.
func (sub *EventSubscription) Done() <-chan struct{} { return sub.done }

// Expires is when the subscription's secret stops working by itself (a rotated secret's grace
// end), or the zero time; the subscriber confirms its key then.
func (sub *EventSubscription) Expires() time.Time { return sub.key.until }

// Recheck is how long a subscriber may wait without a wake-up before it reads and confirms
// again.
func (sub *EventSubscription) Recheck() time.Duration { return subscriptionRecheck }

// Sent counts a message handed to the subscriber's transport.
func (sub *EventSubscription) Sent() { sub.s.feed.sent.Add(1) }

// Close ends the subscription; the next one of its store may open.
func (sub *EventSubscription) Close() { sub.s.feed.remove(sub) }

// EndSubscriptions ends every open subscription (their Done closes), for a shutdown.
func (s *Events) EndSubscriptions() { s.feed.end() }

// WaitSubscriptions returns once no subscription is open on this service and its feed watcher
// has stopped, or with ctx's error if ctx ends first. A shutdown calls it after
// EndSubscriptions: once it returns, every subscriber has closed its subscription (a
// transport's subscriber does so once its stream is completed), and nothing of the
// subscriptions uses the database any more.
//
// Errors: ctx's.
func (s *Events) WaitSubscriptions(ctx context.Context) error { return s.feed.wait(ctx) }

// NoteCutOff counts a subscriber cut off, by reason (slow_consumer, unauthenticated), for the
// metrics.
func (s *Events) NoteCutOff(reason string) {
	c, _ := s.feed.cutOff.LoadOrStore(reason, new(atomic.Int64))
	c.(*atomic.Int64).Add(1)
}

// SubscriptionStats are the figures /metrics shows about subscriptions.
type SubscriptionStats struct {
	Open int
	Sent int64
	// FeedReads counts the reads of the feed by subscribers: one per store and wake-up while
	// they keep up (the store's shared window), one per subscriber reading alone.
	FeedReads int64
	CutOff    map[string]int64
}

// SubscriptionStats returns this process's subscription figures.
func (s *Events) SubscriptionStats() SubscriptionStats {
	s.feed.mu.Lock()
	st := SubscriptionStats{Open: s.feed.open, Sent: s.feed.sent.Load(), FeedReads: s.feed.reads.Load(), CutOff: map[string]int64{}}
	s.feed.mu.Unlock()
	s.feed.cutOff.Range(func(k, v any) bool {
		st.CutOff[k.(string)] = v.(*atomic.Int64).Load()
		return true
	})
	return st
}

func (h *feedHub) add(db Storage, sub *EventSubscription) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.byStore == nil {
		h.byStore = map[string]map[*EventSubscription]struct{}{}
	}
	subs := h.byStore[sub.storeID]
	if len(subs) >= MaxSubscriptionsPerStore {
		return Errorf(codeRateLimited, "this store has %d subscriptions open on this instance, the most it may; end one first", MaxSubscriptionsPerStore)
	}
	if subs == nil {
		subs = map[*EventSubscription]struct{}{}
		h.byStore[sub.storeID] = subs
	}
	subs[sub] = struct{}{}
	if h.shared == nil {
		h.shared = map[string]*storeFeed{}
	}
	if h.shared[sub.storeID] == nil {
		h.shared[sub.storeID] = &storeFeed{}
	}
	sub.shared = h.shared[sub.storeID]
	h.open++
	if h.stop == nil {
		if w, ok := db.(feedWatcher); ok {
			ctx, cancel := context.WithCancel(context.Background())
			stopped := make(chan struct{})
			h.stop, h.stopped = cancel, stopped
			go func() {
				defer close(stopped)
				_ = w.WatchFeed(ctx, 0, h.changed)
			}()
		}
	}
	return nil
}

func (h *feedHub) remove(sub *EventSubscription) {
	h.mu.Lock()
	defer h.mu.Unlock()
	subs := h.byStore[sub.storeID]
	if _, ok := subs[sub]; !ok {
		return
	}
	delete(subs, sub)
	if len(subs) == 0 {
		delete(h.byStore, sub.storeID)
		delete(h.shared, sub.storeID)
	}
	h.open--
	if h.open == 0 && h.stop != nil {
		h.stop()
		h.stop = nil
	}
	if h.open == 0 && h.idle != nil {
		close(h.idle)
		h.idle = nil
	}
}

// wait returns once no subscription is open and the watcher has returned, or with ctx's error.
func (h *feedHub) wait(ctx context.Context) error {
	for {
		h.mu.Lock()
		if h.open == 0 {
			stopped := h.stopped
			h.mu.Unlock()
			if stopped == nil {
				return nil
			}
			select {
			case <-stopped:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		if h.idle == nil {
			h.idle = make(chan struct{})
		}
		idle := h.idle
		h.mu.Unlock()
		select {
		case <-idle: // a subscription may have opened since: look again
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// changed wakes the subscribers a change concerns. A subscriber already woken and not yet
// reading keeps its one pending wake-up.
func (h *feedHub) changed(stores []string, all bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	// The store's window learns of the change before its subscribers wake and read it.
	if all {
		for id, subs := range h.byStore {
			h.shared[id].gen.Add(1)
			wakeAll(subs)
		}
		return
	}
	for _, id := range stores {
		if f := h.shared[id]; f != nil {
			f.gen.Add(1)
		}
		wakeAll(h.byStore[id])
	}
}

func wakeAll(subs map[*EventSubscription]struct{}) {
	for sub := range subs {
		select {
		case sub.wake <- struct{}{}:
		default:
		}
	}
}

func (h *feedHub) end() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, subs := range h.byStore {
		for sub := range subs {
			sub.endOnce.Do(func() { close(sub.done) })
		}
	}
}
