package credit

import (
	"context"

	"github.com/creditd/creditd/tenant"
)

// Who may do what. API keys carry scopes (specification, Authentication); a store's staff act
// through the admin side (the command line, the staff console) and may do everything in their
// store, including what no key may do (approving applications, managing keys); the system
// works across stores only where the service itself must (authentication, the overdue sweep,
// purges, creating stores).

// Scopes an API key may carry (specification, Authentication).
const (
	ScopeReadCredit       = "read_credit"
	ScopeReadApplications = "read_applications"
	ScopeWriteCredit      = "write_credit"
)

// AllScopes lists the scopes in the order they are documented.
var AllScopes = []string{ScopeReadCredit, ScopeReadApplications, ScopeWriteCredit}

// errNoViewer answers an operation called without anyone to act for.
var errNoViewer = Errorf(CodeUnauthenticated, "authentication required")

// requireScope checks that the viewer may use an operation needing scope.
//
// Errors: unauthenticated without a viewer, insufficient_scope without the scope.
func requireScope(ctx context.Context, scope string) error {
	v, ok := tenant.FromContext(ctx)
	if !ok {
		return errNoViewer
	}
	if !v.HasScope(scope) {
		return Errorf(CodeInsufficientScope, "this call needs scope %s", scope)
	}
	return nil
}

// RequireScope is requireScope for transports that gate a field rather than an operation,
// like GraphQL's contact field, or that must refuse before reading a request's body.
//
// Errors: unauthenticated, insufficient_scope.
func RequireScope(ctx context.Context, scope string) error { return requireScope(ctx, scope) }

// requireStaff checks that a store's staff member is acting: the admin side's operations
// (keys, approvals, erasure, recording the platform's ledger entries) are not available to
// API keys (specification: "No operation approves or rejects an application").
//
// Errors: unauthenticated without a viewer, insufficient_scope for an API key or the system.
func requireStaff(ctx context.Context) (tenant.Viewer, error) {
	v, ok := tenant.FromContext(ctx)
	if !ok {
		return v, errNoViewer
	}
	if v.ActorType != tenant.ActorStaff || v.StoreID == "" {
		return v, Errorf(CodeInsufficientScope, "only the store's staff can do this, on the admin side")
	}
	return v, nil
}
