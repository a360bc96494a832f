package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// WebhookEndpoint is a URL of a store's to which its events are posted, signed with the
// endpoint's secret. Delivery follows the endpoint's cursor through the store's events: every
// event with a seq up to cursor_seq has been delivered or given up on, and the next matching
// one is not attempted before that (per-endpoint order).
type WebhookEndpoint struct{ ent.Schema }

// Mixin scopes endpoints to their store and gives them their rotating signing secret (whsec_).
func (WebhookEndpoint) Mixin() []ent.Mixin {
	return []ent.Mixin{TenantMixin{}, RotatingSecretMixin{}}
}

// Fields of the WebhookEndpoint.
func (WebhookEndpoint) Fields() []ent.Field {
	return []ent.Field{
		idField("we"),
		field.String("url").NotEmpty(),
		field.String("description").Default(""),
		// EventTypes filters the events delivered; empty means every type.
		field.Strings("event_types"),
		field.Enum("status").Values("enabled", "disabled").Default("enabled"),
		field.String("disabled_reason").Optional().Nillable(),
		field.Time("disabled_at").Optional().Nillable(),
		field.Time("created_at").Immutable(),
		// FailingSince is when the current run of failed attempts began; nil after a success.
		field.Time("failing_since").Optional().Nillable(),
		// CursorSeq is the seq of the store's last event this endpoint is done with.
		field.Int64("cursor_seq").Default(0),
	}
}

// Edges of the WebhookEndpoint.
func (WebhookEndpoint) Edges() []ent.Edge {
	return []ent.Edge{edge.To("deliveries", WebhookDelivery.Type)}
}

// WebhookDelivery is one event at one endpoint: created at its first attempt (or by a
// redelivery request), it carries the state of the retries.
type WebhookDelivery struct{ ent.Schema }

// Mixin scopes deliveries to their store.
func (WebhookDelivery) Mixin() []ent.Mixin { return []ent.Mixin{TenantMixin{}} }

// Fields of the WebhookDelivery.
func (WebhookDelivery) Fields() []ent.Field {
	return []ent.Field{
		idField("wd"),
		field.String("endpoint_id").Immutable(),
		field.String("event_id").Immutable(),
		field.Int64("event_seq").Immutable(),
		field.Enum("status").Values("pending", "succeeded", "failed"),
		field.Int("attempt_count").Default(0),
		// NextAttemptAt is when a pending delivery is due; nil once it succeeded or failed.
		field.Time("next_attempt_at").Optional().Nillable(),
		field.Time("created_at").Immutable(),
		field.Time("updated_at"),
	}
}

// Edges of the WebhookDelivery.
func (WebhookDelivery) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("endpoint", WebhookEndpoint.Type).Ref("deliveries").Field("endpoint_id").Unique().Required().Immutable(),
		edge.To("attempts", WebhookAttempt.Type),
	}
}

// Indexes of the WebhookDelivery: one row per endpoint and event, and the pending ones of an
// endpoint in event order.
func (WebhookDelivery) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("endpoint_id", "event_id").Unique(),
		index.Fields("endpoint_id", "status", "event_seq"),
	}
}

// WebhookAttempt is one attempt to deliver one event to one endpoint, as the operator sees it
// in `creditd webhook deliveries`.
type WebhookAttempt struct{ ent.Schema }

// Mixin scopes attempts to their store.
func (WebhookAttempt) Mixin() []ent.Mixin { return []ent.Mixin{TenantMixin{}} }

// Fields of the WebhookAttempt.
func (WebhookAttempt) Fields() []ent.Field {
	return []ent.Field{
		idField("wa"),
		field.String("delivery_id").Immutable(),
		field.String("endpoint_id").Immutable(),
		field.String("event_id").Immutable(),
		field.Int("attempt").Immutable(),
		field.Time("attempted_at").Immutable(),
		// Outcome is webhook.Result.Outcome: success, http_500, timeout, ...
		field.String("outcome").Immutable(),
		field.Int("status_code").Optional().Nillable().Immutable(),
		field.Int64("duration_ms").Immutable(),
		// ResponseSnippet is at most the first 4 KiB of the receiver's answer, for the operator.
		field.String("response_snippet").Default("").Immutable(),
		field.String("error").Default("").Immutable(),
		// NextAttemptAt is the retry this attempt's failure scheduled; nil after a success or
		// when the event was given up.
		field.Time("next_attempt_at").Optional().Nillable().Immutable(),
	}
}

// Edges of the WebhookAttempt.
func (WebhookAttempt) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("delivery", WebhookDelivery.Type).Ref("attempts").Field("delivery_id").Unique().Required().Immutable(),
	}
}

// Indexes of the WebhookAttempt serve an endpoint's attempts, newest first.
func (WebhookAttempt) Indexes() []ent.Index {
	return []ent.Index{index.Fields("endpoint_id", "attempted_at")}
}
