package ratelimit

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"
)

// Redis is a Limiter shared by every instance that uses the same Redis: GCRA through
// go-redis/redis_rate, with the same allowance as Memory (limit per period, bursts up to a
// full period's allowance).
//
// When Redis cannot be reached, Redis does not fail requests: it falls back to this instance's
// own in-memory limiter (so each instance still enforces the limit on its own share of the
// traffic) and logs one line per minute while the outage lasts.
type Redis struct {
	client   *redis.Client
	limiter  *redis_rate.Limiter
	limit    redis_rate.Limit
	fallback *Memory
	log      *slog.Logger

	mu         sync.Mutex
	lastWarned time.Time
	// downUntil skips Redis for a few seconds after a failure, so an outage costs requests
	// no waiting on timeouts.
	downUntil time.Time
}

// retryRedisAfter is how long Redis is left alone after it failed.
const retryRedisAfter = 5 * time.Second

func (r *Redis) down() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return time.Now().Before(r.downUntil)
}

// NewRedis connects to the Redis at url (redis://host:port/db).
func NewRedis(url string, limit int, period time.Duration, log *slog.Logger) (*Redis, error) {
	opts, err := redis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("redis URL: %w", err)
	}
	opts.DialTimeout = time.Second
	opts.ReadTimeout = 500 * time.Millisecond
	opts.WriteTimeout = 500 * time.Millisecond
	opts.MaxRetries = -1 // no retries: a request waits for Redis at most one timeout
	client := redis.NewClient(opts)
	if log == nil {
		log = slog.Default()
	}
	return &Redis{
		client:   client,
		limiter:  redis_rate.NewLimiter(client),
		limit:    redis_rate.Limit{Rate: limit, Burst: limit, Period: period},
		fallback: NewMemory(limit, period, nil),
		log:      log,
	}, nil
}

// Ping checks that Redis answers.
func (r *Redis) Ping(ctx context.Context) error { return r.client.Ping(ctx).Err() }

// Close closes the connection pool.
func (r *Redis) Close() error { return r.client.Close() }

// Take implements Limiter.
func (r *Redis) Take(ctx context.Context, key string, n int) (Decision, error) {
	if r.down() {
		return r.fallback.Take(ctx, key, n)
	}
	res, err := r.limiter.AllowN(ctx, "creditd:rl:"+key, r.limit, n)
	if err != nil {
		r.warn(err)
		return r.fallback.Take(ctx, key, n)
	}
	return r.decision(res, n), nil
}

// Peek implements Limiter.
func (r *Redis) Peek(ctx context.Context, key string) (Decision, error) {
	if r.down() {
		return r.fallback.Peek(ctx, key)
	}
	res, err := r.limiter.AllowN(ctx, "creditd:rl:"+key, r.limit, 0)
	if err != nil {
		r.warn(err)
		return r.fallback.Peek(ctx, key)
	}
	d := r.decision(res, 0)
	d.Allowed = res.Remaining >= 1
	if !d.Allowed {
		d.RetryAfter = r.limit.Period / time.Duration(r.limit.Rate)
	}
	return d, nil
}

func (r *Redis) decision(res *redis_rate.Result, n int) Decision {
	d := Decision{Allowed: n == 0 || res.Allowed >= n, Limit: r.limit.Rate, Remaining: res.Remaining}
	if !d.Allowed {
		d.RetryAfter = res.RetryAfter
		if d.RetryAfter < 0 {
			d.RetryAfter = r.limit.Period
		}
	}
	return d
}

func (r *Redis) warn(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.downUntil = time.Now().Add(retryRedisAfter)
	if time.Since(r.lastWarned) < time.Minute {
		return
	}
	r.lastWarned = time.Now()
	r.log.Warn("rate limiter: Redis unreachable; each instance enforces the limit on its own until it is back", "error", err.Error())
}
