package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// LedgerEntry is one append-only movement of a company's balance. Entries are never edited
// or deleted.
type LedgerEntry struct{ ent.Schema }

// Mixin scopes ledger entries to their store.
func (LedgerEntry) Mixin() []ent.Mixin { return []ent.Mixin{TenantMixin{}} }

// Fields of the LedgerEntry.
func (LedgerEntry) Fields() []ent.Field {
	return []ent.Field{
		idField("le"),
		field.String("company_id").Immutable(),
		// Seq is gapless per company and follows commit order; ledger pages and after= sync
		// are keyed by it, never by timestamps.
		field.Int64("seq").Immutable(),
		field.Enum("kind").Values("order_placed", "payment", "refund", "cancellation", "adjustment", "opening_balance").Immutable(),
		immutableMoneyField("amount"),
		field.String("platform_order_gid").Optional().Nillable().Immutable(),
		field.String("note").Optional().Nillable().Immutable(),
		field.Time("occurred_at").Immutable(),
		field.Time("created_at").Immutable(),
		// RecordedByType and RecordedByLabel are who appended the entry (a timeline actor:
		// api_key, staff, system or platform, and its label), so the ledger shows who recorded
		// each entry. Null on entries appended before they were kept.
		field.String("recorded_by_type").Optional().Nillable().Immutable(),
		field.String("recorded_by_label").Optional().Nillable().Immutable(),
	}
}

// Edges of the LedgerEntry.
func (LedgerEntry) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("company", Company.Type).Ref("ledger_entries").Field("company_id").Unique().Required().Immutable(),
	}
}

// Indexes of the LedgerEntry.
func (LedgerEntry) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("company_id", "seq").Unique(),
		index.Fields("company_id", "platform_order_gid"),
	}
}
