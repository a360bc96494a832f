package ratelimit

import (
	"context"
	"testing"
	"time"

	"github.com/creditd/creditd/ids"
)

// ExerciseExactWindow checks contract §8 on limiters of 120 a minute sharing one log (a and b
// may be one Memory, or two Redis limiters on one Redis, as two instances are): 130 requests in
// 0.5 s admit 120; then, within the same 60 s, none is admitted, and Retry-After counts down to
// the moment the first admitted request is 60 s old; then exactly the requests that have left
// the window are replaced. now reads and advance moves the limiters' clock.
func ExerciseExactWindow(t testing.TB, now func() time.Time, advance func(time.Duration), a, b Limiter) {
	t.Helper()
	ctx := context.Background()
	key := "store:exact_" + ids.Random(10)
	take := func(i int) Decision {
		t.Helper()
		lim := a
		if i%2 == 1 {
			lim = b
		}
		d, err := lim.Take(ctx, key, 1)
		if err != nil {
			t.Fatal(err)
		}
		if d.Limit != 120 {
			t.Fatalf("limit %d", d.Limit)
		}
		return d
	}
	start := now()
	step := (500 * time.Millisecond / 130).Truncate(time.Microsecond) // Redis logs microseconds
	admitted := 0
	for i := range 130 {
		d := take(i)
		if d.Allowed {
			admitted++
			if d.Remaining != 120-admitted {
				t.Fatalf("request %d: remaining %d after %d admitted", i, d.Remaining, admitted)
			}
		} else if d.Remaining != 0 || d.RetryAfter <= 0 {
			t.Fatalf("request %d refused: %+v", i, d)
		}
		advance(step)
	}
	if admitted != 120 {
		t.Fatalf("130 requests in 0.5 s admitted %d, want 120", admitted)
	}
	// Within the same 60 s, nothing: a token bucket would admit 2 a second again.
	for _, at := range []time.Duration{time.Second, 5 * time.Second, 30 * time.Second, 59*time.Second + 999*time.Millisecond} {
		advance(start.Add(at).Sub(now()))
		d := take(int(at))
		if d.Allowed {
			t.Fatalf("admitted %v after the first admission", at)
		}
		if want := time.Minute - at; d.RetryAfter != want {
			t.Fatalf("at %v: retry after %v, want %v (until the first admission is 60 s old)", at, d.RetryAfter, want)
		}
		if p, err := a.Peek(ctx, key); err != nil || p.Allowed || p.RetryAfter != time.Minute-at {
			t.Fatalf("peek at %v: %+v %v", at, p, err)
		}
	}
	// At 60 s the first admission leaves the window: one more, not two.
	advance(start.Add(time.Minute).Sub(now()))
	if d := take(0); !d.Allowed || d.Remaining != 0 {
		t.Fatalf("at 60 s: %+v", d)
	}
	d := take(1)
	if d.Allowed || d.RetryAfter != step {
		t.Fatalf("the second at 60 s: %+v, want refused until the second admission leaves (%v)", d, step)
	}
	// A minute after the burst, all of it has left.
	advance(start.Add(time.Minute + 500*time.Millisecond).Sub(now()))
	for i := range 119 {
		if d := take(i); !d.Allowed {
			t.Fatalf("request %d a minute after the burst refused: %+v", i, d)
		}
	}
}
