package webhook

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/creditd/creditd/webhook/webhooktest"
)

// received is one request as the receiving server saw it.
type received struct {
	header http.Header
	body   []byte
}

// receiver is a real HTTPS endpoint that records what it receives and answers with respond.
type receiver struct {
	server   *httptest.Server
	mu       sync.Mutex
	requests []received
}

func newReceiver(tb testing.TB, respond http.HandlerFunc) *receiver {
	tb.Helper()
	r := &receiver{}
	r.server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.requests = append(r.requests, received{header: req.Header.Clone(), body: body})
		r.mu.Unlock()
		respond(w, req)
	}))
	tb.Cleanup(r.server.Close)
	return r
}

func (r *receiver) received() []received {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]received(nil), r.requests...)
}

// tlsConfig trusts the receiver's test certificate, which is valid for 127.0.0.1, ::1 and
// example.com.
func (r *receiver) tlsConfig() *tls.Config {
	return &tls.Config{RootCAs: r.server.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs}
}

// port is the receiver's port, for URLs that name it through another host.
func (r *receiver) port() string {
	u, _ := url.Parse(r.server.URL)
	return u.Port()
}

func answer(status int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}
}

// vectorRequest is the first published test vector as a delivery to u.
func vectorRequest(u string) Request {
	v := publishedVectors[0]
	return Request{URL: u, MessageID: v.id, Timestamp: time.Unix(v.timestamp, 0), Body: []byte(v.body), Secrets: []string{v.secret}}
}

func TestDeliverSendsTheSpecificationsHeaders(t *testing.T) {
	t.Parallel()
	r := newReceiver(t, answer(http.StatusNoContent, ""))
	c := NewClient(Options{AllowPrivate: true, TLSConfig: r.tlsConfig()})
	defer c.Close()
	v := publishedVectors[0]

	res := c.Deliver(context.Background(), vectorRequest(r.server.URL+"/hooks"))
	if !res.Success || res.Outcome != OutcomeSuccess || res.StatusCode != http.StatusNoContent || res.Err != nil || res.Duration <= 0 {
		t.Fatalf("Deliver = %v, want success with 204", res)
	}
	got := r.received()
	if len(got) != 1 {
		t.Fatalf("the receiver got %d requests, want 1", len(got))
	}
	h := got[0].header
	for name, want := range map[string]string{
		HeaderID:        v.id,
		HeaderTimestamp: "1614265330",
		HeaderSignature: v.signature,
		"Content-Type":  "application/json",
		"User-Agent":    "creditd-webhooks/1",
	} {
		if h.Get(name) != want {
			t.Errorf("header %s = %q, want %q", name, h.Get(name), want)
		}
	}
	if string(got[0].body) != v.body {
		t.Errorf("body %q, want %q", got[0].body, v.body)
	}
	if err := Verify(v.secret, h, got[0].body, 5*time.Minute, time.Unix(v.timestamp, 0)); err != nil {
		t.Errorf("the receiver's verification: %v", err)
	}
}

func TestDeliverSignsWithEverySecretDuringRotation(t *testing.T) {
	t.Parallel()
	r := newReceiver(t, answer(http.StatusOK, "ok"))
	c := NewClient(Options{AllowPrivate: true, TLSConfig: r.tlsConfig()})
	defer c.Close()
	newSecret, oldSecret := NewSecret(), NewSecret()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	req := Request{URL: r.server.URL, MessageID: "evt_2KWPBgLlAfxdpx2AI54pPJ", Timestamp: now, Body: []byte(`{"type":"hold.placed"}`), Secrets: []string{newSecret, oldSecret}}

	if res := c.Deliver(context.Background(), req); !res.Success {
		t.Fatalf("Deliver = %v", res)
	}
	got := r.received()[0]
	if n := len(strings.Fields(got.header.Get(HeaderSignature))); n != 2 {
		t.Fatalf("webhook-signature %q has %d signatures, want 2", got.header.Get(HeaderSignature), n)
	}
	for _, secret := range []string{newSecret, oldSecret} {
		if err := Verify(secret, got.header, got.body, 5*time.Minute, now); err != nil {
			t.Errorf("a receiver with one of the two secrets: %v", err)
		}
	}
}

func TestDeliverStampsAttemptsWithTheClock(t *testing.T) {
	t.Parallel()
	r := newReceiver(t, answer(http.StatusOK, ""))
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	c := NewClient(Options{AllowPrivate: true, TLSConfig: r.tlsConfig(), Now: func() time.Time { return now }})
	defer c.Close()
	req := vectorRequest(r.server.URL)
	req.Timestamp = time.Time{}
	if res := c.Deliver(context.Background(), req); !res.Success {
		t.Fatalf("Deliver = %v", res)
	}
	if got := r.received()[0].header.Get(HeaderTimestamp); got != "1772366400" {
		t.Fatalf("webhook-timestamp %s, want the injected clock's 1772366400", got)
	}
}

func TestDeliverDoesNotFollowRedirects(t *testing.T) {
	t.Parallel()
	var followed atomic.Int32
	r := newReceiver(t, func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Path == "/moved" {
			followed.Add(1)
			return
		}
		http.Redirect(w, req, "/moved", http.StatusTemporaryRedirect)
	})
	c := NewClient(Options{AllowPrivate: true, TLSConfig: r.tlsConfig()})
	defer c.Close()

	res := c.Deliver(context.Background(), vectorRequest(r.server.URL+"/hooks"))
	if res.Success || res.Outcome != OutcomeRedirect || res.StatusCode != http.StatusTemporaryRedirect {
		t.Fatalf("Deliver = %v, want a failed attempt classified redirect", res)
	}
	if followed.Load() != 0 || len(r.received()) != 1 {
		t.Fatalf("the redirect was followed (%d requests to its target)", followed.Load())
	}
}

func TestDeliverKeepsAtMost4KiBOfTheResponse(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("0123456789abcdef", 1024) // 16 KiB
	r := newReceiver(t, answer(http.StatusInternalServerError, long))
	c := NewClient(Options{AllowPrivate: true, TLSConfig: r.tlsConfig()})
	defer c.Close()

	res := c.Deliver(context.Background(), vectorRequest(r.server.URL))
	if res.Success || res.Outcome != "http_500" || res.StatusCode != http.StatusInternalServerError {
		t.Fatalf("Deliver = %v, want http_500", res)
	}
	if len(res.ResponseSnippet) != 4096 || !res.ResponseTruncated || string(res.ResponseSnippet) != long[:4096] {
		t.Fatalf("snippet of %d bytes (truncated %v), want the first 4096", len(res.ResponseSnippet), res.ResponseTruncated)
	}
	if strings.Contains(res.String(), "0123") {
		t.Fatal("Result.String shows the response body, which must not reach logs")
	}

	short := newReceiver(t, answer(http.StatusOK, "thanks"))
	c2 := NewClient(Options{AllowPrivate: true, TLSConfig: short.tlsConfig()})
	defer c2.Close()
	if res := c2.Deliver(context.Background(), vectorRequest(short.server.URL)); string(res.ResponseSnippet) != "thanks" || res.ResponseTruncated {
		t.Fatalf("short body: snippet %q truncated %v", res.ResponseSnippet, res.ResponseTruncated)
	}
}

// TestDeliverStopsReadingAfter4KiB has the receiver stream an endless body and count what it
// managed to write: a client that read it all would keep the receiver writing until the
// timeout, far past what the connection's buffers hold.
func TestDeliverStopsReadingAfter4KiB(t *testing.T) {
	t.Parallel()
	var written atomic.Int64
	done := make(chan struct{})
	r := newReceiver(t, func(w http.ResponseWriter, _ *http.Request) {
		defer close(done)
		chunk := bytes.Repeat([]byte("x"), 32<<10)
		for written.Load() < 1<<30 {
			n, err := w.Write(chunk)
			written.Add(int64(n))
			if err != nil {
				return
			}
		}
	})
	c := NewClient(Options{AllowPrivate: true, TLSConfig: r.tlsConfig(), Timeout: 5 * time.Second})
	defer c.Close()
	res := c.Deliver(context.Background(), vectorRequest(r.server.URL))
	if !res.Success || len(res.ResponseSnippet) != MaxResponseSnippet || !res.ResponseTruncated {
		t.Fatalf("Deliver = %v, truncated %v", res, res.ResponseTruncated)
	}
	<-done // the handler's write fails once the client has closed the connection
	if n := written.Load(); n > 32<<20 {
		t.Fatalf("the receiver wrote %d MiB before the client hung up", n>>20)
	}
}

func TestDeliverClassifiesStatuses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		status  int
		outcome string
		success bool
	}{
		{http.StatusOK, OutcomeSuccess, true},
		{http.StatusAccepted, OutcomeSuccess, true},
		{299, OutcomeSuccess, true},
		{http.StatusMovedPermanently, OutcomeRedirect, false},
		{http.StatusNotModified, OutcomeRedirect, false},
		{http.StatusBadRequest, "http_400", false},
		{http.StatusGone, "http_410", false},
		{http.StatusTooManyRequests, "http_429", false},
		{http.StatusBadGateway, "http_502", false},
	}
	for _, tt := range tests {
		r := newReceiver(t, answer(tt.status, ""))
		c := NewClient(Options{AllowPrivate: true, TLSConfig: r.tlsConfig()})
		res := c.Deliver(context.Background(), vectorRequest(r.server.URL))
		c.Close()
		if res.Outcome != tt.outcome || res.Success != tt.success || res.StatusCode != tt.status {
			t.Errorf("status %d: %v, want %s", tt.status, res, tt.outcome)
		}
	}
}

func TestDeliverReadsRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		header string
		want   time.Duration
	}{
		{"120", 2 * time.Minute},
		{now.Add(time.Hour).Format(http.TimeFormat), time.Hour},
		{now.Add(-time.Hour).Format(http.TimeFormat), 0},
		{"-5", 0},
		{"soon", 0},
		{"", 0},
	}
	for _, tt := range tests {
		r := newReceiver(t, func(w http.ResponseWriter, _ *http.Request) {
			if tt.header != "" {
				w.Header().Set("Retry-After", tt.header)
			}
			w.WriteHeader(http.StatusServiceUnavailable)
		})
		c := NewClient(Options{AllowPrivate: true, TLSConfig: r.tlsConfig(), Now: func() time.Time { return now }})
		res := c.Deliver(context.Background(), vectorRequest(r.server.URL))
		c.Close()
		if res.Outcome != "http_503" || res.RetryAfter != tt.want {
			t.Errorf("Retry-After %q: %v, RetryAfter %v, want %v", tt.header, res, res.RetryAfter, tt.want)
		}
	}
}

// TestDeliverTimesOut uses a real 200ms timeout: what is measured is the network client's
// deadline, which no injected clock can stand in for.
func TestDeliverTimesOut(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	r := newReceiver(t, func(w http.ResponseWriter, req *http.Request) {
		select {
		case <-release:
		case <-req.Context().Done():
		}
	})
	defer close(release)
	c := NewClient(Options{AllowPrivate: true, TLSConfig: r.tlsConfig(), Timeout: 200 * time.Millisecond})
	defer c.Close()

	res := c.Deliver(context.Background(), vectorRequest(r.server.URL))
	if res.Success || res.Outcome != OutcomeTimeout || res.StatusCode != 0 || res.Err == nil {
		t.Fatalf("Deliver = %v, want timeout", res)
	}
	if res.Duration < 200*time.Millisecond || res.Duration > 5*time.Second {
		t.Fatalf("the attempt took %v, want about the 200ms timeout", res.Duration)
	}

}

// TestDeliverCanceledByTheCaller cancels the caller's context while the receiver holds the
// request: a shutdown is not the receiver's fault and must not be classified as its timeout.
func TestDeliverCanceledByTheCaller(t *testing.T) {
	t.Parallel()
	// The receiver holds the request until the test ends, not until its own request context is
	// done: that context can end for reasons of the server's own (a CI run once saw the handler
	// return and a 200 reach the client before the client's cancel), and a client that ignored
	// the cancel would then wait for its timeout and fail the test with timeout.
	arrived, release := make(chan struct{}), make(chan struct{})
	r := newReceiver(t, func(w http.ResponseWriter, req *http.Request) {
		close(arrived)
		select {
		case <-release:
		case <-time.After(time.Minute):
		}
	})
	t.Cleanup(func() { close(release) })
	c := NewClient(Options{AllowPrivate: true, TLSConfig: r.tlsConfig()})
	defer c.Close()
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-arrived
		cancel()
	}()
	res := c.Deliver(ctx, vectorRequest(r.server.URL))
	if res.Success || res.Outcome != OutcomeCanceled {
		t.Fatalf("Deliver with a canceled context = %v, want canceled", res)
	}
	// Ended by the cancel, not by the attempt's own timeout (which a client that ignored the
	// cancel would wait for, and which this receiver outlasts).
	if res.Duration >= DefaultTimeout {
		t.Fatalf("Deliver ended after %s, its timeout: the cancel was not followed", res.Duration)
	}
}

func TestDeliverClassifiesNetworkFailures(t *testing.T) {
	t.Parallel()
	// A port that was just free: nothing listens there.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedPort := l.Addr().String()
	// Closed only once the other receivers listen: closed first, its port was sometimes handed
	// straight to the next receiver, and "nothing listening" met a TLS server.
	untrusted := newReceiver(t, answer(http.StatusOK, ""))
	hangUp := newReceiver(t, func(w http.ResponseWriter, _ *http.Request) {
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close()
		}
	})
	l.Close()
	tests := []struct {
		name    string
		url     string
		tls     *tls.Config
		outcome string
	}{
		{"nothing listening", "https://" + closedPort + "/", nil, OutcomeConnectionRefused},
		{"untrusted certificate", untrusted.server.URL, nil, OutcomeTLSError},
		{"connection closed without an answer", hangUp.server.URL, hangUp.tlsConfig(), OutcomeConnectionReset},
		{"unknown host", "https://creditd-webhook-test.invalid/", nil, OutcomeDNSError},
	}
	for _, tt := range tests {
		c := NewClient(Options{AllowPrivate: true, TLSConfig: tt.tls, Resolver: webhooktest.FakeDNS(t, nil)})
		res := c.Deliver(context.Background(), vectorRequest(tt.url))
		c.Close()
		if res.Success || res.Outcome != tt.outcome || res.Err == nil {
			t.Errorf("%s: %v, want %s", tt.name, res, tt.outcome)
		}
	}
	if n := len(untrusted.received()); n != 0 {
		t.Errorf("the receiver with an untrusted certificate got %d requests", n)
	}
}

func TestDeliverRefusesInvalidRequests(t *testing.T) {
	t.Parallel()
	c := NewClient(Options{})
	defer c.Close()
	req := vectorRequest("https://hooks.example.com/")
	tests := []struct {
		name    string
		change  func(*Request)
		outcome string
	}{
		{"plain http", func(r *Request) { r.URL = "http://hooks.example.com/" }, OutcomeInvalidURL},
		{"no URL", func(r *Request) { r.URL = "" }, OutcomeInvalidURL},
		{"no secret", func(r *Request) { r.Secrets = nil }, OutcomeInvalidSecret},
		{"malformed secret", func(r *Request) { r.Secrets = []string{"whsec_x"} }, OutcomeInvalidSecret},
		{"malformed message id", func(r *Request) { r.MessageID = "evt.1" }, OutcomeInvalidRequest},
	}
	for _, tt := range tests {
		r := req
		tt.change(&r)
		if res := c.Deliver(context.Background(), r); res.Success || res.Outcome != tt.outcome || res.Err == nil {
			t.Errorf("%s: %v, want %s", tt.name, res, tt.outcome)
		}
		// An endpoint created with --allow-private-webhooks but delivered by a serve without
		// it is told why.
		if res := c.Deliver(context.Background(), r); tt.name == "plain http" && !strings.Contains(res.Err.Error(), "--allow-private-webhooks") {
			t.Errorf("%s: %v does not name --allow-private-webhooks", tt.name, res.Err)
		}
	}
}

// TestDeliverRefusesPrivateDestinations sends to the private addresses an endpoint owner could
// aim at. The receiver listens on 127.0.0.1, so for that address (and localhost) a refusal
// that failed would reach it; it must get nothing.
func TestDeliverRefusesPrivateDestinations(t *testing.T) {
	t.Parallel()
	r := newReceiver(t, answer(http.StatusOK, ""))
	c := NewClient(Options{TLSConfig: r.tlsConfig()})
	defer c.Close()
	for _, host := range []string{"127.0.0.1", "[::1]", "10.0.0.1", "169.254.169.254", "100.64.0.1", "[fc00::1]", "[::ffff:127.0.0.1]", "localhost"} {
		res := c.Deliver(context.Background(), vectorRequest("https://"+host+":"+r.port()+"/"))
		if res.Success || res.Outcome != OutcomeRefusedPrivateAddress || !errors.Is(res.Err, ErrPrivateDestination) {
			t.Errorf("%s: %v, want refused_private_address", host, res)
		}
	}
	if n := len(r.received()); n != 0 {
		t.Fatalf("the loopback receiver got %d requests", n)
	}
}

// TestDeliverChecksTheConnectedAddress is the DNS rebinding case: the URL names a public-looking
// host, which passes ValidateURL, and the name resolves to loopback only when the connection is
// made. The same resolver with AllowPrivate reaches the receiver, which shows that the refusal
// came from the address check and not from a broken lookup.
func TestDeliverChecksTheConnectedAddress(t *testing.T) {
	t.Parallel()
	r := newReceiver(t, answer(http.StatusOK, ""))
	resolver := webhooktest.FakeDNS(t, map[string][]netip.Addr{
		"example.com.":        {netip.MustParseAddr("127.0.0.1")},
		"mapped.example.com.": {netip.MustParseAddr("::ffff:127.0.0.1")},
		"v6.example.com.":     {netip.MustParseAddr("::1")},
		"mixed.example.com.":  {netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("10.1.2.3"), netip.MustParseAddr("fd00::1")},
	})
	strict := NewClient(Options{TLSConfig: r.tlsConfig(), Resolver: resolver})
	defer strict.Close()
	for _, host := range []string{"example.com", "mapped.example.com", "v6.example.com", "mixed.example.com"} {
		u := "https://" + host + ":" + r.port() + "/"
		if err := ValidateURL(u, false); err != nil {
			t.Fatalf("ValidateURL(%s) = %v; the test needs a URL that passes", u, err)
		}
		res := strict.Deliver(context.Background(), vectorRequest(u))
		if res.Success || res.Outcome != OutcomeRefusedPrivateAddress || !errors.Is(res.Err, ErrPrivateDestination) {
			t.Errorf("%s: %v, want refused_private_address", host, res)
		}
	}
	if n := len(r.received()); n != 0 {
		t.Fatalf("the receiver got %d requests through names resolving to loopback", n)
	}

	lenient := NewClient(Options{AllowPrivate: true, TLSConfig: r.tlsConfig(), Resolver: resolver})
	defer lenient.Close()
	if res := lenient.Deliver(context.Background(), vectorRequest("https://example.com:"+r.port()+"/")); !res.Success {
		t.Fatalf("with AllowPrivate the same name: %v, want success", res)
	}
}

func TestDeliverAllowPrivateAcceptsPlainHTTP(t *testing.T) {
	t.Parallel()
	var got atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { got.Add(1) }))
	defer srv.Close()
	c := NewClient(Options{AllowPrivate: true})
	defer c.Close()
	if res := c.Deliver(context.Background(), vectorRequest(srv.URL)); !res.Success || got.Load() != 1 {
		t.Fatalf("Deliver over http with AllowPrivate = %v", res)
	}
}

// TestDeliverConcurrently shares one Client between goroutines, as serve's workers will; run
// with -race it checks the Client keeps no unsynchronized state.
func TestDeliverConcurrently(t *testing.T) {
	t.Parallel()
	r := newReceiver(t, answer(http.StatusOK, "ok"))
	c := NewClient(Options{AllowPrivate: true, TLSConfig: r.tlsConfig()})
	defer c.Close()
	var wg sync.WaitGroup
	failures := make(chan Result, 20)
	for range 20 {
		wg.Go(func() {
			if res := c.Deliver(context.Background(), vectorRequest(r.server.URL)); !res.Success || !bytes.Equal(res.ResponseSnippet, []byte("ok")) {
				failures <- res
			}
		})
	}
	wg.Wait()
	close(failures)
	for res := range failures {
		t.Errorf("concurrent delivery: %v", res)
	}
	if n := len(r.received()); n != 20 {
		t.Fatalf("the receiver got %d requests, want 20", n)
	}
}
