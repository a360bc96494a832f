package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// StaffMember is a person of a store's staff who signs in to the staff console with an email
// and a password. Their name is what the timeline shows for their actions.
type StaffMember struct{ ent.Schema }

// Mixin scopes staff members to their store.
func (StaffMember) Mixin() []ent.Mixin { return []ent.Mixin{TenantMixin{}} }

// Fields of the StaffMember.
func (StaffMember) Fields() []ent.Field {
	return []ent.Field{
		idField("stf"),
		field.String("name").NotEmpty(),
		// Email is stored trimmed and in lower case, and is unique across all stores: signing in
		// takes only an email and a password, so an email must name exactly one account.
		field.String("email").NotEmpty().Unique(),
		// PasswordHash is an Argon2id hash in the PHC string format, which carries its own
		// parameters and salt; the password itself is never stored.
		field.String("password_hash").Sensitive(),
		field.Time("created_at").Immutable(),
		field.Time("password_changed_at"),
		// DisabledAt is set when the member is disabled: they can no longer sign in, and their
		// sessions were deleted at that moment.
		field.Time("disabled_at").Optional().Nillable(),
	}
}

// Edges of the StaffMember.
func (StaffMember) Edges() []ent.Edge {
	return []ent.Edge{edge.To("sessions", StaffSession.Type)}
}

// StaffSession is one signed-in browser of a staff member. It lives in the database, so every
// instance behind a load balancer recognises it, and it stores only the SHA-256 of the session
// token the browser holds in its cookie.
type StaffSession struct{ ent.Schema }

// Mixin scopes sessions to their store.
func (StaffSession) Mixin() []ent.Mixin { return []ent.Mixin{TenantMixin{}} }

// Fields of the StaffSession.
func (StaffSession) Fields() []ent.Field {
	return []ent.Field{
		idField("ses"),
		field.String("staff_id").Immutable(),
		// TokenHash is the hex SHA-256 of the session token; the token itself is never stored.
		field.String("token_hash").Immutable().Unique().Sensitive(),
		field.Time("created_at").Immutable(),
		// LastSeenAt moves with the session's use (at most once a minute) and ends it after the
		// idle timeout.
		field.Time("last_seen_at"),
		// ExpiresAt is the absolute end of the session, however active it is.
		field.Time("expires_at").Immutable(),
		// Flash is the result of the last action, shown once by the page the browser is
		// redirected to (POST-redirect-GET), on whichever instance serves that page.
		field.String("flash").Optional().Nillable(),
	}
}

// Edges of the StaffSession.
func (StaffSession) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("staff", StaffMember.Type).Ref("sessions").Field("staff_id").Unique().Required().Immutable(),
	}
}

// Indexes of the StaffSession.
func (StaffSession) Indexes() []ent.Index {
	return []ent.Index{index.Fields("staff_id")}
}
