package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/creditd/creditd/credittest"
	"github.com/creditd/creditd/database"
	"github.com/creditd/creditd/ids"
)

// TestServeJoinsItsGoroutines: serve returns only once every goroutine it started has
// returned, and a sweep under way when serve is told to stop finishes before the database
// closes. serve runs in-process with the staff console, pprof, a subscription over SSE and one
// over WebSocket open and a sweep in progress; once it has returned, no goroutine that any of
// its tasks started is left (found by the pprof labels the test's context gives them all).
func TestServeJoinsItsGoroutines(t *testing.T) {
	dsn := filepath.Join(t.TempDir(), "shutdown.db")
	if credittest.Backend() == "postgres" {
		var drop func()
		var err error
		dsn, drop, err = database.ScratchSchema(context.Background(), credittest.PostgresURL(t), "shutdown_"+strings.ToLower(ids.Random(10)))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(drop)
	}
	ls := &liveServer{db: dsn, clock: credittest.NewClock(time.Date(2026, 5, 4, 8, 0, 0, 0, time.UTC))}
	runCreditd(t, "migrate", "--db", dsn).mustSucceed(t)
	st := ls.cli(t, "store", "create", "--name", "Acme", "--currency", "EUR")["id"].(string)
	key := ls.cli(t, "key", "create", "--store", st, "--label", "dashboard", "--scopes", "read_credit")["secret"].(string)

	// The labels every goroutine serve's tasks start inherit, this run's own.
	run := "run-" + ids.Random(8)
	ctx, stop := context.WithCancel(pprof.WithLabels(context.Background(), pprof.Labels("shutdown_test", run)))
	defer stop()
	var db *database.DB
	sweepStarted := make(chan struct{})
	var sweepFinished atomic.Bool
	sweepErr := make(chan error, 1)
	m := NewMain(nil, &credittest.LogBuffer{}, &credittest.LogBuffer{})
	m.Now = ls.clock.Now
	m.afterOpen = func(d *database.DB) { db = d }
	m.sweeping = func(sweepCtx context.Context) {
		if sweepFinished.Load() {
			return
		}
		close(sweepStarted)
		// The sweep is in progress when serve is told to stop, and still working after its
		// context has ended: what it does then must find the database open.
		<-sweepCtx.Done()
		time.Sleep(100 * time.Millisecond)
		err := db.SQL.PingContext(context.Background())
		sweepFinished.Store(true)
		sweepErr <- err
	}
	ready, adminReady := make(chan string, 1), make(chan string, 1)
	m.Ready = func(addr string) { ready <- addr }
	m.AdminReady = func(addr string) { adminReady <- addr }
	done := make(chan int, 1)
	go func() {
		done <- m.Run(ctx, []string{"serve", "--db", dsn, "--addr", "127.0.0.1:0", "--admin-addr", "127.0.0.1:0", "--pprof", "127.0.0.1:0", "--sweep-interval", "1h"})
	}()
	var base string
	select {
	case addr := <-ready:
		base = "http://" + addr
	case code := <-done:
		t.Fatalf("serve exited with %d", code)
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not start")
	}
	defer m.Close()
	<-sweepStarted
	if resp, err := http.Get("http://" + <-adminReady + "/"); err != nil {
		t.Fatal(err)
	} else {
		resp.Body.Close()
	}

	// A subscription over each transport, with the feed watcher behind them.
	ws := credittest.MustDialWS(t, base, key, credittest.WSOptions{})
	ws.Subscribe(t, "1", credittest.EventsSubscription, nil)
	sse := openSSE(t, base, key)
	defer sse.Body.Close()
	// The test sees serve's goroutines: the sweeps, the worker, both subscribers and the feed
	// watcher behind them.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		got := labelledGoroutines(run)
		if strings.Contains(got, "runSweeps") && strings.Contains(got, "(*Worker).Run") &&
			strings.Contains(got, "WatchFeed") {
			if _, pumps := goroutinesRunning(got, "(*stream).pump"); pumps == 2 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the goroutines of serve's tasks, as the test finds them, miss the sweeps, the worker, a subscriber or the feed watcher:\n%s", got)
		}
	}

	stop()
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("serve exited with %d", code)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("serve did not return within 30 s of its context's end; its tasks' goroutines:\n%s", labelledGoroutines(run))
	}
	// Every goroutine of creditd's own code has returned, at once.
	if left, n := goroutinesRunning(labelledGoroutines(run), "github.com/creditd/creditd/"); n > 0 {
		t.Errorf("%d goroutines started by serve's tasks still run creditd's code after serve returned:\n%s", n, left)
	}
	// So has, within moments, what the libraries below start and let end on their own: the
	// watch of database/sql on a transaction's context, the SQLite driver's helper of a
	// statement, a closed connection's teardown.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		left := labelledGoroutines(run)
		if left == "" {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("goroutines started by serve's tasks still run 5 s after serve returned:\n%s", left)
			break
		}
	}
	if !sweepFinished.Load() {
		t.Error("serve returned while a sweep was still in progress")
	}
	// Each stream ended without its complete, for the client's own retry to resume it
	// (contract §16, amended 2026-11-28): the WebSocket closed with 1012, the SSE response ended.
	if m := ws.Read(t, 5*time.Second); m != nil || ws.Closed == nil || ws.Closed.Code != 1012 {
		t.Errorf("WebSocket at shutdown: %+v (close %v), want no message and a close with 1012", m, ws.Closed)
	}
	if body, _ := io.ReadAll(sse.Body); strings.Contains(string(body), "event: complete") {
		t.Errorf("SSE at shutdown ends with complete: %q", body)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-sweepErr:
		if err != nil {
			t.Errorf("the sweep in progress found the database closed: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Error("the sweep did not finish")
	}
}

// openSSE opens the events subscription over Server-Sent Events and waits for its stream to
// begin.
func openSSE(t *testing.T, base, key string) *http.Response {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"query": credittest.EventsSubscription})
	req, _ := http.NewRequest("POST", base+"/graphql", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		resp.Body.Close()
		t.Fatalf("SSE subscription: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	return resp
}

// labelledGoroutines returns the stacks, from the goroutine profile, of the goroutines that
// carry the label shutdown_test=run, or "" when there are none. Goroutines with the same stack
// are given once, after their number ("2 @ ...").
func labelledGoroutines(run string) string {
	var buf bytes.Buffer
	_ = pprof.Lookup("goroutine").WriteTo(&buf, 1)
	var out []string
	profile := buf.String()
	if strings.HasPrefix(profile, "goroutine profile:") {
		profile = profile[strings.Index(profile, "\n")+1:]
	}
	for _, rec := range strings.Split(profile, "\n\n") {
		if strings.Contains(rec, "# labels: ") && strings.Contains(rec, `"shutdown_test":"`+run+`"`) {
			out = append(out, rec)
		}
	}
	return strings.Join(out, "\n\n")
}

// goroutinesRunning returns the stacks of stacks, as labelledGoroutines returns them, that
// hold fn, and their number.
func goroutinesRunning(stacks, fn string) (string, int) {
	var out []string
	n := 0
	for _, rec := range strings.Split(stacks, "\n\n") {
		var count int
		if _, err := fmt.Sscanf(rec, "%d @", &count); err == nil && strings.Contains(rec, fn) {
			out = append(out, rec)
			n += count
		}
	}
	return strings.Join(out, "\n\n"), n
}
