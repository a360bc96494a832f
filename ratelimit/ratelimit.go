// Package ratelimit decides whether a caller may make another request: at most limit requests
// admitted in any window of one period per key (a store, or a client address for failed
// authentications), exactly (contract §8). Each key keeps a sliding log of its admitted
// requests' times: a ring of at most limit times in memory (Memory), a sorted set updated by one
// Lua script in Redis (Redis) when instances share the limit. A request is admitted when fewer
// than limit of its key's admissions are younger than a period; when refused it may retry once
// the oldest admission in the window is a period old, which is what RetryAfter says.
//
// (A token bucket refilling continuously, which this package was before, admits a full
// allowance at once and then the refill: up to twice the limit in a minute.)
package ratelimit

import (
	"context"
	"sync"
	"time"
)

// Decision is the outcome of asking for admission.
type Decision struct {
	Allowed bool
	// Limit is the number of requests a period admits.
	Limit int
	// Remaining is how many requests may still be admitted right now.
	Remaining int
	// RetryAfter is how long until the request would be admitted (when not allowed): until
	// enough of the oldest admissions in the window are a period old.
	RetryAfter time.Duration
}

// Limiter admits requests per key.
type Limiter interface {
	// Take admits n requests for key if all n fit in the window; otherwise it admits none.
	Take(ctx context.Context, key string, n int) (Decision, error)
	// Peek reports whether one more request would be admitted, without admitting it.
	Peek(ctx context.Context, key string) (Decision, error)
}

// Memory is a Limiter for one instance. Logs of keys idle for a whole period are empty, so they
// are dropped: memory stays bounded by the keys active in the last period, at most limit times
// each.
type Memory struct {
	limit  int
	period time.Duration
	now    func() time.Time

	mu        sync.Mutex
	logs      map[string]*log
	lastSweep time.Time
}

// log is a key's admitted times, oldest first: a ring that grows as needed up to limit
// entries (a limit of a billion, as benchmarks set, costs only what is admitted).
type log struct {
	times []time.Time // the live entries are times[start:start+count] modulo len(times)
	start int
	count int
}

// at returns the i-th oldest admitted time.
func (l *log) at(i int) time.Time { return l.times[(l.start+i)%len(l.times)] }

// expire drops the admissions that are a period old or older at now.
func (l *log) expire(now time.Time, period time.Duration) {
	for l.count > 0 && now.Sub(l.at(0)) >= period {
		l.start = (l.start + 1) % len(l.times)
		l.count--
	}
}

func (l *log) push(t time.Time) {
	if l.count == len(l.times) {
		grown := make([]time.Time, max(8, 2*l.count))
		for i := range l.count {
			grown[i] = l.at(i)
		}
		l.times, l.start = grown, 0
	}
	l.times[(l.start+l.count)%len(l.times)] = t
	l.count++
}

// NewMemory returns a limiter admitting at most limit requests per key in any window of
// period. now is the clock (nil for time.Now).
func NewMemory(limit int, period time.Duration, now func() time.Time) *Memory {
	if now == nil {
		now = time.Now
	}
	return &Memory{limit: limit, period: period, now: now, logs: map[string]*log{}}
}

// Take implements Limiter.
func (m *Memory) Take(_ context.Context, key string, n int) (Decision, error) {
	now := m.now()
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sweep(now)
	l, ok := m.logs[key]
	if !ok {
		l = &log{}
		m.logs[key] = l
	}
	l.expire(now, m.period)
	if n > 0 && l.count+n <= m.limit {
		for range n {
			l.push(now)
		}
		return Decision{Allowed: true, Limit: m.limit, Remaining: m.limit - l.count}, nil
	}
	return m.refusal(l, now, n), nil
}

// Peek implements Limiter.
func (m *Memory) Peek(_ context.Context, key string) (Decision, error) {
	now := m.now()
	m.mu.Lock()
	defer m.mu.Unlock()
	l, ok := m.logs[key]
	if !ok {
		return Decision{Allowed: true, Limit: m.limit, Remaining: m.limit}, nil
	}
	l.expire(now, m.period)
	if l.count < m.limit {
		return Decision{Allowed: true, Limit: m.limit, Remaining: m.limit - l.count}, nil
	}
	return m.refusal(l, now, 1), nil
}

// refusal is the answer to n requests that do not fit: they fit once the oldest
// count+n-limit admissions have left the window.
func (m *Memory) refusal(l *log, now time.Time, n int) Decision {
	d := Decision{Limit: m.limit, Remaining: m.limit - l.count}
	if n > m.limit || n <= 0 {
		d.RetryAfter = m.period
		return d
	}
	d.RetryAfter = retryAfter(l.at(l.count+n-m.limit-1), now, m.period)
	return d
}

// retryAfter is how long until an admission made at oldest leaves the window.
func retryAfter(oldest, now time.Time, period time.Duration) time.Duration {
	return max(oldest.Add(period).Sub(now), time.Microsecond)
}

// Len returns how many keys are tracked (for tests of the memory bound).
func (m *Memory) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.logs)
}

// sweep drops logs whose newest admission is a period old, at most once a period.
func (m *Memory) sweep(now time.Time) {
	if now.Sub(m.lastSweep) < m.period {
		return
	}
	m.lastSweep = now
	for k, l := range m.logs {
		if l.count == 0 || now.Sub(l.at(l.count-1)) >= m.period {
			delete(m.logs, k)
		}
	}
}
