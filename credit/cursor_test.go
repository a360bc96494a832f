package credit

import (
	"strings"
	"testing"
)

// TestCursorRefusesEveryOtherSpelling changes each character of a cursor to every other
// base64 character and checks that only the cursor as issued decodes. Without strict base64,
// the unused low bits of the final character of each part could be changed freely.
func TestCursorRefusesEveryOtherSpelling(t *testing.T) {
	t.Parallel()
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	secret := []byte("0123456789abcdef0123456789abcdef")
	c := encodeCursor(secret, cursorPayload{List: "ledger|co_x", Seq: 7})
	if _, err := decodeCursor(secret, "ledger|co_x", c); err != nil {
		t.Fatalf("issued cursor refused: %v", err)
	}
	for i := range len(c) {
		if c[i] == '.' {
			continue
		}
		for _, r := range alphabet {
			if byte(r) == c[i] {
				continue
			}
			other := c[:i] + string(r) + c[i+1:]
			if _, err := decodeCursor(secret, "ledger|co_x", other); err == nil {
				t.Fatalf("cursor %q accepted; only %q was issued (position %d of %d)", other, c, i, len(c))
			}
		}
	}
	if strings.Count(c, ".") != 1 {
		t.Fatalf("cursor %q: want one separator", c)
	}
}
