package credit

import (
	"strings"
	"testing"
)

// TestPasswordHashes: a hash verifies its own password and no other, two hashes of one password
// differ (each has its own salt), a hash made at other parameters still verifies and is
// reported outdated, and a damaged hash is an error rather than a match.
func TestPasswordHashes(t *testing.T) {
	h1, err := hashPassword("correct horse battery")
	if err != nil {
		t.Fatal(err)
	}
	h2, _ := hashPassword("correct horse battery")
	if h1 == h2 {
		t.Error("two hashes of one password are equal: no salt")
	}
	if ok, outdated, err := verifyPassword(h1, "correct horse battery"); !ok || outdated || err != nil {
		t.Errorf("own password: ok=%v outdated=%v err=%v", ok, outdated, err)
	}
	if ok, _, err := verifyPassword(h1, "correct horse battery!"); ok || err != nil {
		t.Errorf("other password: ok=%v err=%v", ok, err)
	}

	saved := currentPasswordParams
	currentPasswordParams = argon2Params{memoryKiB: 8 * 1024, passes: 1, lanes: 1, saltLen: 16, keyLen: 32}
	weak, _ := hashPassword("correct horse battery")
	currentPasswordParams = saved
	if !strings.HasPrefix(weak, "$argon2id$v=19$m=8192,t=1,p=1$") {
		t.Fatalf("hash at other parameters: %s", weak)
	}
	if ok, outdated, err := verifyPassword(weak, "correct horse battery"); !ok || !outdated || err != nil {
		t.Errorf("hash at other parameters: ok=%v outdated=%v err=%v", ok, outdated, err)
	}

	for _, bad := range []string{"", "plain", strings.Replace(h1, "argon2id", "argon2i", 1), strings.Replace(h1, "m=19456", "m=0", 1),
		strings.Replace(h1, "v=19", "v=16", 1), h1[:len(h1)-30]} {
		if ok, _, err := verifyPassword(bad, "correct horse battery"); ok || err == nil {
			t.Errorf("damaged hash %q: ok=%v err=%v", bad, ok, err)
		}
	}
}

// BenchmarkHashPassword measures one Argon2id hash at the current parameters: the cost of a
// sign-in, and of each guess an attacker makes.
func BenchmarkHashPassword(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := hashPassword("correct horse battery"); err != nil {
			b.Fatal(err)
		}
	}
}
