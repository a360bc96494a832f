package httpapi

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// TrustedProxies are the address ranges of the reverse proxies and load balancers in front of
// creditd (serve --trusted-proxy, contract §2). A request whose TCP peer is in one of them
// comes from a proxy, so its client is the address the proxies reported; any other peer is the
// client itself, whatever headers it sends, because anyone can send them.
type TrustedProxies []netip.Prefix

// ParseTrustedProxy reads one --trusted-proxy value: a CIDR range (10.0.0.0/8, fd00::/8) or
// a single address (192.0.2.7, which means 192.0.2.7/32).
//
// Errors: a plain error naming the value and the expected form.
func ParseTrustedProxy(s string) (netip.Prefix, error) {
	s = strings.TrimSpace(s)
	if p, err := netip.ParsePrefix(s); err == nil {
		// 10.1.2.3/8 is read as 10.0.0.0/8: the range the operator meant to name.
		return p.Masked(), nil
	}
	if a, err := netip.ParseAddr(s); err == nil && a.Zone() == "" {
		a = a.Unmap()
		return netip.PrefixFrom(a, a.BitLen()), nil
	}
	return netip.Prefix{}, fmt.Errorf("a trusted proxy is an address range in CIDR form, such as 10.0.0.0/8 or 127.0.0.1/32, or one address; got %q", s)
}

// Contains reports whether a is in one of the ranges.
func (t TrustedProxies) Contains(a netip.Addr) bool {
	a = a.Unmap()
	for _, p := range t {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// Resolve returns r's client address: the TCP peer's, unless the peer is a trusted proxy;
// then the right-most X-Forwarded-For address (or, without that header, Forwarded "for=")
// that is not itself a trusted proxy. Each proxy appends the address it received the request
// from, so everything to the right of that address was written by a trusted proxy and
// everything to its left by the client, who may have invented it. When every address is
// trusted, the left-most one is the client; an address that cannot be read (Forwarded's
// "unknown", say) ends the walk at the last trusted hop before it.
func (t TrustedProxies) Resolve(r *http.Request) string {
	peer, ok := parseHop(r.RemoteAddr)
	if !ok {
		return peerHost(r.RemoteAddr)
	}
	if len(t) == 0 || !t.Contains(peer) {
		return peer.String()
	}
	hops := forwardedHops(r.Header)
	client := peer
	for i := len(hops) - 1; i >= 0; i-- {
		a, ok := parseHop(hops[i])
		if !ok {
			break
		}
		client = a
		if !t.Contains(a) {
			break
		}
	}
	return client.String()
}

type clientAddressKey struct{}

// WithClientAddress resolves every request's client address once, under trusted, for
// ClientAddress: the access log and the per-address limits read the same one.
func WithClientAddress(trusted TrustedProxies, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := context.WithValue(r.Context(), clientAddressKey{}, trusted.Resolve(r))
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// ClientAddress returns the request's client address (an IP address in its canonical text
// form): the one WithClientAddress resolved, or the TCP peer's when it did not run.
func ClientAddress(r *http.Request) string {
	if a, ok := r.Context().Value(clientAddressKey{}).(string); ok {
		return a
	}
	return TrustedProxies(nil).Resolve(r)
}

// forwardedHops returns the addresses the proxies reported, client first: X-Forwarded-For's
// (every such header line, in order), or without it Forwarded's "for=" parameters.
func forwardedHops(h http.Header) []string {
	var hops []string
	for _, line := range h.Values("X-Forwarded-For") {
		for _, hop := range strings.Split(line, ",") {
			if hop = strings.TrimSpace(hop); hop != "" {
				hops = append(hops, hop)
			}
		}
	}
	if len(hops) > 0 {
		return hops
	}
	for _, line := range h.Values("Forwarded") {
		for _, element := range splitOutsideQuotes(line, ',') {
			for _, pair := range splitOutsideQuotes(element, ';') {
				name, value, ok := strings.Cut(strings.TrimSpace(pair), "=")
				if !ok || !strings.EqualFold(strings.TrimSpace(name), "for") {
					continue
				}
				value = strings.TrimSpace(value)
				if len(value) >= 2 && value[0] == '"' && value[len(value)-1] == '"' {
					value = strings.ReplaceAll(value[1:len(value)-1], `\`, "")
				}
				hops = append(hops, value)
			}
		}
	}
	return hops
}

// splitOutsideQuotes splits s at sep where sep is not inside a quoted string (RFC 7239
// quotes IPv6 addresses with ports: for="[2001:db8::1]:4711").
func splitOutsideQuotes(s string, sep byte) []string {
	var parts []string
	quoted, start := false, 0
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '\\' && quoted:
			i++
		case s[i] == '"':
			quoted = !quoted
		case s[i] == sep && !quoted:
			parts = append(parts, s[start:i])
			start = i + 1
		}
	}
	return append(parts, s[start:])
}

// parseHop reads an address as proxies write it: 192.0.2.1, 2001:db8::1, [2001:db8::1],
// 192.0.2.1:4711 or [2001:db8::1]:4711. IPv4-mapped IPv6 addresses become IPv4 and zones are
// dropped, so one client has one address text.
func parseHop(s string) (netip.Addr, bool) {
	a, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(s, "["), "]"))
	if err != nil {
		ap, err := netip.ParseAddrPort(s)
		if err != nil {
			return netip.Addr{}, false
		}
		a = ap.Addr()
	}
	return a.Unmap().WithZone(""), true
}

// peerHost is RemoteAddr's host part, for a peer that is not an IP address (a Unix socket).
func peerHost(remote string) string {
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		return remote
	}
	return host
}
