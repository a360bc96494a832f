package credit

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"unicode/utf8"

	"golang.org/x/crypto/argon2"

	"github.com/creditd/creditd/ids"
)

// Staff passwords are hashed with Argon2id (RFC 9106) at the parameters OWASP's Password
// Storage Cheat Sheet recommends as its first choice: 19 MiB of memory, 2 passes, 1 lane, a
// 16-byte random salt and a 32-byte output. One hash costs about 30 ms of one core
// (BenchmarkHashPassword), slow for guessing and cheap for a sign-in. The hash is stored in the
// PHC string format ($argon2id$v=19$m=19456,t=2,p=1$salt$hash), which carries its own
// parameters, so raising them later leaves existing hashes verifiable; a sign-in with a hash
// made at other parameters stores a new one.

// Password length bounds: at least MinPasswordLength characters (NIST SP 800-63B asks for at
// least 8; a staff console that approves credit deserves more), at most MaxPasswordLength, so
// that a huge password cannot make hashing expensive.
const (
	MinPasswordLength = 12
	MaxPasswordLength = 256
)

type argon2Params struct {
	memoryKiB uint32
	passes    uint32
	lanes     uint8
	saltLen   int
	keyLen    uint32
}

var currentPasswordParams = argon2Params{memoryKiB: 19 * 1024, passes: 2, lanes: 1, saltLen: 16, keyLen: 32}

// hashingSlots bounds how many Argon2id computations run at once: each holds 19 MiB, so a
// burst of sign-ins waits for a core instead of exhausting memory.
var hashingSlots = make(chan struct{}, max(1, runtime.NumCPU()))

var b64 = base64.RawStdEncoding.Strict()

// checkPassword enforces the length bounds.
//
// Errors: validation_failed (param "password").
func checkPassword(password string) error {
	if !utf8.ValidString(password) {
		return ParamErrorf(CodeValidationFailed, "password", "a password must be UTF-8 text")
	}
	n := utf8.RuneCountInString(password)
	switch {
	case n < MinPasswordLength:
		return ParamErrorf(CodeValidationFailed, "password", "a password needs at least %d characters", MinPasswordLength)
	case n > MaxPasswordLength:
		return ParamErrorf(CodeValidationFailed, "password", "a password has at most %d characters", MaxPasswordLength)
	}
	return nil
}

// hashPassword returns the PHC string of password at the current parameters.
func hashPassword(password string) (string, error) {
	p := currentPasswordParams
	salt := make([]byte, p.saltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", err
	}
	key := argon2idKey(password, salt, p)
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, p.memoryKiB, p.passes, p.lanes,
		b64.EncodeToString(salt), b64.EncodeToString(key)), nil
}

func argon2idKey(password string, salt []byte, p argon2Params) []byte {
	hashingSlots <- struct{}{}
	defer func() { <-hashingSlots }()
	return argon2.IDKey([]byte(password), salt, p.passes, p.memoryKiB, p.lanes, p.keyLen)
}

var errBadPasswordHash = errors.New("stored password hash is not an Argon2id PHC string")

// verifyPassword reports whether password matches the PHC string encoded, in constant time,
// and whether the hash was made at parameters other than the current ones.
func verifyPassword(encoded, password string) (ok, outdated bool, err error) {
	parts := strings.Split(encoded, "$")
	if len(parts) != 6 || parts[0] != "" || parts[1] != "argon2id" {
		return false, false, errBadPasswordHash
	}
	var version int
	if _, err := fmt.Sscanf(parts[2], "v=%d", &version); err != nil || version != argon2.Version {
		return false, false, errBadPasswordHash
	}
	var p argon2Params
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &p.memoryKiB, &p.passes, &p.lanes); err != nil ||
		p.memoryKiB == 0 || p.memoryKiB > 1<<20 || p.passes == 0 || p.passes > 16 || p.lanes == 0 {
		return false, false, errBadPasswordHash
	}
	salt, err1 := b64.DecodeString(parts[4])
	key, err2 := b64.DecodeString(parts[5])
	if err1 != nil || err2 != nil || len(salt) < 8 || len(key) < 16 || len(key) > 128 {
		return false, false, errBadPasswordHash
	}
	p.saltLen, p.keyLen = len(salt), uint32(len(key))
	got := argon2idKey(password, salt, p)
	return subtle.ConstantTimeCompare(got, key) == 1, p != currentPasswordParams, nil
}

// decoyHash is verified against when a sign-in names no usable account, so that an unknown
// email costs the same time as a wrong password and the answer's timing reveals nothing.
var decoyHash = sync.OnceValue(func() string {
	h, err := hashPassword(ids.Random(24))
	if err != nil {
		panic("credit: cannot hash the decoy password: " + err.Error())
	}
	return h
})
