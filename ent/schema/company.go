package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// Company is a buyer on credit terms. Its outstanding balance is kept in step with its ledger
// inside each appending transaction, so reading a company never sums the ledger.
type Company struct{ ent.Schema }

// Mixin scopes companies to their store.
func (Company) Mixin() []ent.Mixin { return []ent.Mixin{TenantMixin{}} }

// Fields of the Company.
func (Company) Fields() []ent.Field {
	return []ent.Field{
		idField("co"),
		field.String("name").NotEmpty(),
		field.String("platform_company_gid").Optional().Nillable(),
		field.Int("payment_terms_days").Min(1).Max(365),
		moneyField("credit_limit"),
		moneyField("outstanding"),
		// LedgerSeq is the sequence number of the company's last ledger entry. Appends take the
		// company's lock, so entries are numbered gaplessly in commit order.
		field.Int64("ledger_seq").Default(0),
		// UnappliedCredit is payment money without an order that found no open invoice yet; it
		// is applied to the next orders placed.
		moneyField("unapplied_credit"),
		// TimelineSeq numbers the company's timeline events, so events written in the same
		// microsecond (a lifted manual hold and the overdue hold behind it) keep their order.
		field.Int64("timeline_seq").Default(0),
		// The hold, if any: all hold_* columns are set together or all null.
		field.Enum("hold_kind").Values("manual", "overdue").Optional().Nillable(),
		field.String("hold_note").Optional().Nillable(),
		field.Time("hold_placed_at").Optional().Nillable(),
		field.String("hold_placed_by").Optional().Nillable(),
		field.String("hold_order_gid").Optional().Nillable(),
		field.Time("hold_due_at").Optional().Nillable(),
		field.Time("created_at").Immutable(),
		field.Time("updated_at"),
	}
}

// Edges of the Company.
func (Company) Edges() []ent.Edge {
	return []ent.Edge{
		edge.To("ledger_entries", LedgerEntry.Type),
		edge.To("timeline_events", TimelineEvent.Type),
	}
}

// Indexes serve the updated_since sync order and the status filter, and keep a platform
// company GID to one company of a store (contract §13: the platform's deliveries name it).
func (Company) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("store_id", "updated_at", "id"),
		index.Fields("store_id", "platform_company_gid").Unique(),
	}
}
