package ratelimit

import (
	"context"
	"fmt"
	"testing"
	"time"
)

func TestMemorySlidingWindow(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	m := NewMemory(120, time.Minute, func() time.Time { return now })
	ExerciseExactWindow(t, func() time.Time { return now }, func(d time.Duration) { now = now.Add(d) }, m, m)
	if d, _ := m.Take(context.Background(), "store:b", 1); !d.Allowed {
		t.Fatal("another key is limited")
	}
}

func TestMemoryTakesSeveralOrNone(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	m := NewMemory(5, time.Minute, func() time.Time { return now })
	ctx := context.Background()
	if d, _ := m.Take(ctx, "k", 3); !d.Allowed || d.Remaining != 2 {
		t.Fatalf("3 of 5: %+v", d)
	}
	now = now.Add(10 * time.Second)
	if d, _ := m.Take(ctx, "k", 1); !d.Allowed || d.Remaining != 1 {
		t.Fatalf("4th: %+v", d)
	}
	// 3 more need the first three to leave the window: at 60 s.
	if d, _ := m.Take(ctx, "k", 3); d.Allowed || d.Remaining != 1 || d.RetryAfter != 50*time.Second {
		t.Fatalf("3 more: %+v", d)
	}
	if d, _ := m.Take(ctx, "k", 6); d.Allowed || d.RetryAfter != time.Minute {
		t.Fatalf("more than the limit: %+v", d)
	}
	if d, _ := m.Peek(ctx, "k"); !d.Allowed || d.Remaining != 1 {
		t.Fatalf("peek: %+v", d)
	}
	now = now.Add(50 * time.Second)
	if d, _ := m.Take(ctx, "k", 4); !d.Allowed || d.Remaining != 0 {
		t.Fatalf("4 more at 60 s: %+v", d)
	}
	if d, _ := m.Peek(ctx, "k"); d.Allowed || d.RetryAfter != 10*time.Second {
		t.Fatalf("peek when full: %+v", d)
	}
}

func TestMemoryEvictsIdleKeys(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	m := NewMemory(120, time.Minute, func() time.Time { return now })
	ctx := context.Background()
	for i := 0; i < 10000; i++ {
		_, _ = m.Take(ctx, fmt.Sprintf("store:%d", i), 1)
	}
	if m.Len() != 10000 {
		t.Fatalf("tracked %d", m.Len())
	}
	now = now.Add(time.Minute)
	_, _ = m.Take(ctx, "store:new", 1)
	if m.Len() != 1 {
		t.Fatalf("idle keys kept: %d", m.Len())
	}
}

func TestMemoryHugeLimitCostsWhatIsAdmitted(t *testing.T) {
	m := NewMemory(1_000_000_000, time.Minute, nil)
	for range 1000 {
		if d, _ := m.Take(context.Background(), "k", 1); !d.Allowed {
			t.Fatal("refused")
		}
	}
	if n := len(m.logs["k"].times); n > 2048 {
		t.Fatalf("a log of %d slots for 1000 admissions", n)
	}
}
