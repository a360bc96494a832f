package credit

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/creditd/creditd/ent"
	"github.com/creditd/creditd/ent/webhookattempt"
	"github.com/creditd/creditd/ent/webhookdelivery"
	"github.com/creditd/creditd/ent/webhookendpoint"
	"github.com/creditd/creditd/ids"
	"github.com/creditd/creditd/webhook"
)

// Webhook endpoints are managed by a store's staff (the admin command line), like API keys;
// their deliveries are made by the delivery worker of `creditd serve` (package delivery),
// which calls WebhookQueue's methods (webhook_queue.go) as the system, one endpoint at a time;
// staff see the deliveries through webhook_deliveries.go. Package webhook signs, posts and
// schedules; these files keep the state.

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
	// OldSecretEnds is when the secret a rotation replaced stops signing (Webhooks.RotateSecret's
	// clock plus its grace); zero for a new endpoint. Not part of the command line's JSON.
	OldSecretEnds Timestamp `json:"-"`
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
func (s *secretSealer) sealer() (*webhook.Sealer, error) {
	if s.webhookSealer == nil {
		return nil, ErrNoWebhookKey
	}
	return s.webhookSealer()
}

// ParseEventTypes splits a comma-separated list of event types, as the command line's --events
// takes them; an empty list means every type. Webhooks.CreateEndpoint checks the types.
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
func (s *Webhooks) validateWebhookURL(raw string) error {
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
		return ParamErrorf(CodeValidationFailed, "url", "the URL's host is not a public internet address (loopback, private, link-local and localhost are refused, in any spelling; an operator can allow them for development)")
	case s.allowPrivateWebhooks:
		return ParamErrorf(CodeValidationFailed, "url", "the URL must be http(s)://host[:port]/path without user:password or #fragment, with a port 1-65535%s", detail)
	case strings.HasPrefix(strings.ToLower(raw), "http://"):
		return ParamErrorf(CodeValidationFailed, "url", "only HTTPS is allowed (an operator can allow http:// for development and tests)")
	default:
		return ParamErrorf(CodeValidationFailed, "url", "the URL must be https://host[:port]/path without user:password or #fragment, with a port 1-65535 (only HTTPS is allowed)%s", detail)
	}
}

// CreateEndpoint creates an endpoint in the staff member's store and returns its
// signing secret, shown only this once. The endpoint receives the events that happen from now
// on; earlier ones are not sent.
//
// Errors: insufficient_scope (not staff), not_found (store), validation_failed (url,
// description, events); ErrNoWebhookKey.
func (s *Webhooks) CreateEndpoint(ctx context.Context, in WebhookEndpointInput) (IssuedWebhookSecret, error) {
	v, err := requireStaff(ctx)
	if err != nil {
		return IssuedWebhookSecret{}, err
	}
	if _, err := s.stores.viewerStore(ctx); err != nil {
		return IssuedWebhookSecret{}, err
	}
	in.URL = strings.TrimSpace(in.URL)
	types, errs := s.checkWebhookEndpoint(in)
	if len(errs) > 0 {
		return IssuedWebhookSecret{}, errs[0]
	}
	sealer, err := s.secrets.sealer()
	if err != nil {
		return IssuedWebhookSecret{}, err
	}
	secret := webhook.NewSecret()
	var out IssuedWebhookSecret
	err = s.db.InTx(ctx, func(tx *ent.Tx) error {
		cursor, err := latestEventSeq(ctx, tx.Client(), v.StoreID)
		if err != nil {
			return err
		}
		e, err := tx.WebhookEndpoint.Create().
			SetStoreID(v.StoreID).SetURL(in.URL).SetDescription(in.Description).SetEventTypes(types).
			SetSecretSealed(sealer.Seal(secret)).SetCreatedAt(s.clock.Now()).SetCursorSeq(cursor).
			Save(ctx)
		if err != nil {
			return err
		}
		out = IssuedWebhookSecret{ID: e.ID, Secret: secret}
		return nil
	})
	return out, err
}

// ListEndpoints lists the staff member's store's endpoints, oldest first.
//
// Errors: insufficient_scope (not staff), not_found (store).
func (s *Webhooks) ListEndpoints(ctx context.Context) ([]WebhookEndpoint, error) {
	if _, err := requireStaff(ctx); err != nil {
		return nil, err
	}
	if _, err := s.stores.viewerStore(ctx); err != nil {
		return nil, err
	}
	rows, err := s.db.Reader(ctx).WebhookEndpoint.Query().
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
func (s *Webhooks) endpointForStaff(ctx context.Context, tx *ent.Tx, id string) (*ent.WebhookEndpoint, error) {
	if !ids.HasPrefix(id, "we") {
		return nil, errNotFound("webhook endpoint")
	}
	e, err := tx.WebhookEndpoint.Query().Where(webhookendpoint.ID(id), s.db.ForUpdate).Only(ctx)
	if err != nil {
		return nil, notFoundOr(err, "webhook endpoint")
	}
	return e, nil
}

// SetEndpointEnabled enables or disables an endpoint of the staff member's store. A
// disabled endpoint is sent nothing; enabled again, it resumes where it stopped (events still
// kept are delivered, in order), and a retry that was waiting is due at once.
//
// Errors: insufficient_scope (not staff), not_found.
func (s *Webhooks) SetEndpointEnabled(ctx context.Context, id string, enabled bool) (WebhookEndpoint, error) {
	v, err := requireStaff(ctx)
	if err != nil {
		return WebhookEndpoint{}, err
	}
	var out WebhookEndpoint
	err = s.db.InTx(ctx, func(tx *ent.Tx) error {
		e, err := s.endpointForStaff(ctx, tx, id)
		if err != nil {
			return err
		}
		now := s.clock.Now()
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

// RotateSecret gives an endpoint of the staff member's store a new signing secret; the
// current one keeps signing beside it for grace (two v1 signatures), after which only the new
// one signs. A previous secret still in its grace is dropped.
//
// Errors: insufficient_scope (not staff), not_found, validation_failed (grace);
// ErrNoWebhookKey.
func (s *Webhooks) RotateSecret(ctx context.Context, id string, grace time.Duration) (IssuedWebhookSecret, error) {
	if _, err := requireStaff(ctx); err != nil {
		return IssuedWebhookSecret{}, err
	}
	if err := checkGrace(grace); err != nil {
		return IssuedWebhookSecret{}, err
	}
	sealer, err := s.secrets.sealer()
	if err != nil {
		return IssuedWebhookSecret{}, err
	}
	secret := webhook.NewSecret()
	var out IssuedWebhookSecret
	err = s.db.InTx(ctx, func(tx *ent.Tx) error {
		e, err := s.endpointForStaff(ctx, tx, id)
		if err != nil {
			return err
		}
		now := s.clock.Now()
		upd := rotate(tx.WebhookEndpoint.UpdateOne(e), e.SecretSealed, sealer.Seal(secret), now, grace)
		if err := upd.Exec(ctx); err != nil {
			return err
		}
		out = IssuedWebhookSecret{ID: e.ID, Secret: secret, OldSecretEnds: At(now.Add(grace))}
		return nil
	})
	return out, err
}

// DeleteEndpoint deletes an endpoint of the staff member's store with its deliveries
// and their attempts. A delivery in flight may still arrive once.
//
// Errors: insufficient_scope (not staff), not_found.
func (s *Webhooks) DeleteEndpoint(ctx context.Context, id string) error {
	if _, err := requireStaff(ctx); err != nil {
		return err
	}
	return s.db.InTx(ctx, func(tx *ent.Tx) error {
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
