package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// Invoice is the allocation state of one order_placed entry: what is still open on it after the
// entries that reference it and the unallocated payments applied to it (oldest first). It is
// maintained in the same transaction as each ledger append, so overdue detection reads one
// indexed row instead of replaying the ledger.
type Invoice struct{ ent.Schema }

// Mixin scopes invoices to their store.
func (Invoice) Mixin() []ent.Mixin { return []ent.Mixin{TenantMixin{}} }

// Fields of the Invoice.
func (Invoice) Fields() []ent.Field {
	return []ent.Field{
		idField("inv"),
		field.String("company_id").Immutable(),
		field.String("ledger_entry_id").Immutable().Unique(),
		field.Int64("seq").Immutable(),
		field.String("platform_order_gid").Immutable(),
		immutableMoneyField("amount"),
		moneyField("open_amount"),
		// Open is open_amount > 0, kept as a column so it can be indexed and compared on SQLite,
		// where amounts are TEXT.
		field.Bool("open"),
		// DueAt is occurred_at plus the company's NET days when the order was placed.
		field.Time("due_at").Immutable(),
		// SettledAt is the occurred_at of the entry whose allocation brought open_amount to zero
		// (contract §17's paid_at when the invoice is paid), null while it is open. Kept as a
		// column because payment behaviour averages it over many invoices, which must not
		// replay ledgers; set in the allocation's own transaction.
		field.Time("settled_at").Optional().Nillable(),
		// Cancelled is whether a cancellation entry references the invoice's order (the
		// invoice is cancelled, whatever was paid on it). Set, once, in the transaction that
		// appends the cancellation; migration 0019 set it for the invoices before it. Kept
		// as a column so that the store's figures, which read every invoice paid in a
		// window (207,000 in the large store), do not look each one's order up in the ledger.
		field.Bool("cancelled").Default(false),
		// The promise to pay (contract §17), all null when there is none: the UTC day the
		// company promised to pay by (its 00:00:00), the note, who recorded it and when.
		// PromiseBrokenAt is set, once, by the sweep that emitted invoice.promise_broken for
		// this promise (a conditional UPDATE decides which sweep does); a new promise clears it.
		field.Time("promised_for").Optional().Nillable(),
		field.String("promise_note").Optional().Nillable(),
		field.String("promise_recorded_by").Optional().Nillable(),
		field.Time("promise_recorded_at").Optional().Nillable(),
		field.Time("promise_broken_at").Optional().Nillable(),
		// The open dispute (contract §17), all null when there is none.
		field.String("dispute_reason").Optional().Nillable(),
		field.String("dispute_opened_by").Optional().Nillable(),
		field.Time("dispute_opened_at").Optional().Nillable(),
	}
}

// Indexes serve "oldest open invoice", "the invoice of this order" and the overdue sweep.
func (Invoice) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("company_id", "open", "seq"),
		index.Fields("company_id", "platform_order_gid"),
		index.Fields("open", "due_at"),
	}
}
