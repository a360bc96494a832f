package graph

import (
	"bytes"
	"context"
	"net/http"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/transport"
)

// postTransport is gqlgen's POST transport, except that a response of data alone is written
// as it is. gqlgen encodes every response with json.Marshal, which re-reads and compacts the
// already encoded data (a dashboard's is about 60 KB) to escape <, >, & and U+2028/9 in it;
// data without those bytes is written unchanged instead, the same bytes. Any other response
// (errors, extensions, data with those bytes) takes gqlgen's path.
type postTransport struct{ transport.POST }

func (t postTransport) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	dw := &dataWriter{ResponseWriter: w}
	t.POST.Do(dw, r, dataExecutor{GraphExecutor: exec, w: dw})
}

// dataExecutor hands a data-only response to its dataWriter and gqlgen an empty one.
type dataExecutor struct {
	graphql.GraphExecutor
	w *dataWriter
}

func (e dataExecutor) DispatchOperation(ctx context.Context, oc *graphql.OperationContext) (graphql.ResponseHandler, context.Context) {
	next, ctx := e.GraphExecutor.DispatchOperation(ctx, oc)
	return func(ctx context.Context) *graphql.Response {
		resp := next(ctx)
		if resp == nil || len(resp.Errors) > 0 || len(resp.Extensions) > 0 || resp.Label != "" || resp.Path != nil ||
			resp.HasNext != nil || len(resp.Data) == 0 || escaped(resp.Data) {
			return resp
		}
		e.w.data = resp.Data
		return &graphql.Response{}
	}, ctx
}

// dataWriter writes {"data":…} in place of the next body gqlgen writes, once it holds data.
type dataWriter struct {
	http.ResponseWriter
	data []byte
}

func (w *dataWriter) Write(b []byte) (int, error) {
	if w.data == nil {
		return w.ResponseWriter.Write(b)
	}
	data := w.data
	w.data = nil
	for _, part := range [][]byte{[]byte(`{"data":`), data, []byte(`}`)} {
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
