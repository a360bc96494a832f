// Package credit is the domain of creditd: money, companies and their ledgers, applications,
// holds, API keys and the rules that govern them. The REST API, the GraphQL API and the command
// line all call it, so each rule is written once, here.
package credit

import (
	"errors"
	"fmt"

	"github.com/creditd/creditd/database"
)

// Code is a stable, machine-readable error code from the API contract (§3).
type Code string

// The contract's error codes.
const (
	CodeInvalidRequest       Code = "invalid_request"
	CodeInvalidParameter     Code = "invalid_parameter"
	CodeUnauthenticated      Code = "unauthenticated"
	CodeInsufficientScope    Code = "insufficient_scope"
	CodeNotFound             Code = "not_found"
	CodeHoldNotFound         Code = "hold_not_found"
	CodeMethodNotAllowed     Code = "method_not_allowed"
	CodeHoldExists           Code = "hold_exists"
	CodeHoldNotLiftable      Code = "hold_not_liftable"
	CodeIdempotencyKeyInUse  Code = "idempotency_key_in_use"
	CodeRequestTooLarge      Code = "request_too_large"
	CodeUnsupportedMediaType Code = "unsupported_media_type"
	CodeValidationFailed     Code = "validation_failed"
	CodeInvalidAmount        Code = "invalid_amount"
	CodeCurrencyMismatch     Code = "currency_mismatch"
	CodeLimitBelowZero       Code = "limit_below_zero"
	CodeIdempotencyKeyReused Code = "idempotency_key_reused"
	CodeRateLimited          Code = "rate_limited"
	CodeInternal             Code = "internal_error"
	CodeUnavailable          Code = "unavailable"
)

// Error is the one error type of the domain: a contract code, a sentence for people, and the
// input at fault when there is exactly one.
type Error struct {
	Code    Code
	Message string
	Param   string
}

func (e *Error) Error() string {
	if e.Param != "" {
		return fmt.Sprintf("%s: %s (%s)", e.Code, e.Message, e.Param)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

// Is makes errors.Is(err, &Error{Code: c}) match any error with code c.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code
}

// Errorf returns an *Error with a formatted message.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ParamErrorf returns an *Error that names the input at fault.
func ParamErrorf(code Code, param, format string, args ...any) *Error {
	return &Error{Code: code, Param: param, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the contract code of err: its own for an *Error, unavailable when the
// database could not be reached (the caller may retry), and internal_error for anything else,
// whose text never reaches callers.
func ErrorCode(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	if database.IsUnavailable(err) {
		return CodeUnavailable
	}
	return CodeInternal
}

// errNotFound is the one answer for an unknown ID and for another store's ID alike.
func errNotFound(what string) *Error {
	return Errorf(CodeNotFound, "no such %s", what)
}
