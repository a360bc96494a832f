package credit

import (
	"context"
	"time"

	"github.com/creditd/creditd/ent"
	"github.com/creditd/creditd/ent/event"
	"github.com/creditd/creditd/ent/store"
	"github.com/creditd/creditd/ent/webhookendpoint"
	"github.com/creditd/creditd/ids"
)

// How webhook deliveries read the event outbox (events.go). An endpoint's cursor is a seq of
// its store's feed; reading "seq > cursor" in seq order never skips an event that commits
// late, for the reasons events.go gives.

// webhookEvent is an event as a delivery sends it.
type webhookEvent struct {
	ID   string
	Seq  int64
	Body []byte
}

// webhookEventOf is an event as a delivery sends it: byte for byte the body of
// GET /v1/events/{id} (contract §11), which is the view's JSON and the newline that ends every
// response (httpapi.WriteBody), so that a signature checked over either body verifies.
func webhookEventOf(e *ent.Event) *webhookEvent {
	return &webhookEvent{ID: e.ID, Seq: e.Seq, Body: append(EventOf(e).AppendJSON(nil), '\n')}
}

// latestEventSeq is the seq of the store's latest committed event (0 before the first): every
// event up to it is visible, since seqs are taken under the store row's lock held to commit.
// It is read from the database, never from the store cache, whose rows do not follow it.
func latestEventSeq(ctx context.Context, client *ent.Client, storeID string) (int64, error) {
	st, err := client.Store.Query().Where(store.ID(storeID)).Select(store.FieldEventSeq).Only(ctx)
	if err != nil {
		return 0, notFoundOr(err, "store")
	}
	return st.EventSeq, nil
}

// webhookEventByID reads an event of the viewer's store.
//
// Errors: not_found.
func webhookEventByID(ctx context.Context, client *ent.Client, id string) (*webhookEvent, error) {
	if !ids.HasPrefix(id, eventIDPrefix) {
		return nil, errNotFound("event")
	}
	e, err := client.Event.Get(ctx, id)
	if err != nil {
		return nil, notFoundOr(err, "event")
	}
	return webhookEventOf(e), nil
}

// nextWebhookEvents returns up to max of the events past the endpoint's cursor that its
// filter wants, in feed order. When none up to the store's latest event matches, the cursor
// moves to it, so the events the endpoint does not want are not read again on every poll.
func (s *WebhookQueue) nextWebhookEvents(ctx context.Context, client *ent.Client, e *ent.WebhookEndpoint, max int) ([]*webhookEvent, error) {
	latest, err := latestEventSeq(ctx, client, e.StoreID)
	if err != nil {
		return nil, err
	}
	if latest <= e.CursorSeq {
		return nil, nil
	}
	evs, err := wantedEvents(client, e).Where(event.SeqLTE(latest)).Order(ent.Asc(event.FieldSeq)).Limit(max).All(ctx)
	if err != nil {
		return nil, err
	}
	if len(evs) == 0 {
		// Nothing wanted up to latest (or the events were purged): skip them.
		return nil, s.db.InTx(ctx, func(tx *ent.Tx) error {
			return tx.WebhookEndpoint.Update().
				Where(webhookendpoint.ID(e.ID), webhookendpoint.CursorSeqLT(latest)).
				SetCursorSeq(latest).Exec(ctx)
		})
	}
	out := make([]*webhookEvent, len(evs))
	for i, ev := range evs {
		out[i] = webhookEventOf(ev)
	}
	return out, nil
}

// oldestEventFor returns when the endpoint's next wanted event past its cursor occurred.
func (s *WebhookQueue) oldestEventFor(ctx context.Context, e *ent.WebhookEndpoint) (time.Time, bool, error) {
	ev, err := wantedEvents(s.db.Ent(), e).Order(ent.Asc(event.FieldSeq)).Select(event.FieldOccurredAt).First(ctx)
	if ent.IsNotFound(err) {
		return time.Time{}, false, nil
	}
	if err != nil {
		return time.Time{}, false, err
	}
	return ev.OccurredAt, true, nil
}

// wantedEvents queries the events past the endpoint's cursor that its type filter wants.
func wantedEvents(client *ent.Client, e *ent.WebhookEndpoint) *ent.EventQuery {
	q := client.Event.Query().Where(event.SeqGT(e.CursorSeq))
	if len(e.EventTypes) > 0 {
		q.Where(event.TypeIn(e.EventTypes...))
	}
	return q
}
