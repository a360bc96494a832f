package webhook

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/net/idna"
)

// Errors of ValidateURL.
var (
	// ErrInvalidURL means a webhook URL does not parse, is not absolute, has no host, carries
	// user:password (which would end up in logs), or uses a scheme other than https (or http
	// when private destinations are allowed).
	ErrInvalidURL = errors.New("webhook: URL must be https://host[:port]/path without credentials")
	// ErrPrivateDestination means a webhook destination is not a public internet address:
	// loopback, private, link-local, carrier-grade NAT, unique-local, multicast, reserved, or a
	// name such as localhost that always means this machine.
	ErrPrivateDestination = errors.New("webhook: destination is not a public address")
)

// ValidateURL checks a webhook URL when an endpoint is created and again before each delivery,
// so an operator hears about a mistake at once instead of from the first failed delivery. It
// refuses what it can see without the network: a scheme other than https (http too when
// allowPrivate, for development and tests), credentials in the URL (they would end up in logs),
// a fragment (never sent), a port outside 1-65535, a host that is not a valid name once IDNA
// maps it (fullwidth letters, say), and, unless allowPrivate, an address that is not public and
// localhost names. The host is read the way resolvers read it: "127.1", "2130706433",
// "0x7f000001", "0177.0.0.1" and "0" are IPv4 addresses (inet_aton's forms), so they are judged
// as the addresses they are. It does not resolve names: the address a name resolves to can
// change at any time, so the authoritative check is made on the connected address by the
// Client, on every connection.
//
// It returns an error wrapping ErrInvalidURL or ErrPrivateDestination, or nil.
func ValidateURL(raw string, allowPrivate bool) error {
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Opaque != "" || u.Hostname() == "" {
		return ErrInvalidURL
	}
	if u.User != nil {
		return ErrInvalidURL
	}
	if u.Fragment != "" || strings.Contains(raw, "#") {
		return fmt.Errorf("%w: a fragment (#...) is never sent", ErrInvalidURL)
	}
	switch u.Scheme {
	case "https":
	case "http":
		if !allowPrivate {
			return fmt.Errorf("%w: http:// is delivered only by a serve started with --allow-private-webhooks (development and tests)", ErrInvalidURL)
		}
	default:
		return ErrInvalidURL
	}
	if p := u.Port(); p != "" || strings.HasSuffix(u.Host, ":") {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return fmt.Errorf("%w: the port must be 1-65535", ErrInvalidURL)
		}
	}
	host, addr, err := destinationHost(u.Hostname())
	if err != nil {
		return fmt.Errorf("%w: %v", ErrInvalidURL, err)
	}
	if allowPrivate {
		return nil
	}
	if host == "localhost" || strings.HasSuffix(host, ".localhost") || (addr.IsValid() && !isPublicAddress(addr)) {
		return fmt.Errorf("%w: %s (a serve started with --allow-private-webhooks delivers to it, for development)", ErrPrivateDestination, host)
	}
	return nil
}

// destinationHost reads a URL's host as a resolver would: an IPv6 literal, an IPv4 address in
// any of inet_aton's forms, or a name, which IDNA (UTS #46, as browsers apply it) maps to its
// ASCII form, lower-case and without a trailing dot. addr is the address when the host is one.
func destinationHost(h string) (host string, addr netip.Addr, err error) {
	// IPv6 zones ("fe80::1%eth0") only exist for link-local addresses, which are refused anyway.
	if strings.Contains(h, ":") {
		a, err := netip.ParseAddr(h)
		if err != nil {
			return "", netip.Addr{}, fmt.Errorf("%q is not an IPv6 address", h)
		}
		return a.String(), a, nil
	}
	ascii, err := idna.Lookup.ToASCII(h)
	if err != nil || ascii == "" {
		return "", netip.Addr{}, fmt.Errorf("%q is not a valid host name", h)
	}
	host = strings.TrimSuffix(strings.ToLower(ascii), ".")
	if host == "" {
		return "", netip.Addr{}, fmt.Errorf("%q is not a valid host name", h)
	}
	labels := strings.Split(host, ".")
	if !numericLabel(labels[len(labels)-1]) {
		return host, netip.Addr{}, nil
	}
	// A name whose last label is a number is an IPv4 address, or nothing (as in the WHATWG URL
	// standard): no top-level domain is numeric.
	a, ok := parseInetAton(labels)
	if !ok {
		return "", netip.Addr{}, fmt.Errorf("%q is not a valid IPv4 address", h)
	}
	return a.String(), a, nil
}

// numericLabel reports whether a label is written as a number: decimal digits, or 0x and hex.
func numericLabel(l string) bool {
	if l == "" {
		return false
	}
	if strings.HasPrefix(l, "0x") {
		return strings.Trim(l[2:], "0123456789abcdef") == ""
	}
	return strings.Trim(l, "0123456789") == ""
}

// parseInetAton parses an IPv4 address the way inet_aton(3) does: one to four parts, each
// decimal, octal (a leading 0) or hexadecimal (0x); the last part fills the bytes the others
// left ("127.1" is 127.0.0.1, "2130706433" is 127.0.0.1).
func parseInetAton(parts []string) (netip.Addr, bool) {
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	var vals []uint64
	for _, p := range parts {
		base, digits := 10, p
		switch {
		case strings.HasPrefix(p, "0x"):
			base, digits = 16, p[2:]
			if digits == "" {
				digits = "0"
			}
		case len(p) > 1 && p[0] == '0':
			base, digits = 8, p[1:]
		}
		v, err := strconv.ParseUint(digits, base, 64)
		if err != nil || p == "" {
			return netip.Addr{}, false
		}
		vals = append(vals, v)
	}
	var ip uint64
	for i, v := range vals[:len(vals)-1] {
		if v > 255 {
			return netip.Addr{}, false
		}
		ip |= v << (8 * (3 - i))
	}
	last := vals[len(vals)-1]
	if last >= 1<<(8*(5-len(vals))) {
		return netip.Addr{}, false
	}
	ip |= last
	return netip.AddrFrom4([4]byte{byte(ip >> 24), byte(ip >> 16), byte(ip >> 8), byte(ip)}), true
}

// refuseNonPublic is a net.Dialer ControlContext: it runs after name resolution, just before
// each connect(2), with the literal address being connected to. Checking here rather than on
// the name is what defeats DNS rebinding, where a name answers with a public address when the
// URL is validated and a private one when the connection is made.
func refuseNonPublic(_ context.Context, network, address string, _ syscall.RawConn) error {
	if network != "tcp4" && network != "tcp6" {
		return fmt.Errorf("%w: network %s", ErrPrivateDestination, network)
	}
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: %s", ErrPrivateDestination, address)
	}
	if !isPublicAddress(ap.Addr()) {
		return fmt.Errorf("%w: %s (a serve started with --allow-private-webhooks delivers to it, for development)", ErrPrivateDestination, ap.Addr())
	}
	return nil
}

// nonPublicPrefixes lists the ranges of the IANA special-purpose address registries that are
// not globally reachable, beyond what netip's own predicates (loopback, private, link-local,
// multicast, unspecified) already cover.
var nonPublicPrefixes = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),       // "this network"
	netip.MustParsePrefix("100.64.0.0/10"),   // carrier-grade NAT, often the cloud's internal network
	netip.MustParsePrefix("192.0.0.0/24"),    // IETF protocol assignments
	netip.MustParsePrefix("192.0.2.0/24"),    // documentation (TEST-NET-1)
	netip.MustParsePrefix("198.18.0.0/15"),   // benchmarking
	netip.MustParsePrefix("198.51.100.0/24"), // documentation (TEST-NET-2)
	netip.MustParsePrefix("203.0.113.0/24"),  // documentation (TEST-NET-3)
	netip.MustParsePrefix("240.0.0.0/4"),     // reserved, and the broadcast address
	netip.MustParsePrefix("::/96"),           // deprecated IPv4-compatible addresses
	netip.MustParsePrefix("64:ff9b:1::/48"),  // local-use NAT64
	netip.MustParsePrefix("100::/64"),        // discard-only
	netip.MustParsePrefix("2001::/23"),       // IETF protocol assignments (Teredo, ORCHID, ...); none serve web sites
	netip.MustParsePrefix("2001:db8::/32"),   // documentation
	netip.MustParsePrefix("fec0::/10"),       // deprecated site-local
	netip.MustParsePrefix("3fff::/20"),       // documentation
	netip.MustParsePrefix("5f00::/16"),       // segment routing identifiers
	netip.MustParsePrefix("192.88.99.0/24"),  // deprecated 6to4 relay anycast
}

// Prefixes whose addresses embed an IPv4 address, which decides whether they are public.
var (
	nat64Prefix = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour   = netip.MustParsePrefix("2002::/16")
)

// isPublicAddress reports whether a is a globally reachable unicast address, the only kind a
// webhook may be delivered to.
func isPublicAddress(a netip.Addr) bool {
	if !a.IsValid() || a.Zone() != "" {
		return false
	}
	// ::ffff:10.0.0.1 reaches 10.0.0.1; judge the IPv4 address it stands for.
	a = a.Unmap()
	if a.IsLoopback() || a.IsPrivate() || a.IsUnspecified() || a.IsMulticast() ||
		a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() || a.IsInterfaceLocalMulticast() {
		return false
	}
	for _, p := range nonPublicPrefixes {
		if p.Contains(a) {
			return false
		}
	}
	// NAT64 and 6to4 addresses are routed to the IPv4 address inside them.
	if nat64Prefix.Contains(a) {
		b := a.As16()
		return isPublicAddress(netip.AddrFrom4([4]byte(b[12:16])))
	}
	if sixToFour.Contains(a) {
		b := a.As16()
		return isPublicAddress(netip.AddrFrom4([4]byte(b[2:6])))
	}
	return true
}
