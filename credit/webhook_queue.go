package credit

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/creditd/creditd/ent"
	"github.com/creditd/creditd/ent/webhookdelivery"
	"github.com/creditd/creditd/ent/webhookendpoint"
	"github.com/creditd/creditd/ids"
	"github.com/creditd/creditd/tenant"
	"github.com/creditd/creditd/webhook"
)

// The delivery worker's side of webhooks (Service.WebhookQueue, package delivery's Queue):
// the endpoints with due work, the next deliveries of one, and the attempts made, each read
// and recorded as the system in the endpoint's store.

// WebhookTarget names an enabled endpoint for the delivery worker.
type WebhookTarget struct {
	ID      string
	StoreID string
}

// WebhookViewer is the context the delivery worker works on one endpoint in: the system, but
// scoped to the endpoint's store like any request, so nothing it reads or writes crosses
// stores.
func WebhookViewer(ctx context.Context, storeID string) context.Context {
	return tenant.NewContext(ctx, tenant.Viewer{StoreID: storeID, ActorType: tenant.ActorSystem, Label: "webhook delivery"})
}

// DueWebhookEndpoints lists the enabled endpoints of every store that may have a delivery due:
// their store has events past their cursor, or they have a pending delivery whose time has
// come. It is one statement however many endpoints there are, so an idle worker costs one
// query a poll. Deliberate cross-store system work, for the delivery worker only.
func (s *WebhookQueue) DueWebhookEndpoints(ctx context.Context) ([]WebhookTarget, error) {
	now := s.clock.Now()
	rows, err := s.db.Ent().WebhookEndpoint.Query().
		Where(webhookendpoint.StatusEQ(webhookendpoint.StatusEnabled), s.db.WebhookEndpointsDue(now)).
		Order(ent.Asc(webhookendpoint.FieldID)).
		Select(webhookendpoint.FieldID, webhookendpoint.FieldStoreID).All(tenant.System(ctx))
	if err != nil {
		return nil, err
	}
	out := make([]WebhookTarget, len(rows))
	for i, r := range rows {
		out[i] = WebhookTarget{ID: r.ID, StoreID: r.StoreID}
	}
	return out, nil
}

// WebhookDue is one attempt the worker should make now.
type WebhookDue struct {
	EndpointID string
	StoreID    string
	URL        string
	// DeliveryID is the delivery's row, "" before its first attempt.
	DeliveryID string
	EventID    string
	EventSeq   int64
	// Body is the event's JSON, the same as GET /v1/events/{id} answers.
	Body []byte
	// Secrets are the endpoint's signing secrets, newest first: two during a rotation's grace.
	Secrets []string
	// Attempt is this attempt's number, 1 for the first.
	Attempt int
	// InOrder is true for the endpoint's next event in order, whose success or giving up moves
	// the cursor; false for an operator's redelivery of an event behind it.
	InOrder bool
	// Ping is true for a test delivery (Webhooks.Ping): one attempt, never retried, and its
	// outcome changes nothing about the endpoint.
	Ping bool
}

// Errors: ErrNoWebhookKey, ErrSealedValueInvalid and the database's.
func (s *WebhookQueue) NextWebhookDeliveries(ctx context.Context, endpointID string, max int) ([]*WebhookDue, error) {
	client := s.db.Ent()
	e, err := client.WebhookEndpoint.Get(ctx, endpointID)
	if ent.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if e.Status != webhookendpoint.StatusEnabled {
		return nil, nil
	}
	now := s.clock.Now()
	secrets, err := s.secrets.webhookSecrets(e, now)
	if err != nil {
		return nil, err
	}
	base := WebhookDue{EndpointID: e.ID, StoreID: e.StoreID, URL: e.URL, Secrets: secrets, Attempt: 1}

	// The endpoint's pending deliveries: redeliveries behind the cursor and the retry (or
	// redelivery) ahead of it, at most one of each kind is needed.
	pending, err := client.WebhookDelivery.Query().Where(
		webhookdelivery.EndpointID(e.ID), webhookdelivery.StatusEQ(webhookdelivery.StatusPending),
	).Order(ent.Asc(webhookdelivery.FieldEventSeq)).All(ctx)
	if err != nil {
		return nil, err
	}
	var ahead *ent.WebhookDelivery
	for _, d := range pending {
		if d.EventSeq > e.CursorSeq {
			if ahead == nil {
				ahead = d
			}
			continue
		}
		if d.NextAttemptAt == nil || !d.NextAttemptAt.After(now) {
			due, err := s.pendingDue(ctx, client, e, d, base, false)
			if due == nil || err != nil {
				return nil, err
			}
			return []*WebhookDue{due}, nil
		}
	}
	events, err := s.nextWebhookEvents(ctx, client, e, max)
	if err != nil {
		return nil, err
	}
	if ahead != nil && (len(events) == 0 || ahead.EventSeq <= events[0].Seq) {
		if ahead.NextAttemptAt != nil && ahead.NextAttemptAt.After(now) {
			return nil, nil
		}
		due, err := s.pendingDue(ctx, client, e, ahead, base, true)
		if due == nil || err != nil {
			return nil, err
		}
		return []*WebhookDue{due}, nil
	}
	var out []*WebhookDue
	for _, ev := range events {
		if ahead != nil && ev.Seq >= ahead.EventSeq {
			break
		}
		due := base
		due.EventID, due.EventSeq, due.Body, due.InOrder = ev.ID, ev.Seq, ev.Body, true
		out = append(out, &due)
	}
	return out, nil
}

// pendingDue is the attempt of a pending delivery, or nil when its event is no longer kept
// (the delivery is then given up).
func (s *WebhookQueue) pendingDue(ctx context.Context, client *ent.Client, e *ent.WebhookEndpoint, d *ent.WebhookDelivery, base WebhookDue, inOrder bool) (*WebhookDue, error) {
	ev, err := webhookEventByID(ctx, client, d.EventID)
	if IsNotFound(err) {
		return nil, s.giveUpWebhookDelivery(ctx, e, d, inOrder)
	}
	if err != nil {
		return nil, err
	}
	due := base
	due.DeliveryID, due.EventID, due.EventSeq, due.Body, due.Attempt, due.InOrder = d.ID, ev.ID, ev.Seq, ev.Body, d.AttemptCount+1, inOrder
	return &due, nil
}

// webhookSecrets opens an endpoint's signing secrets, newest first.
func (s *secretSealer) webhookSecrets(e *ent.WebhookEndpoint, now time.Time) ([]string, error) {
	sealer, err := s.sealer()
	if err != nil {
		return nil, err
	}
	sealed := rotatingSecret{current: e.SecretSealed, previous: e.PreviousSecretSealed, previousExpiresAt: e.PreviousSecretExpiresAt}.valid(now)
	secrets := make([]string, len(sealed))
	for i, v := range sealed {
		if secrets[i], err = sealer.Open(v); err != nil {
			return nil, fmt.Errorf("webhook endpoint %s: secret %d: %w", e.ID, i, err)
		}
	}
	return secrets, nil
}

// giveUpWebhookDelivery marks a delivery whose event is gone as failed and, for the next
// event in order, moves the cursor past it.
func (s *WebhookQueue) giveUpWebhookDelivery(ctx context.Context, e *ent.WebhookEndpoint, d *ent.WebhookDelivery, inOrder bool) error {
	return s.db.InTx(ctx, func(tx *ent.Tx) error {
		now := s.clock.Now()
		if err := tx.WebhookDelivery.UpdateOne(d).SetStatus(webhookdelivery.StatusFailed).ClearNextAttemptAt().SetUpdatedAt(now).Exec(ctx); err != nil {
			return err
		}
		if !inOrder {
			return nil
		}
		return tx.WebhookEndpoint.Update().Where(webhookendpoint.ID(e.ID), webhookendpoint.CursorSeqLT(d.EventSeq)).
			SetCursorSeq(d.EventSeq).Exec(ctx)
	})
}

// WebhookAttemptResult is what the worker learnt from one attempt (webhook.Result without the
// package's types).
type WebhookAttemptResult struct {
	Success    bool
	Outcome    string
	StatusCode int
	Duration   time.Duration
	Snippet    []byte
	Error      string
	// RetryAfter is the receiver's Retry-After; the next attempt comes no earlier.
	RetryAfter time.Duration
}

// WebhookAttemptMade is one attempt the worker made, and its result.
type WebhookAttemptMade struct {
	Due    *WebhookDue
	Result WebhookAttemptResult
}

// WebhookAttemptRecord says what recording an attempt decided.
type WebhookAttemptRecord struct {
	// NextAttemptAt is the retry scheduled, nil after a success or when the event was given up.
	NextAttemptAt *time.Time
	// GaveUp is true when the retry schedule is exhausted: the event is failed at this endpoint.
	GaveUp bool
	// Disabled is non-empty when the endpoint was disabled, and says why.
	Disabled string
	// Status is the delivery's state after the attempt: pending (a retry is scheduled),
	// succeeded or failed.
	Status string
	// Attempt is the attempt as `webhook deliveries` shows it.
	Attempt WebhookAttempt
}

// maxRetryAfter caps a receiver's Retry-After, so that a receiver cannot park its deliveries
// beyond the retry schedule's longest wait.
const maxRetryAfter = 10 * time.Hour

// RecordWebhookAttempts records attempts the worker made at one endpoint, in the order it made
// them, and their consequences, in one transaction: each attempt, each delivery's state
// (succeeded; retried per webhook.NextAttempt; or failed after the whole schedule), the
// endpoint's cursor (moved past in-order events that succeeded or were given up), its
// failing_since, and disabling it after webhook.DisableAfter of failures or a 410 Gone. A
// batch costs one transaction, not one per event, which keeps deliveries from slowing the
// writes they report. ctx must be WebhookViewer's.
func (s *WebhookQueue) RecordWebhookAttempts(ctx context.Context, made []WebhookAttemptMade) ([]WebhookAttemptRecord, error) {
	if len(made) == 0 {
		return nil, nil
	}
	var recs []WebhookAttemptRecord
	err := s.db.InTx(ctx, func(tx *ent.Tx) error {
		recs = make([]WebhookAttemptRecord, len(made))
		now := s.clock.Now()
		e, err := tx.WebhookEndpoint.Query().Where(webhookendpoint.ID(made[0].Due.EndpointID), s.db.ForUpdate).Only(ctx)
		if ent.IsNotFound(err) {
			return nil // deleted while the attempts were under way
		}
		if err != nil {
			return err
		}
		cursor, failingSince, status, disabled := e.CursorSeq, e.FailingSince, e.Status, ""
		var newDeliveries []*ent.WebhookDeliveryCreate
		var attempts []*ent.WebhookAttemptCreate
		for i, m := range made {
			due, res, rec := m.Due, m.Result, &recs[i]
			deliveryID, attempt := due.DeliveryID, due.Attempt
			var d *ent.WebhookDelivery
			if deliveryID == "" {
				// Never attempted when read, but an operator may have asked for its redelivery since.
				d, err = tx.WebhookDelivery.Query().Where(webhookdelivery.EndpointID(e.ID), webhookdelivery.EventID(due.EventID)).Only(ctx)
				if err != nil && !ent.IsNotFound(err) {
					return err
				}
			} else if d, err = tx.WebhookDelivery.Get(ctx, deliveryID); err != nil && !ent.IsNotFound(err) {
				return err
			}
			if d != nil {
				deliveryID, attempt = d.ID, d.AttemptCount+1
			}
			dec := decideAttempt(due.Ping, res, attempt, now, failingSince)
			state, done := dec.State, dec.Done
			failingSince = dec.FailingSince
			rec.NextAttemptAt, rec.GaveUp, rec.Disabled = dec.NextAttemptAt, dec.GaveUp, dec.Disable
			if rec.Disabled != "" && status == webhookendpoint.StatusEnabled {
				status, disabled = webhookendpoint.StatusDisabled, rec.Disabled
			}
			if done && due.InOrder && due.EventSeq > cursor {
				cursor = due.EventSeq
			}
			if d != nil {
				upd := tx.WebhookDelivery.UpdateOne(d).SetStatus(state).SetAttemptCount(attempt).SetUpdatedAt(now)
				if rec.NextAttemptAt != nil {
					upd.SetNextAttemptAt(*rec.NextAttemptAt)
				} else {
					upd.ClearNextAttemptAt()
				}
				if err := upd.Exec(ctx); err != nil {
					return err
				}
			} else {
				deliveryID = ids.New("wd")
				newDeliveries = append(newDeliveries, tx.WebhookDelivery.Create().SetID(deliveryID).SetStoreID(e.StoreID).
					SetEndpointID(e.ID).SetEventID(due.EventID).SetEventSeq(due.EventSeq).SetStatus(state).
					SetAttemptCount(attempt).SetNillableNextAttemptAt(rec.NextAttemptAt).SetCreatedAt(now).SetUpdatedAt(now))
			}
			rec.Status = state.String()
			rec.Attempt = WebhookAttempt{
				ID: ids.New("wa"), EventID: due.EventID, Attempt: attempt, AttemptedAt: At(now), Outcome: res.Outcome,
				DurationMS: res.Duration.Milliseconds(), Error: truncateRunes(res.Error, 500),
				ResponseSnippet: printableSnippet(res.Snippet), NextAttemptAt: atPtr(rec.NextAttemptAt),
			}
			a := tx.WebhookAttempt.Create().SetID(rec.Attempt.ID).SetStoreID(e.StoreID).SetDeliveryID(deliveryID).SetEndpointID(e.ID).
				SetEventID(due.EventID).SetAttempt(attempt).SetAttemptedAt(now).SetOutcome(res.Outcome).
				SetDurationMs(rec.Attempt.DurationMS).SetResponseSnippet(rec.Attempt.ResponseSnippet).
				SetError(rec.Attempt.Error).SetNillableNextAttemptAt(rec.NextAttemptAt)
			if res.StatusCode != 0 {
				a.SetStatusCode(res.StatusCode)
				rec.Attempt.StatusCode = &res.StatusCode
			}
			attempts = append(attempts, a)
		}
		if len(newDeliveries) > 0 {
			if err := tx.WebhookDelivery.CreateBulk(newDeliveries...).Exec(ctx); err != nil {
				return err
			}
		}
		if err := tx.WebhookAttempt.CreateBulk(attempts...).Exec(ctx); err != nil {
			return err
		}
		upd := tx.WebhookEndpoint.UpdateOne(e).SetCursorSeq(cursor)
		if failingSince == nil {
			upd.ClearFailingSince()
		} else {
			upd.SetFailingSince(*failingSince)
		}
		if disabled != "" {
			upd.SetStatus(webhookendpoint.StatusDisabled).SetDisabledAt(now).SetDisabledReason(disabled)
		}
		return upd.Exec(ctx)
	})
	return recs, err
}

// attemptDecision is what one attempt's result decides for its delivery and its endpoint.
type attemptDecision struct {
	// State is the delivery's status after the attempt; Done says the event needs no more
	// attempts at this endpoint (delivered, or given up).
	State webhookdelivery.Status
	Done  bool
	// NextAttemptAt is the retry, nil when none is due; GaveUp says the schedule ran out.
	NextAttemptAt *time.Time
	GaveUp        bool
	// FailingSince is when the endpoint's current run of failures began, nil after a success.
	FailingSince *time.Time
	// Disable is why the endpoint is to be disabled, "" when it is not.
	Disable string
}

// decideAttempt decides, with no database, what attempt number attempt of a delivery decides
// at now, given the endpoint's run of failures so far: a ping is one attempt whatever its
// outcome and leaves the endpoint as it is; a success ends the delivery and the failures; a
// failure schedules the next attempt by the retry schedule (webhook.NextAttempt, no earlier
// than the receiver's Retry-After, at most maxRetryAfter), gives up when the schedule has run
// out, and disables the endpoint on a 410 Gone or when every attempt has failed for
// webhook.DisableAfter.
func decideAttempt(ping bool, res WebhookAttemptResult, attempt int, now time.Time, failingSince *time.Time) attemptDecision {
	d := attemptDecision{State: webhookdelivery.StatusPending, FailingSince: failingSince}
	switch {
	case ping:
		d.State = webhookdelivery.StatusFailed
		if res.Success {
			d.State = webhookdelivery.StatusSucceeded
		}
		return d
	case res.Success:
		d.State, d.Done, d.FailingSince = webhookdelivery.StatusSucceeded, true, nil
		return d
	}
	if d.FailingSince == nil {
		d.FailingSince = &now
	}
	if next, ok := webhook.NextAttempt(attempt, now, nil); ok {
		if ra := min(res.RetryAfter, maxRetryAfter); next.Before(now.Add(ra)) {
			next = now.Add(ra)
		}
		next = next.UTC().Truncate(time.Microsecond)
		d.NextAttemptAt = &next
	} else {
		d.State, d.Done, d.GaveUp = webhookdelivery.StatusFailed, true, true
	}
	switch {
	case res.StatusCode == 410:
		d.Disable = "the receiver answered 410 Gone"
	case webhook.ShouldDisable(*d.FailingSince, now):
		d.Disable = fmt.Sprintf("every attempt failed since %s (%s)", At(*d.FailingSince), webhook.DisableAfter)
	}
	return d
}

// printableSnippet keeps a response snippet storable: valid UTF-8 without NUL bytes, which
// PostgreSQL text cannot hold.
func printableSnippet(b []byte) string {
	s := strings.ToValidUTF8(string(b), "\uFFFD")
	return strings.ReplaceAll(s, "\x00", "\uFFFD")
}

func truncateRunes(s string, n int) string {
	s = printableSnippet([]byte(s))
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n])
}

// OldestPendingWebhookEvent returns when the oldest event not yet delivered to an enabled
// endpoint that wants it occurred, across every store, and false when every endpoint is up to
// date: the queue's age, for a metric.
func (s *WebhookQueue) OldestPendingWebhookEvent(ctx context.Context) (time.Time, bool, error) {
	sys := tenant.System(ctx)
	rows, err := s.db.Ent().WebhookEndpoint.Query().Where(webhookendpoint.StatusEQ(webhookendpoint.StatusEnabled)).All(sys)
	if err != nil {
		return time.Time{}, false, err
	}
	var oldest time.Time
	for _, e := range rows {
		at, ok, err := s.oldestEventFor(WebhookViewer(ctx, e.StoreID), e)
		if err != nil {
			return time.Time{}, false, err
		}
		if ok && (oldest.IsZero() || at.Before(oldest)) {
			oldest = at
		}
	}
	return oldest, !oldest.IsZero(), nil
}
