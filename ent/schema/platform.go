package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// PlatformConnection ties a store to its shop on the commerce platform (contract §13): the
// shop's domain names the store on every delivery, and the secret, sealed like webhook signing
// secrets, signs them. One per store; a shop domain belongs to one store.
type PlatformConnection struct{ ent.Schema }

// Mixin scopes connections to their store and gives them the platform's rotating app secret.
func (PlatformConnection) Mixin() []ent.Mixin {
	return []ent.Mixin{TenantMixin{}, RotatingSecretMixin{}}
}

// Fields of the PlatformConnection.
func (PlatformConnection) Fields() []ent.Field {
	return []ent.Field{
		idField("pc"),
		field.String("shop_domain").NotEmpty(),
		field.Time("created_at").Immutable(),
		field.Time("updated_at"),
	}
}

// Indexes: a shop names one store, and a store has one shop.
func (PlatformConnection) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("shop_domain").Unique(),
		index.Fields("store_id").Unique(),
	}
}

// PlatformDelivery is one row of a store's inbox: a delivery of the platform's, recorded in
// the transaction that applies it. The unique webhook id makes a retry an INSERT that
// conflicts; the unique object key (the platform object the delivery is about) makes the same
// object under another webhook id one too, recorded as a duplicate naming the first. The
// status is the only moving part.
type PlatformDelivery struct{ ent.Schema }

// Mixin scopes deliveries to their store.
func (PlatformDelivery) Mixin() []ent.Mixin { return []ent.Mixin{TenantMixin{}} }

// Fields of the PlatformDelivery.
func (PlatformDelivery) Fields() []ent.Field {
	return []ent.Field{
		idField("pd"),
		field.String("webhook_id").NotEmpty().Immutable(),
		field.String("topic").Immutable(),
		field.Time("triggered_at").Optional().Nillable().Immutable(),
		// Body is the raw body as signed, kept so that a failed delivery can be retried.
		field.Bytes("body").Immutable(),
		// ObjectKey names the platform object ("payment:gid://platform/Payment/7"); null for a
		// duplicate, an unparseable body and ignored topics.
		field.String("object_key").Optional().Nillable().Immutable(),
		// OrderGid is the order the delivery is about, which a waiting one waits for.
		field.String("order_gid").Optional().Nillable(),
		field.Enum("status").Values("applied", "ignored", "waiting", "failed", "duplicate"),
		field.String("reason").Optional().Nillable(),
		// DuplicateOf is the delivery that recorded the same platform object first.
		field.String("duplicate_of").Optional().Nillable().Immutable(),
		field.String("company_id").Optional().Nillable(),
		field.String("ledger_entry_id").Optional().Nillable(),
		field.Time("received_at").Immutable(),
		field.Time("updated_at"),
	}
}

// Indexes: the two unique keys that de-duplicate, a store's rows by status in arrival order,
// and the rows waiting for an order.
func (PlatformDelivery) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("store_id", "webhook_id").Unique(),
		index.Fields("store_id", "object_key").Unique(),
		index.Fields("store_id", "status", "received_at"),
		index.Fields("store_id", "order_gid", "status"),
	}
}
