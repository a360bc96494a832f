package graph

import (
	"bytes"
	"context"
	"net/http"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/creditd/creditd/httpapi"
)

// shapedTransport is one of gqlgen's transports (GET, POST) with two changes to the body it
// writes:
//
//   - A request refused as a whole is answered without a data member, as GraphQL over HTTP
//     says: gqlgen writes "data": null, which a client reads as an executed request whose every
//     field failed. That is a request refused before execution (it does not parse, does not
//     validate, breaks a limit or has a connection argument the lists refuse) and one the
//     mutation middleware refused (see Handler.refuse: the rate limit of its extra mutation
//     fields, an Idempotency-Key in use or reused, a key's transaction that did not commit).
//     Refusals before gqlgen runs (authentication, rate limit, body) are WriteError's, also
//     without data.
//   - A response of data alone is written as it is. gqlgen encodes every response with
//     json.Marshal, which re-reads and compacts the already encoded data (a dashboard's is about
//     60 KB) to escape <, >, & and U+2028/9 in it; data without those bytes is written unchanged
//     instead, the same bytes. Any other response (errors, extensions, data with those bytes)
//     takes gqlgen's path.
//
// Its JSON answers, request errors included, are of responseMediaType.
type shapedTransport struct{ graphql.Transport }

func (t shapedTransport) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	dw := &dataWriter{ResponseWriter: w, contentType: responseMediaType(r)}
	t.Transport.Do(dw, r, dataExecutor{GraphExecutor: exec, w: dw})
}

// dataExecutor hands a data-only response, and a request error's response, to its dataWriter
// and gqlgen an empty one.
type dataExecutor struct {
	graphql.GraphExecutor
	w *dataWriter
	// streaming is set for incremental delivery, whose parts gqlgen writes between boundaries:
	// the responses of an executed operation are then left to it.
	streaming bool
}

func (e dataExecutor) DispatchOperation(ctx context.Context, oc *graphql.OperationContext) (graphql.ResponseHandler, context.Context) {
	// The request is taken from this context: the one returned below is nil when an operation
	// middleware refused the request without calling the next one.
	req := requestFrom(ctx)
	next, ctx := e.GraphExecutor.DispatchOperation(ctx, oc)
	if e.streaming {
		return e.w.onePerPart(next), ctx
	}
	return func(ctx context.Context) *graphql.Response {
		resp := next(ctx)
		if resp != nil && req != nil && req.refused.Load() {
			return e.w.requestError(resp)
		}
		if resp == nil || len(resp.Errors) > 0 || len(resp.Extensions) > 0 || resp.Label != "" || resp.Path != nil ||
			resp.HasNext != nil || len(resp.Data) == 0 || escaped(resp.Data) {
			return resp
		}
		e.w.body = [][]byte{[]byte(`{"data":`), resp.Data, []byte(`}`)}
		return &graphql.Response{}
	}, ctx
}

// DispatchError answers a request that was not executed: its errors (and extensions), no data.
func (e dataExecutor) DispatchError(ctx context.Context, list gqlerror.List) *graphql.Response {
	return e.w.requestError(e.GraphExecutor.DispatchError(ctx, list))
}

// requestError has w write resp as a request error's body, its errors and extensions without
// data, and returns the empty response gqlgen then writes in its place.
func (w *dataWriter) requestError(resp *graphql.Response) *graphql.Response {
	body, err := httpapi.Marshal(requestError{Errors: resp.Errors, Extensions: resp.Extensions})
	if err != nil {
		return resp
	}
	w.body = [][]byte{body}
	return &graphql.Response{}
}

// requestError is the body of a request refused before execution.
type requestError struct {
	Errors     gqlerror.List  `json:"errors"`
	Extensions map[string]any `json:"extensions,omitempty"`
}

// dataWriter writes its body, in parts, in place of the next body gqlgen writes, once it holds
// one. It gives a JSON answer the Content-Type contentType, and an incremental one the
// contract's multipartContentType.
type dataWriter struct {
	http.ResponseWriter
	body        [][]byte
	contentType string
	wroteHeader bool
	// flushed has a value after each flush of an incremental response (see onePerPart).
	flushed chan struct{}
}

// onePerPart hands gqlgen's multipart transport the responses of next one at a time, each once
// the part before it is written and flushed: the transport writes whatever it holds at each
// tick of its timer as one part, so that deferred fragments done within a millisecond would
// otherwise share a part. The contract has one part per deferred fragment.
func (w *dataWriter) onePerPart(next graphql.ResponseHandler) graphql.ResponseHandler {
	w.flushed = make(chan struct{}, 1)
	first := true
	return func(ctx context.Context) *graphql.Response {
		if !first {
			select {
			case <-w.flushed:
			case <-ctx.Done(): // the client is gone: nothing waits for the parts
			}
		}
		first = false
		return next(ctx)
	}
}

func (w *dataWriter) WriteHeader(status int) {
	if !w.wroteHeader {
		w.wroteHeader = true
		h := w.Header()
		switch ct := h.Get("Content-Type"); {
		case strings.HasPrefix(ct, "multipart/mixed"):
			h.Set("Content-Type", multipartContentType)
		case strings.HasPrefix(ct, mediaJSON), strings.HasPrefix(ct, mediaGraphQLResponse):
			h.Set("Content-Type", w.contentType)
		}
	}
	w.ResponseWriter.WriteHeader(status)
}

// Flush lets gqlgen's multipart transport send each part as it is written.
func (w *dataWriter) Flush() {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	_ = http.NewResponseController(w.ResponseWriter).Flush()
	if w.flushed != nil {
		select {
		case w.flushed <- struct{}{}:
		default:
		}
	}
}

func (w *dataWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *dataWriter) Write(b []byte) (int, error) {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	if w.body == nil {
		return w.ResponseWriter.Write(b)
	}
	body := w.body
	w.body = nil
	for _, part := range body {
		if _, err := w.ResponseWriter.Write(part); err != nil {
			return 0, err
		}
	}
	return len(b), nil
}

// escaped reports whether json.Marshal would change data: whether it holds <, >, & or the
// UTF-8 of U+2028 or U+2029.
func escaped(data []byte) bool {
	return bytes.ContainsAny(data, "<>&") || bytes.Contains(data, []byte("\u2028")) || bytes.Contains(data, []byte("\u2029"))
}
