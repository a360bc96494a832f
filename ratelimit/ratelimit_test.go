package ratelimit

import (
	"context"
	"fmt"
	"testing"
	"time"
)

func TestMemoryLimitAndRefill(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	m := NewMemory(120, time.Minute, func() time.Time { return now })
	ctx := context.Background()
	for i := 1; i <= 120; i++ {
		d, _ := m.Take(ctx, "store:a", 1)
		if !d.Allowed || d.Remaining != 120-i || d.Limit != 120 {
			t.Fatalf("request %d: %+v", i, d)
		}
	}
	d, _ := m.Take(ctx, "store:a", 1)
	if d.Allowed || d.RetryAfter != 500*time.Millisecond {
		t.Fatalf("121st: %+v", d)
	}
	if d, _ := m.Take(ctx, "store:b", 1); !d.Allowed {
		t.Fatal("another key is limited")
	}
	now = now.Add(500 * time.Millisecond)
	if d, _ := m.Take(ctx, "store:a", 1); !d.Allowed {
		t.Fatalf("after the retry delay: %+v", d)
	}
	if d, _ := m.Take(ctx, "store:a", 2); d.Allowed {
		t.Fatal("took more than was left")
	}
	if d, _ := m.Take(ctx, "store:a", 121); d.Allowed || d.RetryAfter != time.Minute {
		t.Fatalf("more than a full bucket: %+v", d)
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
