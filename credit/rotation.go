package credit

import (
	"time"
)

// A rotating secret is a sealed secret that a rotation replaces while the one it replaced
// stays valid for a grace: a platform connection's signing secret (contract §13) and a webhook
// endpoint's (webhooks.go). Both keep it in the same three columns (schema.RotatingSecretMixin);
// the rules about it are written here once. API keys rotate too, but each of their secrets is
// a row of its own with an expiry (keys.go), so only the grace rule is shared with them.

// checkGrace is the rule every rotation's grace follows: zero (the replaced secret stops at
// once) or more, never negative.
//
// Errors: validation_failed (param "grace").
func checkGrace(grace time.Duration) error {
	if grace < 0 {
		return ParamErrorf(CodeValidationFailed, "grace", "grace must not be negative")
	}
	return nil
}

// rotatingSecret is the stored state of a rotating secret, sealed.
type rotatingSecret struct {
	current           string
	previous          *string
	previousExpiresAt *time.Time
}

// previousValid reports whether the replaced secret is still valid at now: it exists and its
// grace has not ended.
func (r rotatingSecret) previousValid(now time.Time) bool {
	return r.previous != nil && r.previousExpiresAt != nil && r.previousExpiresAt.After(now)
}

// valid lists the sealed secrets valid at now, the current one first.
func (r rotatingSecret) valid(now time.Time) []string {
	if r.previousValid(now) {
		return []string{r.current, *r.previous}
	}
	return []string{r.current}
}

// previousExpiry is when the replaced secret stops being valid, nil when none is valid at now.
func (r rotatingSecret) previousExpiry(now time.Time) *Timestamp {
	if !r.previousValid(now) {
		return nil
	}
	return atPtr(r.previousExpiresAt)
}

// rotatingSecretUpdate is what the update builders of the entities with a rotating secret have
// in common (ent generates one per entity).
type rotatingSecretUpdate[U any] interface {
	SetSecretSealed(string) U
	SetPreviousSecretSealed(string) U
	SetPreviousSecretExpiresAt(time.Time) U
	ClearPreviousSecretSealed() U
	ClearPreviousSecretExpiresAt() U
}

// rotate sets upd to replace the secret sealed as current by sealed: the current one stays
// valid until now+grace, and a previous one still in its grace is dropped. With no grace the
// replaced secret stops at once. The grace must have passed checkGrace.
func rotate[U rotatingSecretUpdate[U]](upd U, current, sealed string, now time.Time, grace time.Duration) U {
	upd.SetSecretSealed(sealed)
	if grace > 0 {
		return upd.SetPreviousSecretSealed(current).SetPreviousSecretExpiresAt(now.Add(grace))
	}
	return upd.ClearPreviousSecretSealed().ClearPreviousSecretExpiresAt()
}
