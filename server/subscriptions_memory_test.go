package server_test

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
	"github.com/creditd/creditd/server"
)

// BenchmarkIdleSubscriptions opens b.N WebSocket subscriptions (graphql-transport-ws, one per
// connection, 50 per store) on one in-process server and leaves them idle, then reports what
// each holds on the server: its Go heap in use and goroutine stacks (after a collection), the
// growth of the process's resident set, and its goroutines. The clients are bare TCP
// connections that write their frames and read nothing after the handshake, so they add no
// goroutine and a few hundred bytes each. Run it with a count of subscriptions:
//
//	go test ./server/ -run '^$' -bench IdleSubscriptions -benchtime 2000x
//
// With CREDITD_SUBS_PROFILE set to a directory, it writes heap.pprof and goroutine.pprof there
// with the subscriptions open.
func BenchmarkIdleSubscriptions(b *testing.B) {
	profile := os.Getenv("CREDITD_SUBS_PROFILE")
	if profile != "" {
		defer func(rate int) { runtime.MemProfileRate = rate }(runtime.MemProfileRate)
		runtime.MemProfileRate = 1 // every allocation, not a sample
	}
	// The clients read nothing, so they answer no ping: none is sent while the benchmark runs.
	env := credittest.New(b, credittest.Options{ServerConfig: func(c *server.Config) { c.StreamKeepAlive = time.Hour }})
	const perStore = credit.MaxSubscriptionsPerStore
	keys := make([]string, 1+(b.N+perStore-1)/perStore)
	for i := range keys {
		st := env.MustStore(b, fmt.Sprint("Live ", i), "EUR")
		keys[i] = env.MustIssuedKey(b, st, "dashboard", credit.ScopeReadCredit).Secret
	}
	addr := strings.TrimPrefix(env.Server.URL, "http://")
	// A first subscription warms what every one shares (the query's parse, the feed watcher).
	warm := openIdleSubscription(b, addr, keys[len(keys)-1])
	waitFor(b, func() bool { return env.Service.Events.SubscriptionStats().Open == 1 })
	before := memoryNow()

	b.ResetTimer()
	conns := make([]net.Conn, 0, b.N)
	for i := range b.N {
		conns = append(conns, openIdleSubscription(b, addr, keys[i/perStore]))
	}
	deadline := time.Now().Add(time.Minute)
	for env.Service.Events.SubscriptionStats().Open < b.N+1 {
		if time.Now().After(deadline) {
			b.Fatalf("%d of %d subscriptions open", env.Service.Events.SubscriptionStats().Open-1, b.N)
		}
		time.Sleep(10 * time.Millisecond)
	}
	b.StopTimer()
	time.Sleep(time.Second) // each subscription is waiting for a wake-up
	after := memoryNow()
	if profile != "" {
		writeProfiles(b, profile)
	}
	n := float64(b.N)
	b.ReportMetric(float64(after.heap-before.heap)/n, "heap-B/sub")
	b.ReportMetric(float64(after.stack-before.stack)/n, "stack-B/sub")
	b.ReportMetric(float64(after.rss-before.rss)/n, "rss-B/sub")
	b.ReportMetric(float64(after.goroutines-before.goroutines)/n, "goroutines/sub")
	for _, c := range conns {
		c.Close()
	}
	warm.Close()
	// The subscriptions end before the database closes.
	deadline = time.Now().Add(time.Minute)
	for env.Service.Events.SubscriptionStats().Open > 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
}

type memory struct {
	heap, stack, rss int64
	goroutines       int
}

// memoryNow collects garbage and reads the heap in use, the goroutine stacks, the resident set
// and the goroutines.
func memoryNow() memory {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	m := memory{heap: int64(ms.HeapInuse), stack: int64(ms.StackInuse), goroutines: runtime.NumGoroutine()}
	if statm, err := os.ReadFile("/proc/self/statm"); err == nil {
		if f := strings.Fields(string(statm)); len(f) > 1 {
			pages, _ := strconv.ParseInt(f[1], 10, 64)
			m.rss = pages * int64(os.Getpagesize())
		}
	}
	return m
}

func writeProfiles(tb testing.TB, dir string) {
	for _, name := range []string{"heap", "goroutine"} {
		f, err := os.Create(filepath.Join(dir, name+".pprof"))
		if err != nil {
			tb.Fatal(err)
		}
		if err := pprof.Lookup(name).WriteTo(f, 0); err != nil {
			tb.Fatal(err)
		}
		f.Close()
	}
}

// openIdleSubscription opens a WebSocket to addr's /graphql, authenticates with key and starts
// the events subscription, reading only the handshake's response.
func openIdleSubscription(tb testing.TB, addr, key string) net.Conn {
	tb.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		tb.Fatal(err)
	}
	handshake := "GET /graphql HTTP/1.1\r\nHost: " + addr + "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
		"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n" +
		"Sec-WebSocket-Protocol: graphql-transport-ws\r\n\r\n"
	if _, err := c.Write([]byte(handshake)); err != nil {
		tb.Fatal(err)
	}
	// The response, a byte at a time, so that nothing after it is read.
	var resp []byte
	one := make([]byte, 1)
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	for !bytes.HasSuffix(resp, []byte("\r\n\r\n")) {
		if _, err := c.Read(one); err != nil {
			tb.Fatalf("handshake: %v (%q)", err, resp)
		}
		resp = append(resp, one[0])
	}
	if !bytes.HasPrefix(resp, []byte("HTTP/1.1 101")) {
		tb.Fatalf("handshake: %q", resp)
	}
	for _, msg := range []string{
		`{"type":"connection_init","payload":{"Authorization":"Bearer ` + key + `"}}`,
		`{"type":"subscribe","id":"1","payload":{"query":"subscription { events { id type occurredAt } }"}}`,
	} {
		if _, err := c.Write(clientFrame([]byte(msg))); err != nil {
			tb.Fatal(err)
		}
	}
	return c
}

// clientFrame is a masked text frame holding payload (RFC 6455 §5.2).
func clientFrame(payload []byte) []byte {
	out := []byte{0x81}
	switch n := len(payload); {
	case n < 126:
		out = append(out, 0x80|byte(n))
	default:
		out = append(out, 0x80|126)
		out = binary.BigEndian.AppendUint16(out, uint16(n))
	}
	var mask [4]byte
	_, _ = rand.Read(mask[:])
	out = append(out, mask[:]...)
	for i, c := range payload {
		out = append(out, c^mask[i%4])
	}
	return out
}
