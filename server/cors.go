package server

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/rs/cors"
)

// CORS (contract §14): off unless serve is given origins. A browser page on a listed origin may
// call the API with a key: its preflight OPTIONS is answered 204 with the methods and request
// headers allowed, before authentication and the rate limit (a preflight carries no key), and
// the answers name the origin and expose the headers a dashboard reads. Any other origin gets no
// CORS header at all, so its browser withholds the answer. No credentials (cookies) are allowed:
// the API authenticates with the Authorization header, which the page sets itself.

// corsMethods are the methods of the API's routes.
var corsMethods = []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodDelete}

// corsRequestHeaders are the headers a page may send beyond the CORS-safelisted ones: the key,
// JSON bodies, idempotency, a request id of its own, conditional requests, and a subscription's
// position over SSE (graphql-sse's headers function sends Last-Event-ID from a page).
var corsRequestHeaders = []string{"Authorization", "Content-Type", "Idempotency-Key", "X-Request-Id", "If-None-Match", "Last-Event-ID"}

// corsExposedHeaders are the response headers a page may read beyond the safelisted ones.
var corsExposedHeaders = []string{
	"X-Request-Id", "X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset",
	"Retry-After", "Idempotent-Replayed", "ETag", "WWW-Authenticate",
}

// corsMaxAge is how long a browser may reuse a preflight's answer, in seconds.
const corsMaxAge = 600

// CheckCORSOrigin checks an origin given to serve --cors-origin: a scheme (http or https) and
// a host with an optional port, as a browser sends it in Origin, without path or wildcard.
func CheckCORSOrigin(origin string) error {
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
		u.Path != "" || u.RawQuery != "" || u.Fragment != "" || strings.ContainsAny(origin, "*") || strings.HasSuffix(origin, "?") || strings.HasSuffix(origin, "#") {
		return fmt.Errorf("a CORS origin is a scheme and host as a browser sends it, such as https://dashboard.example.com or http://localhost:3000; got %q", origin)
	}
	if origin != u.Scheme+"://"+strings.ToLower(u.Host) {
		return fmt.Errorf("a CORS origin is written in lower case, as browsers send it: %s", u.Scheme+"://"+strings.ToLower(u.Host))
	}
	return nil
}

// withCORS wraps next in rs/cors for origins, or returns next unchanged when there are none.
func withCORS(origins []string, next http.Handler) http.Handler {
	if len(origins) == 0 {
		return next
	}
	return cors.New(cors.Options{
		AllowedOrigins: origins,
		AllowedMethods: corsMethods,
		AllowedHeaders: corsRequestHeaders,
		ExposedHeaders: corsExposedHeaders,
		MaxAge:         corsMaxAge,
	}).Handler(next)
}
