package credit

import (
	"context"
	"encoding/json"
	"time"

	"github.com/creditd/creditd/ent"
	"github.com/creditd/creditd/ent/event"
	"github.com/creditd/creditd/ent/webhookattempt"
	"github.com/creditd/creditd/ent/webhookdelivery"
	"github.com/creditd/creditd/ent/webhookendpoint"
	"github.com/creditd/creditd/ids"
)

// The staff's view of webhook deliveries (Service.Webhooks): an endpoint's recent deliveries
// and attempts, a redelivery of one event, and a test ping.

// WebhookAttempt is one delivery attempt as an operator sees it.
type WebhookAttempt struct {
	ID          string    `json:"id"`
	EventID     string    `json:"event_id"`
	Attempt     int       `json:"attempt"`
	AttemptedAt Timestamp `json:"attempted_at"`
	// Outcome is success, http_<status>, timeout, connection_refused, ... (package webhook).
	Outcome    string `json:"outcome"`
	StatusCode *int   `json:"status_code"`
	DurationMS int64  `json:"duration_ms"`
	// Error is why the attempt failed before a response, for the operator.
	Error string `json:"error,omitempty"`
	// ResponseSnippet is the start of the receiver's answer (at most 4 KiB).
	ResponseSnippet string `json:"response_snippet,omitempty"`
	// NextAttemptAt is the retry this attempt's failure scheduled, nil after a success or when
	// the event was given up at this endpoint.
	NextAttemptAt *Timestamp `json:"next_attempt_at"`
}

// WebhookDelivery is one event at one endpoint: its state and the time of its next attempt.
type WebhookDelivery struct {
	ID       string `json:"id"`
	EventID  string `json:"event_id"`
	EventSeq int64  `json:"event_seq"`
	// Status is pending (an attempt is due at NextAttemptAt), succeeded or failed (given up
	// after the whole retry schedule).
	Status        string     `json:"status"`
	Attempts      int        `json:"attempts"`
	NextAttemptAt *Timestamp `json:"next_attempt_at"`
	UpdatedAt     Timestamp  `json:"updated_at"`
}

func webhookDeliveryView(d *ent.WebhookDelivery) WebhookDelivery {
	return WebhookDelivery{ID: d.ID, EventID: d.EventID, EventSeq: d.EventSeq, Status: d.Status.String(),
		Attempts: d.AttemptCount, NextAttemptAt: atPtr(d.NextAttemptAt), UpdatedAt: At(d.UpdatedAt)}
}

// WebhookDeliveryReport is what `creditd webhook deliveries` shows of an endpoint: its
// deliveries still pending (with their next retry) and its latest attempts, newest first.
type WebhookDeliveryReport struct {
	Endpoint WebhookEndpoint   `json:"endpoint"`
	Pending  []WebhookDelivery `json:"pending"`
	Attempts []WebhookAttempt  `json:"attempts"`
}

// Deliveries reports the pending deliveries and the latest limit attempts of an
// endpoint of the staff member's store.
//
// Errors: insufficient_scope (not staff), not_found, validation_failed (limit).
func (s *Webhooks) Deliveries(ctx context.Context, id string, limit int) (WebhookDeliveryReport, error) {
	if _, err := requireStaff(ctx); err != nil {
		return WebhookDeliveryReport{}, err
	}
	if limit < 1 || limit > 1000 {
		return WebhookDeliveryReport{}, ParamErrorf(CodeValidationFailed, "limit", "limit must be between 1 and 1000")
	}
	if !ids.HasPrefix(id, "we") {
		return WebhookDeliveryReport{}, errNotFound("webhook endpoint")
	}
	// Three reads, newest history first: an attempt and the state it led to commit together,
	// so reading the attempts before the pending deliveries and the endpoint never shows an
	// attempt without its consequences (the state may be newer than the list, not older).
	client := s.db.Reader(ctx)
	attempts, err := client.WebhookAttempt.Query().Where(webhookattempt.EndpointID(id)).
		Order(ent.Desc(webhookattempt.FieldAttemptedAt), ent.Desc(webhookattempt.FieldID)).Limit(limit).All(ctx)
	if err != nil {
		return WebhookDeliveryReport{}, err
	}
	pending, err := client.WebhookDelivery.Query().
		Where(webhookdelivery.EndpointID(id), webhookdelivery.StatusEQ(webhookdelivery.StatusPending)).
		Order(ent.Asc(webhookdelivery.FieldEventSeq)).All(ctx)
	if err != nil {
		return WebhookDeliveryReport{}, err
	}
	e, err := client.WebhookEndpoint.Get(ctx, id)
	if err != nil {
		return WebhookDeliveryReport{}, notFoundOr(err, "webhook endpoint")
	}
	out := WebhookDeliveryReport{Endpoint: webhookEndpointView(e), Pending: []WebhookDelivery{}, Attempts: []WebhookAttempt{}}
	for _, d := range pending {
		out.Pending = append(out.Pending, webhookDeliveryView(d))
	}
	for _, a := range attempts {
		out.Attempts = append(out.Attempts, WebhookAttempt{
			ID: a.ID, EventID: a.EventID, Attempt: a.Attempt, AttemptedAt: At(a.AttemptedAt), Outcome: a.Outcome,
			StatusCode: a.StatusCode, DurationMS: a.DurationMs, Error: a.Error, ResponseSnippet: a.ResponseSnippet,
			NextAttemptAt: atPtr(a.NextAttemptAt),
		})
	}
	return out, nil
}

// Redeliver sends an event to an endpoint of the staff member's store again, as
// soon as the worker gets to it, with a fresh retry schedule: an event the endpoint already
// received (its receiver should de-duplicate by webhook-id), one given up on, or one still
// ahead of the endpoint's cursor. A past event is sent beside the endpoint's ordered stream,
// not in its place. The endpoint's type filter does not apply: the operator asked for it.
//
// Errors: insufficient_scope (not staff), not_found (endpoint, or an event unknown to the
// endpoint's store or no longer kept).
func (s *Webhooks) Redeliver(ctx context.Context, eventID, endpointID string) (WebhookDelivery, error) {
	d, _, err := s.redeliverWebhookEvent(ctx, eventID, endpointID, false)
	return d, err
}

// webhookRedeliveryClaim is how long a redelivery that its caller sends at once
// (Webhooks.RedeliverNow) is kept from the worker: long enough for one attempt, after
// which, should the caller have died before recording it, the worker makes it.
const webhookRedeliveryClaim = time.Minute

// RedeliverNow is Webhooks.Redeliver for a caller that makes the attempt itself
// at once (`creditd webhook redeliver`, with package delivery's SendNow), so that a receiver
// just fixed gets the event now rather than at its next retry. When the event may go now (it
// is behind the endpoint's cursor, or it is the endpoint's next event in order) and the
// endpoint is enabled, it returns the attempt to make and keeps the delivery from the worker
// for webhookRedeliveryClaim, so that the two never send it side by side, on SQLite either,
// where instances share no lock. Otherwise due is nil and the delivery waits for its turn, as
// Webhooks.Redeliver's does. The caller holds the endpoint's lock where there is one.
//
// Errors: as Webhooks.Redeliver; ErrNoWebhookKey.
func (s *Webhooks) RedeliverNow(ctx context.Context, eventID, endpointID string) (WebhookDelivery, *WebhookDue, error) {
	return s.redeliverWebhookEvent(ctx, eventID, endpointID, true)
}

func (s *Webhooks) redeliverWebhookEvent(ctx context.Context, eventID, endpointID string, now bool) (WebhookDelivery, *WebhookDue, error) {
	if _, err := requireStaff(ctx); err != nil {
		return WebhookDelivery{}, nil, err
	}
	var out WebhookDelivery
	var due *WebhookDue
	err := s.db.InTx(ctx, func(tx *ent.Tx) error {
		e, err := s.endpointForStaff(ctx, tx, endpointID)
		if err != nil {
			return err
		}
		ev, err := webhookEventByID(ctx, tx.Client(), eventID)
		if err != nil {
			return err
		}
		at := s.clock.Now()
		next := at
		if now {
			if due, err = s.redeliveryDue(ctx, tx, e, ev, at); err != nil {
				return err
			}
			if due != nil {
				next = at.Add(webhookRedeliveryClaim)
			}
		}
		d, err := tx.WebhookDelivery.Query().Where(webhookdelivery.EndpointID(e.ID), webhookdelivery.EventID(ev.ID)).Only(ctx)
		switch {
		case ent.IsNotFound(err):
			d, err = tx.WebhookDelivery.Create().SetStoreID(e.StoreID).SetEndpointID(e.ID).SetEventID(ev.ID).SetEventSeq(ev.Seq).
				SetStatus(webhookdelivery.StatusPending).SetNextAttemptAt(next).SetCreatedAt(at).SetUpdatedAt(at).Save(ctx)
		case err == nil:
			d, err = tx.WebhookDelivery.UpdateOne(d).SetStatus(webhookdelivery.StatusPending).SetAttemptCount(0).
				SetNextAttemptAt(next).SetUpdatedAt(at).Save(ctx)
		}
		if err != nil {
			return err
		}
		if due != nil {
			due.DeliveryID = d.ID
		}
		out = webhookDeliveryView(d)
		return nil
	})
	if err != nil {
		return WebhookDelivery{}, nil, err
	}
	return out, due, nil
}

// redeliveryDue is the attempt of a redelivery of ev that may be made now, or nil: the
// endpoint is disabled, or ev is ahead of the cursor behind an earlier event still to go.
func (s *Webhooks) redeliveryDue(ctx context.Context, tx *ent.Tx, e *ent.WebhookEndpoint, ev *webhookEvent, now time.Time) (*WebhookDue, error) {
	if e.Status != webhookendpoint.StatusEnabled {
		return nil, nil
	}
	inOrder := ev.Seq > e.CursorSeq
	if inOrder {
		earlier, err := wantedEvents(tx.Client(), e).Where(event.SeqGT(e.CursorSeq), event.SeqLT(ev.Seq)).Exist(ctx)
		if err != nil || earlier {
			return nil, err
		}
		earlier, err = tx.WebhookDelivery.Query().Where(webhookdelivery.EndpointID(e.ID),
			webhookdelivery.StatusEQ(webhookdelivery.StatusPending), webhookdelivery.EventSeqGT(e.CursorSeq),
			webhookdelivery.EventSeqLT(ev.Seq)).Exist(ctx)
		if err != nil || earlier {
			return nil, err
		}
	}
	secrets, err := s.secrets.webhookSecrets(e, now)
	if err != nil {
		return nil, err
	}
	return &WebhookDue{EndpointID: e.ID, StoreID: e.StoreID, URL: e.URL, EventID: ev.ID, EventSeq: ev.Seq,
		Body: ev.Body, Secrets: secrets, Attempt: 1, InOrder: inOrder}, nil
}

// WebhookPingType is the type of the test deliveries Webhooks.Ping makes. A ping is not an
// event of the feed: GET /v1/events/{id} does not know its id.
const WebhookPingType = "ping"

// Ping prepares a test delivery to an endpoint of the staff member's store: a `ping`
// with a new id, shaped like an event ({"id", "type", "occurred_at", "data": {"object"}}, the
// object naming the endpoint) and signed with the endpoint's secrets like every delivery. The
// caller posts it now (package delivery) and records the attempt with RecordWebhookAttempts,
// after which `webhook deliveries` shows it. A ping is sent beside the endpoint's ordered
// stream, to a disabled endpoint too (testing a receiver before enabling it is its use), and
// its outcome neither retries nor counts towards disabling the endpoint.
//
// Errors: insufficient_scope (not staff), not_found; ErrNoWebhookKey.
func (s *Webhooks) Ping(ctx context.Context, endpointID string) (*WebhookDue, error) {
	if _, err := requireStaff(ctx); err != nil {
		return nil, err
	}
	if !ids.HasPrefix(endpointID, "we") {
		return nil, errNotFound("webhook endpoint")
	}
	e, err := s.db.Reader(ctx).WebhookEndpoint.Get(ctx, endpointID)
	if err != nil {
		return nil, notFoundOr(err, "webhook endpoint")
	}
	now := s.clock.Now()
	secrets, err := s.secrets.webhookSecrets(e, now)
	if err != nil {
		return nil, err
	}
	data, err := json.Marshal(eventData{Object: map[string]string{"endpoint_id": e.ID}})
	if err != nil {
		return nil, err
	}
	ping := Event{ID: ids.New(eventIDPrefix), Type: WebhookPingType, OccurredAt: At(now), Data: data}
	return &WebhookDue{
		EndpointID: e.ID, StoreID: e.StoreID, URL: e.URL, EventID: ping.ID,
		Body: append(ping.AppendJSON(nil), '\n'), Secrets: secrets, Attempt: 1, Ping: true,
	}, nil
}

// NextWebhookDeliveries returns the attempts due now at an endpoint, in the order to make
// them, or none: an operator's redelivery of an event behind the cursor (alone); else the
// retry of the endpoint's next event in order (alone, and only once due: no later event
// overtakes it); else up to max of the events past the cursor that the endpoint wants, never
// attempted yet, which the worker sends one after the other, stopping at the first failure.
// ctx must be WebhookViewer's for the endpoint's store, and only one worker may work on one
// endpoint at a time (package delivery locks it).
//
