// Package ratelimit decides whether a caller may make another request: a token bucket per key
// (a store, or a client address for failed authentications) that holds a minute's allowance
// and refills continuously, the GCRA behaviour that golang.org/x/time/rate implements in
// memory and go-redis/redis_rate implements on a shared Redis.
package ratelimit

import (
	"context"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Decision is the outcome of asking for tokens.
type Decision struct {
	Allowed bool
	// Limit is the number of requests a full minute allows.
	Limit int
	// Remaining is how many requests may still be made right now.
	Remaining int
	// RetryAfter is how long to wait before the request would be allowed (when not allowed).
	RetryAfter time.Duration
}

// Limiter hands out request allowances per key.
type Limiter interface {
	// Take takes n tokens for key if all n are available.
	Take(ctx context.Context, key string, n int) (Decision, error)
	// Peek reports the key's state without taking anything.
	Peek(ctx context.Context, key string) (Decision, error)
}

// Memory is a Limiter for one instance. Buckets of keys idle for a whole period are full
// again, so they are dropped: memory stays bounded by the keys active in the last period.
type Memory struct {
	limit  int
	period time.Duration
	now    func() time.Time

	mu        sync.Mutex
	buckets   map[string]*bucket
	lastSweep time.Time
}

type bucket struct {
	lim      *rate.Limiter
	lastSeen time.Time
}

// NewMemory returns a limiter allowing limit requests per period per key. now is the clock
// (nil for time.Now).
func NewMemory(limit int, period time.Duration, now func() time.Time) *Memory {
	if now == nil {
		now = time.Now
	}
	return &Memory{limit: limit, period: period, now: now, buckets: map[string]*bucket{}}
}

// Take implements Limiter.
func (m *Memory) Take(_ context.Context, key string, n int) (Decision, error) {
	now := m.now()
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sweep(now)
	b := m.bucket(key, now)
	r := b.lim.ReserveN(now, n)
	if !r.OK() {
		return Decision{Limit: m.limit, Remaining: m.remaining(b, now), RetryAfter: m.period}, nil
	}
	if delay := r.DelayFrom(now); delay > 0 {
		r.CancelAt(now)
		return Decision{Limit: m.limit, Remaining: m.remaining(b, now), RetryAfter: delay}, nil
	}
	return Decision{Allowed: true, Limit: m.limit, Remaining: m.remaining(b, now)}, nil
}

// Peek implements Limiter.
func (m *Memory) Peek(_ context.Context, key string) (Decision, error) {
	now := m.now()
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.buckets[key]
	if !ok {
		return Decision{Allowed: true, Limit: m.limit, Remaining: m.limit}, nil
	}
	tokens := b.lim.TokensAt(now)
	d := Decision{Allowed: tokens >= 1, Limit: m.limit, Remaining: m.remaining(b, now)}
	if !d.Allowed {
		d.RetryAfter = time.Duration((1 - tokens) * float64(m.period) / float64(m.limit))
	}
	return d, nil
}

// Len returns how many keys are tracked (for tests of the memory bound).
func (m *Memory) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.buckets)
}

func (m *Memory) bucket(key string, now time.Time) *bucket {
	b, ok := m.buckets[key]
	if !ok {
		every := m.period / time.Duration(m.limit)
		b = &bucket{lim: rate.NewLimiter(rate.Every(every), m.limit)}
		// A new limiter starts full at its first use.
		m.buckets[key] = b
	}
	b.lastSeen = now
	return b
}

func (m *Memory) remaining(b *bucket, now time.Time) int {
	t := int(b.lim.TokensAt(now))
	if t < 0 {
		return 0
	}
	return t
}

// sweep drops buckets idle for a whole period, at most once a period.
func (m *Memory) sweep(now time.Time) {
	if now.Sub(m.lastSweep) < m.period {
		return
	}
	m.lastSweep = now
	for k, b := range m.buckets {
		if now.Sub(b.lastSeen) >= m.period {
			delete(m.buckets, k)
		}
	}
}
