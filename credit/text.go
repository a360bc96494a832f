package credit

import (
	"strings"
	"unicode/utf8"
)

// maxTextLength bounds notes and reasons (contract §3).
const maxTextLength = 500

// checkText checks a note or a reason: see checkField.
//
// Errors: validation_failed (param).
func checkText(s, param string) error { return checkField(s, param, maxTextLength) }

// checkField checks a free-text input the service stores: not blank, at most max characters,
// valid UTF-8, and no control characters other than tab and line breaks (a NUL byte cannot be
// stored in PostgreSQL text, and no name or note needs one).
//
// Errors: validation_failed (param).
func checkField(s, param string, max int) error {
	if strings.TrimSpace(s) == "" {
		return ParamErrorf(CodeValidationFailed, param, "%s must not be empty", param)
	}
	if utf8.RuneCountInString(s) > max {
		return ParamErrorf(CodeValidationFailed, param, "%s must be at most %d characters", param, max)
	}
	if !utf8.ValidString(s) {
		return ParamErrorf(CodeValidationFailed, param, "%s must be valid UTF-8", param)
	}
	for _, r := range s {
		if (r < 0x20 && r != '\t' && r != '\n' && r != '\r') || r == 0x7f {
			return ParamErrorf(CodeValidationFailed, param, "%s must not contain control characters", param)
		}
	}
	return nil
}

// MaxHeaderText bounds a header value the service keeps: an Idempotency-Key, a platform
// delivery's webhook id or topic.
const MaxHeaderText = 255

// IsHeaderText reports whether v is 1 to MaxHeaderText printable ASCII characters (0x20 to
// 0x7e, the space included): the one rule for header values that the service stores and
// compares, used by the Idempotency-Key (contract §7) and the platform door's headers (§13).
func IsHeaderText(v string) bool {
	if len(v) < 1 || len(v) > MaxHeaderText {
		return false
	}
	for i := 0; i < len(v); i++ {
		if v[i] < 0x20 || v[i] > 0x7e {
			return false
		}
	}
	return true
}
