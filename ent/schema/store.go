package schema

import (
	"context"

	"entgo.io/ent"
	"entgo.io/ent/schema/field"

	"github.com/creditd/creditd/ent/intercept"
)

// Store is one merchant's store: the tenant that owns every other record.
type Store struct{ ent.Schema }

// Fields of the Store.
func (Store) Fields() []ent.Field {
	return []ent.Field{
		idField("st"),
		field.String("name").NotEmpty(),
		field.String("currency").NotEmpty().Immutable(),
		// BufferPercent of the credit limit is held back from available credit (contract §5).
		field.Int("buffer_percent").Default(5).Min(0).Max(50),
		// Locale is how the store's staff write numbers (a BCP 47 language, "de" or "de-AT"):
		// the console reads amounts typed as "10.000,00" in a store whose locale writes them
		// so, and "1500.00" in any store. It changes no output of the API.
		field.String("locale").Default("en"),
		// CursorSecret signs this store's pagination cursors, so a tampered cursor or one from
		// another store is refused instead of decoded.
		field.Bytes("cursor_secret").Sensitive().Immutable(),
		field.Time("created_at").Immutable(),
		// EventSeq is the seq of the store's last event (ent/schema/event.go). Each write
		// increments it in its transaction, last of its locks (after the company's), so on
		// PostgreSQL the row lock orders the store's events by commit. Rows cached by
		// credit.Service carry a stale value; the counter is only ever read by its UPDATE.
		field.Int64("event_seq").Default(0),
		// ReminderDays is the reminder schedule (contract §17): up to 10 offsets in days
		// relative to an invoice's due_at, strictly increasing, each from -30 to 365; level n
		// is the n-th. Empty (the default) sends no reminder. Changes are on store_changes.
		field.Ints("reminder_days").Optional(),
	}
}

// Interceptors let a viewer see only its own store.
func (Store) Interceptors() []ent.Interceptor {
	return []ent.Interceptor{intercept.TraverseFunc(func(ctx context.Context, q intercept.Query) error {
		return restrictToStore(ctx, q, "id")
	})}
}
