package ratelimit_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/creditd/creditd/credittest"
	"github.com/creditd/creditd/ratelimit"
)

// TestRedisLimitIsExactAcrossInstances runs the exact-window scenario on two limiters sharing
// one Redis, as two instances do: 120 admitted in any minute between them, not 120 each, and
// none more until the first admission is a minute old.
func TestRedisLimitIsExactAcrossInstances(t *testing.T) {
	url := credittest.RedisURL(t)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	a, err := ratelimit.NewRedis(url, 120, time.Minute, quiet)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, _ := ratelimit.NewRedis(url, 120, time.Minute, quiet)
	defer b.Close()
	now := time.Now().Truncate(time.Microsecond)
	clock := func() time.Time { return now }
	a.SetClock(clock)
	b.SetClock(clock)
	ratelimit.ExerciseExactWindow(t, clock, func(d time.Duration) { now = now.Add(d) }, a, b)
}

func TestRedisUnreachableFallsBackToMemory(t *testing.T) {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	r, err := ratelimit.NewRedis("redis://127.0.0.1:1/0", 3, time.Minute, quiet)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ctx := context.Background()
	for i := 0; i < 3; i++ {
		if d, err := r.Take(ctx, "store:x", 1); err != nil || !d.Allowed {
			t.Fatalf("request %d: %+v %v", i, d, err)
		}
	}
	if d, err := r.Take(ctx, "store:x", 1); err != nil || d.Allowed {
		t.Fatalf("fallback did not limit: %+v %v", d, err)
	}
}
