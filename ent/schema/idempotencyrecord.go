package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// IdempotencyRecord remembers a write made with an Idempotency-Key: the request it answered and,
// once the write committed, its response, stored in the same transaction as the write itself.
type IdempotencyRecord struct{ ent.Schema }

// Mixin scopes idempotency keys to their store.
func (IdempotencyRecord) Mixin() []ent.Mixin { return []ent.Mixin{TenantMixin{}} }

// Fields of the IdempotencyRecord.
func (IdempotencyRecord) Fields() []ent.Field {
	return []ent.Field{
		idField("idem"),
		field.String("key").Immutable(),
		// Fingerprint is the SHA-256 of method, path and canonical JSON body.
		field.String("fingerprint").Immutable(),
		// Completed is false while the first request is still running.
		field.Bool("completed").Default(false),
		// LockedUntil bounds how long an unfinished request holds the key, so a crashed
		// instance does not block the key forever.
		field.Time("locked_until"),
		// Claim identifies the request that holds the key; only that request may complete it.
		field.String("claim"),
		// Response is the transport's response to the first request, stored as the transport
		// encoded it and replayed byte for byte; the domain never reads it.
		field.Bytes("response").Optional(),
		field.Time("created_at").Immutable(),
		field.Time("expires_at"),
	}
}

// Indexes: a key is unique within its store.
func (IdempotencyRecord) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("store_id", "key").Unique(),
		index.Fields("expires_at"),
	}
}
