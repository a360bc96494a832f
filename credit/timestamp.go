package credit

import (
	"fmt"
	"strconv"
	"strings"
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

// typedTimeLayouts are the forms ParseTypedTime reads, as people type a moment into a form.
var typedTimeLayouts = []string{"2006-01-02", "2006-01-02 15:04", "2006-01-02 15:04:05", "2006-01-02T15:04", "2006-01-02T15:04:05"}

// ParseTypedTime reads a moment as a person types it into a form: a date (2026-11-27, its
// start), a date and time (2026-11-27 10:00, seconds optional, "UTC" after it allowed), in
// UTC, which is the zone the console shows every time in (a store has no zone of its own), or
// an RFC 3339 time with its offset, as the APIs take it.
//
// Errors: validation_failed naming field, with the forms it reads.
func ParseTypedTime(s, field string) (Timestamp, error) {
	s = strings.TrimSpace(s)
	if ts, err := ParseTimestamp(s); err == nil {
		return ts, nil
	}
	local := strings.TrimSpace(strings.TrimSuffix(s, "UTC"))
	for _, layout := range typedTimeLayouts {
		if t, err := time.ParseInLocation(layout, local, time.UTC); err == nil {
			return At(t), nil
		}
	}
	return Timestamp{}, ParamErrorf(CodeValidationFailed, field,
		"%s must be a date such as 2026-11-27, a date and time in UTC such as 2026-11-27 10:00, or an RFC 3339 time such as 2026-11-27T10:00:00+01:00", strings.ReplaceAll(field, "_", " "))
}
