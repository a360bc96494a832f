package schema

import (
	"context"
	"errors"

	"entgo.io/ent"
	"entgo.io/ent/dialect"
	"entgo.io/ent/dialect/sql"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/mixin"
	"github.com/shopspring/decimal"

	"github.com/creditd/creditd/ent/intercept"
	"github.com/creditd/creditd/ids"
	"github.com/creditd/creditd/tenant"
)

// ErrNoViewer is returned by the data layer when a query runs without a viewer in its context
// (tenant.ErrNoViewer).
var ErrNoViewer = tenant.ErrNoViewer

// moneyField is an exact decimal column: TEXT on SQLite, whose NUMERIC affinity keeps only about
// 15 significant digits, and numeric on PostgreSQL.
func moneyField(name string) ent.Field {
	return field.Other(name, decimal.Decimal{}).
		SchemaType(map[string]string{dialect.SQLite: "TEXT", dialect.Postgres: "numeric"})
}

// immutableMoneyField is moneyField for columns written once, like a ledger amount.
func immutableMoneyField(name string) ent.Field {
	return field.Other(name, decimal.Decimal{}).Immutable().
		SchemaType(map[string]string{dialect.SQLite: "TEXT", dialect.Postgres: "numeric"})
}

// idField is a string primary key minted with the record's prefix.
func idField(prefix string) ent.Field {
	return field.String("id").Immutable().NotEmpty().DefaultFunc(func() string { return ids.New(prefix) })
}

// RotatingSecretMixin gives an entity a secret that a rotation replaces while the replaced one
// stays valid for a grace (credit/rotation.go states the rules): a platform connection's and a
// webhook endpoint's signing secrets. Both are sealed by webhook.Sealer (AES-256-GCM under the
// master key): they must be recoverable to sign or check a signature with, so they are
// encrypted, not hashed.
type RotatingSecretMixin struct{ mixin.Schema }

// Fields are the current secret and the one the last rotation replaced, valid until
// previous_secret_expires_at.
func (RotatingSecretMixin) Fields() []ent.Field {
	return []ent.Field{
		field.String("secret_sealed").Sensitive(),
		field.String("previous_secret_sealed").Optional().Nillable().Sensitive(),
		field.Time("previous_secret_expires_at").Optional().Nillable(),
	}
}

// TenantMixin gives an entity its store and scopes every query and mutation of it to the
// viewer's store. It is the only place where tenant isolation is written.
type TenantMixin struct{ mixin.Schema }

// Fields adds the owning store's ID.
func (TenantMixin) Fields() []ent.Field {
	return []ent.Field{field.String("store_id").Immutable().NotEmpty()}
}

// Edges ties the row to its store with a foreign key.
func (TenantMixin) Edges() []ent.Edge {
	return []ent.Edge{edge.To("store", Store.Type).Field("store_id").Unique().Required().Immutable()}
}

// Interceptors filter every query, including edge traversals, by the viewer's store.
func (TenantMixin) Interceptors() []ent.Interceptor {
	return []ent.Interceptor{intercept.TraverseFunc(func(ctx context.Context, q intercept.Query) error {
		return restrictToStore(ctx, q, "store_id")
	})}
}

// Hooks stamp new rows with the viewer's store and restrict updates and deletes to it.
func (TenantMixin) Hooks() []ent.Hook {
	return []ent.Hook{func(next ent.Mutator) ent.Mutator {
		return ent.MutateFunc(func(ctx context.Context, m ent.Mutation) (ent.Value, error) {
			if m.Op().Is(ent.OpCreate) {
				// The rule every new row follows, also those written as SQL.
				given, _ := m.Field("store_id")
				storeID, _ := given.(string)
				storeID, err := tenant.CheckNewRow(ctx, storeID)
				if err != nil {
					return nil, err
				}
				if storeID != "" {
					if err := m.SetField("store_id", storeID); err != nil {
						return nil, err
					}
				}
				return next.Mutate(ctx, m)
			}
			v, ok := tenant.FromContext(ctx)
			if !ok {
				return nil, ErrNoViewer
			}
			if v.IsSystem() {
				return next.Mutate(ctx, m)
			}
			w, ok := m.(interface{ WhereP(...func(*sql.Selector)) })
			if !ok {
				return nil, errors.New("data layer: mutation cannot be scoped to a store")
			}
			w.WhereP(sql.FieldEQ("store_id", v.StoreID))
			return next.Mutate(ctx, m)
		})
	}}
}

func restrictToStore(ctx context.Context, q intercept.Query, column string) error {
	v, ok := tenant.FromContext(ctx)
	if !ok {
		return ErrNoViewer
	}
	if !v.IsSystem() {
		q.WhereP(sql.FieldEQ(column, v.StoreID))
	}
	return nil
}
