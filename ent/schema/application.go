package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// Application is a wholesale application. Its contact fields are personal data: they are shown
// only with scope read_applications and are overwritten, not hidden, on erasure.
type Application struct{ ent.Schema }

// Mixin scopes applications to their store.
func (Application) Mixin() []ent.Mixin { return []ent.Mixin{TenantMixin{}} }

// Fields of the Application.
func (Application) Fields() []ent.Field {
	return []ent.Field{
		idField("app"),
		field.Enum("status").Values("submitted", "in_review", "needs_info", "approved", "rejected").Default("submitted"),
		field.String("business_name").NotEmpty(),
		field.String("vat_number"),
		field.String("vat_status").Default("unverified"),
		field.String("vat_registry").Default("VIES"),
		field.Time("vat_checked_at").Optional().Nillable(),
		field.String("contact_name").Optional().Nillable().Sensitive(),
		field.String("contact_email").Optional().Nillable().Sensitive(),
		field.Bool("contact_redacted").Default(false),
		field.Time("submitted_at").Immutable(),
		// CompanyID is set when the application is approved and its company created.
		field.String("company_id").Optional().Nillable(),
		field.Time("updated_at"),
	}
}

// Indexes serve the newest-first list with and without the status filter.
func (Application) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("store_id", "submitted_at", "id"),
		index.Fields("store_id", "status", "submitted_at", "id"),
	}
}
