package webhook

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
)

// MasterKeySize is the length of a master key: AES-256.
const MasterKeySize = 32

// sealedFormatV1 is the first byte of every sealed value. A later format (another cipher, or
// associated data) gets a new byte, and Open keeps reading the old one.
const sealedFormatV1 = 0x01

// sealedHeaderSize is the format byte plus the key id byte; both are authenticated as
// associated data, so neither can be changed without Open noticing.
const sealedHeaderSize = 2

// Errors of the master key and the Sealer.
var (
	// ErrInvalidMasterKey means a master key is not the standard base64 encoding of exactly 32 bytes.
	ErrInvalidMasterKey = errors.New("webhook: master key is not base64 of 32 bytes")
	// ErrDuplicateKeyID means two master keys given to NewSealer share an id, so a sealed value
	// would not say which of them sealed it.
	ErrDuplicateKeyID = errors.New("webhook: two master keys share a key id")
	// ErrUnknownKeyID means a sealed value names a key id the Sealer was not given: the key was
	// retired too early, or the configuration lacks it.
	ErrUnknownKeyID = errors.New("webhook: sealed with a master key id this sealer does not have")
	// ErrSealedValueInvalid means a sealed value is malformed, was altered, or was sealed by a
	// different key under the same id. The three are deliberately not told apart.
	ErrSealedValueInvalid = errors.New("webhook: sealed value is malformed, altered or sealed by another key")
)

// MasterKey is one AES-256 key together with the id written into every value it seals. The id
// is what makes rotation possible: a new key gets a new id, the old key stays configured for
// opening until every row has been re-sealed, and Open picks the key by the id it reads.
type MasterKey struct {
	// ID is not secret; it only has to differ between the keys given to one Sealer.
	ID uint8
	// Key is the AES-256 key itself.
	Key [MasterKeySize]byte
}

// GenerateMasterKey returns a new master key from crypto/rand in the text form ParseMasterKey
// reads, for an operator to put into the configuration once.
func GenerateMasterKey() string {
	var key [MasterKeySize]byte
	// crypto/rand.Read never returns an error since Go 1.24.
	_, _ = rand.Read(key[:])
	return base64.StdEncoding.EncodeToString(key[:])
}

// ParseMasterKey reads a master key in the form GenerateMasterKey prints and gives it id.
// Surrounding white space is ignored because keys come from files and environment variables.
//
// It returns ErrInvalidMasterKey.
func ParseMasterKey(id uint8, encoded string) (MasterKey, error) {
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(encoded))
	if err != nil || len(raw) != MasterKeySize {
		return MasterKey{}, ErrInvalidMasterKey
	}
	k := MasterKey{ID: id}
	copy(k.Key[:], raw)
	return k, nil
}

// Sealer encrypts webhook signing secrets for storage with AES-256-GCM and opens them again.
// It seals with one current key and opens with the current or any previous key. It is safe for
// concurrent use.
type Sealer struct {
	currentID uint8
	aeads     map[uint8]cipher.AEAD
}

// NewSealer returns a Sealer that seals with current and opens values sealed by current or by
// any of previous.
//
// It returns ErrDuplicateKeyID.
func NewSealer(current MasterKey, previous ...MasterKey) (*Sealer, error) {
	s := &Sealer{currentID: current.ID, aeads: make(map[uint8]cipher.AEAD, 1+len(previous))}
	for _, k := range append([]MasterKey{current}, previous...) {
		if _, dup := s.aeads[k.ID]; dup {
			return nil, ErrDuplicateKeyID
		}
		block, err := aes.NewCipher(k.Key[:])
		if err != nil {
			// Unreachable: the key is always 32 bytes.
			return nil, fmt.Errorf("webhook: %w", err)
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, fmt.Errorf("webhook: %w", err)
		}
		s.aeads[k.ID] = aead
	}
	return s, nil
}

// Seal encrypts plaintext (a whsec_ secret) under the current key and returns text for a
// database column: base64 of format byte, key id, random 96-bit nonce, ciphertext and tag.
// A random nonce is safe here because one key seals far fewer than 2^32 values.
func (s *Sealer) Seal(plaintext string) string {
	aead := s.aeads[s.currentID]
	out := make([]byte, sealedHeaderSize+aead.NonceSize(), sealedHeaderSize+aead.NonceSize()+len(plaintext)+aead.Overhead())
	out[0], out[1] = sealedFormatV1, s.currentID
	header, nonce := out[:sealedHeaderSize], out[sealedHeaderSize:]
	_, _ = rand.Read(nonce)
	out = aead.Seal(out, nonce, []byte(plaintext), header)
	return base64.StdEncoding.EncodeToString(out)
}

// Open decrypts a value made by Seal with any key this Sealer has.
//
// It returns ErrUnknownKeyID or ErrSealedValueInvalid.
func (s *Sealer) Open(sealed string) (string, error) {
	raw, err := base64.StdEncoding.DecodeString(sealed)
	if err != nil || len(raw) < sealedHeaderSize || raw[0] != sealedFormatV1 {
		return "", ErrSealedValueInvalid
	}
	aead, ok := s.aeads[raw[1]]
	if !ok {
		return "", ErrUnknownKeyID
	}
	header, rest := raw[:sealedHeaderSize], raw[sealedHeaderSize:]
	if len(rest) < aead.NonceSize()+aead.Overhead() {
		return "", ErrSealedValueInvalid
	}
	nonce, ciphertext := rest[:aead.NonceSize()], rest[aead.NonceSize():]
	plaintext, err := aead.Open(nil, nonce, ciphertext, header)
	if err != nil {
		return "", ErrSealedValueInvalid
	}
	return string(plaintext), nil
}
