package webhook

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// The three headers of the Standard Webhooks specification. Receivers look them up by exactly
// these names, so they are the library's constants rather than our own spelling.
const (
	HeaderID        = standardwebhooks.HeaderWebhookID
	HeaderTimestamp = standardwebhooks.HeaderWebhookTimestamp
	HeaderSignature = standardwebhooks.HeaderWebhookSignature
)

// SecretPrefix marks a symmetric signing secret as the specification serializes it, so an
// operator who pastes one can tell what it is and a receiver's library picks the right scheme.
const SecretPrefix = "whsec_"

// secretBytes is how much randomness NewSecret draws: 256 bits, inside the 24–64 bytes the
// specification allows and as strong as the HMAC-SHA256 key it becomes.
const secretBytes = 32

// The specification asks for at least 24 random bytes; 64 is its upper bound.
const (
	minSecretBytes = 24
	maxSecretBytes = 64
)

// Errors of signing and verification. They are sentinels so a caller can tell a configuration
// problem (a malformed secret or message id) from a receiver that should reject the request.
var (
	// ErrInvalidSecret means a secret is not "whsec_" followed by the standard base64 encoding
	// of 24 to 64 bytes.
	ErrInvalidSecret = errors.New("webhook: secret is not whsec_ followed by base64 of 24 to 64 bytes")
	// ErrNoSecret means Sign was given no secret: an unsigned webhook must never be sent.
	ErrNoSecret = errors.New("webhook: no signing secret")
	// ErrInvalidMessageID means a message id is empty, too long, or has characters other than
	// letters, digits, '_' and '-'. The specification forbids '.', which would make the signed
	// content "id.timestamp.body" ambiguous; the stricter rule also keeps it header-safe.
	ErrInvalidMessageID = errors.New("webhook: message id must be 1 to 128 letters, digits, '_' or '-'")
	// ErrMissingHeaders means a request lacks webhook-id, webhook-timestamp or webhook-signature.
	ErrMissingHeaders = errors.New("webhook: missing webhook-id, webhook-timestamp or webhook-signature header")
	// ErrInvalidTimestamp means webhook-timestamp is not an integer number of unix seconds.
	ErrInvalidTimestamp = errors.New("webhook: webhook-timestamp is not unix seconds")
	// ErrTimestampOutOfTolerance means the timestamp is further from the receiver's clock than
	// the tolerance: the request may be a replay.
	ErrTimestampOutOfTolerance = errors.New("webhook: webhook-timestamp outside the tolerance")
	// ErrSignatureMismatch means no v1 signature in the header matches the body and secret.
	ErrSignatureMismatch = errors.New("webhook: no matching v1 signature")
)

// NewSecret returns a fresh signing secret: SecretPrefix and the standard base64 encoding of 32
// bytes from crypto/rand. It is shown to the endpoint's owner once and stored only sealed.
func NewSecret() string {
	b := make([]byte, secretBytes)
	// crypto/rand.Read never returns an error since Go 1.24; it crashes the program instead of
	// handing out predictable bytes.
	_, _ = rand.Read(b)
	return SecretPrefix + base64.StdEncoding.EncodeToString(b)
}

// ValidateSecret reports whether secret is well formed, so a command that accepts a secret
// can refuse it before it is stored.
//
// It returns ErrInvalidSecret or nil.
func ValidateSecret(secret string) error {
	_, err := signer(secret)
	return err
}

// signer checks the secret our way (prefix required, 24–64 bytes) before handing it to the
// library, whose own parsing also accepts secrets without the prefix and of any length.
func signer(secret string) (*standardwebhooks.Webhook, error) {
	encoded, ok := strings.CutPrefix(secret, SecretPrefix)
	if !ok {
		return nil, ErrInvalidSecret
	}
	key, err := base64.StdEncoding.DecodeString(encoded)
	if err != nil || len(key) < minSecretBytes || len(key) > maxSecretBytes {
		return nil, ErrInvalidSecret
	}
	return standardwebhooks.NewWebhook(secret)
}

// validateMessageID enforces the message id rule described at ErrInvalidMessageID.
func validateMessageID(id string) error {
	if id == "" || len(id) > 128 {
		return ErrInvalidMessageID
	}
	for _, c := range id {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return ErrInvalidMessageID
		}
	}
	return nil
}

// Sign returns the webhook-signature header value for one message: a "v1,<signature>" per
// secret, space-separated in the order given. Several secrets are how a secret rotation works
// without downtime: during the grace period the receiver may hold either the old or the new one.
//
// It returns ErrNoSecret, ErrInvalidSecret or ErrInvalidMessageID.
func Sign(secrets []string, id string, timestamp time.Time, body []byte) (string, error) {
	if len(secrets) == 0 {
		return "", ErrNoSecret
	}
	if err := validateMessageID(id); err != nil {
		return "", err
	}
	signatures := make([]string, 0, len(secrets))
	for _, secret := range secrets {
		wh, err := signer(secret)
		if err != nil {
			return "", err
		}
		signature, err := wh.Sign(id, timestamp, body)
		if err != nil {
			return "", fmt.Errorf("webhook: signing: %w", err)
		}
		signatures = append(signatures, signature)
	}
	return strings.Join(signatures, " "), nil
}

// Verify checks a received webhook the way a receiver should: all three headers present, the
// timestamp within tolerance of now (against replays), and at least one v1 signature matching
// body under secret, compared in constant time. It is our receiver-side reference for tests
// and documentation; creditd itself only sends.
//
// It returns ErrInvalidSecret, ErrMissingHeaders, ErrInvalidTimestamp,
// ErrTimestampOutOfTolerance, ErrSignatureMismatch or nil.
func Verify(secret string, headers http.Header, body []byte, tolerance time.Duration, now time.Time) error {
	wh, err := signer(secret)
	if err != nil {
		return err
	}
	if headers.Get(HeaderID) == "" || headers.Get(HeaderTimestamp) == "" || headers.Get(HeaderSignature) == "" {
		return ErrMissingHeaders
	}
	seconds, err := strconv.ParseInt(headers.Get(HeaderTimestamp), 10, 64)
	if err != nil {
		return ErrInvalidTimestamp
	}
	// The library's own Verify reads time.Now and a fixed 5-minute tolerance; the timestamp check
	// is ours so the clock and the tolerance can be given, and the library only matches signatures.
	timestamp := time.Unix(seconds, 0)
	if now.Sub(timestamp) > tolerance || timestamp.Sub(now) > tolerance {
		return ErrTimestampOutOfTolerance
	}
	if err := wh.VerifyIgnoringTimestamp(body, headers); err != nil {
		if errors.Is(err, standardwebhooks.ErrNoMatchingSignature) {
			return ErrSignatureMismatch
		}
		return fmt.Errorf("webhook: verifying: %w", err)
	}
	return nil
}
