package credit

import (
	"strings"
	"testing"
	"time"

	"github.com/creditd/creditd/ent/webhookdelivery"
	"github.com/creditd/creditd/webhook"
)

// TestDecideAttempt: what one attempt's result decides, without a database: pings leave the
// endpoint alone, a success ends the delivery and the run of failures, a failure schedules the
// next attempt within the schedule's jitter (or later, for a Retry-After, capped at 10 h), gives
// up after the last attempt, and disables the endpoint on 410 Gone or after five days of
// failures only.
func TestDecideAttempt(t *testing.T) {
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	hourAgo := now.Add(-time.Hour)
	longAgo := now.Add(-webhook.DisableAfter)
	fail := WebhookAttemptResult{Outcome: "http_error", StatusCode: 500}
	ok := WebhookAttemptResult{Success: true, Outcome: "delivered", StatusCode: 200}
	within := func(d attemptDecision, lo, hi time.Duration) bool {
		return d.NextAttemptAt != nil && !d.NextAttemptAt.Before(now.Add(lo)) && !d.NextAttemptAt.After(now.Add(hi))
	}

	if d := decideAttempt(true, fail, 1, now, &hourAgo); d.State != webhookdelivery.StatusFailed || d.Done || d.NextAttemptAt != nil || d.FailingSince != &hourAgo || d.Disable != "" {
		t.Errorf("a failed ping: %+v", d)
	}
	if d := decideAttempt(true, ok, 1, now, nil); d.State != webhookdelivery.StatusSucceeded || d.Done || d.FailingSince != nil {
		t.Errorf("a ping that succeeds: %+v", d)
	}
	if d := decideAttempt(false, ok, 3, now, &hourAgo); d.State != webhookdelivery.StatusSucceeded || !d.Done || d.FailingSince != nil || d.NextAttemptAt != nil {
		t.Errorf("a success: %+v", d)
	}
	d := decideAttempt(false, fail, 1, now, nil)
	if d.State != webhookdelivery.StatusPending || d.Done || d.FailingSince == nil || !d.FailingSince.Equal(now) || !within(d, 4*time.Second, 6*time.Second) {
		t.Errorf("a first failure: %+v, want a retry in 5 s ± 20%% and failures counted from now", d)
	}
	withRetryAfter := fail
	withRetryAfter.RetryAfter = time.Hour
	if d := decideAttempt(false, withRetryAfter, 1, now, &hourAgo); !within(d, time.Hour, time.Hour) || !d.FailingSince.Equal(hourAgo) {
		t.Errorf("a failure with Retry-After: 1 h: %+v, want the retry in an hour", d)
	}
	withRetryAfter.RetryAfter = 48 * time.Hour
	if d := decideAttempt(false, withRetryAfter, 1, now, &hourAgo); !within(d, maxRetryAfter, maxRetryAfter) {
		t.Errorf("a Retry-After of 48 h: %+v, want it capped at %s", d, maxRetryAfter)
	}
	if d := decideAttempt(false, fail, webhook.MaxAttempts, now, &hourAgo); d.State != webhookdelivery.StatusFailed || !d.Done || !d.GaveUp || d.NextAttemptAt != nil {
		t.Errorf("the last attempt failing: %+v, want the event given up", d)
	}
	gone := WebhookAttemptResult{Outcome: "http_error", StatusCode: 410}
	if d := decideAttempt(false, gone, 1, now, nil); !strings.Contains(d.Disable, "410") || d.Done {
		t.Errorf("410 Gone: %+v, want the endpoint disabled (the delivery keeps its schedule)", d)
	}
	if d := decideAttempt(false, fail, 2, now, &longAgo); !strings.Contains(d.Disable, "every attempt failed since") {
		t.Errorf("failing for %s: %+v, want the endpoint disabled", webhook.DisableAfter, d)
	}
	justUnder := now.Add(-webhook.DisableAfter + time.Second)
	if d := decideAttempt(false, fail, 2, now, &justUnder); d.Disable != "" {
		t.Errorf("failing for a second less than %s: disabled (%s)", webhook.DisableAfter, d.Disable)
	}
}
