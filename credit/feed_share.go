package credit

import (
	"context"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/creditd/creditd/ent"
	"github.com/creditd/creditd/ent/event"
)

// storeFeed is the read of one store's feed that the store's subscribers on this instance
// share (issue 40): at a wake-up the first subscriber that has caught up reads the events after
// the window's head, once, for all, and each takes from the window what its key's scopes and
// its types admit after its own position. The window is a run of the feed itself, every event
// of the store with base < seq <= head, read from the database; nothing is taken from a
// writer's memory. A subscriber behind the window (a replay from an old afterEvent, or one the
// window was trimmed past) reads on its own until it reaches it.
type storeFeed struct {
	// gen counts the wake-ups of the store (feedHub.changed): a window read before the last one
	// may be behind the feed.
	gen atomic.Uint64

	mu      sync.Mutex
	started bool
	events  []Event // base < seq <= head, in seq order
	base    int64
	head    int64
	readGen uint64    // gen when the last read began
	readAt  time.Time // when it began
	full    bool      // it filled a page: more may follow at once
	reading *feedRead // the read under way, if one is
}

// feedRead is a read of the window under way; err is set before done closes.
type feedRead struct {
	done chan struct{}
	err  error
}

// windowEvents is the most events a window keeps: a subscriber further behind reads alone.
const windowEvents = 4 * subscriptionPage

// next gives sub the events after its position from the window, reading the feed once for
// every subscriber of the store when the window may be behind it. ok is false when sub is
// behind the window and must read on its own.
func (f *storeFeed) next(ctx context.Context, sub *EventSubscription) (events []Event, more, ok bool, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.started {
		f.started, f.base, f.head = true, sub.seq, sub.seq
	}
	for read := false; ; {
		if sub.seq < f.base {
			return nil, false, false, nil
		}
		fresh := f.readGen == f.gen.Load() && !f.full && !f.readAt.IsZero() &&
			sub.s.clock.Now().Sub(f.readAt) < subscriptionRecheck
		if read || fresh || sub.seq < f.head {
			events, more = f.take(sub)
			return events, more, true, nil
		}
		if r := f.reading; r != nil {
			// Another subscriber reads for all: wait for it, then take (or, if it failed, read).
			f.mu.Unlock()
			select {
			case <-r.done:
			case <-ctx.Done():
				f.mu.Lock()
				return nil, false, true, ctx.Err()
			}
			f.mu.Lock()
			read = r.err == nil
			continue
		}
		gen, head, r := f.gen.Load(), f.head, &feedRead{done: make(chan struct{})}
		f.reading = r
		f.mu.Unlock()
		rctx, cancel := context.WithTimeout(ctx, sub.s.subscriptionRead)
		rows, err := sub.s.db.Ent().Event.Query().Where(event.SeqGT(head)).
			Order(ent.Asc(event.FieldSeq)).Limit(subscriptionPage).All(rctx)
		cancel()
		f.mu.Lock()
		f.reading, r.err = nil, err
		close(r.done)
		sub.s.feed.reads.Add(1)
		if err != nil {
			return nil, false, true, err
		}
		for _, r := range rows {
			f.events = append(f.events, EventOf(r))
		}
		if len(rows) > 0 {
			f.head = rows[len(rows)-1].Seq
		}
		f.readGen, f.readAt, f.full = gen, sub.s.clock.Now(), len(rows) == subscriptionPage
		if n := len(f.events) - windowEvents; n > 0 {
			f.base = f.events[n-1].Seq
			f.events = append(f.events[:0:0], f.events[n:]...)
		}
		read = true
	}
}

// take moves sub past the window's events after its position, up to a page of those it
// admits, and returns those. more reports events left in the window after them, or a window
// whose last read filled a page.
func (f *storeFeed) take(sub *EventSubscription) (events []Event, more bool) {
	if sub.seq >= f.head {
		return nil, f.full
	}
	i := sort.Search(len(f.events), func(i int) bool { return f.events[i].Seq > sub.seq })
	for ; i < len(f.events) && len(events) < subscriptionPage; i++ {
		if e := f.events[i]; sub.admits(string(e.Type)) {
			events = append(events, e)
		}
	}
	if i < len(f.events) {
		sub.seq = f.events[i-1].Seq
		return events, true
	}
	sub.seq = f.head
	return events, f.full
}

// admits reports whether the subscription's key and types take events of type t.
func (sub *EventSubscription) admits(t string) bool {
	if sub.all {
		return true
	}
	for _, typ := range sub.types {
		if typ == t {
			return true
		}
	}
	return false
}
