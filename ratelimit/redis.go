package ratelimit

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/creditd/creditd/ids"
)

// Redis is a Limiter shared by every instance that uses the same Redis: the same sliding log
// as Memory, kept as a sorted set of admitted times per key and updated by one Lua script, so
// instances admitting at the same moment cannot together exceed the limit.
//
// When Redis cannot be reached, Redis does not fail requests: it falls back to this instance's
// own in-memory limiter (so each instance still enforces the limit on its own share of the
// traffic) and logs one line per minute while the outage lasts.
type Redis struct {
	client   *redis.Client
	limit    int
	period   time.Duration
	now      func() time.Time
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

// slidingLog admits ARGV[4] requests at time ARGV[1] (microseconds) for the log KEYS[1] if
// fewer than ARGV[3] admissions younger than ARGV[2] microseconds leave room for them; 0
// requests asks whether one would be admitted. It returns {admitted (1 or 0), remaining,
// microseconds until the refused requests would fit}. Members are ARGV[5] (unique per call)
// and a number, scored by their time; the key expires a period after its newest admission.
// ARGV[6] is ARGV[1] less the period, computed by the caller: Lua would print a number of 16
// digits in exponent form and round it.
var slidingLog = redis.NewScript(`
local key = KEYS[1]
local now = tonumber(ARGV[1])
local period = tonumber(ARGV[2])
local limit = tonumber(ARGV[3])
local n = tonumber(ARGV[4])
redis.call('ZREMRANGEBYSCORE', key, '-inf', ARGV[6])
local count = redis.call('ZCARD', key)
if n > 0 and count + n <= limit then
  for i = 1, n do
    redis.call('ZADD', key, ARGV[1], ARGV[5] .. ':' .. i)
  end
  redis.call('PEXPIRE', key, math.ceil(period / 1000))
  return {1, limit - count - n, 0}
end
if n == 0 and count < limit then
  return {1, limit - count, 0}
end
if n > limit then
  return {0, limit - count, period}
end
local need = count + math.max(n, 1) - limit
local oldest = redis.call('ZRANGE', key, need - 1, need - 1, 'WITHSCORES')
return {0, limit - count, tonumber(oldest[2]) + period - now}
`)

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
		limit:    limit,
		period:   period,
		now:      time.Now,
		fallback: NewMemory(limit, period, nil),
		log:      log,
	}, nil
}

// SetClock makes now the clock of the limiter and of its fallback (tests move it). Instances
// sharing a Redis should have clocks that agree: admissions are logged at each one's time.
func (r *Redis) SetClock(now func() time.Time) {
	r.now = now
	r.fallback.now = now
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
	d, err := r.run(ctx, key, n)
	if err != nil {
		r.warn(err)
		return r.fallback.Take(ctx, key, n)
	}
	return d, nil
}

// Peek implements Limiter.
func (r *Redis) Peek(ctx context.Context, key string) (Decision, error) {
	if r.down() {
		return r.fallback.Peek(ctx, key)
	}
	d, err := r.run(ctx, key, 0)
	if err != nil {
		r.warn(err)
		return r.fallback.Peek(ctx, key)
	}
	return d, nil
}

// run asks the script to admit n requests (0: whether one would be admitted).
func (r *Redis) run(ctx context.Context, key string, n int) (Decision, error) {
	now := r.now().UnixMicro()
	res, err := slidingLog.Run(ctx, r.client, []string{"creditd:rl:" + key},
		now, r.period.Microseconds(), r.limit, n, ids.Random(12), now-r.period.Microseconds()).Int64Slice()
	if err != nil {
		return Decision{}, err
	}
	if len(res) != 3 {
		return Decision{}, fmt.Errorf("rate limit script returned %v", res)
	}
	d := Decision{Allowed: res[0] == 1, Limit: r.limit, Remaining: int(max(res[1], 0))}
	if !d.Allowed {
		d.RetryAfter = max(time.Duration(res[2])*time.Microsecond, time.Microsecond)
	}
	return d, nil
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
