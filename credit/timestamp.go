package credit

import (
	"fmt"
	"strconv"
	"time"
)

// TimestampLayout is how every timestamp leaves the service: ISO 8601 in UTC with exactly six
// fraction digits, so timestamps sort as strings and keep the microseconds a sync resumes from.
const TimestampLayout = "2006-01-02T15:04:05.000000Z"

// Timestamp is a UTC instant with microsecond precision, formatted with TimestampLayout in JSON
// (and in GraphQL, whose DateTime scalar writes String()).
type Timestamp struct{ time.Time }

// At converts t to a Timestamp, dropping what is below a microsecond.
func At(t time.Time) Timestamp { return Timestamp{t.UTC().Truncate(time.Microsecond)} }

// atPtr converts an optional time.
func atPtr(t *time.Time) *Timestamp {
	if t == nil {
		return nil
	}
	ts := At(*t)
	return &ts
}

// String formats the timestamp with TimestampLayout.
func (t Timestamp) String() string { return t.UTC().Format(TimestampLayout) }

// MarshalJSON writes the timestamp as a JSON string.
func (t Timestamp) MarshalJSON() ([]byte, error) { return []byte(strconv.Quote(t.String())), nil }

// UnmarshalJSON reads an RFC 3339 timestamp.
func (t *Timestamp) UnmarshalJSON(b []byte) error {
	s, err := strconv.Unquote(string(b))
	if err != nil {
		return err
	}
	return t.parse(s)
}

func (t *Timestamp) parse(s string) error {
	parsed, err := ParseTimestamp(s)
	if err != nil {
		return err
	}
	*t = parsed
	return nil
}

// ParseTimestamp reads an RFC 3339 timestamp with optional fractional seconds and any offset.
func ParseTimestamp(s string) (Timestamp, error) {
	parsed, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return Timestamp{}, fmt.Errorf("%q is not an RFC 3339 timestamp such as 2026-01-31T09:30:00Z", s)
	}
	return At(parsed), nil
}
