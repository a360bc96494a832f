// Package ids makes the prefixed record IDs (co_, le_, app_, ...) and the random parts of
// secrets. Everything random here comes from crypto/rand.
package ids

import (
	"crypto/rand"
	"strings"
)

// Base62 is the alphabet of IDs and secrets: URL-safe, no punctuation, double-click selectable.
const Base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// Random returns n characters drawn uniformly from Base62 with crypto/rand. Each character
// comes from one random byte, kept only when it is below 248, the largest multiple of 62 a byte
// holds, so that b%62 gives every character the same chance (4 bytes in 256 each); about 3% of
// bytes are drawn again. A request id costs one read of crypto/rand instead of a big.Int per
// character.
func Random(n int) string {
	out := make([]byte, n)
	var buf [64]byte
	for i := 0; i < n; {
		// Enough bytes for the characters left and the few rejected among them.
		draw := buf[:min(len(buf), n-i+n/8+4)]
		if _, err := rand.Read(draw); err != nil {
			// crypto/rand never fails on supported platforms; a broken one must not yield weak IDs.
			panic("ids: crypto/rand failed: " + err.Error())
		}
		for _, b := range draw {
			if b >= 248 {
				continue
			}
			out[i] = Base62[b%62]
			if i++; i == n {
				break
			}
		}
	}
	return string(out)
}

// New returns prefix + "_" + 22 random base62 characters (about 131 bits).
func New(prefix string) string { return prefix + "_" + Random(22) }

// HasPrefix reports whether id looks like an ID minted by New(prefix), so obviously foreign
// IDs are answered without a database round trip.
func HasPrefix(id, prefix string) bool {
	if len(id) <= len(prefix)+1 || id[:len(prefix)] != prefix || id[len(prefix)] != '_' {
		return false
	}
	for _, c := range id[len(prefix)+1:] {
		if !strings.ContainsRune(Base62, c) {
			return false
		}
	}
	return len(id) <= 64
}
