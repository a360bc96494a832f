// Package ids makes the prefixed record IDs (co_, le_, app_, ...) and the random parts of
// secrets. Everything random here comes from crypto/rand.
package ids

import (
	"crypto/rand"
	"math/big"
	"strings"
)

// Base62 is the alphabet of IDs and secrets: URL-safe, no punctuation, double-click selectable.
const Base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// Random returns n characters drawn uniformly from Base62 with crypto/rand.
func Random(n int) string {
	var b strings.Builder
	b.Grow(n)
	max := big.NewInt(int64(len(Base62)))
	for i := 0; i < n; i++ {
		k, err := rand.Int(rand.Reader, max)
		if err != nil {
			// crypto/rand never fails on supported platforms; a broken one must not yield weak IDs.
			panic("ids: crypto/rand failed: " + err.Error())
		}
		b.WriteByte(Base62[k.Int64()])
	}
	return b.String()
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
