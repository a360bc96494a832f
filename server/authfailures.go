package server

import (
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/httpapi"
	"github.com/creditd/creditd/ratelimit"
)

// authFailures is contract §2's failed-authentication limit: per client address, at most
// limit failures a minute. It counts and refuses only requests whose credentials fail; a
// request with a valid key is never refused by it, so a client retrying a revoked key (or a
// guesser) behind the same load balancer or NAT as everyone else denies service to nobody but
// itself. Guessing is still slowed: every failure beyond the limit is answered 429 instead of
// 401, whatever the key.
type authFailures struct {
	limiter ratelimit.Limiter
	now     func() time.Time

	failures  prometheus.Counter
	throttled prometheus.Counter

	mu sync.Mutex
	// refusedAt is when each address last had a failure refused, for the gauge of throttled
	// addresses; entries older than a minute are dropped when it is read or grows.
	refusedAt map[string]time.Time
}

// throttledWindow is how recently an address must have been refused to count as throttled.
const throttledWindow = time.Minute

func newAuthFailures(limiter ratelimit.Limiter, now func() time.Time, reg prometheus.Registerer) *authFailures {
	a := &authFailures{
		limiter:   limiter,
		now:       now,
		refusedAt: map[string]time.Time{},
		failures: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "creditd_auth_failures_total",
			Help: "Requests whose API key failed authentication (missing, malformed, unknown, revoked or expired), over REST and GraphQL.",
		}),
		throttled: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "creditd_auth_failures_throttled_total",
			Help: "Failed authentications answered 429 because their client address was over the failed-authentication limit.",
		}),
	}
	reg.MustRegister(a.failures, a.throttled, prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "creditd_auth_throttled_addresses",
		Help: "Client addresses that had a failed authentication refused by the failed-authentication limit in the last minute, on this instance.",
	}, func() float64 { return float64(a.throttledAddresses()) }))
	return a
}

// refuse answers a request whose authentication failed with err through writeErr: a 401 (or
// whatever err is) while the client address is within the limit, else 429 rate_limited naming
// the failed-authentication limit, with Retry-After. Only an authentication failure is counted.
func (a *authFailures) refuse(w http.ResponseWriter, r *http.Request, err error, writeErr func(http.ResponseWriter, *http.Request, error)) {
	if credit.CodeOf(err) == credit.CodeUnauthenticated {
		if d, limited := a.fail(r); limited {
			err = errAuthFailuresLimited(w, d)
		}
	}
	writeErr(w, r, err)
}

// fail counts one failed authentication of r against its client address and reports whether
// the address is over the limit (then the failure is to be answered 429, with d's RetryAfter).
// A door that cannot answer through refuse (a stream already open) calls it itself. A limiter
// that fails lets the 401 through.
func (a *authFailures) fail(r *http.Request) (d ratelimit.Decision, limited bool) {
	a.failures.Inc()
	addr := httpapi.ClientAddress(r)
	if info := infoFrom(r.Context()); info != nil {
		info.client = addr
	}
	d, err := a.limiter.Take(r.Context(), "addr:"+addr, 1)
	if err != nil || d.Allowed {
		return d, false
	}
	a.throttled.Inc()
	a.markThrottled(addr)
	return d, true
}

// errAuthFailuresLimited is the 429 of the failed-authentication limit, with Retry-After set
// on w (nil: a stream whose response has begun).
// It names that limit, not the store's: the request's key was never valid, so no store's
// allowance is in question.
func errAuthFailuresLimited(w http.ResponseWriter, d ratelimit.Decision) error {
	secs := max(1, int(math.Ceil(d.RetryAfter.Seconds())))
	if w != nil {
		w.Header().Set("Retry-After", strconv.Itoa(secs))
	}
	return credit.Errorf(httpapi.CodeRateLimited, "too many failed authentications from this address: the failed-authentication limit is %d a minute; retry after %d s (a request with a valid API key is not limited by it)", d.Limit, secs)
}

func (a *authFailures) markThrottled(addr string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	now := a.now()
	if len(a.refusedAt) >= 1024 {
		a.expire(now)
	}
	a.refusedAt[addr] = now
}

func (a *authFailures) throttledAddresses() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.expire(a.now())
	return len(a.refusedAt)
}

// expire drops the addresses not refused within throttledWindow; a.mu is held.
func (a *authFailures) expire(now time.Time) {
	for addr, at := range a.refusedAt {
		if now.Sub(at) >= throttledWindow {
			delete(a.refusedAt, addr)
		}
	}
}
