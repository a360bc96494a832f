package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/creditd/creditd/credittest"
)

// balancedInstances is two `creditd serve` instances on one database, each with
// --trusted-proxy 127.0.0.1/32 and extra flags, behind a round-robin reverse proxy on
// 127.0.0.1 that appends the address it received each request from to X-Forwarded-For, as
// load balancers do.
type balancedInstances struct {
	ls        *liveServer
	instances []string
	proxy     string
	secret    string
}

func startBalancedInstances(t *testing.T, extra ...string) *balancedInstances {
	t.Helper()
	flags := append([]string{"--trusted-proxy", "127.0.0.1/32"}, extra...)
	ls := startLiveServer(t, flags...)
	second := startServe(t, ls.clock, append([]string{"--db", ls.db, "--addr", "127.0.0.1:0"}, flags...)...)
	st := ls.cli(t, "store", "create", "--name", "Acme", "--currency", "EUR")["id"].(string)
	b := &balancedInstances{
		ls:        ls,
		instances: []string{ls.base, second},
		secret:    ls.cli(t, "key", "create", "--store", st, "--label", "ERP", "--scopes", "read_credit")["secret"].(string),
	}
	var targets []*url.URL
	for _, base := range b.instances {
		u, err := url.Parse(base)
		if err != nil {
			t.Fatal(err)
		}
		targets = append(targets, u)
	}
	var next atomic.Uint64
	proxy := &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) {
		pr.SetURL(targets[next.Add(1)%uint64(len(targets))])
		// Keep what the client sent and append its address, as a Director-style proxy does.
		pr.Out.Header["X-Forwarded-For"] = pr.In.Header["X-Forwarded-For"]
		pr.SetXForwarded()
	}}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ps := &httptest.Server{Listener: l, Config: &http.Server{Handler: proxy}}
	ps.Start()
	t.Cleanup(ps.Close)
	b.proxy = ps.URL
	return b
}

// loopbackClient is an HTTP client whose connections come from its own loopback address
// (Linux routes all of 127.0.0.0/8 to lo), so the test has clients with different addresses.
type loopbackClient struct {
	addr   string
	client *http.Client
}

// newLoopbackClient returns a client on a random address of 127.0.0.0/8 other than 127.0.0.1,
// the trusted proxy's: random, so runs sharing a Redis do not share limits.
func newLoopbackClient(t *testing.T) *loopbackClient {
	t.Helper()
	ip := net.IPv4(127, byte(1+rand.IntN(254)), byte(rand.IntN(256)), byte(2+rand.IntN(253)))
	dialer := &net.Dialer{LocalAddr: &net.TCPAddr{IP: ip}, Timeout: 5 * time.Second}
	transport := &http.Transport{DialContext: dialer.DialContext, DisableKeepAlives: true}
	t.Cleanup(transport.CloseIdleConnections)
	return &loopbackClient{addr: ip.String(), client: &http.Client{Transport: transport, Timeout: 30 * time.Second}}
}

// get sends GET base+path with secret and, if set, an X-Forwarded-For header the client
// invented, and returns the status and body.
func (c *loopbackClient) get(t *testing.T, base, path, secret, forwardedFor string) (int, string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, base+path, nil)
	req.Header.Set("Authorization", "Bearer "+secret)
	if forwardedFor != "" {
		req.Header.Set("X-Forwarded-For", forwardedFor)
	}
	resp, err := c.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// failUntilLimited sends n bad-key requests through base and returns how many were 401
// before the first 429; every one after it must be 429 naming the failed-authentication limit.
func (c *loopbackClient) failUntilLimited(t *testing.T, base string, n int, forwardedFor func(i int) string) int {
	t.Helper()
	admitted := -1
	for i := range n {
		status, body := c.get(t, base, "/v1/companies", "ck_revokedLongAgo", forwardedFor(i))
		switch {
		case status == 401 && admitted < 0:
		case status == 429 && strings.Contains(body, "failed-authentication limit"):
			if admitted < 0 {
				admitted = i
			}
		default:
			t.Fatalf("%s: bad request %d: %d %s", c.addr, i+1, status, body)
		}
	}
	if admitted < 0 {
		return n
	}
	return admitted
}

func noHeader(int) string { return "" }

// TestClientAddressBehindATrustedProxy: through a reverse proxy in front of two instances
// started with --trusted-proxy 127.0.0.1/32, two clients (different X-Forwarded-For) are
// limited separately, a valid key is never refused, and a client that is not a trusted proxy
// cannot choose its address by sending the header, to an instance or through the proxy
// (contract §2 as amended 2026-11-27). Without Redis each instance keeps its own count: an
// address gets 30 failures a minute from each.
func TestClientAddressBehindATrustedProxy(t *testing.T) {
	b := startBalancedInstances(t)
	a, other, spoofer := newLoopbackClient(t), newLoopbackClient(t), newLoopbackClient(t)
	if got := a.failUntilLimited(t, b.proxy, 70, noHeader); got != 60 {
		t.Fatalf("the first client's failures admitted through the proxy: %d, want 30 on each of the 2 instances", got)
	}
	for range 4 { // both instances
		if status, body := a.get(t, b.proxy, "/v1/companies", b.secret, ""); status != 200 {
			t.Fatalf("the limited client's valid key: %d %s", status, body)
		}
		if status, body := other.get(t, b.proxy, "/v1/companies", "ck_typo", ""); status != 401 {
			t.Fatalf("another client's first failure: %d %s, want 401: it has its own limit", status, body)
		}
	}
	// Clients invent headers: one naming the limited client (to lock it out further), or a new
	// address each time (to escape its own limit); the instance counts them by their peer.
	if got := spoofer.failUntilLimited(t, b.instances[0], 40, func(i int) string {
		return fmt.Sprintf("198.51.100.%d, %s", i, a.addr)
	}); got != 30 {
		t.Fatalf("a client sending X-Forwarded-For straight to an instance had %d failures admitted, want 30: its own address's", got)
	}
	// Through the proxy its header is kept but the proxy appends its real address, the
	// right-most untrusted one: the instance it exhausted refuses it whatever it claims (had the
	// header counted, each request would be a new address's first failure, 401).
	refused := 0
	for i := range 4 { // two on each instance
		status, body := spoofer.get(t, b.proxy, "/v1/companies", "ck_guess", fmt.Sprintf("203.0.113.%d", i))
		switch status {
		case 429:
			refused++
		case 401:
		default:
			t.Fatalf("spoofer through the proxy: %d %s", status, body)
		}
	}
	if refused != 2 {
		t.Fatalf("spoofer through the proxy: %d of 4 refused, want the 2 on the instance its address exhausted", refused)
	}
	// A client that claims another address through the proxy is not that address: the
	// limited client's failures do not stop it, and its own do not stop the limited one's key.
	if status, _ := other.get(t, b.proxy, "/v1/companies", b.secret, a.addr); status != 200 {
		t.Fatalf("a valid key claiming a limited address: %d", status)
	}
	// A minute later (the instances' injected clock), the first client's failures are 401 again.
	b.ls.clock.Advance(time.Minute)
	if status, body := a.get(t, b.proxy, "/v1/companies", "ck_revokedLongAgo", ""); status != 401 {
		t.Fatalf("a minute later: %d %s", status, body)
	}
}

// TestFailedAuthenticationLimitSharedThroughRedis: with --redis the instances share the
// failed-authentication limit as they share the store's: through the proxy a client has 30
// failures a minute in all, not 30 per instance, and another client's are its own.
func TestFailedAuthenticationLimitSharedThroughRedis(t *testing.T) {
	redisURL := credittest.RedisURL(t)
	b := startBalancedInstances(t, "--redis", redisURL)
	a, other := newLoopbackClient(t), newLoopbackClient(t)
	if got := a.failUntilLimited(t, b.proxy, 40, noHeader); got != 30 {
		t.Fatalf("failures admitted across two instances sharing Redis: %d, want 30", got)
	}
	for range 2 {
		if status, _ := a.get(t, b.proxy, "/v1/companies", b.secret, ""); status != 200 {
			t.Fatalf("the limited client's valid key: %d", status)
		}
		if status, _ := other.get(t, b.proxy, "/v1/companies", "ck_typo", ""); status != 401 {
			t.Fatalf("another client's failure: %d, want 401", status)
		}
	}
}
