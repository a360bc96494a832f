package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/creditd/creditd/credittest"
	"github.com/creditd/creditd/database"
	"github.com/creditd/creditd/ids"
)

// liveInstance is a `creditd serve` process on a fixed address, so it can be stopped and
// started again where its clients expect it.
type liveInstance struct {
	t    *testing.T
	bin  string
	args []string
	addr string
	cmd  *exec.Cmd
}

func newLiveInstance(t *testing.T, bin string, args ...string) *liveInstance {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	in := &liveInstance{t: t, bin: bin, args: args, addr: addr}
	in.start()
	t.Cleanup(func() { in.stop(syscall.SIGKILL) })
	return in
}

func (in *liveInstance) url() string { return "http://" + in.addr }

func (in *liveInstance) start() {
	in.t.Helper()
	cmd := exec.Command(in.bin, append([]string{"serve", "--addr", in.addr}, in.args...)...)
	cmd.Stdout = io.Discard
	stderr, err := cmd.StderrPipe()
	if err != nil {
		in.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		in.t.Fatal(err)
	}
	in.cmd = cmd
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		once := sync.Once{}
		for sc.Scan() {
			var line struct{ Msg string }
			if json.Unmarshal(sc.Bytes(), &line) == nil && line.Msg == "listening" {
				once.Do(func() { close(ready) })
			}
		}
	}()
	select {
	case <-ready:
	case <-time.After(30 * time.Second):
		in.t.Fatal("serve did not start")
	}
}

// stop signals the process and waits for it to end.
func (in *liveInstance) stop(sig syscall.Signal) {
	if in.cmd == nil || in.cmd.ProcessState != nil {
		return
	}
	_ = in.cmd.Process.Signal(sig)
	_ = in.cmd.Wait()
}

// liveDB is a database with a store, a company and a key, made through the command line.
type liveDB struct {
	dsn, store, company, key, keyID string
}

func newLiveDB(t *testing.T, bin, backend string) liveDB {
	t.Helper()
	dsn := filepath.Join(t.TempDir(), "creditd.db")
	if backend == "postgres" {
		var drop func()
		var err error
		dsn, drop, err = database.ScratchSchema(context.Background(), credittest.PostgresURL(t), "live_"+strings.ToLower(ids.Random(10)))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(drop)
	}
	runCLI(t, bin, "migrate", "--db", dsn)
	d := liveDB{dsn: dsn}
	d.store = runCLI(t, bin, "store", "create", "--db", dsn, "--name", "Live", "--currency", "EUR")["id"].(string)
	k := runCLI(t, bin, "key", "create", "--db", dsn, "--store", d.store, "--label", "dashboard", "--scopes", "read_credit,write_credit")
	d.key, d.keyID = k["secret"].(string), k["id"].(string)
	d.company = runCLI(t, bin, "company", "create", "--db", dsn, "--store", d.store, "--name", "Buyer", "--platform-company-gid", "gid://platform/Company/1",
		"--payment-terms", "NET_30", "--credit-limit", "1000000.00")["id"].(string)
	return d
}

// feed lists every event of the store through GET /v1/events.
func (d liveDB) feed(t *testing.T, base string) []string {
	t.Helper()
	var out []string
	after := ""
	for {
		url := base + "/v1/events?limit=250"
		if after != "" {
			url += "&after=" + after
		}
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		req.Header.Set("Authorization", "Bearer "+d.key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var page struct {
			Data    []struct{ ID string }
			HasMore bool `json:"has_more"`
		}
		err = json.NewDecoder(resp.Body).Decode(&page)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range page.Data {
			out = append(out, e.ID)
		}
		if !page.HasMore {
			return out
		}
		after = out[len(out)-1]
	}
}

func adjustOn(base, key, company, note string) int {
	req, _ := http.NewRequest(http.MethodPost, base+"/v1/companies/"+company+"/adjustments", strings.NewReader(`{"amount":"1.00","note":"`+note+`"}`))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

func liveBackends(t *testing.T) []string {
	if os.Getenv("CREDITD_TEST_POSTGRES") != "" {
		return []string{"sqlite", "postgres"}
	}
	t.Log("CREDITD_TEST_POSTGRES is not set: SQLite only")
	return []string{"sqlite"}
}

// TestSubscriptionResumesAcrossRestarts: a subscriber starts with afterEvent, and is cut off
// mid-stream twice while 8 writers write through two instances: a graceful restart (its
// WebSocket closed with 1012, no complete) and a killed process (its connection drops). Each
// time it resumes, on whichever instance answers, as graphql-ws does: the subscription's
// original afterEvent again, and the last event it received as connection_init's afterEvent
// (contract §16, amended 2026-11-28). In the end it
// holds every event of the feed after its start exactly once, in feed order.
func TestSubscriptionResumesAcrossRestarts(t *testing.T) {
	bin, err := instancesBinary()
	if err != nil {
		t.Fatal(err)
	}
	for _, backend := range liveBackends(t) {
		t.Run(backend, func(t *testing.T) {
			d := newLiveDB(t, bin, backend)
			args := []string{"--db", d.dsn, "--rate-limit", "1000000"}
			a, b := newLiveInstance(t, bin, args...), newLiveInstance(t, bin, args...)
			for i := range 3 {
				if s := adjustOn(a.url(), d.key, d.company, fmt.Sprint("seed ", i)); s != http.StatusCreated {
					t.Fatalf("seed: %d", s)
				}
			}
			start := d.feed(t, a.url())[1]

			stopWriters := make(chan struct{})
			var writers sync.WaitGroup
			var written atomic.Int64
			for w := range 8 {
				writers.Add(1)
				go func() {
					defer writers.Done()
					for i := 0; ; i++ {
						select {
						case <-stopWriters:
							return
						default:
						}
						base := a.url()
						if (w+i)%2 == 1 {
							base = b.url()
						}
						if adjustOn(base, d.key, d.company, fmt.Sprintf("w%d-%d", w, i)) == http.StatusCreated {
							written.Add(1)
						} else {
							time.Sleep(20 * time.Millisecond) // its instance is restarting
						}
					}
				}()
			}

			var mu sync.Mutex
			var got []string
			resumes := 0
			done := make(chan struct{})
			go func() {
				defer close(done)
				instances := []*liveInstance{a, b}
				for n := 0; ; n++ {
					select {
					case <-stopWriters:
						// Keep reading until the feed is caught up, below.
					default:
					}
					// As graphql-ws does (contract §16, amended 2026-11-28): the subscription's
					// original variables again, and the last event received in connection_init.
					init := map[string]any{"Authorization": "Bearer " + d.key}
					mu.Lock()
					if len(got) > 0 {
						init["afterEvent"] = got[len(got)-1]
					}
					mu.Unlock()
					payload, _ := json.Marshal(init)
					in := instances[n%2]
					c, _, err := credittest.DialWS(t, in.url(), credittest.WSOptions{})
					if err != nil {
						time.Sleep(50 * time.Millisecond)
						continue
					}
					c.Send(t, credittest.WSMessage{Type: "connection_init", Payload: payload})
					if m := c.Read(t, 5*time.Second); m == nil || m.Type != "connection_ack" {
						c.Close()
						continue
					}
					c.Subscribe(t, "1", credittest.EventsSubscription, map[string]any{"after": start})
					for {
						m := c.Read(t, 3*time.Second)
						if m == nil || m.Type != "next" {
							break
						}
						ev := credittest.NextEvent(t, m)
						mu.Lock()
						got = append(got, ev.ID)
						mu.Unlock()
					}
					c.Close()
					select {
					case <-stopWriters:
						return
					default:
					}
					mu.Lock()
					resumes++
					mu.Unlock()
				}
			}()

			// The restarts begin once the subscriber holds part of the stream.
			for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
				mu.Lock()
				n := len(got)
				mu.Unlock()
				if n > 0 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("the subscriber received nothing in 30 s")
				}
			}
			time.Sleep(1500 * time.Millisecond)
			a.stop(syscall.SIGTERM) // graceful: WebSockets closed with 1012, no complete
			a.start()
			time.Sleep(1500 * time.Millisecond)
			b.stop(syscall.SIGKILL) // abrupt: connections drop
			b.start()
			time.Sleep(1500 * time.Millisecond)
			close(stopWriters)
			writers.Wait()
			<-done

			feed := d.feed(t, a.url())
			i := 0
			for feed[i] != start {
				i++
			}
			want := feed[i+1:]
			mu.Lock()
			defer mu.Unlock()
			t.Logf("%s: %d events written by 8 writers on two instances, %d received after %d resumptions", backend, written.Load(), len(got), resumes)
			if resumes < 2 {
				t.Fatalf("the subscriber resumed %d times, want at least 2 (one per restart)", resumes)
			}
			if strings.Join(got, ",") != strings.Join(want, ",") {
				seen := map[string]int{}
				for _, id := range got {
					seen[id]++
				}
				for _, id := range want {
					if seen[id] != 1 {
						t.Errorf("event %s received %d times", id, seen[id])
					}
				}
				t.Fatalf("received %d events, the feed has %d after the start (in order: %v)", len(got), len(want), len(got) == len(want))
			}
		})
	}
}

// TestSubscriptionEndsWhenCLIRevokes: `creditd key revoke` from another process ends a
// stream served by `creditd serve` with unauthenticated (error message, close 4401), and no
// event written after the command returned reaches the subscriber.
func TestSubscriptionEndsWhenCLIRevokes(t *testing.T) {
	bin, err := instancesBinary()
	if err != nil {
		t.Fatal(err)
	}
	for _, backend := range liveBackends(t) {
		t.Run(backend, func(t *testing.T) {
			d := newLiveDB(t, bin, backend)
			in := newLiveInstance(t, bin, "--db", d.dsn)
			other := runCLI(t, bin, "key", "create", "--db", d.dsn, "--store", d.store, "--label", "erp", "--scopes", "read_credit,write_credit")["secret"].(string)
			c := credittest.MustDialWS(t, in.url(), d.key, credittest.WSOptions{})
			c.Subscribe(t, "1", credittest.EventsSubscription, nil)
			time.Sleep(300 * time.Millisecond)
			if s := adjustOn(in.url(), other, d.company, "before"); s != http.StatusCreated {
				t.Fatalf("adjustment: %d", s)
			}
			credittest.NextEvent(t, c.Read(t, 5*time.Second))

			runCLI(t, bin, "key", "revoke", d.keyID, "--db", d.dsn)
			for i := range 3 {
				if s := adjustOn(in.url(), other, d.company, fmt.Sprint("after ", i)); s != http.StatusCreated {
					t.Fatalf("adjustment: %d", s)
				}
			}
			m := c.Read(t, 10*time.Second)
			if m == nil || m.Type != "error" || strings.Join(credittest.ErrorCodes(m), ",") != "unauthenticated" {
				t.Fatalf("after the revocation: %+v (close %v)", m, c.Closed)
			}
			if m := c.Read(t, 5*time.Second); m != nil || c.Closed == nil || c.Closed.Code != 4401 {
				t.Fatalf("after the error: %+v, close %v", m, c.Closed)
			}
		})
	}
}
