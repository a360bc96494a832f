package httpapi_test

import (
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"

	"github.com/creditd/creditd/httpapi"
)

// TestClientAddress holds contract §2's client address: the TCP peer unless the peer is a
// trusted proxy, then the right-most forwarded address that is not a trusted proxy.
func TestClientAddress(t *testing.T) {
	trusted := httpapi.TrustedProxies{
		netip.MustParsePrefix("10.0.0.0/8"),
		netip.MustParsePrefix("fd00::/8"),
	}
	for _, tc := range []struct {
		name    string
		trusted httpapi.TrustedProxies
		peer    string
		header  map[string][]string
		want    string
	}{
		{"no proxies trusted: the peer, whatever it sends", nil, "10.1.1.1:5000", map[string][]string{"X-Forwarded-For": {"203.0.113.9"}}, "10.1.1.1"},
		{"an untrusted peer cannot choose its address", trusted, "198.51.100.7:5000", map[string][]string{"X-Forwarded-For": {"203.0.113.9"}}, "198.51.100.7"},
		{"an untrusted peer cannot choose it by Forwarded either", trusted, "198.51.100.7:5000", map[string][]string{"Forwarded": {"for=203.0.113.9"}}, "198.51.100.7"},
		{"a trusted peer without headers is the client", trusted, "10.0.0.2:5000", nil, "10.0.0.2"},
		{"a trusted peer: the address it reports", trusted, "10.0.0.2:5000", map[string][]string{"X-Forwarded-For": {"203.0.113.9"}}, "203.0.113.9"},
		{"the right-most untrusted, not what the client wrote on the left", trusted, "10.0.0.2:5000", map[string][]string{"X-Forwarded-For": {"1.1.1.1, 203.0.113.9, 10.0.0.3"}}, "203.0.113.9"},
		{"several header lines are one list", trusted, "10.0.0.2:5000", map[string][]string{"X-Forwarded-For": {"1.1.1.1, 203.0.113.9", "10.0.0.3"}}, "203.0.113.9"},
		{"every hop trusted: the left-most", trusted, "10.0.0.2:5000", map[string][]string{"X-Forwarded-For": {"10.9.9.9, 10.0.0.3"}}, "10.9.9.9"},
		{"an unreadable hop ends the walk at the last trusted one", trusted, "10.0.0.2:5000", map[string][]string{"X-Forwarded-For": {"1.1.1.1, garbage, 10.0.0.3"}}, "10.0.0.3"},
		{"ports and brackets", trusted, "10.0.0.2:5000", map[string][]string{"X-Forwarded-For": {"[2001:db8::1]:4711"}}, "2001:db8::1"},
		{"IPv4 with a port", trusted, "10.0.0.2:5000", map[string][]string{"X-Forwarded-For": {"203.0.113.9:4711"}}, "203.0.113.9"},
		{"an IPv4-mapped address is IPv4", trusted, "[::ffff:10.0.0.2]:5000", map[string][]string{"X-Forwarded-For": {"::ffff:203.0.113.9"}}, "203.0.113.9"},
		{"IPv6 proxies", trusted, "[fd00::1]:5000", map[string][]string{"X-Forwarded-For": {"2001:db8::7"}}, "2001:db8::7"},
		{"Forwarded for=", trusted, "10.0.0.2:5000", map[string][]string{"Forwarded": {`for=1.1.1.1, for="[2001:db8:cafe::17]:4711";proto=https;by=10.0.0.2, for=10.0.0.3`}}, "2001:db8:cafe::17"},
		{"Forwarded, case and quotes", trusted, "10.0.0.2:5000", map[string][]string{"Forwarded": {`proto=http;For="203.0.113.9"`}}, "203.0.113.9"},
		{"Forwarded unknown ends the walk", trusted, "10.0.0.2:5000", map[string][]string{"Forwarded": {`for=unknown`}}, "10.0.0.2"},
		{"X-Forwarded-For wins over Forwarded", trusted, "10.0.0.2:5000", map[string][]string{"X-Forwarded-For": {"203.0.113.9"}, "Forwarded": {"for=1.1.1.1"}}, "203.0.113.9"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/", nil)
			r.RemoteAddr = tc.peer
			for k, vs := range tc.header {
				for _, v := range vs {
					r.Header.Add(k, v)
				}
			}
			if got := tc.trusted.Resolve(r); got != tc.want {
				t.Errorf("Resolve = %q, want %q", got, tc.want)
			}
			var seen string
			httpapi.WithClientAddress(tc.trusted, http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
				seen = httpapi.ClientAddress(r)
			})).ServeHTTP(httptest.NewRecorder(), r)
			if seen != tc.want {
				t.Errorf("ClientAddress behind WithClientAddress = %q, want %q", seen, tc.want)
			}
		})
	}
	// Without the middleware, ClientAddress is the peer's.
	r := httptest.NewRequest("GET", "/", nil)
	r.RemoteAddr = "10.0.0.2:5000"
	r.Header.Set("X-Forwarded-For", "203.0.113.9")
	if got := httpapi.ClientAddress(r); got != "10.0.0.2" {
		t.Errorf("ClientAddress without the middleware = %q", got)
	}
}

func TestParseTrustedProxy(t *testing.T) {
	for in, want := range map[string]string{
		"10.0.0.0/8":     "10.0.0.0/8",
		"10.1.2.3/8":     "10.0.0.0/8",
		"127.0.0.1":      "127.0.0.1/32",
		"::1":            "::1/128",
		"fd00::/8":       "fd00::/8",
		" 192.0.2.0/24 ": "192.0.2.0/24",
	} {
		p, err := httpapi.ParseTrustedProxy(in)
		if err != nil || p.String() != want {
			t.Errorf("ParseTrustedProxy(%q) = %v, %v; want %s", in, p, err, want)
		}
	}
	for _, in := range []string{"", "localhost", "10.0.0.0/33", "10.0.0"} {
		if _, err := httpapi.ParseTrustedProxy(in); err == nil {
			t.Errorf("ParseTrustedProxy(%q) accepted", in)
		}
	}
}
