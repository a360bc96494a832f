// Package webhooktest holds test helpers for code that sends webhooks.
package webhooktest

import (
	"context"
	"net"
	"net/netip"
	"strings"
	"testing"

	"golang.org/x/net/dns/dnsmessage"
)

// FakeDNS starts a DNS server on a loopback UDP port that answers A and AAAA questions from
// names (fully qualified, lower case: "example.com.") and NXDOMAIN for any other name, and
// returns a resolver that asks only it. It lets a test decide what a public-looking name
// resolves to, e.g. to a loopback receiver or, against DNS rebinding, to a private address.
func FakeDNS(tb testing.TB, names map[string][]netip.Addr) *net.Resolver {
	tb.Helper()
	conn, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { conn.Close() })
	go func() {
		buf := make([]byte, 1500)
		for {
			n, from, err := conn.ReadFrom(buf)
			if err != nil {
				return
			}
			if reply, err := dnsReply(buf[:n], names); err == nil {
				_, _ = conn.WriteTo(reply, from)
			}
		}
	}()
	server := conn.LocalAddr().String()
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "udp", server)
	}}
}

func dnsReply(query []byte, names map[string][]netip.Addr) ([]byte, error) {
	var p dnsmessage.Parser
	header, err := p.Start(query)
	if err != nil {
		return nil, err
	}
	q, err := p.Question()
	if err != nil {
		return nil, err
	}
	reply := dnsmessage.Message{
		Header:    dnsmessage.Header{ID: header.ID, Response: true, Authoritative: true, RecursionDesired: header.RecursionDesired, RecursionAvailable: true},
		Questions: []dnsmessage.Question{q},
	}
	addrs, known := names[strings.ToLower(q.Name.String())]
	if !known {
		reply.Header.RCode = dnsmessage.RCodeNameError
	}
	for _, a := range addrs {
		rh := dnsmessage.ResourceHeader{Name: q.Name, Class: dnsmessage.ClassINET}
		switch {
		case q.Type == dnsmessage.TypeA && a.Is4():
			rh.Type = dnsmessage.TypeA
			reply.Answers = append(reply.Answers, dnsmessage.Resource{Header: rh, Body: &dnsmessage.AResource{A: a.As4()}})
		case q.Type == dnsmessage.TypeAAAA && a.Is6():
			rh.Type = dnsmessage.TypeAAAA
			reply.Answers = append(reply.Answers, dnsmessage.Resource{Header: rh, Body: &dnsmessage.AAAAResource{AAAA: a.As16()}})
		}
	}
	return reply.Pack()
}
