package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// APIKey is a store's API key: a label, scopes, and one or more secrets (more than one only
// during a rotation's grace period).
type APIKey struct{ ent.Schema }

// Mixin scopes keys to their store.
func (APIKey) Mixin() []ent.Mixin { return []ent.Mixin{TenantMixin{}} }

// Fields of the APIKey.
func (APIKey) Fields() []ent.Field {
	return []ent.Field{
		idField("key"),
		field.String("label").NotEmpty(),
		field.Strings("scopes"),
		field.Time("created_at").Immutable(),
		field.Time("last_used_at").Optional().Nillable(),
		field.Time("revoked_at").Optional().Nillable(),
	}
}

// Edges of the APIKey.
func (APIKey) Edges() []ent.Edge {
	return []ent.Edge{edge.To("secrets", APIKeySecret.Type)}
}

// APIKeySecret is one secret of a key, stored only as its SHA-256 hash.
type APIKeySecret struct{ ent.Schema }

// Mixin scopes secrets to their store.
func (APIKeySecret) Mixin() []ent.Mixin { return []ent.Mixin{TenantMixin{}} }

// Fields of the APIKeySecret.
func (APIKeySecret) Fields() []ent.Field {
	return []ent.Field{
		idField("ks"),
		field.String("key_id").Immutable(),
		// Hash is the hex SHA-256 of the secret; the secret itself is never stored.
		field.String("hash").Immutable().Unique().Sensitive(),
		field.Time("created_at").Immutable(),
		// ExpiresAt is set when the secret is rotated out; nil while it is the current secret.
		field.Time("expires_at").Optional().Nillable(),
	}
}

// Edges of the APIKeySecret.
func (APIKeySecret) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("key", APIKey.Type).Ref("secrets").Field("key_id").Unique().Required().Immutable(),
	}
}

// Indexes of the APIKeySecret.
func (APIKeySecret) Indexes() []ent.Index {
	return []ent.Index{index.Fields("key_id")}
}
