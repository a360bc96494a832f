package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"

	"github.com/creditd/creditd/database"
)

// SubscriptionConfig configures RunSubscriptions (issue 30's scenario).
type SubscriptionConfig struct {
	// Creditd is the creditd binary; WorkDir holds the database (SQLite) and the log.
	Creditd, WorkDir string
	// DB is "" for a fresh SQLite file in WorkDir, or a postgres:// URL, in which a scratch
	// schema is made and dropped afterwards.
	DB string
	// Subscribers are opened on the one instance, spread over stores of at most 50 each (the
	// per-store limit); Rate is the events written per second, spread over those stores, for
	// Duration.
	Subscribers int
	Rate        int
	Duration    time.Duration
	Progress    io.Writer
	// Profile takes a CPU profile of creditd (serve --pprof) during the load, into
	// WorkDir/subscriptions.cpu.pprof.
	Profile bool
}

// SubscriptionResult is what RunSubscriptions measured.
type SubscriptionResult struct {
	Subscribers int `json:"subscribers"`
	Stores      int `json:"stores"`
	// Written is the events written, Delivered the messages the subscribers received (each
	// event reaches its store's subscribers), Expected what they should have received.
	Written   int64 `json:"written"`
	Delivered int64 `json:"delivered"`
	Expected  int64 `json:"expected"`
	// Latency is from the event's occurred_at (stamped in the writing transaction, just before
	// it commits) to its arrival at a subscriber, over every delivery.
	P50 time.Duration `json:"p50"`
	P99 time.Duration `json:"p99"`
	Max time.Duration `json:"max"`
	// CPUPerMessage is creditd's CPU time during the load over the messages delivered (the
	// writes' own work included).
	CPUPerMessage time.Duration `json:"cpu_per_message"`
	// MemoryPerSubscription is the growth of creditd's resident set from no subscriber to all
	// of them open and idle, over their number; HeapPerSubscription and GoroutinesPerSubscription
	// the growth of its Go heap in use and of its goroutines (from /metrics), which say where
	// the memory goes.
	MemoryPerSubscription     int64   `json:"memory_per_subscription"`
	HeapPerSubscription       int64   `json:"heap_per_subscription"`
	GoroutinesPerSubscription float64 `json:"goroutines_per_subscription"`
}

// goMetrics reads go_goroutines and go_memstats_heap_inuse_bytes from creditd's /metrics.
func goMetrics(ctx context.Context, base string) (goroutines, heap float64, err error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/metrics", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, 0, err
	}
	for _, line := range strings.Split(string(body), "\n") {
		var v float64
		if _, err := fmt.Sscanf(line, "go_goroutines %g", &v); err == nil {
			goroutines = v
		}
		if _, err := fmt.Sscanf(line, "go_memstats_heap_inuse_bytes %g", &v); err == nil {
			heap = v
		}
	}
	return goroutines, heap, nil
}

// RunSubscriptions starts `creditd serve` on a fresh database, opens cfg.Subscribers
// subscriptions over WebSocket (graphql-transport-ws), writes cfg.Rate adjustments a second
// through REST for cfg.Duration, and measures commit-to-client latency, CPU per delivered
// message and memory per open subscription.
func RunSubscriptions(ctx context.Context, cfg SubscriptionConfig) (*SubscriptionResult, error) {
	logf := func(format string, args ...any) {
		if cfg.Progress != nil {
			fmt.Fprintf(cfg.Progress, format+"\n", args...)
		}
	}
	dsn := filepath.Join(cfg.WorkDir, "subscriptions.db")
	if database.IsPostgres(cfg.DB) {
		var drop func()
		var err error
		dsn, drop, err = database.ScratchSchema(ctx, cfg.DB, fmt.Sprintf("creditbench_subs_%d", time.Now().UnixNano()%1e9))
		if err != nil {
			return nil, err
		}
		defer drop()
	} else {
		for _, suffix := range []string{"", "-wal", "-shm"} {
			_ = os.Remove(dsn + suffix)
		}
	}
	cli := func(args ...string) (map[string]any, error) {
		out, err := exec.CommandContext(ctx, cfg.Creditd, append(args, "--db", dsn, "--json")...).Output()
		if err != nil {
			return nil, fmt.Errorf("creditd %s: %w", strings.Join(args, " "), err)
		}
		var v map[string]any
		return v, json.Unmarshal(out, &v)
	}
	if _, err := cli("migrate"); err != nil {
		return nil, err
	}
	const perStore = 50
	stores := (cfg.Subscribers + perStore - 1) / perStore
	type storeFixture struct{ key, company string }
	fixtures := make([]storeFixture, stores)
	logf("creating %d stores", stores)
	for i := range fixtures {
		st, err := cli("store", "create", "--name", fmt.Sprint("Store ", i), "--currency", "EUR")
		if err != nil {
			return nil, err
		}
		id := st["id"].(string)
		k, err := cli("key", "create", "--store", id, "--label", "bench", "--scopes", "read_credit,write_credit")
		if err != nil {
			return nil, err
		}
		co, err := cli("company", "create", "--store", id, "--name", "Buyer", "--platform-company-gid", "gid://platform/Company/1",
			"--payment-terms", "NET_30", "--credit-limit", "100000000.00")
		if err != nil {
			return nil, err
		}
		fixtures[i] = storeFixture{key: k["secret"].(string), company: co["id"].(string)}
	}
	flags := []string{"--rate-limit", "100000000"}
	if cfg.Profile {
		flags = append(flags, "--pprof", "127.0.0.1:0")
	}
	p, err := StartCreditd(ctx, cfg.Creditd, dsn, filepath.Join(cfg.WorkDir, "subscriptions-serve.log"), flags...)
	if err != nil {
		return nil, err
	}
	defer p.Stop()
	base := "http://" + p.Addr
	time.Sleep(time.Second)
	before, err := p.ReadMemory()
	if err != nil {
		return nil, err
	}
	goroutinesBefore, heapBefore, err := goMetrics(ctx, base)
	if err != nil {
		return nil, err
	}

	res := &SubscriptionResult{Subscribers: cfg.Subscribers, Stores: stores}
	var latMu sync.Mutex
	latencies := make([]time.Duration, 0, cfg.Rate*int(cfg.Duration/time.Second+1)*perStore)
	var delivered atomic.Int64
	var ready sync.WaitGroup
	conns := make([]*websocket.Conn, 0, cfg.Subscribers)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	logf("opening %d subscriptions", cfg.Subscribers)
	dialer := websocket.Dialer{Subprotocols: []string{"graphql-transport-ws"}, HandshakeTimeout: 10 * time.Second}
	for i := range cfg.Subscribers {
		f := fixtures[i/perStore]
		c, _, err := dialer.DialContext(ctx, "ws://"+p.Addr+"/graphql", nil)
		if err != nil {
			return nil, fmt.Errorf("subscriber %d: %w", i, err)
		}
		conns = append(conns, c)
		init := fmt.Sprintf(`{"type":"connection_init","payload":{"Authorization":"Bearer %s"}}`, f.key)
		sub := `{"type":"subscribe","id":"1","payload":{"query":"subscription { events { id occurredAt } }"}}`
		if err := c.WriteMessage(websocket.TextMessage, []byte(init)); err != nil {
			return nil, err
		}
		if err := c.WriteMessage(websocket.TextMessage, []byte(sub)); err != nil {
			return nil, err
		}
		ready.Add(1)
		go func() {
			acked := false
			for {
				_, raw, err := c.ReadMessage()
				now := time.Now()
				if err != nil {
					if !acked {
						ready.Done()
					}
					return
				}
				var m struct {
					Type    string
					Payload struct {
						Data struct {
							Events struct{ OccurredAt time.Time }
						}
					}
				}
				if json.Unmarshal(raw, &m) != nil {
					continue
				}
				switch m.Type {
				case "connection_ack":
					acked = true
					ready.Done()
				case "ping":
					_ = c.WriteMessage(websocket.TextMessage, []byte(`{"type":"pong"}`))
				case "next":
					delivered.Add(1)
					latMu.Lock()
					latencies = append(latencies, now.Sub(m.Payload.Data.Events.OccurredAt))
					latMu.Unlock()
				}
			}
		}()
	}
	ready.Wait()
	time.Sleep(2 * time.Second) // every subscription has started and is idle
	after, err := p.ReadMemory()
	if err != nil {
		return nil, err
	}
	res.MemoryPerSubscription = (after.RSS - before.RSS) / int64(cfg.Subscribers)
	goroutinesAfter, heapAfter, err := goMetrics(ctx, base)
	if err != nil {
		return nil, err
	}
	res.HeapPerSubscription = int64(heapAfter-heapBefore) / int64(cfg.Subscribers)
	res.GoroutinesPerSubscription = (goroutinesAfter - goroutinesBefore) / float64(cfg.Subscribers)

	logf("writing %d events a second for %s", cfg.Rate, cfg.Duration)
	cpuBefore, err := p.CPUTime()
	if err != nil {
		return nil, err
	}
	stopProfile := func() error { return nil }
	if cfg.Profile {
		stopProfile = profile(ctx, p.PprofAddr, cfg.Duration, filepath.Join(cfg.WorkDir, "subscriptions.cpu.pprof"))
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	var written atomic.Int64
	var perStoreWritten = make([]atomic.Int64, stores)
	tick := time.NewTicker(time.Second / time.Duration(cfg.Rate))
	var writes sync.WaitGroup
	end := time.Now().Add(cfg.Duration)
	for n := 0; time.Now().Before(end); n++ {
		<-tick.C
		i := n % stores
		writes.Add(1)
		go func() {
			defer writes.Done()
			f := fixtures[i]
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v1/companies/"+f.company+"/adjustments",
				strings.NewReader(`{"amount":"1.00","note":"bench"}`))
			req.Header.Set("Authorization", "Bearer "+f.key)
			req.Header.Set("Content-Type", "application/json")
			resp, err := client.Do(req)
			if err != nil {
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusCreated {
				written.Add(1)
				perStoreWritten[i].Add(1)
			}
		}()
	}
	tick.Stop()
	writes.Wait()
	if err := stopProfile(); err != nil {
		logf("profile: %v", err)
	}
	// Let the last events arrive.
	for range 50 {
		var expected int64
		for i := range perStoreWritten {
			subs := min(perStore, cfg.Subscribers-i*perStore)
			expected += perStoreWritten[i].Load() * int64(subs)
		}
		res.Expected = expected
		if delivered.Load() >= expected {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	cpuAfter, err := p.CPUTime()
	if err != nil {
		return nil, err
	}
	res.Written, res.Delivered = written.Load(), delivered.Load()
	if res.Delivered > 0 {
		res.CPUPerMessage = (cpuAfter - cpuBefore) / time.Duration(res.Delivered)
	}
	latMu.Lock()
	slices.Sort(latencies)
	if n := len(latencies); n > 0 {
		res.P50, res.P99, res.Max = latencies[n/2], latencies[min(n-1, n*99/100)], latencies[n-1]
	}
	latMu.Unlock()
	return res, nil
}

// WriteMarkdown writes the result as a table for BENCHMARKS.md.
func (r *SubscriptionResult) WriteMarkdown(w io.Writer) {
	fmt.Fprintf(w, "| subscribers (stores) | events written | messages delivered / expected | commit→client p50 | p99 | max | CPU per message | memory per subscription (RSS; Go heap; goroutines) |\n")
	fmt.Fprintf(w, "|---|---|---|---|---|---|---|---|\n")
	fmt.Fprintf(w, "| %d (%d) | %d | %d / %d | %.1f ms | %.1f ms | %.1f ms | %.1f µs | %.1f KB; %.1f KB; %.1f |\n",
		r.Subscribers, r.Stores, r.Written, r.Delivered, r.Expected,
		float64(r.P50)/float64(time.Millisecond), float64(r.P99)/float64(time.Millisecond), float64(r.Max)/float64(time.Millisecond),
		float64(r.CPUPerMessage)/float64(time.Microsecond), float64(r.MemoryPerSubscription)/1024,
		float64(r.HeapPerSubscription)/1024, r.GoroutinesPerSubscription)
}
