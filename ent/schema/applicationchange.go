package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// ApplicationChange is one status change of an application and who made it: the application's
// history, as a company's timeline is the company's. Rows are only ever added.
type ApplicationChange struct{ ent.Schema }

// Mixin scopes the changes to their store.
func (ApplicationChange) Mixin() []ent.Mixin { return []ent.Mixin{TenantMixin{}} }

// Fields of the ApplicationChange.
func (ApplicationChange) Fields() []ent.Field {
	return []ent.Field{
		idField("apc"),
		field.String("application_id").Immutable(),
		// Seq numbers an application's changes in order (the clock may not move between two).
		field.Int("seq").Immutable(),
		field.String("from_status").Immutable(),
		field.String("to_status").Immutable(),
		// CompanyID is the company an approval created.
		field.String("company_id").Optional().Nillable().Immutable(),
		field.String("actor_type").Immutable(),
		field.String("actor_label").Immutable(),
		field.Time("occurred_at").Immutable(),
	}
}

// Indexes serve an application's history in order.
func (ApplicationChange) Indexes() []ent.Index {
	return []ent.Index{index.Fields("application_id", "seq").Unique()}
}
