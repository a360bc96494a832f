package graph

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/httpapi"
)

// Errors in GraphQL form: {"errors": [{"message", "path", "locations", "extensions": {"code",
// "param"}}]}, with the REST API's codes (contract §3). Every error of a response passes
// through presentError, which asks httpapi.Describe, the one place that decides what an error
// means, and renames the input at fault to its GraphQL name.

// paramNames are the GraphQL names of the inputs whose REST names the domain uses in errors.
var paramNames = map[string]string{
	"limit":         "first",
	"cursor":        "after",
	"after":         "afterEntry",
	"updated_since": "updatedSince",
	"promised_for":  "promisedFor",
	"window_days":   "windowDays",
}

// fieldParamNames are the fields whose arguments name an input differently from paramNames:
// events' after is afterEvent (the ledger's is afterEntry) and its type filter is types;
// companies' order is orderBy and its search q is search.
var fieldParamNames = map[string]map[string]string{
	"events":    {"after": "afterEvent", "type": "types"},
	"companies": {"order": "orderBy", "q": "search"},
}

// graphQLProblem is p with the input at fault under its GraphQL name, in param and where the
// message starts with it ("limit must be between 1 and 250" becomes "first must be ..."). The
// name is the one of the field that failed (ctx's) where it has its own.
func graphQLProblem(ctx context.Context, p httpapi.Problem) httpapi.Problem {
	name, ok := paramNames[p.Param]
	if fc := graphql.GetFieldContext(ctx); fc != nil {
		if own, found := fieldParamNames[fc.Field.Name][p.Param]; found {
			name, ok = own, true
		}
	}
	if !ok {
		return p
	}
	return renameParam(p, name)
}

// renameParam is p with its param called name, where it names it and where its message starts
// with it.
func renameParam(p httpapi.Problem, name string) httpapi.Problem {
	if rest, found := strings.CutPrefix(p.Message, p.Param+" "); found {
		p.Message = name + " " + rest
	}
	p.Param = name
	return p
}

func presentError(ctx context.Context, err error) *gqlerror.Error {
	out := &gqlerror.Error{Err: err}
	var gqlErr *gqlerror.Error
	if errors.As(err, &gqlErr) {
		out.Path, out.Locations = gqlErr.Path, gqlErr.Locations
	} else {
		out.Path = graphql.GetPath(ctx)
	}
	var ce *credit.Error
	if gqlErr != nil && !errors.As(err, &ce) && isRequestError(gqlErr) {
		out.Message = gqlErr.Message
		out.Extensions = extensions(httpapi.Problem{Code: httpapi.CodeInvalidRequest})
		return out
	}
	problem := httpapi.Describe(err)
	if ae := (argumentError{}); !errors.As(err, &ae) {
		problem = graphQLProblem(ctx, problem)
	}
	if problem.Status >= http.StatusInternalServerError && firstReport(ctx, err) {
		httpapi.Log(ctx, problem, err, "path", out.Path.String())
	}
	out.Message = problem.Message
	out.Extensions = extensions(problem)
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

// recoverPanic turns a resolver's panic into an error, which the presenter answers with
// internal_error and logs once, with the panic's value.
func recoverPanic(ctx context.Context, v any) error {
	return fmt.Errorf("panic in GraphQL resolver: %v", v)
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

func extensions(p httpapi.Problem) map[string]any {
	ext := map[string]any{"code": p.Code}
	if p.Param != "" {
		ext["param"] = p.Param
	}
	return ext
}

// codeOf is the contract code a presented error carries.
func codeOf(e *gqlerror.Error) credit.Code {
	code, _ := e.Extensions["code"].(credit.Code)
	return code
}

// refusal is an error for a query refused before execution (a limit): invalid_request, marked
// as a validation failure so that the transport answers it like one.
func refusal(format string, args ...any) *gqlerror.Error {
	ce := credit.Errorf(httpapi.CodeInvalidRequest, format, args...)
	e := &gqlerror.Error{Message: ce.Message, Err: ce}
	errcode.Set(e, errcode.ValidationFailed)
	return e
}

// WriteError answers a request refused before GraphQL runs (authentication, rate limit, body
// too large, wrong media type) with the contract's status and headers and a GraphQL error body
// without data, as every request error (contract §14).
func WriteError(w http.ResponseWriter, r *http.Request, err error) {
	p := graphQLProblem(r.Context(), httpapi.Describe(err))
	httpapi.Log(r.Context(), p, err, "route", r.Pattern)
	httpapi.SetErrorHeaders(w, p.Code)
	writeResponse(w, r, p.Status, requestError{Errors: gqlerror.List{{
		Message:    p.Message,
		Extensions: extensions(p),
	}}})
}

// writeResponse writes a request error's body, of the media type the request prefers
// (responseMediaType: Apollo Client reads a 401's code only from
// application/graphql-response+json).
func writeResponse(w http.ResponseWriter, r *http.Request, status int, resp requestError) {
	body, err := httpapi.Marshal(resp)
	if err != nil {
		status = http.StatusInternalServerError
		body = []byte(`{"errors":[{"message":"response could not be encoded","extensions":{"code":"internal_error"}}]}`)
	}
	w.Header().Set("Content-Type", responseMediaType(r)+"; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n'))
}
