package credit

import (
	"errors"
	"fmt"

	"github.com/creditd/creditd/ent"
)

// Code is a stable, machine-readable error code of the API contract (docs/contract.md §3).
// The domain uses the codes below; transports add their own (malformed requests, rate
// limits, outages) in package httpapi, which maps every code to its HTTP status.
type Code string

// The domain's error codes.
const (
	CodeInvalidParameter     Code = "invalid_parameter"
	CodeUnauthenticated      Code = "unauthenticated"
	CodeInsufficientScope    Code = "insufficient_scope"
	CodeNotFound             Code = "not_found"
	CodeHoldNotFound         Code = "hold_not_found"
	CodeHoldExists           Code = "hold_exists"
	CodeHoldNotLiftable      Code = "hold_not_liftable"
	CodeIdempotencyKeyInUse  Code = "idempotency_key_in_use"
	CodeValidationFailed     Code = "validation_failed"
	CodeInvalidAmount        Code = "invalid_amount"
	CodeCurrencyMismatch     Code = "currency_mismatch"
	CodeLimitBelowZero       Code = "limit_below_zero"
	CodeIdempotencyKeyReused Code = "idempotency_key_reused"
	CodeExportInProgress     Code = "export_in_progress"
	// CodeInvoiceNotOpen: a promise or a dispute written on a paid or cancelled invoice.
	CodeInvoiceNotOpen Code = "invoice_not_open"
)

// Error is the one error type of creditd: a contract code, a sentence for people, and the
// input at fault when there is exactly one. Param uses the REST API's names (limit, cursor,
// after, updated_since); a transport with other names renames it when it formats the error.
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

// CodeOf returns the code of an *Error in err's chain, and "" for any other error.
func CodeOf(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

// IsNotFound reports whether err is the contract's not_found.
func IsNotFound(err error) bool { return CodeOf(err) == CodeNotFound }

// errNotFound is the one answer for an unknown ID and for another store's ID alike.
func errNotFound(what string) *Error {
	return Errorf(CodeNotFound, "no such %s", what)
}

// notFoundOr turns ent's not-found into the contract's not_found for what, and passes other
// errors through.
func notFoundOr(err error, what string) error {
	if ent.IsNotFound(err) {
		return errNotFound(what)
	}
	return err
}

// paramOf returns the input err names (Error.Param), or "" when it names none.
func paramOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Param
	}
	return ""
}
