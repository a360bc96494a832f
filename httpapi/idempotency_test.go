package httpapi_test

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/httpapi"
)

// TestReadIdempotencyKey: an absent header is no key; a present one must be one value of 1 to
// 255 printable ASCII characters, else 400 invalid_request naming the header.
func TestReadIdempotencyKey(t *testing.T) {
	for _, tc := range []struct {
		name   string
		values []string
		key    string
		ok     bool
	}{
		{"absent", nil, "", true},
		{"a UUID", []string{"3f0d7c52-1b8e-4c1a-9f0e-5d2b7a6c4e11"}, "3f0d7c52-1b8e-4c1a-9f0e-5d2b7a6c4e11", true},
		{"255 characters", []string{strings.Repeat("k", 255)}, strings.Repeat("k", 255), true},
		{"empty", []string{""}, "", false},
		{"256 characters", []string{strings.Repeat("k", 256)}, "", false},
		{"not ASCII", []string{"clé"}, "", false},
		{"a control character", []string{"a\tb"}, "", false},
		{"two headers", []string{"a", "b"}, "", false},
	} {
		r := httptest.NewRequest("POST", "/v1/companies/co_x/hold", nil)
		for _, v := range tc.values {
			r.Header.Add("Idempotency-Key", v)
		}
		k, err := httpapi.ReadIdempotencyKey(r)
		switch {
		case tc.ok && (err != nil || k.Key != tc.key):
			t.Errorf("%s: %+v %v, want key %q", tc.name, k, err, tc.key)
		case !tc.ok:
			var e *credit.Error
			if !asError(err, &e) || e.Code != httpapi.CodeInvalidRequest || e.Param != "Idempotency-Key" {
				t.Errorf("%s: %v, want invalid_request on Idempotency-Key", tc.name, err)
			}
		}
	}
}

func asError(err error, target **credit.Error) bool {
	e, ok := err.(*credit.Error)
	*target = e
	return ok
}
