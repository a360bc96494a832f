package webhook

import (
	"crypto/rand"
	"encoding/binary"
	"time"
)

// retryDelays are the waits after the 1st, 2nd, ... failed attempt. Together they span a little
// over three days (77h35m05s before jitter), long enough to ride out a receiver's weekend
// outage, after the example schedule of the Standard Webhooks specification.
var retryDelays = [...]time.Duration{
	5 * time.Second,
	5 * time.Minute,
	30 * time.Minute,
	2 * time.Hour,
	5 * time.Hour,
	10 * time.Hour,
	10 * time.Hour,
	10 * time.Hour,
	10 * time.Hour,
	10 * time.Hour,
	10 * time.Hour,
	10 * time.Hour,
}

// MaxAttempts is how many times one event is attempted at one endpoint: the first attempt and
// one retry per delay of the schedule.
const MaxAttempts = 1 + len(retryDelays)

// jitterFraction spreads each delay uniformly over ±20%, so endpoints that failed together (a
// receiver's outage, a network partition) are not all retried in the same second.
const jitterFraction = 0.2

// DisableAfter is how long an endpoint may fail without a single success before it is
// disabled: longer than one event's retry schedule, so every event gets its full schedule
// first, and short enough that a dead endpoint stops costing work within a week.
const DisableAfter = 5 * 24 * time.Hour

// NextAttempt says when to retry an event after failedAttempts failed attempts (1 after the
// first attempt failed), and false when the schedule is exhausted and the event should be
// given up at this endpoint. Zero failed attempts means the first attempt, which is due now.
//
// random returns a number in [0, 1) that places the retry within its jitter window; tests pass
// a fixed function, and nil means crypto/rand (the module keeps math/rand out of the product).
func NextAttempt(failedAttempts int, now time.Time, random func() float64) (time.Time, bool) {
	if failedAttempts <= 0 {
		return now, true
	}
	if failedAttempts > len(retryDelays) {
		return time.Time{}, false
	}
	if random == nil {
		random = cryptoFloat64
	}
	delay := retryDelays[failedAttempts-1]
	factor := 1 - jitterFraction + 2*jitterFraction*random()
	return now.Add(time.Duration(float64(delay) * factor)), true
}

// ShouldDisable reports whether an endpoint whose current run of failures began at
// firstFailureAt (zero when its last attempt succeeded) has been failing for DisableAfter.
func ShouldDisable(firstFailureAt, now time.Time) bool {
	return !firstFailureAt.IsZero() && now.Sub(firstFailureAt) >= DisableAfter
}

// cryptoFloat64 returns a uniform number in [0, 1) from crypto/rand.
func cryptoFloat64() float64 {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return float64(binary.LittleEndian.Uint64(b[:])>>11) / (1 << 53)
}
