// Package rest is the /v1 REST transport: it parses requests, calls the credit domain and
// writes its results or errors. It holds no business rule.
package rest

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"

	"github.com/creditd/creditd/credit"
)

// statusByCode is the one table from contract error codes to HTTP statuses (contract §3).
var statusByCode = map[credit.Code]int{
	credit.CodeInvalidRequest:       http.StatusBadRequest,
	credit.CodeInvalidParameter:     http.StatusBadRequest,
	credit.CodeUnauthenticated:      http.StatusUnauthorized,
	credit.CodeInsufficientScope:    http.StatusForbidden,
	credit.CodeNotFound:             http.StatusNotFound,
	credit.CodeHoldNotFound:         http.StatusNotFound,
	credit.CodeMethodNotAllowed:     http.StatusMethodNotAllowed,
	credit.CodeHoldExists:           http.StatusConflict,
	credit.CodeHoldNotLiftable:      http.StatusConflict,
	credit.CodeIdempotencyKeyInUse:  http.StatusConflict,
	credit.CodeRequestTooLarge:      http.StatusRequestEntityTooLarge,
	credit.CodeUnsupportedMediaType: http.StatusUnsupportedMediaType,
	credit.CodeValidationFailed:     http.StatusUnprocessableEntity,
	credit.CodeInvalidAmount:        http.StatusUnprocessableEntity,
	credit.CodeCurrencyMismatch:     http.StatusUnprocessableEntity,
	credit.CodeLimitBelowZero:       http.StatusUnprocessableEntity,
	credit.CodeIdempotencyKeyReused: http.StatusUnprocessableEntity,
	credit.CodeRateLimited:          http.StatusTooManyRequests,
	credit.CodeInternal:             http.StatusInternalServerError,
	credit.CodeUnavailable:          http.StatusServiceUnavailable,
}

// Status returns the HTTP status of a contract error code.
func Status(code credit.Code) int {
	if s, ok := statusByCode[code]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// ErrorBody is the JSON body of every error response.
type ErrorBody struct {
	Error ErrorDetail `json:"error"`
}

// ErrorDetail is the error object: a stable code, a sentence, and the input at fault.
type ErrorDetail struct {
	Code    credit.Code `json:"code"`
	Message string      `json:"message"`
	Param   string      `json:"param,omitempty"`
}

// Describe turns any error into its contract code and public message. Errors that are not
// *credit.Error are internal: they are logged once with the request id and answered with a
// generic sentence, never with their text.
func Describe(r *http.Request, err error) ErrorDetail {
	var e *credit.Error
	if errors.As(err, &e) {
		return ErrorDetail{Code: e.Code, Message: e.Message, Param: e.Param}
	}
	if credit.ErrorCode(err) == credit.CodeUnavailable {
		slog.WarnContext(r.Context(), "database unavailable", "request_id", RequestID(r.Context()), "route", r.Pattern, "error", err.Error())
		return ErrorDetail{Code: credit.CodeUnavailable, Message: "the database is unavailable right now; retry after the time in Retry-After"}
	}
	slog.ErrorContext(r.Context(), "internal error", "request_id", RequestID(r.Context()), "method", r.Method, "route", r.Pattern, "error", err.Error())
	return ErrorDetail{Code: credit.CodeInternal, Message: "something went wrong on our side; the request id identifies it in our logs"}
}

// WriteError writes err as the contract's error JSON with its status and headers.
func WriteError(w http.ResponseWriter, r *http.Request, err error) {
	d := Describe(r, err)
	SetErrorHeaders(w, d.Code)
	WriteJSON(w, Status(d.Code), ErrorBody{Error: d})
}

// SetErrorHeaders sets the headers an error code carries in every transport: the bearer
// challenge of a 401 and the Retry-After of a 503 (a 429's is set by the rate limiter).
func SetErrorHeaders(w http.ResponseWriter, code credit.Code) {
	switch code {
	case credit.CodeUnauthenticated:
		w.Header().Set("WWW-Authenticate", `Bearer realm="credit"`)
	case credit.CodeUnavailable:
		if w.Header().Get("Retry-After") == "" {
			w.Header().Set("Retry-After", "5")
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
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n'))
}

// Marshal encodes v as compact JSON without escaping <, > and & (responses are not HTML).
func Marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
