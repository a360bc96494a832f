package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// InvoiceReminder is one reminder level emitted for an invoice (contract §17): the row and its
// invoice.reminder_due event are written in one transaction, and the unique index on (invoice,
// level) decides, by an INSERT that conflicts, which of several sweeps (instances, restarts,
// concurrent runs) emits it: exactly once per invoice and level. Rows are only ever added.
type InvoiceReminder struct{ ent.Schema }

// Mixin scopes the reminders to their store.
func (InvoiceReminder) Mixin() []ent.Mixin { return []ent.Mixin{TenantMixin{}} }

// Fields of the InvoiceReminder.
func (InvoiceReminder) Fields() []ent.Field {
	return []ent.Field{
		idField("rem"),
		field.String("invoice_id").Immutable(),
		// Level is the n-th offset of the store's schedule when it was emitted (1-based).
		field.Int("level").Immutable(),
		// OffsetDays is that offset, in days after the invoice's due_at (negative: before).
		field.Int("offset_days").Immutable(),
		// DueAt is the invoice's due_at plus OffsetDays: the moment the level fell due.
		field.Time("due_at").Immutable(),
		// EventID is the invoice.reminder_due event written with the row.
		field.String("event_id").Immutable(),
		field.Time("created_at").Immutable(),
	}
}

// Indexes: one row per invoice and level, which is the exactly-once rule itself.
func (InvoiceReminder) Indexes() []ent.Index {
	return []ent.Index{index.Fields("invoice_id", "level").Unique()}
}
