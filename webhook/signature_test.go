package webhook

import (
	"encoding/base64"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// publishedVectors are the signing test vectors of the Standard Webhooks reference libraries
// (repository standard-webhooks/standard-webhooks): the first is the sign test shared by the
// Go, Python, PHP, JavaScript, C# and Java libraries, the second the Rust library's test_sign.
var publishedVectors = []struct {
	name      string
	secret    string
	id        string
	timestamp int64
	body      string
	signature string
}{
	{
		name:      "libraries shared vector",
		secret:    "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
		id:        "msg_p5jXN8AQM9LWM0D4loKWxJek",
		timestamp: 1614265330,
		body:      `{"test": 2432232314}`,
		signature: "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
	},
	{
		name:      "rust library vector",
		secret:    "whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD",
		id:        "msg_27UH4WbU6Z5A5EzD8u03UvzRbpk",
		timestamp: 1649367553,
		body:      `{"email":"test@example.com","username":"test_user"}`,
		signature: "v1,tZ1I4/hDygAJgO5TYxiSd6Sd0kDW6hPenDe+bTa3Kkw=",
	},
}

func TestSignMatchesPublishedVectors(t *testing.T) {
	t.Parallel()
	for _, v := range publishedVectors {
		t.Run(v.name, func(t *testing.T) {
			t.Parallel()
			got, err := Sign([]string{v.secret}, v.id, time.Unix(v.timestamp, 0), []byte(v.body))
			if err != nil {
				t.Fatal(err)
			}
			if got != v.signature {
				t.Fatalf("Sign = %q, want the published %q", got, v.signature)
			}
			headers := signedHeaders(v.id, v.timestamp, v.signature)
			if err := Verify(v.secret, headers, []byte(v.body), time.Minute, time.Unix(v.timestamp, 0)); err != nil {
				t.Fatalf("Verify of the published vector: %v", err)
			}
		})
	}
}

func TestSignWithTwoSecretsDuringRotation(t *testing.T) {
	t.Parallel()
	v := publishedVectors[0]
	newSecret, oldSecret := v.secret, publishedVectors[1].secret
	header, err := Sign([]string{newSecret, oldSecret}, v.id, time.Unix(v.timestamp, 0), []byte(v.body))
	if err != nil {
		t.Fatal(err)
	}
	signatures := strings.Split(header, " ")
	if len(signatures) != 2 || signatures[0] != v.signature || !strings.HasPrefix(signatures[1], "v1,") || signatures[1] == signatures[0] {
		t.Fatalf("header %q, want the published signature then a second v1 signature", header)
	}
	headers := signedHeaders(v.id, v.timestamp, header)
	now := time.Unix(v.timestamp, 0)
	for _, secret := range []string{newSecret, oldSecret} {
		if err := Verify(secret, headers, []byte(v.body), time.Minute, now); err != nil {
			t.Errorf("receiver holding %s: %v", secret[:10], err)
		}
	}
	if err := Verify(NewSecret(), headers, []byte(v.body), time.Minute, now); !errors.Is(err, ErrSignatureMismatch) {
		t.Errorf("receiver holding an unrelated secret: %v, want ErrSignatureMismatch", err)
	}
}

func TestSignRefusesWhatCannotBeSentSafely(t *testing.T) {
	t.Parallel()
	short := SecretPrefix + base64.StdEncoding.EncodeToString(make([]byte, 16))
	tests := []struct {
		name    string
		secrets []string
		id      string
		want    error
	}{
		{"no secret", nil, "evt_1", ErrNoSecret},
		{"secret without prefix", []string{"MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}, "evt_1", ErrInvalidSecret},
		{"secret of 16 bytes", []string{short}, "evt_1", ErrInvalidSecret},
		{"secret not base64", []string{"whsec_not*base64"}, "evt_1", ErrInvalidSecret},
		{"second secret malformed", []string{NewSecret(), "whsec_"}, "evt_1", ErrInvalidSecret},
		{"empty message id", []string{NewSecret()}, "", ErrInvalidMessageID},
		{"message id with a dot", []string{NewSecret()}, "evt.1", ErrInvalidMessageID},
		{"message id with a space", []string{NewSecret()}, "evt 1", ErrInvalidMessageID},
		{"message id with a newline", []string{NewSecret()}, "evt_1\r\nx-injected: 1", ErrInvalidMessageID},
		{"message id too long", []string{NewSecret()}, strings.Repeat("a", 129), ErrInvalidMessageID},
	}
	for _, tt := range tests {
		if _, err := Sign(tt.secrets, tt.id, time.Unix(1, 0), []byte("{}")); !errors.Is(err, tt.want) {
			t.Errorf("%s: err = %v, want %v", tt.name, err, tt.want)
		}
	}
}

func TestVerify(t *testing.T) {
	t.Parallel()
	v := publishedVectors[0]
	body := []byte(v.body)
	at := time.Unix(v.timestamp, 0)
	const tolerance = 5 * time.Minute
	tests := []struct {
		name    string
		secret  string
		headers http.Header
		body    []byte
		now     time.Time
		want    error
	}{
		{"valid", v.secret, signedHeaders(v.id, v.timestamp, v.signature), body, at, nil},
		{"valid at the edge of the tolerance", v.secret, signedHeaders(v.id, v.timestamp, v.signature), body, at.Add(tolerance), nil},
		{"valid among unknown and v2 signatures", v.secret, signedHeaders(v.id, v.timestamp,
			"v1a,AAAA v2,"+v.signature[3:]+" "+v.signature+" v1,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc="), body, at, nil},
		{"too old", v.secret, signedHeaders(v.id, v.timestamp, v.signature), body, at.Add(tolerance + time.Second), ErrTimestampOutOfTolerance},
		{"too new", v.secret, signedHeaders(v.id, v.timestamp, v.signature), body, at.Add(-tolerance - time.Second), ErrTimestampOutOfTolerance},
		{"body changed", v.secret, signedHeaders(v.id, v.timestamp, v.signature), []byte(`{"test": 2432232315}`), at, ErrSignatureMismatch},
		{"id changed", v.secret, signedHeaders("msg_other", v.timestamp, v.signature), body, at, ErrSignatureMismatch},
		{"timestamp changed", v.secret, signedHeaders(v.id, v.timestamp+1, v.signature), body, at, ErrSignatureMismatch},
		{"only a v2 signature", v.secret, signedHeaders(v.id, v.timestamp, "v2,"+v.signature[3:]), body, at, ErrSignatureMismatch},
		{"empty v1 signature", v.secret, signedHeaders(v.id, v.timestamp, "v1,"), body, at, ErrSignatureMismatch},
		{"other secret", publishedVectors[1].secret, signedHeaders(v.id, v.timestamp, v.signature), body, at, ErrSignatureMismatch},
		{"no id", v.secret, without(signedHeaders(v.id, v.timestamp, v.signature), HeaderID), body, at, ErrMissingHeaders},
		{"no timestamp", v.secret, without(signedHeaders(v.id, v.timestamp, v.signature), HeaderTimestamp), body, at, ErrMissingHeaders},
		{"no signature", v.secret, without(signedHeaders(v.id, v.timestamp, v.signature), HeaderSignature), body, at, ErrMissingHeaders},
		{"timestamp not an integer", v.secret, with(signedHeaders(v.id, v.timestamp, v.signature), HeaderTimestamp, "1614265330.0"), body, at, ErrInvalidTimestamp},
		{"malformed secret", "whsec_short", signedHeaders(v.id, v.timestamp, v.signature), body, at, ErrInvalidSecret},
	}
	for _, tt := range tests {
		err := Verify(tt.secret, tt.headers, tt.body, tolerance, tt.now)
		if tt.want == nil && err != nil || tt.want != nil && !errors.Is(err, tt.want) {
			t.Errorf("%s: err = %v, want %v", tt.name, err, tt.want)
		}
	}
}

func TestNewSecret(t *testing.T) {
	t.Parallel()
	a, b := NewSecret(), NewSecret()
	if a == b {
		t.Fatal("two secrets are equal")
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(a, SecretPrefix))
	if !strings.HasPrefix(a, SecretPrefix) || err != nil || len(raw) != 32 {
		t.Fatalf("secret %q is not whsec_ and base64 of 32 bytes", a)
	}
	if err := ValidateSecret(a); err != nil {
		t.Fatalf("ValidateSecret(NewSecret()) = %v", err)
	}
	if err := ValidateSecret(strings.TrimPrefix(a, SecretPrefix)); !errors.Is(err, ErrInvalidSecret) {
		t.Fatalf("ValidateSecret without the prefix = %v, want ErrInvalidSecret", err)
	}
}

// signedHeaders returns the three Standard Webhooks headers as a receiver would see them.
func signedHeaders(id string, timestamp int64, signature string) http.Header {
	h := http.Header{}
	h.Set(HeaderID, id)
	h.Set(HeaderTimestamp, strconv.FormatInt(timestamp, 10))
	h.Set(HeaderSignature, signature)
	return h
}

func without(h http.Header, name string) http.Header {
	h.Del(name)
	return h
}

func with(h http.Header, name, value string) http.Header {
	h.Set(name, value)
	return h
}
