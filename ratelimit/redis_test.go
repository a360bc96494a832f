package ratelimit_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/creditd/creditd/credittest"
	"github.com/creditd/creditd/ids"
	"github.com/creditd/creditd/ratelimit"
)

func TestRedisLimitIsShared(t *testing.T) {
	url := credittest.RedisURL(t)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	a, err := ratelimit.NewRedis(url, 120, time.Minute, quiet)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, _ := ratelimit.NewRedis(url, 120, time.Minute, quiet)
	defer b.Close()
	ctx := context.Background()
	key := "store:test_" + ids.Random(10)
	allowed := 0
	for i := 0; i < 200; i++ {
		lim := a
		if i%2 == 1 {
			lim = b
		}
		d, err := lim.Take(ctx, key, 1)
		if err != nil {
			t.Fatal(err)
		}
		if d.Allowed {
			allowed++
		} else if d.RetryAfter <= 0 || d.Remaining != 0 {
			t.Fatalf("denied without a retry time: %+v", d)
		}
	}
	// 120 at once plus what refilled (2 a second) while the loop ran.
	if allowed < 120 || allowed > 124 {
		t.Fatalf("two instances allowed %d requests together", allowed)
	}
	if d, _ := a.Peek(ctx, key); d.Allowed && d.Remaining < 1 {
		t.Fatalf("peek: %+v", d)
	}
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
