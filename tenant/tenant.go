// Package tenant carries the caller's identity (the viewer) through a request's context.
//
// The data layer reads it to scope every query and mutation of a store-owned entity to the
// viewer's store, so no handler has to remember a store filter. API keys and a store's staff
// (the command line, the staff console) are viewers of one store. Work that must see every
// store (authenticating a key, the overdue sweep, purges, creating a store) asks for it
// explicitly with System.
package tenant

import (
	"context"
	"errors"
)

// Actor types, recorded on timeline events.
const (
	ActorAPIKey = "api_key"
	ActorStaff  = "staff"
	ActorSystem = "system"
	// ActorPlatform is the commerce platform, whose signed deliveries record orders,
	// payments, refunds and cancellations (contract §13).
	ActorPlatform = "platform"
)

// Viewer is the identity on whose behalf the data layer runs a query.
type Viewer struct {
	// StoreID is the only store whose rows the viewer may read or write. Empty for system work.
	StoreID string
	// ActorType is "api_key", "staff" or "system"; it is recorded on timeline events.
	ActorType string
	// Label names the actor: an API key's label, a staff member's name, or "system".
	Label string
	// KeyID is the API key's ID when ActorType is "api_key".
	KeyID string
	// Scopes are the key's scopes; empty for staff and system, which are not scope-checked.
	Scopes []string
	// system marks deliberate cross-store work; only System can set it.
	system bool
}

// IsSystem reports whether the viewer may see every store.
func (v Viewer) IsSystem() bool { return v.system }

// HasScope reports whether an API key viewer carries scope s. Staff and system viewers act
// through the admin side, which is not scope-checked, so they have every scope.
func (v Viewer) HasScope(s string) bool {
	if v.ActorType != ActorAPIKey {
		return true
	}
	for _, have := range v.Scopes {
		if have == s {
			return true
		}
	}
	return false
}

type ctxKey struct{}

// NewContext returns a context that carries v.
func NewContext(ctx context.Context, v Viewer) context.Context {
	return context.WithValue(ctx, ctxKey{}, v)
}

// FromContext returns the viewer carried by ctx, and false when there is none.
func FromContext(ctx context.Context) (Viewer, bool) {
	v, ok := ctx.Value(ctxKey{}).(Viewer)
	return v, ok
}

// System returns a context for deliberate cross-store work by the service itself, labelled
// for the timeline as the system actor.
func System(ctx context.Context) context.Context {
	return NewContext(ctx, Viewer{ActorType: ActorSystem, Label: "system", system: true})
}

// Staff returns a context for a member of one store's staff, named name, acting through the
// admin side (the command line or the staff console).
func Staff(ctx context.Context, storeID, name string) context.Context {
	return NewContext(ctx, Viewer{StoreID: storeID, ActorType: ActorStaff, Label: name})
}

// APIKey returns a context for a request authenticated with an API key of storeID.
func APIKey(ctx context.Context, storeID, keyID, label string, scopes []string) context.Context {
	return NewContext(ctx, Viewer{StoreID: storeID, ActorType: ActorAPIKey, Label: label, KeyID: keyID, Scopes: scopes})
}

// Platform returns ctx acting as the commerce platform in storeID: what its signed deliveries
// write is scoped to that store like any request and attributed to the actor "platform".
func Platform(ctx context.Context, storeID string) context.Context {
	return NewContext(ctx, Viewer{StoreID: storeID, ActorType: ActorPlatform, Label: "platform"})
}

// ErrNoViewer is the data layer's answer to a query or a write made without a viewer in its
// context. Every path into the database must say on whose behalf it runs; forgetting is a bug,
// not a leak.
var ErrNoViewer = errors.New("data layer: no viewer in context")

// ErrOtherStore is the data layer's answer to a new row of a store-owned table given another
// store than the viewer's.
var ErrOtherStore = errors.New("data layer: row of another store")

// CheckNewRow is the rule for every new row of a store-owned table, whether ent writes it
// (the TenantMixin's hook) or the data layer writes it as SQL (database.InsertNumbered): it
// returns the store the row is written in. For a store's viewer that is the viewer's store,
// and a row given another store is refused; storeID "" means the viewer's. System work
// writes in any store, and gets storeID back as given.
//
// Errors: ErrNoViewer, ErrOtherStore.
func CheckNewRow(ctx context.Context, storeID string) (string, error) {
	v, ok := FromContext(ctx)
	switch {
	case !ok:
		return "", ErrNoViewer
	case v.IsSystem():
		return storeID, nil
	case storeID != "" && storeID != v.StoreID:
		return "", ErrOtherStore
	}
	return v.StoreID, nil
}
