package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/dialect"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// Event is one entry of a store's event feed (GET /v1/events, webhooks): the transactional
// outbox. Every write appends exactly one event in its own transaction, so an event exists if
// and only if its change committed. Events are never edited; the retention sweep deletes the
// oldest ones.
type Event struct{ ent.Schema }

// Mixin scopes events to their store.
func (Event) Mixin() []ent.Mixin { return []ent.Mixin{TenantMixin{}} }

// Fields of the Event.
func (Event) Fields() []ent.Field {
	return []ent.Field{
		idField("ev"),
		// Seq is gapless per store and assigned under the store row's lock (stores.event_seq),
		// held until commit, so events become visible in seq order; after= sync and the feed's
		// pages are keyed by it, never by timestamps.
		field.Int64("seq").Immutable(),
		field.String("type").Immutable(),
		field.Time("occurred_at").Immutable(),
		// Data is the event's "data" member as JSON text: {"object":{...},"previous":{...}},
		// stored as encoded so that every reader (the feed, webhook deliveries) serves the
		// same bytes.
		field.Text("data").Immutable().
			SchemaType(map[string]string{dialect.SQLite: "text", dialect.Postgres: "text"}),
	}
}

// Indexes: the feed reads a store's events by seq; the retention sweep deletes by age.
func (Event) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("store_id", "seq").Unique(),
		index.Fields("occurred_at"),
	}
}
