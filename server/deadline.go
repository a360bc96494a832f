package server

import (
	"context"
	"net/http"
	"strings"
	"time"
)

// DefaultDBTimeout is the deadline of a request's database work when serve --db-timeout is
// not given (contract §7, Outages).
const DefaultDBTimeout = 10 * time.Second

// withDeadline gives every request a context that ends d after it arrived, so that its
// database work (every statement runs on the request's context; a transaction's clean-up
// keeps the deadline, see database.detached) ends by then: a statement still running is
// cancelled (pgx closes its connection; PostgreSQL's statement_timeout, set to the same d by
// serve, stops it on the server's side), and the error, a deadline passed, is answered 503
// unavailable with Retry-After (database.IsUnavailable).
//
// Long-lived streams are not requests of this kind: a WebSocket upgrade or a Server-Sent
// Events request (Accept: text/event-stream) keeps its context, and whatever serves it bounds
// each operation's database work itself (PostgreSQL's statement_timeout, SQLite's busy
// timeout, set by serve to the same deadline, still bound each of its statements).
func withDeadline(d time.Duration, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if longLived(r) {
			next.ServeHTTP(w, r)
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), d)
		defer cancel()
		inner := r.WithContext(ctx)
		next.ServeHTTP(w, inner)
		// The mux sets the route's pattern on the request it served: hand it back to the
		// metrics and the access log outside (observe).
		r.Pattern = inner.Pattern
	})
}

// exportPath is the export's path (rest.ExportPattern).
const exportPath = "/v1/export"

// longLived reports whether r may open a long-lived stream: a protocol upgrade (WebSocket) or
// a request that accepts an event stream, or the export (GET /v1/export). (Subscription streams are routed away before the
// middleware chain that holds withDeadline; this keeps any other stream from a deadline too.)
func longLived(r *http.Request) bool {
	if r.Method == http.MethodGet && r.URL.Path == exportPath {
		// The export runs under its own limit (credit.ExportTimeout), not the requests'.
		return true
	}
	if r.Header.Get("Upgrade") != "" {
		return true
	}
	for _, accept := range r.Header.Values("Accept") {
		if strings.Contains(accept, "text/event-stream") {
			return true
		}
	}
	return false
}
