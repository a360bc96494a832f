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
		// NameKey is the name without case and accents (credit.NameKey), kept by the domain at
		// every write, so that a search is a match on an indexed column (contract §6).
		field.String("name_key").Default(""),
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
		// Sort keys of the orderings of contract §6, kept by the domain whenever the figures
		// change (credit/orderkeys.go): fixed-width digit strings whose byte order is the
		// figures' exact order on both databases (SQLite keeps money as TEXT). UtilizationKey is
		// empty for a zero credit limit, which sorts last in both directions.
		field.String("outstanding_key").Default(""),
		field.String("credit_limit_key").Default(""),
		field.String("available_key").Default(""),
		field.String("utilization_key").Default(""),
	}
}

// Edges of the Company.
func (Company) Edges() []ent.Edge {
	return []ent.Edge{
		edge.To("ledger_entries", LedgerEntry.Type),
		edge.To("timeline_events", TimelineEvent.Type),
	}
}

// Indexes serve the updated_since sync order, the other orderings and the search, and keep a platform
// company GID to one company of a store (contract §13: the platform's deliveries name it).
func (Company) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("store_id", "updated_at", "id"),
		index.Fields("store_id", "platform_company_gid").Unique(),
		// The orderings of contract §6, each read along its index from the keyset cursor. The
		// name order is the normalised name's, whose index also serves SQLite's search: its scan
		// reads the store's names from the index, not the rows (on PostgreSQL a trigram index,
		// created by migration 0010 where pg_trgm is available, serves the search).
		index.Fields("store_id", "name_key", "id"),
		index.Fields("store_id", "outstanding_key", "id"),
		index.Fields("store_id", "credit_limit_key", "id"),
		index.Fields("store_id", "available_key", "id"),
		index.Fields("store_id", "utilization_key", "id"),
	}
}
