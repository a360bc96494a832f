package graph

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/httpapi"
)

// The HTTP side of a GraphQL request: what is checked before gqlgen sees it, as for any
// request body of the API (contract §1), and the per-request state the middleware shares.

// request is the state of one GraphQL HTTP request.
type request struct {
	// key is the request's Idempotency-Key, bound to its body; its Key is "" when none was
	// sent.
	key httpapi.Idempotency
	w   *responseWriter
	// mutationsSucceeded counts the mutation fields whose resolver returned without error.
	mutationsSucceeded atomic.Int32
	// inTx is set while the request runs in an Idempotency-Key's transaction; txMu then lets
	// one resolver at a time use it.
	inTx atomic.Bool
	txMu sync.Mutex
	// refused is set when the middleware refuses the whole request before its fields run or
	// undoes it (rate limit, Idempotency-Key): the transport then answers without data.
	refused atomic.Bool
	// incremental is set for a query with @defer whose request accepts multipart/mixed
	// (incrementalRequest); operation is then its operation once validated.
	incremental bool
	operation   *graphql.OperationContext
	// responded is set once the first response of the request is written: only its status
	// can still be chosen (aroundResponse).
	responded atomic.Bool

	mu sync.Mutex
	// logged holds the internal errors already logged, by text.
	logged map[string]bool
}

type requestKey struct{}

func requestFrom(ctx context.Context) *request {
	r, _ := ctx.Value(requestKey{}).(*request)
	return r
}

// ServeHTTP checks the request's envelope and hands it to gqlgen.
//
// POST bodies follow the API's rules for bodies: JSON, at most 64 KiB, only the members of the
// GraphQL-over-HTTP envelope. GET serves queries only: a mutation is 405 method_not_allowed,
// so that a link or a prefetch can never write.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	req := &request{w: &responseWriter{ResponseWriter: w}}
	switch r.Method {
	case http.MethodPost:
		body, err := httpapi.ReadBody(w, r)
		var query, operationName string
		if err == nil {
			query, operationName, err = checkEnvelope(body)
		}
		if err == nil {
			req.key, err = httpapi.ReadIdempotencyKey(r)
		}
		if err == nil {
			err = req.key.Bind(r, body)
		}
		if err != nil {
			WriteError(w, r, err)
			return
		}
		req.incremental = incrementalRequest(r, query, operationName)
		r.Body = io.NopCloser(bytes.NewReader(body))
	case http.MethodGet:
		q, err := getParams(r.URL.RawQuery)
		if err != nil {
			WriteError(w, r, err)
			return
		}
		if getOperation(q) == ast.Mutation {
			w.Header().Set("Allow", "POST")
			WriteError(w, r, credit.Errorf(httpapi.CodeMethodNotAllowed, "mutations need POST; GET /graphql serves queries only"))
			return
		}
		req.incremental = incrementalRequest(r, q.Get("query"), q.Get("operationName"))
	}
	ctx := context.WithValue(r.Context(), requestKey{}, req)
	ctx = withLoaders(ctx, newLoaders(h.svc))
	h.srv.ServeHTTP(req.w, r.WithContext(ctx))
}

// checkEnvelope checks that a POST body is one JSON object with a query and nothing but the
// envelope's members (query, operationName, variables, extensions), each once and of its
// type, by the same strict rules as REST bodies.
//
// It returns the query and the operation name.
//
// Errors: invalid_request, naming the member at fault.
func checkEnvelope(body []byte) (query, operationName string, err error) {
	var q, name *string
	var variables, extensions json.RawMessage
	if err := httpapi.DecodeObject(body,
		httpapi.StringField("query", &q),
		httpapi.StringField("operationName", &name),
		httpapi.ObjectField("variables", &variables),
		httpapi.ObjectField("extensions", &extensions),
	); err != nil {
		return "", "", err
	}
	if q == nil {
		return "", "", credit.ParamErrorf(httpapi.CodeInvalidRequest, "query", "the request body needs a query")
	}
	return *q, deref(name), nil
}

// getParams reads a GET request's query string and checks what gqlgen's GET transport would
// otherwise refuse in a bare {"errors":[{"message"}]} without the contract's code: a query
// string that does not parse, and variables or extensions that do not decode as a JSON object.
//
// Errors: invalid_request, naming the parameter at fault.
func getParams(rawQuery string) (url.Values, error) {
	q, err := url.ParseQuery(rawQuery)
	if err != nil {
		return nil, credit.Errorf(httpapi.CodeInvalidRequest, "the query string could not be read (%v): separate parameters with & and percent-encode their values", err)
	}
	for _, name := range []string{"variables", "extensions"} {
		v := q.Get(name)
		if v == "" {
			continue
		}
		// Decoded exactly as gqlgen's GET transport decodes it, so both accept the same values.
		var m map[string]any
		dec := json.NewDecoder(strings.NewReader(v))
		dec.UseNumber()
		if err := dec.Decode(&m); err != nil {
			return nil, credit.ParamErrorf(httpapi.CodeInvalidRequest, name, "%s must be a JSON object", name)
		}
	}
	return q, nil
}

// getOperation is the type of the operation a GET request would run, or "" when the query
// does not parse (gqlgen then reports why).
func getOperation(q url.Values) ast.Operation {
	doc, err := parser.ParseQueryWithTokenLimit(&ast.Source{Input: q.Get("query")}, MaxTokens)
	if err != nil {
		return ""
	}
	if op := doc.Operations.ForName(q.Get("operationName")); op != nil {
		return op.Operation
	}
	return ""
}

// responseWriter lets the middleware choose the status of a response the transport writes:
// 429 for a request whose extra mutation fields are over the rate limit, the REST status of an
// idempotency error. gqlgen answers a query it refuses (parse, validation, limits) with 422;
// the contract's code for those is invalid_request, whose status is 400.
type responseWriter struct {
	http.ResponseWriter
	status      int
	wroteHeader bool
}

// force makes the response's status s.
func (w *responseWriter) force(s int) { w.status = s }

func (w *responseWriter) WriteHeader(status int) {
	if w.wroteHeader {
		return
	}
	w.wroteHeader = true
	switch {
	case w.status != 0:
		status = w.status
	case status == http.StatusUnprocessableEntity:
		status = http.StatusBadRequest
	}
	w.ResponseWriter.WriteHeader(status)
}

// Flush sends what is written so far: incremental delivery flushes each part.
func (w *responseWriter) Flush() {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

func (w *responseWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *responseWriter) Write(b []byte) (int, error) {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(b)
}
