package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// TimelineEvent records one write on a company's timeline and who made it.
type TimelineEvent struct{ ent.Schema }

// Mixin scopes timeline events to their store.
func (TimelineEvent) Mixin() []ent.Mixin { return []ent.Mixin{TenantMixin{}} }

// Fields of the TimelineEvent.
func (TimelineEvent) Fields() []ent.Field {
	return []ent.Field{
		idField("ev"),
		field.String("company_id").Immutable(),
		field.Int64("seq").Immutable(),
		field.String("type").Immutable(),
		field.Enum("actor_type").Values("api_key", "staff", "system", "platform").Immutable(),
		field.String("actor_label").Immutable(),
		field.Time("occurred_at").Immutable(),
		field.JSON("data", map[string]any{}).Immutable(),
	}
}

// Edges of the TimelineEvent.
func (TimelineEvent) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("company", Company.Type).Ref("timeline_events").Field("company_id").Unique().Required().Immutable(),
	}
}

// Indexes serve the newest-first timeline.
func (TimelineEvent) Indexes() []ent.Index {
	return []ent.Index{index.Fields("company_id", "seq").Unique()}
}
