package webhook

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
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

// ValidateURL checks a webhook URL when an endpoint is created, so an operator hears about a
// mistake at once instead of from the first failed delivery. It refuses what it can see without
// the network: a scheme other than https (http too when allowPrivate, for development and
// tests), credentials in the URL, an IP literal that is not public, and localhost names. It
// does not resolve host names: the address a name resolves to can change at any time, so the
// authoritative check is made on the connected address by the Client, on every connection.
//
// It returns ErrInvalidURL, ErrPrivateDestination or nil.
func ValidateURL(raw string, allowPrivate bool) error {
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Opaque != "" || u.Hostname() == "" {
		return ErrInvalidURL
	}
	if u.User != nil {
		return ErrInvalidURL
	}
	switch u.Scheme {
	case "https":
	case "http":
		if !allowPrivate {
			return ErrInvalidURL
		}
	default:
		return ErrInvalidURL
	}
	if allowPrivate {
		return nil
	}
	host := strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return ErrPrivateDestination
	}
	// IPv6 zones ("fe80::1%eth0") only exist for link-local addresses, which are refused anyway.
	if addr, err := netip.ParseAddr(host); err == nil && !isPublicAddress(addr) {
		return ErrPrivateDestination
	}
	return nil
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
		return fmt.Errorf("%w: %s", ErrPrivateDestination, ap.Addr())
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
