package graph

import (
	"context"
	"errors"
	"log/slog"
	"net/http"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/rest"
)

// Errors in GraphQL form: {"errors": [{"message", "path", "locations", "extensions": {"code",
// "param"}}]}, with the REST API's codes (contract §3). Every error of a response passes
// through presentError, the one place that turns an error into its code; HTTP statuses come
// from REST's table (rest.Status).

// internalMessage is what callers see of an unexpected error.
const internalMessage = "something went wrong on our side; the request id identifies it in our logs"

// presenter builds the error presenter and the panic handler of the GraphQL server.
type presenter struct{ log *slog.Logger }

// presentError gives err its contract code: a *credit.Error keeps its code, message and param;
// a query that does not parse or validate, or that a limit refuses, is invalid_request; anything
// else is internal_error with a generic message, logged here once with the request id.
// The original error stays in Err (never serialised) for the idempotency decision.
func (p presenter) presentError(ctx context.Context, err error) *gqlerror.Error {
	out := &gqlerror.Error{Err: err}
	var gqlErr *gqlerror.Error
	if errors.As(err, &gqlErr) {
		out.Path, out.Locations = gqlErr.Path, gqlErr.Locations
	} else {
		out.Path = graphql.GetPath(ctx)
	}
	var ce *credit.Error
	switch {
	case errors.As(err, &ce):
		out.Message = ce.Message
		out.Extensions = extensions(ce.Code, ce.Param)
	case gqlErr != nil && isRequestError(gqlErr):
		out.Message = gqlErr.Message
		out.Extensions = extensions(credit.CodeInvalidRequest, "")
	default:
		if firstReport(ctx, err) {
			p.log.ErrorContext(ctx, "internal error", "request_id", rest.RequestID(ctx), "path", out.Path.String(), "error", err.Error())
		}
		out.Message = internalMessage
		out.Extensions = extensions(credit.CodeInternal, "")
	}
	return out
}

// firstReport reports whether err is the first of its text in this request: a batched read
// that fails fails every sibling field with the same error, which is logged once.
func firstReport(ctx context.Context, err error) bool {
	req := requestFrom(ctx)
	if req == nil {
		return true
	}
	text := err.Error()
	if e := (*gqlerror.Error)(nil); errors.As(err, &e) && e.Err != nil {
		text = e.Err.Error() // without the path, which differs between siblings
	}
	req.mu.Lock()
	defer req.mu.Unlock()
	if req.logged == nil {
		req.logged = map[string]bool{}
	}
	if req.logged[text] {
		return false
	}
	req.logged[text] = true
	return true
}

// recoverPanic turns a resolver's panic into internal_error, logging it once.
func (p presenter) recoverPanic(ctx context.Context, v any) error {
	p.log.ErrorContext(ctx, "panic in GraphQL resolver", "request_id", rest.RequestID(ctx), "path", graphql.GetPath(ctx).String(), "panic", v)
	return credit.Errorf(credit.CodeInternal, internalMessage)
}

// isRequestError reports whether gqlgen refused the query itself: it does not parse, does not
// validate against the schema, or names an unknown operation.
func isRequestError(e *gqlerror.Error) bool {
	switch e.Extensions["code"] {
	case errcode.ParseFailed, errcode.ValidationFailed:
		return true
	}
	return false
}

func extensions(code credit.Code, param string) map[string]any {
	ext := map[string]any{"code": code}
	if param != "" {
		ext["param"] = param
	}
	return ext
}

// refusal is an error for a query refused before execution (a limit): invalid_request, marked
// as a validation failure so that the transport answers it like one.
func refusal(format string, args ...any) *gqlerror.Error {
	ce := credit.Errorf(credit.CodeInvalidRequest, format, args...)
	e := &gqlerror.Error{Message: ce.Message, Err: ce}
	errcode.Set(e, errcode.ValidationFailed)
	return e
}

// WriteError answers a request refused before GraphQL runs (authentication, rate limit, body
// too large, wrong media type) with the contract's status and headers and a GraphQL error body.
func WriteError(w http.ResponseWriter, r *http.Request, err error) {
	d := rest.Describe(r, err)
	rest.SetErrorHeaders(w, d.Code)
	writeResponse(w, rest.Status(d.Code), &graphql.Response{Errors: gqlerror.List{{
		Message:    d.Message,
		Extensions: extensions(d.Code, d.Param),
	}}})
}

func writeResponse(w http.ResponseWriter, status int, resp *graphql.Response) {
	body, err := rest.Marshal(resp)
	if err != nil {
		status = http.StatusInternalServerError
		body = []byte(`{"errors":[{"message":"response could not be encoded","extensions":{"code":"internal_error"}}]}`)
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n'))
}
