package webhook

import (
	"encoding/base64"
	"errors"
	"strings"
	"testing"
)

func TestSealerRoundTrip(t *testing.T) {
	t.Parallel()
	s := mustSealer(t, mustMasterKey(t, 1))
	secret := NewSecret()
	sealed := s.Seal(secret)
	if strings.Contains(sealed, strings.TrimPrefix(secret, SecretPrefix)) {
		t.Fatal("the sealed value contains the secret")
	}
	if again := s.Seal(secret); again == sealed {
		t.Fatal("sealing twice gave the same value: the nonce is not random")
	}
	opened, err := s.Open(sealed)
	if err != nil || opened != secret {
		t.Fatalf("Open = %q, %v; want the secret back", opened, err)
	}
}

// TestSealerDetectsTampering flips every bit of a sealed value in turn. The sealer holds the
// same key bytes under ids 2 and 3, which differ in one bit: the flip from 2 to 3 yields a
// value that key 3 could decrypt, and only the authenticated header makes it fail.
func TestSealerDetectsTampering(t *testing.T) {
	t.Parallel()
	key := mustMasterKey(t, 2)
	sameBytes := key
	sameBytes.ID = 3
	s := mustSealer(t, key, sameBytes)
	raw, err := base64.StdEncoding.DecodeString(s.Seal(NewSecret()))
	if err != nil {
		t.Fatal(err)
	}
	for i := range raw {
		for bit := range 8 {
			altered := append([]byte(nil), raw...)
			altered[i] ^= 1 << bit
			got, err := s.Open(base64.StdEncoding.EncodeToString(altered))
			if err == nil {
				t.Fatalf("byte %d bit %d flipped: opened to %q", i, bit, got)
			}
			if !errors.Is(err, ErrSealedValueInvalid) && !errors.Is(err, ErrUnknownKeyID) {
				t.Fatalf("byte %d bit %d flipped: err = %v", i, bit, err)
			}
		}
	}
	for _, malformed := range []string{"", "not base64!", base64.StdEncoding.EncodeToString(raw[:len(raw)-1]), base64.StdEncoding.EncodeToString(raw[:2])} {
		if _, err := s.Open(malformed); !errors.Is(err, ErrSealedValueInvalid) {
			t.Errorf("Open(%q) = %v, want ErrSealedValueInvalid", malformed, err)
		}
	}
}

func TestSealerRefusesWrongKey(t *testing.T) {
	t.Parallel()
	sealed := mustSealer(t, mustMasterKey(t, 1)).Seal(NewSecret())
	if _, err := mustSealer(t, mustMasterKey(t, 1)).Open(sealed); !errors.Is(err, ErrSealedValueInvalid) {
		t.Errorf("another key under the same id: %v, want ErrSealedValueInvalid", err)
	}
	if _, err := mustSealer(t, mustMasterKey(t, 2)).Open(sealed); !errors.Is(err, ErrUnknownKeyID) {
		t.Errorf("a sealer without key id 1: %v, want ErrUnknownKeyID", err)
	}
}

// TestSealerRotation is the rotation the key id allows: the new key seals, the old one still
// opens what it sealed, and a sealer that only has the old key cannot read the new values.
func TestSealerRotation(t *testing.T) {
	t.Parallel()
	oldKey, newKey := mustMasterKey(t, 1), mustMasterKey(t, 2)
	before := mustSealer(t, oldKey)
	after := mustSealer(t, newKey, oldKey)
	secret := NewSecret()
	if got, err := after.Open(before.Seal(secret)); err != nil || got != secret {
		t.Fatalf("the rotated sealer opening an old value: %q, %v", got, err)
	}
	if _, err := before.Open(after.Seal(secret)); !errors.Is(err, ErrUnknownKeyID) {
		t.Fatalf("the old sealer opening a new value: %v, want ErrUnknownKeyID", err)
	}
	if _, err := NewSealer(newKey, oldKey, MasterKey{ID: 2}); !errors.Is(err, ErrDuplicateKeyID) {
		t.Fatalf("two keys with id 2: %v, want ErrDuplicateKeyID", err)
	}
}

func TestParseMasterKey(t *testing.T) {
	t.Parallel()
	encoded := GenerateMasterKey()
	if encoded == GenerateMasterKey() {
		t.Fatal("two generated master keys are equal")
	}
	k, err := ParseMasterKey(7, " "+encoded+"\n")
	if err != nil || k.ID != 7 || base64.StdEncoding.EncodeToString(k.Key[:]) != encoded {
		t.Fatalf("ParseMasterKey(GenerateMasterKey()) = %+v, %v", k.ID, err)
	}
	for _, bad := range []string{"", "not base64!", base64.StdEncoding.EncodeToString(make([]byte, 16)), base64.StdEncoding.EncodeToString(make([]byte, 33))} {
		if _, err := ParseMasterKey(1, bad); !errors.Is(err, ErrInvalidMasterKey) {
			t.Errorf("ParseMasterKey(%q) = %v, want ErrInvalidMasterKey", bad, err)
		}
	}
}

func mustMasterKey(tb testing.TB, id uint8) MasterKey {
	tb.Helper()
	k, err := ParseMasterKey(id, GenerateMasterKey())
	if err != nil {
		tb.Fatal(err)
	}
	return k
}

func mustSealer(tb testing.TB, current MasterKey, previous ...MasterKey) *Sealer {
	tb.Helper()
	s, err := NewSealer(current, previous...)
	if err != nil {
		tb.Fatal(err)
	}
	return s
}
