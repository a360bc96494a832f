package credit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"entgo.io/ent/dialect/sql"

	"github.com/creditd/creditd/ent"
	"github.com/creditd/creditd/ent/event"
	"github.com/creditd/creditd/ent/store"
	"github.com/creditd/creditd/ent/webhookattempt"
	"github.com/creditd/creditd/ent/webhookdelivery"
	"github.com/creditd/creditd/ent/webhookendpoint"
	"github.com/creditd/creditd/ids"
	"github.com/creditd/creditd/tenant"
	"github.com/creditd/creditd/webhook"
)

// Webhook endpoints are managed by a store's staff (the admin command line), like API keys;
// their deliveries are made by the delivery worker of `creditd serve` (package delivery),
// which calls the Webhook* methods below the management ones as the system, one endpoint at
// a time. Package webhook signs, posts and schedules; this file keeps the state.

// DefaultWebhookSecretGrace is how long a rotated-out webhook secret keeps signing beside the
// new one, so receivers can switch without missing a delivery.
const DefaultWebhookSecretGrace = 24 * time.Hour

// maxWebhookURLLength bounds an endpoint's URL; real ones are far shorter.
const maxWebhookURLLength = 2048

// ErrNoWebhookKey is returned by webhook operations when the service has no master key to seal
// or open signing secrets with.
var ErrNoWebhookKey = errors.New("webhooks need a master key: set CREDITD_WEBHOOK_KEY (see README, Webhooks)")

// WebhookEndpoint describes an endpoint without its secret.
type WebhookEndpoint struct {
	ID          string `json:"id"`
	StoreID     string `json:"store_id"`
	URL         string `json:"url"`
	Description string `json:"description"`
	// EventTypes are the types delivered; empty means every type.
	EventTypes []string `json:"event_types"`
	// Status is enabled or disabled.
	Status         string     `json:"status"`
	DisabledReason *string    `json:"disabled_reason"`
	DisabledAt     *Timestamp `json:"disabled_at"`
	// FailingSince is when the current run of failed attempts began, nil when the last one
	// succeeded; after webhook.DisableAfter of failures the endpoint is disabled.
	FailingSince *Timestamp `json:"failing_since"`
	// PreviousSecretExpiresAt is when the secret replaced by the last rotation stops signing.
	PreviousSecretExpiresAt *Timestamp `json:"previous_secret_expires_at"`
	CreatedAt               Timestamp  `json:"created_at"`
}

// IssuedWebhookSecret is an endpoint with the signing secret just made for it, shown only once.
type IssuedWebhookSecret struct {
	ID     string `json:"id"`
	Secret string `json:"secret"`
}

// WebhookEndpointInput is what creating an endpoint takes.
type WebhookEndpointInput struct {
	URL         string
	Description string
	// EventTypes filters the events delivered; empty means every type.
	EventTypes []string
}

func webhookEndpointView(e *ent.WebhookEndpoint) WebhookEndpoint {
	types := e.EventTypes
	if types == nil {
		types = []string{}
	}
	out := WebhookEndpoint{
		ID: e.ID, StoreID: e.StoreID, URL: e.URL, Description: e.Description, EventTypes: types,
		Status: e.Status.String(), DisabledReason: e.DisabledReason, DisabledAt: atPtr(e.DisabledAt),
		FailingSince: atPtr(e.FailingSince), CreatedAt: At(e.CreatedAt),
	}
	if e.PreviousSecretSealed != nil {
		// Shown also once past, unlike a platform connection's: an endpoint's list says when
		// its previous secret stopped signing.
		out.PreviousSecretExpiresAt = atPtr(e.PreviousSecretExpiresAt)
	}
	return out
}

// sealer returns the Sealer for webhook secrets, or ErrNoWebhookKey.
func (s *Service) sealer() (*webhook.Sealer, error) {
	if s.webhookSealer == nil {
		return nil, ErrNoWebhookKey
	}
	return s.webhookSealer()
}

// ParseEventTypes splits a comma-separated list of event types, as the command line's --events
// takes them; an empty list means every type. CreateWebhookEndpoint checks the types.
func ParseEventTypes(list string) []string {
	out := []string{}
	for _, t := range strings.Split(list, ",") {
		if t = strings.TrimSpace(t); t != "" {
			out = append(out, t)
		}
	}
	return out
}

// validateWebhookURL applies webhook.ValidateURL's rules and says what is wrong in the
// contract's terms.
//
// Errors: validation_failed (param "url").
func (s *Service) validateWebhookURL(raw string) error {
	if err := checkField(raw, "url", maxWebhookURLLength); err != nil {
		return err
	}
	err := webhook.ValidateURL(raw, s.allowPrivateWebhooks)
	if err == nil {
		return nil
	}
	// What the webhook package found, when it says more than its generic error.
	detail := ""
	if d, ok := strings.CutPrefix(err.Error(), webhook.ErrInvalidURL.Error()+": "); ok {
		detail = ": " + d
	}
	switch {
	case errors.Is(err, webhook.ErrPrivateDestination):
		return ParamErrorf(CodeValidationFailed, "url", "the URL's host is not a public internet address (loopback, private, link-local and localhost are refused, in any spelling; --allow-private-webhooks, given to webhook create and to serve, lifts this for development)")
	case s.allowPrivateWebhooks:
		return ParamErrorf(CodeValidationFailed, "url", "the URL must be http(s)://host[:port]/path without user:password or #fragment, with a port 1-65535%s", detail)
	case strings.HasPrefix(strings.ToLower(raw), "http://"):
		return ParamErrorf(CodeValidationFailed, "url", "only HTTPS is allowed; http:// needs --allow-private-webhooks (given to webhook create and to serve; development and tests only)")
	default:
		return ParamErrorf(CodeValidationFailed, "url", "the URL must be https://host[:port]/path without user:password or #fragment, with a port 1-65535 (only HTTPS is allowed)%s", detail)
	}
}

// CreateWebhookEndpoint creates an endpoint in the staff member's store and returns its
// signing secret, shown only this once. The endpoint receives the events that happen from now
// on; earlier ones are not sent.
//
// Errors: insufficient_scope (not staff), not_found (store), validation_failed (url,
// description, events); ErrNoWebhookKey.
func (s *Service) CreateWebhookEndpoint(ctx context.Context, in WebhookEndpointInput) (IssuedWebhookSecret, error) {
	v, err := requireStaff(ctx)
	if err != nil {
		return IssuedWebhookSecret{}, err
	}
	if _, err := s.viewerStore(ctx); err != nil {
		return IssuedWebhookSecret{}, err
	}
	in.URL = strings.TrimSpace(in.URL)
	if err := s.validateWebhookURL(in.URL); err != nil {
		return IssuedWebhookSecret{}, err
	}
	if in.Description != "" {
		if err := checkField(in.Description, "description", 500); err != nil {
			return IssuedWebhookSecret{}, err
		}
	}
	types, err := knownEventTypes(in.EventTypes, CodeValidationFailed, "events")
	if err != nil {
		return IssuedWebhookSecret{}, err
	}
	sealer, err := s.sealer()
	if err != nil {
		return IssuedWebhookSecret{}, err
	}
	secret := webhook.NewSecret()
	var out IssuedWebhookSecret
	err = s.inTx(ctx, func(tx *ent.Tx) error {
		cursor, err := s.latestEventSeq(ctx, tx.Client(), v.StoreID)
		if err != nil {
			return err
		}
		e, err := tx.WebhookEndpoint.Create().
			SetStoreID(v.StoreID).SetURL(in.URL).SetDescription(in.Description).SetEventTypes(types).
			SetSecretSealed(sealer.Seal(secret)).SetCreatedAt(s.Now()).SetCursorSeq(cursor).
			Save(ctx)
		if err != nil {
			return err
		}
		out = IssuedWebhookSecret{ID: e.ID, Secret: secret}
		return nil
	})
	return out, err
}

// ListWebhookEndpoints lists the staff member's store's endpoints, oldest first.
//
// Errors: insufficient_scope (not staff), not_found (store).
func (s *Service) ListWebhookEndpoints(ctx context.Context) ([]WebhookEndpoint, error) {
	if _, err := requireStaff(ctx); err != nil {
		return nil, err
	}
	if _, err := s.viewerStore(ctx); err != nil {
		return nil, err
	}
	rows, err := s.reader(ctx).WebhookEndpoint.Query().
		Order(ent.Asc(webhookendpoint.FieldCreatedAt), ent.Asc(webhookendpoint.FieldID)).All(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]WebhookEndpoint, 0, len(rows))
	for _, e := range rows {
		out = append(out, webhookEndpointView(e))
	}
	return out, nil
}

// endpointForStaff loads an endpoint of the viewer's store inside tx.
//
// Errors: not_found.
func (s *Service) endpointForStaff(ctx context.Context, tx *ent.Tx, id string) (*ent.WebhookEndpoint, error) {
	if !ids.HasPrefix(id, "we") {
		return nil, errNotFound("webhook endpoint")
	}
	e, err := tx.WebhookEndpoint.Query().Where(webhookendpoint.ID(id), s.db.ForUpdate).Only(ctx)
	if err != nil {
		return nil, notFoundOr(err, "webhook endpoint")
	}
	return e, nil
}

// SetWebhookEndpointEnabled enables or disables an endpoint of the staff member's store. A
// disabled endpoint is sent nothing; enabled again, it resumes where it stopped (events still
// kept are delivered, in order), and a retry that was waiting is due at once.
//
// Errors: insufficient_scope (not staff), not_found.
func (s *Service) SetWebhookEndpointEnabled(ctx context.Context, id string, enabled bool) (WebhookEndpoint, error) {
	v, err := requireStaff(ctx)
	if err != nil {
		return WebhookEndpoint{}, err
	}
	var out WebhookEndpoint
	err = s.inTx(ctx, func(tx *ent.Tx) error {
		e, err := s.endpointForStaff(ctx, tx, id)
		if err != nil {
			return err
		}
		now := s.Now()
		upd := tx.WebhookEndpoint.UpdateOne(e)
		if enabled {
			upd.SetStatus(webhookendpoint.StatusEnabled).ClearDisabledAt().ClearDisabledReason().ClearFailingSince()
			if err := tx.WebhookDelivery.Update().
				Where(webhookdelivery.EndpointID(e.ID), webhookdelivery.StatusEQ(webhookdelivery.StatusPending)).
				SetNextAttemptAt(now).Exec(ctx); err != nil {
				return err
			}
		} else if e.Status == webhookendpoint.StatusEnabled {
			upd.SetStatus(webhookendpoint.StatusDisabled).SetDisabledAt(now).SetDisabledReason("disabled by " + v.Label)
		}
		e, err = upd.Save(ctx)
		if err != nil {
			return err
		}
		out = webhookEndpointView(e)
		return nil
	})
	return out, err
}

// RotateWebhookSecret gives an endpoint of the staff member's store a new signing secret; the
// current one keeps signing beside it for grace (two v1 signatures), after which only the new
// one signs. A previous secret still in its grace is dropped.
//
// Errors: insufficient_scope (not staff), not_found, validation_failed (grace);
// ErrNoWebhookKey.
func (s *Service) RotateWebhookSecret(ctx context.Context, id string, grace time.Duration) (IssuedWebhookSecret, error) {
	if _, err := requireStaff(ctx); err != nil {
		return IssuedWebhookSecret{}, err
	}
	if err := checkGrace(grace); err != nil {
		return IssuedWebhookSecret{}, err
	}
	sealer, err := s.sealer()
	if err != nil {
		return IssuedWebhookSecret{}, err
	}
	secret := webhook.NewSecret()
	var out IssuedWebhookSecret
	err = s.inTx(ctx, func(tx *ent.Tx) error {
		e, err := s.endpointForStaff(ctx, tx, id)
		if err != nil {
			return err
		}
		upd := rotate(tx.WebhookEndpoint.UpdateOne(e), e.SecretSealed, sealer.Seal(secret), s.Now(), grace)
		if err := upd.Exec(ctx); err != nil {
			return err
		}
		out = IssuedWebhookSecret{ID: e.ID, Secret: secret}
		return nil
	})
	return out, err
}

// DeleteWebhookEndpoint deletes an endpoint of the staff member's store with its deliveries
// and their attempts. A delivery in flight may still arrive once.
//
// Errors: insufficient_scope (not staff), not_found.
func (s *Service) DeleteWebhookEndpoint(ctx context.Context, id string) error {
	if _, err := requireStaff(ctx); err != nil {
		return err
	}
	return s.inTx(ctx, func(tx *ent.Tx) error {
		e, err := s.endpointForStaff(ctx, tx, id)
		if err != nil {
			return err
		}
		if _, err := tx.WebhookAttempt.Delete().Where(webhookattempt.EndpointID(e.ID)).Exec(ctx); err != nil {
			return err
		}
		if _, err := tx.WebhookDelivery.Delete().Where(webhookdelivery.EndpointID(e.ID)).Exec(ctx); err != nil {
			return err
		}
		return tx.WebhookEndpoint.DeleteOne(e).Exec(ctx)
	})
}

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

// WebhookDeliveries reports the pending deliveries and the latest limit attempts of an
// endpoint of the staff member's store.
//
// Errors: insufficient_scope (not staff), not_found, validation_failed (limit).
func (s *Service) WebhookDeliveries(ctx context.Context, id string, limit int) (WebhookDeliveryReport, error) {
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
	client := s.reader(ctx)
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

// RedeliverWebhookEvent sends an event to an endpoint of the staff member's store again, as
// soon as the worker gets to it, with a fresh retry schedule: an event the endpoint already
// received (its receiver should de-duplicate by webhook-id), one given up on, or one still
// ahead of the endpoint's cursor. A past event is sent beside the endpoint's ordered stream,
// not in its place. The endpoint's type filter does not apply: the operator asked for it.
//
// Errors: insufficient_scope (not staff), not_found (endpoint, or an event unknown to the
// endpoint's store or no longer kept).
func (s *Service) RedeliverWebhookEvent(ctx context.Context, eventID, endpointID string) (WebhookDelivery, error) {
	d, _, err := s.redeliverWebhookEvent(ctx, eventID, endpointID, false)
	return d, err
}

// webhookRedeliveryClaim is how long a redelivery that its caller sends at once
// (RedeliverWebhookEventNow) is kept from the worker: long enough for one attempt, after
// which, should the caller have died before recording it, the worker makes it.
const webhookRedeliveryClaim = time.Minute

// RedeliverWebhookEventNow is RedeliverWebhookEvent for a caller that makes the attempt itself
// at once (`creditd webhook redeliver`, with package delivery's SendNow), so that a receiver
// just fixed gets the event now rather than at its next retry. When the event may go now (it
// is behind the endpoint's cursor, or it is the endpoint's next event in order) and the
// endpoint is enabled, it returns the attempt to make and keeps the delivery from the worker
// for webhookRedeliveryClaim, so that the two never send it side by side, on SQLite either,
// where instances share no lock. Otherwise due is nil and the delivery waits for its turn, as
// RedeliverWebhookEvent's does. The caller holds the endpoint's lock where there is one.
//
// Errors: as RedeliverWebhookEvent; ErrNoWebhookKey.
func (s *Service) RedeliverWebhookEventNow(ctx context.Context, eventID, endpointID string) (WebhookDelivery, *WebhookDue, error) {
	return s.redeliverWebhookEvent(ctx, eventID, endpointID, true)
}

func (s *Service) redeliverWebhookEvent(ctx context.Context, eventID, endpointID string, now bool) (WebhookDelivery, *WebhookDue, error) {
	if _, err := requireStaff(ctx); err != nil {
		return WebhookDelivery{}, nil, err
	}
	var out WebhookDelivery
	var due *WebhookDue
	err := s.inTx(ctx, func(tx *ent.Tx) error {
		e, err := s.endpointForStaff(ctx, tx, endpointID)
		if err != nil {
			return err
		}
		ev, err := s.webhookEventByID(ctx, tx.Client(), eventID)
		if err != nil {
			return err
		}
		at := s.Now()
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
func (s *Service) redeliveryDue(ctx context.Context, tx *ent.Tx, e *ent.WebhookEndpoint, ev *webhookEvent, now time.Time) (*WebhookDue, error) {
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
	secrets, err := s.webhookSecrets(e, now)
	if err != nil {
		return nil, err
	}
	return &WebhookDue{EndpointID: e.ID, StoreID: e.StoreID, URL: e.URL, EventID: ev.ID, EventSeq: ev.Seq,
		Body: ev.Body, Secrets: secrets, Attempt: 1, InOrder: inOrder}, nil
}

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
func (s *Service) DueWebhookEndpoints(ctx context.Context) ([]WebhookTarget, error) {
	now := s.Now()
	rows, err := s.client.WebhookEndpoint.Query().
		Where(webhookendpoint.StatusEQ(webhookendpoint.StatusEnabled), func(sel *sql.Selector) {
			st, d := sql.Table(store.Table).As("due_store"), sql.Table(webhookdelivery.Table).As("due_delivery")
			sel.Where(sql.Or(
				sql.Exists(sql.Select(st.C(store.FieldID)).From(st).Where(sql.And(
					sql.ColumnsEQ(st.C(store.FieldID), sel.C(webhookendpoint.FieldStoreID)),
					sql.ColumnsGT(st.C(store.FieldEventSeq), sel.C(webhookendpoint.FieldCursorSeq)),
				))),
				sql.Exists(sql.Select(d.C(webhookdelivery.FieldID)).From(d).Where(sql.And(
					sql.ColumnsEQ(d.C(webhookdelivery.FieldEndpointID), sel.C(webhookendpoint.FieldID)),
					sql.EQ(d.C(webhookdelivery.FieldStatus), webhookdelivery.StatusPending.String()),
					sql.LTE(d.C(webhookdelivery.FieldNextAttemptAt), now),
				))),
			))
		}).
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
	// Ping is true for a test delivery (WebhookPing): one attempt, never retried, and its
	// outcome changes nothing about the endpoint.
	Ping bool
}

// WebhookPingType is the type of the test deliveries WebhookPing makes. A ping is not an
// event of the feed: GET /v1/events/{id} does not know its id.
const WebhookPingType = "ping"

// WebhookPing prepares a test delivery to an endpoint of the staff member's store: a `ping`
// with a new id, shaped like an event ({"id", "type", "occurred_at", "data": {"object"}}, the
// object naming the endpoint) and signed with the endpoint's secrets like every delivery. The
// caller posts it now (package delivery) and records the attempt with RecordWebhookAttempts,
// after which `webhook deliveries` shows it. A ping is sent beside the endpoint's ordered
// stream, to a disabled endpoint too (testing a receiver before enabling it is its use), and
// its outcome neither retries nor counts towards disabling the endpoint.
//
// Errors: insufficient_scope (not staff), not_found; ErrNoWebhookKey.
func (s *Service) WebhookPing(ctx context.Context, endpointID string) (*WebhookDue, error) {
	if _, err := requireStaff(ctx); err != nil {
		return nil, err
	}
	if !ids.HasPrefix(endpointID, "we") {
		return nil, errNotFound("webhook endpoint")
	}
	e, err := s.reader(ctx).WebhookEndpoint.Get(ctx, endpointID)
	if err != nil {
		return nil, notFoundOr(err, "webhook endpoint")
	}
	now := s.Now()
	secrets, err := s.webhookSecrets(e, now)
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
// Errors: ErrNoWebhookKey, ErrSealedValueInvalid and the database's.
func (s *Service) NextWebhookDeliveries(ctx context.Context, endpointID string, max int) ([]*WebhookDue, error) {
	client := s.client
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
	now := s.Now()
	secrets, err := s.webhookSecrets(e, now)
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
func (s *Service) pendingDue(ctx context.Context, client *ent.Client, e *ent.WebhookEndpoint, d *ent.WebhookDelivery, base WebhookDue, inOrder bool) (*WebhookDue, error) {
	ev, err := s.webhookEventByID(ctx, client, d.EventID)
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
func (s *Service) webhookSecrets(e *ent.WebhookEndpoint, now time.Time) ([]string, error) {
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
func (s *Service) giveUpWebhookDelivery(ctx context.Context, e *ent.WebhookEndpoint, d *ent.WebhookDelivery, inOrder bool) error {
	return s.inTx(ctx, func(tx *ent.Tx) error {
		now := s.Now()
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
func (s *Service) RecordWebhookAttempts(ctx context.Context, made []WebhookAttemptMade) ([]WebhookAttemptRecord, error) {
	if len(made) == 0 {
		return nil, nil
	}
	var recs []WebhookAttemptRecord
	err := s.inTx(ctx, func(tx *ent.Tx) error {
		recs = make([]WebhookAttemptRecord, len(made))
		now := s.Now()
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
			state, done := webhookdelivery.StatusPending, false
			switch {
			case due.Ping:
				// One attempt, whatever its outcome, and the endpoint's state stays.
				state = webhookdelivery.StatusFailed
				if res.Success {
					state = webhookdelivery.StatusSucceeded
				}
			case res.Success:
				state, done, failingSince = webhookdelivery.StatusSucceeded, true, nil
			default:
				if failingSince == nil {
					failingSince = &now
				}
				if next, ok := webhook.NextAttempt(attempt, now, nil); ok {
					if ra := min(res.RetryAfter, maxRetryAfter); next.Before(now.Add(ra)) {
						next = now.Add(ra)
					}
					next = next.UTC().Truncate(time.Microsecond)
					rec.NextAttemptAt = &next
				} else {
					state, done, rec.GaveUp = webhookdelivery.StatusFailed, true, true
				}
				switch {
				case res.StatusCode == 410:
					rec.Disabled = "the receiver answered 410 Gone"
				case webhook.ShouldDisable(*failingSince, now):
					rec.Disabled = fmt.Sprintf("every attempt failed since %s (%s)", At(*failingSince), webhook.DisableAfter)
				}
				if rec.Disabled != "" && status == webhookendpoint.StatusEnabled {
					status, disabled = webhookendpoint.StatusDisabled, rec.Disabled
				}
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
func (s *Service) OldestPendingWebhookEvent(ctx context.Context) (time.Time, bool, error) {
	sys := tenant.System(ctx)
	rows, err := s.client.WebhookEndpoint.Query().Where(webhookendpoint.StatusEQ(webhookendpoint.StatusEnabled)).All(sys)
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
