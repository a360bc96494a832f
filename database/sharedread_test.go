package database

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestSharedReadNeverAnswersWithAnOlderRead: a caller that arrives while a read runs is not
// given that read's value (it may predate a revocation the caller saw return), but the value of
// a read started after it arrived; callers waiting together share that one read.
func TestSharedReadNeverAnswersWithAnOlderRead(t *testing.T) {
	var s sharedRead
	var started atomic.Int64 // the value a read returns is the number of reads started so far
	release := make(chan struct{})
	firstRunning := make(chan struct{})
	read := func(context.Context) (int64, error) {
		n := started.Add(1)
		if n == 1 {
			close(firstRunning)
			<-release
		}
		return n, nil
	}
	ctx := context.Background()
	var first int64
	done := make(chan struct{})
	go func() { first, _ = s.do(ctx, read); close(done) }()
	<-firstRunning
	// Five callers arrive while the first read runs.
	var wg sync.WaitGroup
	got := make([]int64, 5)
	for i := range got {
		wg.Add(1)
		go func() { defer wg.Done(); got[i], _ = s.do(ctx, read) }()
	}
	// Let them call (a caller that comes late must still get a read started after it came).
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		s.mu.Lock()
		joined := s.next != nil
		s.mu.Unlock()
		if joined {
			break
		}
	}
	close(release)
	wg.Wait()
	<-done
	if first != 1 {
		t.Fatalf("the first caller got %d", first)
	}
	for i, n := range got {
		if n < 2 {
			t.Fatalf("caller %d, arrived during read 1, got the value of read %d, want one started after it arrived", i, n)
		}
	}
	t.Logf("6 callers, %d reads", started.Load())
	// Alone, a caller gets a read of its own.
	if n, _ := s.do(ctx, read); n != started.Load() {
		t.Fatalf("a lone caller got %d, want %d", n, started.Load())
	}
}
