package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/dialect"
	"entgo.io/ent/dialect/entsql"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
	"github.com/shopspring/decimal"
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
		// BalanceAfter is the company's outstanding right after this entry: written when the
		// entry is appended under the company's lock, so it is the sum of the entries up to it.
		// The column's default only lets migration 0009 add it to a filled table (SQLite adds a
		// NOT NULL column only with one); the migration then writes every row's running sum, and
		// the service always sets it.
		field.Other("balance_after", decimal.Decimal{}).Immutable().
			SchemaType(map[string]string{dialect.SQLite: "TEXT", dialect.Postgres: "numeric"}).
			Annotations(entsql.Default("0")),
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
		// An order's entries, and among them its cancellation (the invoice views find the
		// cancellation among the order's entries; the reads of many invoices use the
		// invoice's own cancelled column since migration 0019).
		index.Fields("company_id", "platform_order_gid", "kind"),
	}
}
