package credittest

import (
	"net/url"
	"strings"
	"testing"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/rs/zerolog"
)

// Proxy is a toxiproxy (github.com/Shopify/toxiproxy/v2, run in this process) between a test
// and a TCP service, for faults of the link: latency, a stall, a reset, a cut.
type Proxy struct {
	*toxiproxy.Proxy
}

// NewProxy starts a proxy on a free loopback port forwarding to upstream (host:port); it stops
// with the test.
func NewProxy(tb testing.TB, upstream string) *Proxy {
	tb.Helper()
	srv := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(nil), zerolog.Nop())
	p := toxiproxy.NewProxy(srv, "link", "127.0.0.1:0", upstream)
	if err := p.Start(); err != nil {
		tb.Fatalf("toxiproxy: %v", err)
	}
	tb.Cleanup(p.Stop)
	return &Proxy{p}
}

// Toxic adds a toxic given as toxiproxy's JSON (`{"type":"timeout","attributes":{"timeout":0}}`
// stalls the link: nothing passes, nothing closes) and returns a function that removes it.
func (p *Proxy) Toxic(tb testing.TB, json string) (remove func()) {
	tb.Helper()
	w, err := p.Toxics.AddToxicJson(strings.NewReader(json))
	if err != nil {
		tb.Fatalf("toxic %s: %v", json, err)
	}
	return func() { _ = p.Toxics.RemoveToxic(tb.Context(), w.Name) }
}

// Cut closes every connection through the proxy and refuses new ones until Restore, as a
// database that went away does.
func (p *Proxy) Cut() { p.Stop() }

// Restore accepts connections again after Cut.
func (p *Proxy) Restore(tb testing.TB) {
	tb.Helper()
	if err := p.Start(); err != nil {
		tb.Fatalf("toxiproxy: %v", err)
	}
}

// Through returns the PostgreSQL URL dsn with its host and port replaced by the proxy's.
func (p *Proxy) Through(tb testing.TB, dsn string) string {
	tb.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		tb.Fatal(err)
	}
	u.Host = p.Listen
	return u.String()
}

// PostgresHost returns the host:port of a PostgreSQL URL.
func PostgresHost(tb testing.TB, dsn string) string {
	tb.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		tb.Fatal(err)
	}
	return u.Host
}
