package graph

import (
	"context"
	"time"

	"github.com/99designs/gqlgen/graphql/handler/transport"

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
	// Unbuffered: an event leaves the subscriber only when the transport takes it to write,
	// right after the key was confirmed; what waits is in the feed, not in memory.
	out := make(chan *credit.Event)
	go st.pump(ctx, r.svc, sub, out)
	return out, nil
}

// pump reads the subscription's feed whenever woken and hands each event to the transport,
// confirming the key before each, until the stream ends: the client leaves (ctx), the
// service shuts down (restart), or the key no longer authenticates (an unauthenticated
// error, then the stream's end as its transport does it).
func (st *stream) pump(ctx context.Context, svc *credit.Service, sub *credit.EventSubscription, out chan<- *credit.Event) {
	defer sub.Close()
	fail := func(err error) {
		if credit.CodeOf(err) == credit.CodeUnauthenticated {
			svc.Events.NoteCutOff("unauthenticated")
		}
		st.fail(ctx, err, out)
	}
	recheck := time.NewTimer(sub.Recheck())
	defer recheck.Stop()
	var expiry *time.Timer // the secret's grace end, when it has one
	defer func() {
		if expiry != nil {
			expiry.Stop()
		}
	}()
	for {
		events, more, err := sub.Next(ctx)
		if err != nil {
			if ctx.Err() != nil {
				close(out)
				return
			}
			fail(err)
			return
		}
		if len(events) == 0 {
			// Woken with nothing to send: a key may have changed.
			if err := sub.Confirm(ctx); err != nil {
				fail(err)
				return
			}
		}
		for i := range events {
			if err := sub.Confirm(ctx); err != nil {
				fail(err)
				return
			}
			if st.sse != nil {
				st.sse.queueID(events[i].ID)
			}
			select {
			case out <- &events[i]:
				sub.Sent()
			case <-ctx.Done():
				close(out)
				return
			case <-sub.Done():
				st.restart(ctx)
				return
			}
		}
		if more {
			continue
		}
		var expires <-chan time.Time
		if until := sub.Expires(); !until.IsZero() {
			d := time.Until(until) + time.Millisecond
			if expiry == nil {
				expiry = time.NewTimer(d)
			} else {
				expiry.Reset(d)
			}
			expires = expiry.C
		}
		recheck.Reset(sub.Recheck())
		select {
		case <-sub.Wake():
		case <-recheck.C:
		case <-expires:
		case <-ctx.Done():
			close(out)
			return
		case <-sub.Done():
			st.restart(ctx)
			return
		}
	}
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
func (st *stream) fail(ctx context.Context, err error, out chan<- *credit.Event) {
	gqlErr := presentError(ctx, err)
	unauthenticated := credit.CodeOf(err) == credit.CodeUnauthenticated
	if st.ws == nil {
		st.sse.final(gqlErr)
		close(out)
		return
	}
	transport.AddSubscriptionError(ctx, gqlErr)
	if unauthenticated {
		st.ws.closeWith(closeUnauthenticated, "unauthenticated")
	}
	close(out)
	if unauthenticated {
		// gqlgen sends the error message, then ends the operation's context: only then is the
		// connection closed, so the client reads the error before the close.
		<-ctx.Done()
		st.ws.cancelConn()
	}
}
