package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// StoreChange is one change of a store's settings and the staff member who made it: the
// store's audit trail (contract §17: changing the reminder schedule is on it). Rows are only
// ever added.
type StoreChange struct{ ent.Schema }

// Mixin scopes the changes to their store.
func (StoreChange) Mixin() []ent.Mixin { return []ent.Mixin{TenantMixin{}} }

// Fields of the StoreChange.
func (StoreChange) Fields() []ent.Field {
	return []ent.Field{
		idField("stc"),
		// Setting names what changed ("reminder_days").
		field.String("setting").Immutable(),
		// Value and Previous are the setting's JSON after and before the change.
		field.String("value").Immutable(),
		field.String("previous").Immutable(),
		field.String("actor_type").Immutable(),
		field.String("actor_label").Immutable(),
		field.Time("occurred_at").Immutable(),
	}
}

// Indexes serve a store's trail, newest first.
func (StoreChange) Indexes() []ent.Index {
	return []ent.Index{index.Fields("store_id", "occurred_at")}
}
