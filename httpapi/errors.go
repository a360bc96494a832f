// Package httpapi is what creditd's two HTTP APIs share: the contract's status for every error
// code and the one function that turns any error into code, status and message, the error
// body, request ids, strict JSON request bodies, and the HTTP half of Idempotency-Key. Package
// rest (/v1) and package graph (GraphQL) build on it, and so do the server's middleware and the
// command line's exit codes, so that an error means the same everywhere.
package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"maps"
	"net/http"
	"sync"
	"time"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/database"
)

// The error codes of the transports (docs/contract.md §3), beside the domain's in package
// credit: malformed requests, the rate limit, and failures of the service itself.
const (
	CodeInvalidRequest       credit.Code = "invalid_request"
	CodeMethodNotAllowed     credit.Code = "method_not_allowed"
	CodeRequestTooLarge      credit.Code = "request_too_large"
	CodeUnsupportedMediaType credit.Code = "unsupported_media_type"
	CodeRateLimited          credit.Code = "rate_limited"
	CodeInternal             credit.Code = "internal_error"
	CodeUnavailable          credit.Code = "unavailable"
)

// statusByCode is the one table from error codes to HTTP statuses (contract §3). GraphQL uses
// it too, for the status of a request refused as a whole.
var statusByCode = map[credit.Code]int{
	CodeInvalidRequest:              http.StatusBadRequest,
	credit.CodeInvalidParameter:     http.StatusBadRequest,
	credit.CodeUnauthenticated:      http.StatusUnauthorized,
	credit.CodeInsufficientScope:    http.StatusForbidden,
	credit.CodeNotFound:             http.StatusNotFound,
	credit.CodeHoldNotFound:         http.StatusNotFound,
	CodeMethodNotAllowed:            http.StatusMethodNotAllowed,
	CodeNotAcceptable:               http.StatusNotAcceptable,
	credit.CodeHoldExists:           http.StatusConflict,
	credit.CodeHoldNotLiftable:      http.StatusConflict,
	credit.CodeInvoiceNotOpen:       http.StatusConflict,
	credit.CodeIdempotencyKeyInUse:  http.StatusConflict,
	credit.CodeExportInProgress:     http.StatusConflict,
	CodeRequestTooLarge:             http.StatusRequestEntityTooLarge,
	CodeUnsupportedMediaType:        http.StatusUnsupportedMediaType,
	credit.CodeValidationFailed:     http.StatusUnprocessableEntity,
	credit.CodeInvalidAmount:        http.StatusUnprocessableEntity,
	credit.CodeCurrencyMismatch:     http.StatusUnprocessableEntity,
	credit.CodeLimitBelowZero:       http.StatusUnprocessableEntity,
	credit.CodeIdempotencyKeyReused: http.StatusUnprocessableEntity,
	CodeRateLimited:                 http.StatusTooManyRequests,
	CodeInternal:                    http.StatusInternalServerError,
	CodeUnavailable:                 http.StatusServiceUnavailable,
}

// Status returns the HTTP status of an error code; an unknown code is a server fault.
func Status(code credit.Code) int {
	if s, ok := statusByCode[code]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// Messages for the errors whose own text callers never see.
const (
	internalMessage    = "something went wrong on our side; the request id identifies it in our logs"
	unavailableMessage = "the database is unavailable right now; retry after the time in Retry-After"
	diskFullMessage    = "the database's disk is full: reads work, writes are refused until space is freed; retry after the time in Retry-After"
)

// RetryAfterOutage is the Retry-After, in seconds, of a 503 unavailable.
const RetryAfterOutage = "5"

// Problem is an error as callers see it: the contract's code, the HTTP status of that code,
// a sentence, and the input at fault. It is also the JSON error object of REST responses.
type Problem struct {
	Status  int         `json:"-"`
	Code    credit.Code `json:"code"`
	Message string      `json:"message"`
	Param   string      `json:"param,omitempty"`
}

// Describe turns any error into its Problem. It is the one place that decides what an error
// means to a caller, used by REST, GraphQL, the panic recovery, the readiness check and the
// command line's exit codes:
//   - an *credit.Error keeps its code, message and param;
//   - a database outage (database.IsUnavailable) is unavailable, which a caller may retry;
//   - anything else is internal_error with a generic sentence: its text, which may hold SQL or
//     a stack, never reaches callers (see Log).
func Describe(err error) Problem {
	var e *credit.Error
	switch {
	case errors.As(err, &e):
		return Problem{Status: Status(e.Code), Code: e.Code, Message: e.Message, Param: e.Param}
	case database.IsDiskFull(err):
		return Problem{Status: http.StatusServiceUnavailable, Code: CodeUnavailable, Message: diskFullMessage}
	case database.IsUnavailable(err):
		return Problem{Status: http.StatusServiceUnavailable, Code: CodeUnavailable, Message: unavailableMessage}
	}
	return Problem{Status: http.StatusInternalServerError, Code: CodeInternal, Message: internalMessage}
}

// Log records what the answer to a failed request does not say, with the request id, on the
// request's logger (WithLogger): the text of an internal error (at error level) or of an
// outage (a warning). Errors that are the caller's are in the answer and not logged. attrs add
// context (route, GraphQL path).
func Log(ctx context.Context, p Problem, err error, attrs ...any) {
	log := Logger(ctx)
	attrs = append([]any{"request_id", RequestID(ctx)}, attrs...)
	switch p.Code {
	case CodeInternal:
		log.ErrorContext(ctx, "internal error", append(attrs, "error", err.Error())...)
	case CodeUnavailable:
		if database.IsDiskFull(err) {
			// A full disk fails every write until an operator frees space: say so once a
			// minute, with how many answers it cost since, instead of once per request.
			if n, ok := diskFullLog.allow(time.Now()); ok {
				log.ErrorContext(ctx, "database disk full: writes are refused until space is freed", append(attrs, "error", err.Error(), "refused_since_last_log", n)...)
			}
			return
		}
		log.WarnContext(ctx, "database unavailable", append(attrs, "error", err.Error())...)
	}
}

// diskFullLog spaces the full-disk log lines a minute apart.
var diskFullLog = everyMinute{}

// everyMinute lets one event in a minute through and counts the others.
type everyMinute struct {
	mu      sync.Mutex
	last    time.Time
	dropped int
}

// allow reports whether an event at now is let through, and how many were not since the last.
func (e *everyMinute) allow(now time.Time) (dropped int, ok bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.last.IsZero() && now.Sub(e.last) < time.Minute {
		e.dropped++
		return 0, false
	}
	dropped, e.last, e.dropped = e.dropped, now, 0
	return dropped, true
}

// ErrorBody is the JSON body of every REST error response.
type ErrorBody struct {
	Error Problem `json:"error"`
}

// WriteError answers a REST request with err: its status, the headers its code carries, and
// the contract's error JSON. Internal errors and outages are logged (see Log).
func WriteError(w http.ResponseWriter, r *http.Request, err error) {
	p := Describe(err)
	Log(r.Context(), p, err, "method", r.Method, "route", r.Pattern)
	SetErrorHeaders(w, p.Code)
	WriteJSON(w, p.Status, ErrorBody{Error: p})
}

// SetErrorHeaders sets the headers an error code carries in every transport: the bearer
// challenge of a 401 and the Retry-After of a 503 (a 429's is set by the rate limiter).
func SetErrorHeaders(w http.ResponseWriter, code credit.Code) {
	switch code {
	case credit.CodeUnauthenticated:
		w.Header().Set("WWW-Authenticate", `Bearer realm="credit"`)
	case CodeUnavailable:
		if w.Header().Get("Retry-After") == "" {
			w.Header().Set("Retry-After", RetryAfterOutage)
		}
	}
}

// WriteJSON writes v as a JSON response with status.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	body, err := Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		body = []byte(`{"error":{"code":"internal_error","message":"response could not be encoded"}}`)
	}
	WriteBody(w, status, body)
}

// WriteBody writes an encoded JSON body with status.
func WriteBody(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n'))
}

// Marshal encodes v as compact JSON without escaping <, > and & (responses are not HTML).
// Views that write their own JSON (credit.JSONAppender: companies, ledger entries and their
// pages) write the same bytes without encoding/json's reflection.
func Marshal(v any) ([]byte, error) {
	if a, ok := v.(credit.JSONAppender); ok {
		return a.AppendJSON(make([]byte, 0, 512)), nil
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// ErrAmountNotString is the answer to an amount sent as a number (a JSON number, or a GraphQL
// Int or Float): amounts are decimal strings, so that no client ever rounds them through a
// float. Transports hand it to the domain in credit.AmountInput.Err, which answers it in its
// own order of checks.
func ErrAmountNotString(param string) error {
	return credit.ParamErrorf(credit.CodeInvalidAmount, param, "%s must be a decimal string such as \"1500.00\", not a JSON number", param)
}

// Codes returns every error code with its status, for the tests that hold the OpenAPI document
// to the table.
func Codes() map[credit.Code]int { return maps.Clone(statusByCode) }

// NotFoundRoute answers a request for a path that serves nothing: 404 not_found in the
// contract's error JSON, as for an unknown ID.
func NotFoundRoute(w http.ResponseWriter, r *http.Request) {
	WriteError(w, r, credit.Errorf(credit.CodeNotFound, "no such route: %s %s", r.Method, r.URL.Path))
}

type loggerKey struct{}

// WithLogger returns ctx carrying the logger for everything a request logs.
func WithLogger(ctx context.Context, log *slog.Logger) context.Context {
	return context.WithValue(ctx, loggerKey{}, log)
}

// Logger returns the request's logger, or slog's default outside a request.
func Logger(ctx context.Context) *slog.Logger {
	if log, ok := ctx.Value(loggerKey{}).(*slog.Logger); ok {
		return log
	}
	return slog.Default()
}
