package graph

import (
	"context"
	"time"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/httpapi"
)

// subscribeEvents is the events subscription (contract §16): the feed of the key's store, read
// by credit.EventSubscription, handed to the transport one event at a time.
func (r *Resolver) subscribeEvents(ctx context.Context, afterEvent *string, types []string) (<-chan *credit.Event, error) {
	st := streamFrom(ctx)
	if st == nil {
		return nil, credit.Errorf(httpapi.CodeInvalidRequest, "subscriptions need GraphQL over WebSocket (graphql-transport-ws) or Server-Sent Events (Accept: text/event-stream)")
	}
	if st.charge != nil {
		if err := st.charge(ctx); err != nil {
			return nil, err
		}
	}
	resume, err := st.position(ctx)
	if err != nil {
		return nil, err
	}
	sub, err := r.svc.Events.Subscribe(ctx, credit.EventSubscriptionParams{After: deref(afterEvent), Types: types,
		Resume: resume, ResumeParam: st.resumeParam})
	if err != nil {
		return nil, err
	}
	if h, ok := ctx.Value(inlinePumpKey{}).(*inlinePump); ok {
		// The transport runs the pump on its operation's goroutine, a step before each
		// response it takes: one event waits in the channel between the step that confirmed
		// the key and the response that takes it at once.
		out := make(chan *credit.Event, 1)
		p := &feedPump{st: st, ctx: ctx, svc: r.svc, sub: sub, out: out, inline: h}
		h.start = sub.Position()
		h.step = func() bool { return st.pump(p) }
		h.deliver = func(ev *credit.Event) {
			select {
			case out <- ev:
			case <-ctx.Done():
			}
		}
		h.finish = p.finish
		return out, nil
	}
	// Unbuffered: an event leaves the subscriber only when the transport takes it to write,
	// right after the key was confirmed; what waits is in the feed, not in memory.
	out := make(chan *credit.Event)
	p := &feedPump{st: st, ctx: ctx, svc: r.svc, sub: sub, out: out}
	go func() {
		defer p.finish()
		for st.pump(p) {
		}
	}()
	return out, nil
}

// inlinePump is what a transport that runs a subscription's pump on the operation's own
// goroutine (the graphql-transport-ws transport, ws.go) puts in the operation's context; the
// resolver sets it. Before taking each response, the transport calls step, which confirms the
// key and hands over the next event in event (or ends the stream: false); the transport then
// either sends a payload of that event another subscriber executed (payloads.go) or delivers
// the event to the channel the resolver returned, for the operation's next response to
// execute. Once the operation has ended, it calls finish.
type inlinePump struct {
	step    func() bool
	deliver func(*credit.Event)
	finish  func()
	event   *credit.Event // handed over by the last step, not yet taken
	start   int64         // the position in the store's feed the subscription starts after
}

// take returns the event the last step handed over, if it did, and forgets it.
func (h *inlinePump) take() *credit.Event {
	ev := h.event
	h.event = nil
	return ev
}

type inlinePumpKey struct{}

// feedPump is a subscription's pump (stream.pump): it reads the feed whenever woken and hands
// each event to the transport, confirming the key before each, until the stream ends: the
// client leaves (ctx), the service shuts down (restart), or the key no longer authenticates
// (an unauthenticated error, then the stream's end as its transport does it).
type feedPump struct {
	st  *stream
	ctx context.Context
	svc Services
	sub *credit.EventSubscription
	out chan<- *credit.Event
	// inline is set when the transport pumps on the operation's goroutine
	// (inlinePump): nothing may wait there for the operation to end, and an event is handed
	// over in inline.event rather than on out.
	inline *inlinePump

	events  []credit.Event // read and not yet handed over
	more    bool           // the last read filled a page
	recheck *time.Timer
	expiry  *time.Timer // the secret's grace end, when it has one
	ended   bool
}

// finish closes the subscription and stops the timers; the next subscription of the store may
// open.
func (p *feedPump) finish() {
	p.sub.Close()
	if p.recheck != nil {
		p.recheck.Stop()
	}
	if p.expiry != nil {
		p.expiry.Stop()
	}
}

// pump hands the next event of p to the transport, reading the feed and waiting for a wake-up
// until there is one; false once the stream has ended.
func (st *stream) pump(p *feedPump) bool {
	if p.ended {
		return false
	}
	ctx, sub := p.ctx, p.sub
	for len(p.events) == 0 {
		if !p.read() {
			p.ended = true
			return false
		}
	}
	if err := sub.Confirm(ctx); err != nil {
		p.fail(err)
		return false
	}
	if p.st.sse != nil {
		p.st.sse.queueID(p.events[0].ID)
	}
	if p.inline != nil {
		select {
		case <-ctx.Done():
			close(p.out)
		case <-sub.Done():
			p.st.restart(ctx)
		default:
			p.inline.event = &p.events[0]
			sub.Sent()
			p.events = p.events[1:]
			return true
		}
		p.ended = true
		return false
	}
	select {
	case p.out <- &p.events[0]:
		sub.Sent()
		p.events = p.events[1:]
		return true
	case <-ctx.Done():
		close(p.out)
	case <-sub.Done():
		p.st.restart(ctx)
	}
	p.ended = true
	return false
}

// read reads the feed when the last read may have more, else waits for a wake-up first;
// false when the stream has ended.
func (p *feedPump) read() bool {
	ctx, sub := p.ctx, p.sub
	if p.recheck != nil && !p.more {
		var expires <-chan time.Time
		if until := sub.Expires(); !until.IsZero() {
			d := time.Until(until) + time.Millisecond
			if p.expiry == nil {
				p.expiry = time.NewTimer(d)
			} else {
				p.expiry.Reset(d)
			}
			expires = p.expiry.C
		}
		p.recheck.Reset(sub.Recheck())
		select {
		case <-sub.Wake():
		case <-p.recheck.C:
		case <-expires:
		case <-ctx.Done():
			close(p.out)
			return false
		case <-sub.Done():
			p.st.restart(ctx)
			return false
		}
	}
	if p.recheck == nil {
		p.recheck = time.NewTimer(sub.Recheck())
	}
	events, more, err := sub.Next(ctx)
	if err != nil {
		if ctx.Err() != nil {
			close(p.out)
			return false
		}
		p.fail(err)
		return false
	}
	p.events, p.more = events, more
	if len(events) == 0 {
		// Woken with nothing to send: a key may have changed.
		if err := sub.Confirm(ctx); err != nil {
			p.fail(err)
			return false
		}
	}
	return true
}

func (p *feedPump) fail(err error) {
	if credit.CodeOf(err) == credit.CodeUnauthenticated {
		p.svc.Events.NoteCutOff("unauthenticated")
	}
	p.st.fail(p.ctx, err, p.out, p.inline != nil)
}

// restart ends a stream the service ended (a shutdown) without completing it, so that the
// client's own retry resumes it from its connection's position (contract §16, amended
// 2026-11-28): a complete would tell graphql-ws and graphql-sse that the subscription is over,
// and they would never subscribe again. A WebSocket is closed with 1012 (service restart) and
// no complete: gqlgen writes the close frame, which wsConn gives code 1012, before the
// operation ends and its complete is refused on the closed connection. An SSE response ends
// without its complete. out stays open: the operation ends with its context. The subscription
// is closed only once the operation has ended, so a shutdown that waits for every subscription
// to close (credit.Events.WaitSubscriptions) and then closes the connections never cuts a
// stream short of its close.
func (st *stream) restart(ctx context.Context) {
	if st.ws != nil {
		st.ws.closeWith(closeServiceRestart, "service restart")
		st.ws.cancelConn()
	} else {
		st.sse.endForRestart()
	}
	<-ctx.Done()
}

// fail ends a subscription with err: on a WebSocket an error message for the operation, then,
// for unauthenticated, the connection's close with 4401; over SSE a last next message holding
// the error, then complete.
func (st *stream) fail(ctx context.Context, err error, out chan<- *credit.Event, inline bool) {
	gqlErr := presentError(ctx, err)
	unauthenticated := credit.CodeOf(err) == credit.CodeUnauthenticated
	if st.ws == nil {
		st.sse.final(gqlErr)
		close(out)
		return
	}
	addSubscriptionError(ctx, gqlErr)
	if unauthenticated {
		st.ws.closeWith(closeUnauthenticated, "unauthenticated")
	}
	close(out)
	if !unauthenticated {
		return
	}
	// The transport sends the error message, then ends the operation's context: only then is
	// the connection closed, so the client reads the error before the close. An inline pump
	// (inlinePump) runs on the operation's goroutine, which sends that message once step
	// returns: it leaves the close to the context's end.
	if inline {
		context.AfterFunc(ctx, st.ws.cancelConn)
		return
	}
	<-ctx.Done()
	st.ws.cancelConn()
}
