package credittest

import (
	"net/http"
	"testing"

	"github.com/creditd/creditd/openapi/conformance"
)

// Every exchange a test sends through Env.Do is checked against the OpenAPI document, so a
// change in the REST API's behaviour without a change in docs/openapi.yaml fails whichever
// test sees it. A test that needs another observer may replace Observe; one that sends
// requests the document cannot describe (none should) may wrap it.
func init() {
	Observe = func(tb testing.TB, req *http.Request, resp *Response) {
		tb.Helper()
		conformance.Observe(tb, req, resp.Status, resp.Header, resp.Body)
	}
}
