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

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/parser"
)

// @defer (contract §9, 2026-11-27). A query with @defer whose request accepts multipart/mixed
// is answered by incremental delivery, in the format Apollo Client and urql read: gqlgen's
// multipart transport (an initial part, then the deferred fragments' parts, each
// {"incremental": [{"data", "path"}], "hasNext"}, hasNext false on the last). Every other
// request, a query with @defer included, runs its deferred fragments in place: collectFields
// drops their deferral, so the one response is the whole result with no hasNext, exactly as if
// the directive were not there. Mutations are never incremental (gqlgen's executor answers a
// mutation with one response), and neither is an operation without @defer: it gets the one
// JSON response it always had, whatever the Accept.
//
// The incremental request passes the same checks as any: authentication, the rate limit and
// the body's rules before gqlgen, then the same executor with its limits, argument checks and
// scopes; its deferred fields load through the request's batches (graph/batch.go).

// multipartContentType is the Content-Type of an incremental response, as the contract writes
// it; gqlgen writes it without the spaces.
const multipartContentType = `multipart/mixed; boundary="-"; deferSpec=20220824`

// incrementalRequest reports whether the request with this query and operation name is
// answered incrementally: its Accept includes multipart/mixed and the operation it runs is a
// query with @defer. A query that does not parse is not: gqlgen then answers why, as usual.
func incrementalRequest(r *http.Request, query, operationName string) bool {
	if !strings.Contains(query, "defer") || !acceptsMultipart(r) {
		return false
	}
	doc, err := parser.ParseQueryWithTokenLimit(&ast.Source{Input: query}, MaxTokens)
	if err != nil {
		return false
	}
	op := doc.Operations.ForName(operationName)
	return op != nil && op.Operation == ast.Query && usesDefer(doc, op.SelectionSet, 0)
}

// usesDefer reports whether sel, or a fragment it spreads, has @defer.
func usesDefer(doc *ast.QueryDocument, sel ast.SelectionSet, depth int) bool {
	if depth > MaxDepth*4 { // deeper than validation and the limits let through (or a cycle)
		return false
	}
	for _, s := range sel {
		switch s := s.(type) {
		case *ast.Field:
			if usesDefer(doc, s.SelectionSet, depth+1) {
				return true
			}
		case *ast.InlineFragment:
			if s.Directives.ForName("defer") != nil || usesDefer(doc, s.SelectionSet, depth+1) {
				return true
			}
		case *ast.FragmentSpread:
			if s.Directives.ForName("defer") != nil {
				return true
			}
			if def := doc.Fragments.ForName(s.Name); def != nil && usesDefer(doc, def.SelectionSet, depth+1) {
				return true
			}
		}
	}
	return false
}

// incrementalOperations are the operations being answered incrementally: collectFields keeps
// their deferred fields deferred. An entry lives from the operation's validation to the end of
// its response (incrementalTransport.Do).
var incrementalOperations sync.Map // *graphql.OperationContext -> struct{}

// inPlace clears the deferral of fields collected for an operation that is not answered
// incrementally, so that gqlgen's executor runs them with their siblings. fields are the
// caller's own (collectFields never remembers a selection set with @defer).
func inPlace(oc *graphql.OperationContext, fields []graphql.CollectedField) []graphql.CollectedField {
	for i := range fields {
		if fields[i].Deferrable == nil {
			continue
		}
		if _, incremental := incrementalOperations.Load(oc); incremental {
			return fields
		}
		fields[i].Deferrable = nil
	}
	return fields
}

// deferExtension registers an incremental request's operation once it is validated.
type deferExtension struct{}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationContextMutator
} = deferExtension{}

func (deferExtension) ExtensionName() string                   { return "IncrementalDelivery" }
func (deferExtension) Validate(graphql.ExecutableSchema) error { return nil }

func (deferExtension) MutateOperationContext(ctx context.Context, oc *graphql.OperationContext) *gqlerror.Error {
	if req := requestFrom(ctx); req != nil && req.incremental && oc.Operation != nil && oc.Operation.Operation == ast.Query {
		req.operation = oc
		incrementalOperations.Store(oc, struct{}{})
	}
	return nil
}

// incrementalTransport answers the requests ServeHTTP found incremental, POST or GET, with
// gqlgen's multipart transport. Its request errors (parse, validation, limits) are the same
// bodies, without data, as the other transports'.
type incrementalTransport struct{ multipart transport.MultipartMixed }

func (incrementalTransport) Supports(r *http.Request) bool {
	req := requestFrom(r.Context())
	return req != nil && req.incremental
}

func (t incrementalTransport) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	req := requestFrom(r.Context())
	defer func() {
		if req.operation != nil {
			incrementalOperations.Delete(req.operation)
		}
	}()
	if r.Method == http.MethodGet {
		r = getAsPost(r)
	}
	dw := &dataWriter{ResponseWriter: w, contentType: responseMediaType(r)}
	t.multipart.Do(dw, r, dataExecutor{GraphExecutor: exec, w: dw, streaming: true})
}

// getAsPost is a GET request's parameters as the JSON body the multipart transport reads.
// ServeHTTP has checked them (getParams).
func getAsPost(r *http.Request) *http.Request {
	q, _ := url.ParseQuery(r.URL.RawQuery)
	body := map[string]any{"query": q.Get("query")}
	if v := q.Get("operationName"); v != "" {
		body["operationName"] = v
	}
	for _, name := range []string{"variables", "extensions"} {
		if v := q.Get(name); v != "" {
			body[name] = json.RawMessage(v)
		}
	}
	b, _ := json.Marshal(body)
	post := r.Clone(r.Context())
	post.Method = http.MethodPost
	post.Header.Set("Content-Type", mediaJSON)
	post.Body = io.NopCloser(bytes.NewReader(b))
	post.ContentLength = int64(len(b))
	return post
}

// deferredField holds a deferred field's place in its object's answer (graph/internal/rewrite):
// the field is delivered by a part of its own, so withoutDeferred leaves it out. It writes null
// should it ever be written.
var deferredField graphql.Marshaler = deferredPlace{}

type deferredPlace struct{}

func (deferredPlace) MarshalGQL(w io.Writer) { _, _ = io.WriteString(w, "null") }

// withoutDeferred is an object's answer without its deferred fields, which their own parts
// deliver. Only the fields gqlgen deferred are left out: a field of a deferred fragment that
// it computes in place (__typename, a field read from a struct) stays.
func withoutDeferred(out *graphql.FieldSet, fields []graphql.CollectedField) *graphql.FieldSet {
	kept := make([]graphql.CollectedField, 0, len(fields))
	values := make([]graphql.Marshaler, 0, len(fields))
	for i, f := range fields {
		if out.Values[i] != deferredField {
			kept = append(kept, f)
			values = append(values, out.Values[i])
		}
	}
	fs := graphql.NewFieldSet(kept)
	copy(fs.Values, values)
	fs.Invalids = out.Invalids
	return fs
}
