package webhook

import (
	"context"
	"errors"
	"net/netip"
	"testing"
)

func TestValidateURL(t *testing.T) {
	t.Parallel()
	tests := []struct {
		url          string
		allowPrivate bool
		want         error
	}{
		{"https://hooks.example.com/creditd", false, nil},
		{"https://hooks.example.com:8443/creditd?x=1", false, nil},
		{"https://93.184.215.14/", false, nil},
		{"https://[2606:4700::1111]/", false, nil},
		{"http://hooks.example.com/", false, ErrInvalidURL},
		{"http://hooks.example.com/", true, nil},
		{"ftp://hooks.example.com/", true, ErrInvalidURL},
		{"hooks.example.com/creditd", false, ErrInvalidURL},
		{"https:///creditd", false, ErrInvalidURL},
		{"https://user:password@hooks.example.com/", false, ErrInvalidURL},
		{"https://user:password@hooks.example.com/", true, ErrInvalidURL},
		{"https://hooks.example.com/\x7f", false, ErrInvalidURL},
		{"https://127.0.0.1/", false, ErrPrivateDestination},
		{"https://[::1]/", false, ErrPrivateDestination},
		{"https://10.0.0.1/", false, ErrPrivateDestination},
		{"https://169.254.169.254/latest/meta-data/", false, ErrPrivateDestination},
		{"https://100.64.0.1/", false, ErrPrivateDestination},
		{"https://[fc00::1]/", false, ErrPrivateDestination},
		{"https://[::ffff:10.0.0.1]/", false, ErrPrivateDestination},
		{"https://[fe80::1%25eth0]/", false, ErrPrivateDestination},
		{"https://localhost/", false, ErrPrivateDestination},
		{"https://LOCALHOST./", false, ErrPrivateDestination},
		{"https://api.localhost:8443/", false, ErrPrivateDestination},
		{"https://127.0.0.1/", true, nil},
		{"https://localhost/", true, nil},
		// Loopback written in inet_aton's other forms, as resolvers and browsers read them.
		{"https://127.1/", false, ErrPrivateDestination},
		{"https://2130706433/", false, ErrPrivateDestination},
		{"https://0x7f000001/", false, ErrPrivateDestination},
		{"https://0X7F000001/", false, ErrPrivateDestination},
		{"https://0177.0.0.1/", false, ErrPrivateDestination},
		{"https://0/", false, ErrPrivateDestination},
		{"https://127.0.0.1./", false, ErrPrivateDestination},
		{"https://10.1/", false, ErrPrivateDestination},
		{"https://0xa9.0xfe.0xa9.0xfe/", false, ErrPrivateDestination}, // 169.254.169.254
		{"https://1572395790/", false, nil},                            // 93.184.215.14
		{"https://93.184.215.14.", false, nil},
		{"https://256.0.0.1/", false, ErrInvalidURL},
		{"https://1.2.3.4.5/", false, ErrInvalidURL},
		{"https://4294967296/", false, ErrInvalidURL},
		{"https://08.0.0.1/", false, ErrInvalidURL}, // not octal
		{"https://hooks.123/", false, ErrInvalidURL},
		{"https://2130706433/", true, nil},
		// IDNA: fullwidth letters map to ASCII, so this is localhost.
		{"https://ｌｏｃａｌｈｏｓｔ/", false, ErrPrivateDestination},
		{"https://ｌｏｃａｌｈｏｓｔ/", true, nil},
		{"https://１２７．０．０．１/", false, ErrPrivateDestination},
		{"https://bücher.example/", false, nil},
		{"https://xn--/", false, ErrInvalidURL},
		{"https://exa mple.com/", false, ErrInvalidURL},
		// Fragments are never sent; ports 0 and above 65535 do not exist.
		{"https://hooks.example.com/creditd#frag", false, ErrInvalidURL},
		{"https://hooks.example.com/creditd#", false, ErrInvalidURL},
		{"https://hooks.example.com:0/", false, ErrInvalidURL},
		{"https://hooks.example.com:99999/", false, ErrInvalidURL},
		{"https://hooks.example.com:65536/", false, ErrInvalidURL},
		{"https://hooks.example.com:/", false, ErrInvalidURL},
		{"https://hooks.example.com:65535/", false, nil},
		{"http://127.0.0.1:99999/", true, ErrInvalidURL},
		{"http://127.0.0.1:9977/hook#x", true, ErrInvalidURL},
	}
	for _, tt := range tests {
		err := ValidateURL(tt.url, tt.allowPrivate)
		if tt.want == nil && err != nil || tt.want != nil && !errors.Is(err, tt.want) {
			t.Errorf("ValidateURL(%q, %v) = %v, want %v", tt.url, tt.allowPrivate, err, tt.want)
		}
	}
}

func TestIsPublicAddress(t *testing.T) {
	t.Parallel()
	tests := []struct {
		addr string
		want bool
	}{
		{"93.184.215.14", true},
		{"8.8.8.8", true},
		{"100.63.255.255", true},
		{"100.128.0.0", true},
		{"2606:4700::1111", true},
		{"64:ff9b::808:808", true},  // NAT64 of 8.8.8.8
		{"2002:808:808::1", true},   // 6to4 of 8.8.8.8
		{"::ffff:8.8.8.8", true},    // IPv4-mapped public
		{"127.0.0.1", false},        // loopback
		{"127.255.255.254", false},  // loopback
		{"::1", false},              // loopback
		{"0.0.0.0", false},          // unspecified
		{"::", false},               // unspecified
		{"0.1.2.3", false},          // "this network"
		{"10.0.0.1", false},         // private
		{"172.16.0.1", false},       // private
		{"172.31.255.255", false},   // private
		{"192.168.1.1", false},      // private
		{"169.254.169.254", false},  // link-local, cloud metadata
		{"fe80::1", false},          // link-local
		{"100.64.0.1", false},       // carrier-grade NAT
		{"100.127.255.255", false},  // carrier-grade NAT
		{"fc00::1", false},          // unique-local
		{"fd12:3456::1", false},     // unique-local
		{"fd00:ec2::254", false},    // unique-local, cloud metadata over IPv6
		{"::ffff:10.0.0.1", false},  // IPv4-mapped private
		{"::ffff:127.0.0.1", false}, // IPv4-mapped loopback
		{"::ffff:169.254.169.254", false},
		{"::10.0.0.1", false},        // IPv4-compatible, deprecated
		{"64:ff9b::a00:1", false},    // NAT64 of 10.0.0.1
		{"64:ff9b:1::1", false},      // local-use NAT64
		{"2002:a00:1::1", false},     // 6to4 of 10.0.0.1
		{"2001::1", false},           // Teredo
		{"2001:db8::1", false},       // documentation
		{"224.0.0.1", false},         // multicast
		{"ff02::1", false},           // multicast
		{"255.255.255.255", false},   // broadcast
		{"240.0.0.1", false},         // reserved
		{"192.0.2.1", false},         // documentation
		{"198.18.0.1", false},        // benchmarking
		{"fec0::1", false},           // site-local, deprecated
		{"2606:4700::1111%1", false}, // zoned
	}
	for _, tt := range tests {
		if got := isPublicAddress(netip.MustParseAddr(tt.addr)); got != tt.want {
			t.Errorf("isPublicAddress(%s) = %v, want %v", tt.addr, got, tt.want)
		}
	}
	if isPublicAddress(netip.Addr{}) {
		t.Error("the zero address is public")
	}
}

// TestRefuseNonPublic calls the dialer hook as net.Dialer does, with the resolved address.
func TestRefuseNonPublic(t *testing.T) {
	t.Parallel()
	tests := []struct {
		network, address string
		refused          bool
	}{
		{"tcp4", "93.184.215.14:443", false},
		{"tcp6", "[2606:4700::1111]:443", false},
		{"tcp4", "127.0.0.1:443", true},
		{"tcp6", "[::1]:443", true},
		{"tcp6", "[::ffff:10.0.0.1]:443", true},
		{"tcp4", "169.254.169.254:80", true},
		{"udp4", "93.184.215.14:443", true},
		{"tcp4", "not an address", true},
	}
	for _, tt := range tests {
		err := refuseNonPublic(context.Background(), tt.network, tt.address, nil)
		if refused := errors.Is(err, ErrPrivateDestination); refused != tt.refused {
			t.Errorf("refuseNonPublic(%s, %s) = %v, want refused %v", tt.network, tt.address, err, tt.refused)
		}
	}
}
