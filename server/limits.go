package server

import (
	"context"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/httpapi"
	"github.com/creditd/creditd/ratelimit"
	"github.com/creditd/creditd/tenant"
)

// Defaults of contract §2 and §8.
const (
	DefaultRateLimit        = 120
	DefaultAuthFailureLimit = 30
)

// quota lets a handler charge a request more than once: GraphQL charges each mutation field
// beyond the first.
type quota struct {
	limiter ratelimit.Limiter
	key     string
	w       http.ResponseWriter
}

type quotaKey struct{}

// ChargeExtra takes n more requests from the caller's store allowance and refreshes the
// X-RateLimit-Remaining header. It returns the contract's rate_limited error, with
// Retry-After set, when the allowance is short.
func ChargeExtra(ctx context.Context, n int) error {
	q, ok := ctx.Value(quotaKey{}).(*quota)
	if !ok || n <= 0 {
		return nil
	}
	d, err := q.limiter.Take(ctx, q.key, n)
	if err != nil {
		return nil // a limiter outage never fails a request
	}
	setRateHeaders(q.w, d)
	if !d.Allowed {
		return errRateLimited(q.w, d)
	}
	return nil
}

func setRateHeaders(w http.ResponseWriter, d ratelimit.Decision) {
	w.Header().Set("X-RateLimit-Limit", strconv.Itoa(d.Limit))
	w.Header().Set("X-RateLimit-Remaining", strconv.Itoa(d.Remaining))
}

// errRateLimited is the 429 of the store's limit, with Retry-After set on w (nil: a stream
// whose response has begun).
func errRateLimited(w http.ResponseWriter, d ratelimit.Decision) error {
	secs := max(1, int(math.Ceil(d.RetryAfter.Seconds())))
	if w != nil {
		w.Header().Set("Retry-After", strconv.Itoa(secs))
	}
	return credit.Errorf(httpapi.CodeRateLimited, "too many requests for this store: at most %d a minute; retry after %d s", d.Limit, secs)
}

// limitStore charges one request to the authenticated store's allowance (REST and GraphQL
// share it) and answers 429 through writeErr when it is spent.
func (s *Server) limitStore(next http.Handler, writeErr func(http.ResponseWriter, *http.Request, error)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v, _ := tenant.FromContext(r.Context())
		key := "store:" + v.StoreID
		d, err := s.limiter.Take(r.Context(), key, 1)
		if err != nil {
			s.log.WarnContext(r.Context(), "rate limiter unavailable; request allowed", "request_id", httpapi.RequestID(r.Context()), "error", err.Error())
			next.ServeHTTP(w, r)
			return
		}
		setRateHeaders(w, d)
		if !d.Allowed {
			writeErr(w, r, errRateLimited(w, d))
			return
		}
		ctx := context.WithValue(r.Context(), quotaKey{}, &quota{limiter: s.limiter, key: key, w: w})
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// newLimiters builds the in-memory limiters unless cfg supplies shared ones.
func newLimiters(cfg Config, now func() time.Time) (store, auth ratelimit.Limiter) {
	store = cfg.Limiter
	if store == nil {
		limit := cfg.RateLimit
		if limit <= 0 {
			limit = DefaultRateLimit
		}
		store = ratelimit.NewMemory(limit, time.Minute, now)
	}
	auth = cfg.AuthLimiter
	if auth == nil {
		authLimit := cfg.AuthFailureLimit
		if authLimit <= 0 {
			authLimit = DefaultAuthFailureLimit
		}
		auth = ratelimit.NewMemory(authLimit, time.Minute, now)
	}
	return store, auth
}
