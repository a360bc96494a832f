package credit_test

import (
	"testing"
	"time"

	"github.com/creditd/creditd/credit"
)

// TestParseTypedTime: a moment as people type it into a form: a date, a date and time in UTC
// (seconds and "UTC" optional), or an RFC 3339 time with its offset; anything else is refused
// naming the field, with the forms it reads.
func TestParseTypedTime(t *testing.T) {
	utc := func(s string) time.Time { return time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC).Add(mustDuration(t, s)) }
	for _, tc := range []struct {
		in   string
		want time.Time
	}{
		{"2026-11-27", utc("0s")},
		{" 2026-11-27 ", utc("0s")},
		{"2026-11-27 10:00", utc("10h")},
		{"2026-11-27 10:00 UTC", utc("10h")},
		{"2026-11-27 10:00:30", utc("10h30s")},
		{"2026-11-27T10:00", utc("10h")},
		{"2026-11-27T10:00:00Z", utc("10h")},
		{"2026-11-27T10:00:00+01:00", utc("9h")},
	} {
		got, err := credit.ParseTypedTime(tc.in, "occurred_at")
		if err != nil || !got.Equal(tc.want) {
			t.Errorf("%q: %v %v, want %v", tc.in, got, err, tc.want)
		}
	}
	for _, in := range []string{"", "yesterday", "27.11.2026", "2026-11-27 10", "2026-13-01", "2026-11-27 25:00", "2026-11-27 10:00 CET"} {
		_, err := credit.ParseTypedTime(in, "occurred_at")
		if credit.CodeOf(err) != credit.CodeValidationFailed || paramOf(err) != "occurred_at" {
			t.Errorf("%q: %v, want validation_failed naming occurred_at", in, err)
		}
	}
}

func mustDuration(t *testing.T, s string) time.Duration {
	t.Helper()
	d, err := time.ParseDuration(s)
	if err != nil {
		t.Fatal(err)
	}
	return d
}
