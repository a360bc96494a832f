package webhook

import (
	"testing"
	"time"
)

// noJitter places every retry at the middle of its window, exactly on the schedule.
func noJitter() float64 { return 0.5 }

func TestNextAttemptFollowsTheSchedule(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	want := []time.Duration{
		5 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 5 * time.Hour,
		10 * time.Hour, 10 * time.Hour, 10 * time.Hour, 10 * time.Hour, 10 * time.Hour, 10 * time.Hour, 10 * time.Hour,
	}
	if at, ok := NextAttempt(0, now, noJitter); !ok || !at.Equal(now) {
		t.Fatalf("first attempt at %v, %v; want now", at, ok)
	}
	var total time.Duration
	for failed, delay := range want {
		at, ok := NextAttempt(failed+1, now, noJitter)
		if !ok || at.Sub(now) != delay {
			t.Fatalf("after %d failures: retry in %v (%v), want %v", failed+1, at.Sub(now), ok, delay)
		}
		total += delay
	}
	if _, ok := NextAttempt(len(want)+1, now, noJitter); ok {
		t.Fatalf("a retry after %d failures; the schedule should be exhausted", len(want)+1)
	}
	if MaxAttempts != len(want)+1 {
		t.Fatalf("MaxAttempts = %d, want %d", MaxAttempts, len(want)+1)
	}
	if days := total.Hours() / 24; days < 2.75 || days > 3.5 {
		t.Fatalf("the schedule spans %.2f days, want about three", days)
	}
}

func TestNextAttemptJitter(t *testing.T) {
	t.Parallel()
	now := time.Unix(0, 0)
	tests := []struct {
		random float64
		want   time.Duration
	}{
		{0, 4 * time.Second},
		{0.25, 4500 * time.Millisecond},
		{0.75, 5500 * time.Millisecond},
		{0.999999, 5999998 * time.Microsecond},
	}
	for _, tt := range tests {
		at, _ := NextAttempt(1, now, func() float64 { return tt.random })
		if d := at.Sub(now); d != tt.want {
			t.Errorf("random %v: retry in %v, want %v", tt.random, d, tt.want)
		}
	}
	// The default draws from crypto/rand: within ±20%, and not always the same.
	seen := map[time.Duration]bool{}
	for range 50 {
		at, _ := NextAttempt(6, now, nil)
		d := at.Sub(now)
		if d < 8*time.Hour || d >= 12*time.Hour {
			t.Fatalf("default jitter put a 10h retry at %v", d)
		}
		seen[d] = true
	}
	if len(seen) < 40 {
		t.Fatalf("50 default draws gave only %d distinct delays", len(seen))
	}
}

func TestShouldDisable(t *testing.T) {
	t.Parallel()
	first := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name           string
		firstFailureAt time.Time
		now            time.Time
		want           bool
	}{
		{"healthy endpoint", time.Time{}, first.Add(30 * 24 * time.Hour), false},
		{"failing for a day", first, first.Add(24 * time.Hour), false},
		{"failing for a second less than five days", first, first.Add(5*24*time.Hour - time.Second), false},
		{"failing for five days", first, first.Add(5 * 24 * time.Hour), true},
		{"failing for a week", first, first.Add(7 * 24 * time.Hour), true},
	}
	for _, tt := range tests {
		if got := ShouldDisable(tt.firstFailureAt, tt.now); got != tt.want {
			t.Errorf("%s: ShouldDisable = %v, want %v", tt.name, got, tt.want)
		}
	}
}
