package rest

import (
	"github.com/creditd/creditd/httpapi"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/openapi/conformance"
)

// The OpenAPI document must cover what this package serves. The lists below are derived from
// Routes and from httpapi.Codes(), so a route or an error code added here without the document
// fails these tests.

// specOperations are the nine operations of the specification (docs/specification.md,
// "Endpoints"), under /v1.
var specOperations = []string{
	"GET /v1/companies",
	"GET /v1/companies/{id}",
	"GET /v1/companies/{id}/ledger",
	"POST /v1/companies/{id}/adjustments",
	"PUT /v1/companies/{id}/credit-limit",
	"POST /v1/companies/{id}/hold",
	"DELETE /v1/companies/{id}/hold",
	"GET /v1/applications",
	"GET /v1/applications/{id}",
}

// contractOperations are the operations the contract adds to the specification's: the
// event feed (§11), the invoices with their promises and disputes and the statement of account
// (§17) and the export (§18).
var contractOperations = []string{
	"GET /v1/events",
	"GET /v1/events/{id}",
	"GET /v1/companies/{id}/invoices",
	"GET /v1/invoices/{id}",
	"GET /v1/companies/{id}/statement",
	"GET /v1/companies/{id}/payment-behaviour",
	"GET /v1/export",
	"POST /v1/invoices/{id}/promise",
	"DELETE /v1/invoices/{id}/promise",
	"POST /v1/invoices/{id}/dispute",
	"DELETE /v1/invoices/{id}/dispute",
}

// metaPaths are documented paths that are not API operations: the document itself.
var metaPaths = []string{"/v1/openapi.json", "/v1/openapi.yaml"}

func mustDoc(t *testing.T) *openapi3.T {
	t.Helper()
	v, err := conformance.Default()
	if err != nil {
		t.Fatal(err)
	}
	return v.Doc()
}

// documentedOperations returns "METHOD path" → operation for every API operation.
func documentedOperations(doc *openapi3.T) map[string]*openapi3.Operation {
	ops := map[string]*openapi3.Operation{}
	for path, item := range doc.Paths.Map() {
		if slices.Contains(metaPaths, path) {
			continue
		}
		for method, op := range item.Operations() {
			ops[method+" "+path] = op
		}
	}
	return ops
}

func TestDocumentCoversEveryRoute(t *testing.T) {
	doc := mustDoc(t)
	if !doc.IsOpenAPI31OrLater() || doc.OpenAPI != "3.1.0" {
		t.Fatalf("document is OpenAPI %q, want 3.1.0", doc.OpenAPI)
	}
	var served []string
	for _, rt := range NewWith(Services{}).Routes() {
		served = append(served, rt.Pattern)
	}
	slices.Sort(served)
	want := slices.Sorted(slices.Values(append(slices.Clone(specOperations), contractOperations...)))
	if !slices.Equal(served, want) {
		t.Fatalf("rest serves %v,\nthe specification has %v", served, want)
	}
	documented := slices.Sorted(maps.Keys(documentedOperations(doc)))
	if !slices.Equal(documented, served) {
		t.Fatalf("the document has %v,\nrest serves %v", documented, served)
	}
	for _, p := range metaPaths {
		if doc.Paths.Value(p) == nil || doc.Paths.Value(p).Get == nil || doc.Paths.Value(p).Get.Security == nil || len(*doc.Paths.Value(p).Get.Security) != 0 {
			t.Errorf("%s must be documented as a GET without security", p)
		}
	}
}

func TestEveryOperationDocumentsAuthScopesAndHeaders(t *testing.T) {
	doc := mustDoc(t)
	for name, op := range documentedOperations(doc) {
		t.Run(name, func(t *testing.T) {
			method, _, _ := strings.Cut(name, " ")
			if op.OperationID == "" || op.Summary == "" {
				t.Errorf("operationId and summary are required")
			}
			scopes := conformance.Scopes(op)
			if len(scopes) == 0 || slices.ContainsFunc(scopes, func(s string) bool { return !slices.Contains(credit.AllScopes, s) }) {
				t.Fatalf("x-scopes %v: want scopes of %v", scopes, credit.AllScopes)
			}
			if len(scopes) > 1 && !slices.Equal(scopes, []string{credit.ScopeReadCredit, credit.ScopeReadApplications}) {
				// Only the event feed opens to either of two scopes (each sees its own types).
				t.Fatalf("x-scopes %v: an operation needs one scope, or either read scope", scopes)
			}
			if method != http.MethodGet && scopes[0] != credit.ScopeWriteCredit {
				t.Errorf("a write must need %s, documented %v", credit.ScopeWriteCredit, scopes)
			}
			// One security requirement per scope: alternatives, any one of which suffices.
			if op.Security == nil || len(*op.Security) != len(scopes) {
				t.Errorf("security must be bearerAuth with the x-scopes %v", scopes)
			} else {
				for i, s := range scopes {
					if !slices.Equal((*op.Security)[i]["bearerAuth"], []string{s}) {
						t.Errorf("security requirement %d must be bearerAuth [%s]", i, s)
					}
				}
			}
			statuses := []int{401, 403, 429, 500, 503}
			if method == http.MethodGet {
				statuses = append(statuses, 400)
			} else {
				statuses = append(statuses, 400, 404, 409, 413, 415, 422)
				if p := op.Parameters.GetByInAndName("header", "Idempotency-Key"); p == nil {
					t.Errorf("writes take Idempotency-Key")
				}
			}
			success := 0
			for code, ref := range op.Responses.Map() {
				status, _ := strconv.Atoi(code)
				h := ref.Value.Headers
				required := func(name string) {
					if h[name] == nil || h[name].Value == nil || !h[name].Value.Required {
						t.Errorf("%d must document the required header %s", status, name)
					}
				}
				optional := func(name string) {
					if h[name] == nil || h[name].Value == nil || h[name].Value.Required {
						t.Errorf("%d must document the optional header %s", status, name)
					}
				}
				required("X-Request-Id")
				switch {
				case status < 300:
					success++
					if method != http.MethodGet {
						optional("Idempotent-Replayed")
					}
					fallthrough
				case status == 400, status == 403, status == 404, status == 409, status == 413, status == 415, status == 422:
					required("X-RateLimit-Limit")
					required("X-RateLimit-Remaining")
				case status == 401:
					required("WWW-Authenticate")
				case status == 429, status == 503:
					required("Retry-After")
					optional("X-RateLimit-Limit")
					optional("X-RateLimit-Remaining")
				case status == 500:
					optional("X-RateLimit-Limit")
				}
				if status >= 400 && len(conformance.ErrorCodes(ref.Value)) == 0 {
					t.Errorf("%d lists no x-error-codes", status)
				}
			}
			if success != 1 {
				t.Errorf("want exactly one success status, have %d", success)
			}
			for _, s := range statuses {
				if op.Responses.Status(s) == nil {
					t.Errorf("status %d is not documented", s)
				}
			}
		})
	}
}

func TestDocumentCoversEveryErrorCode(t *testing.T) {
	doc := mustDoc(t)
	codeSchema := doc.Components.Schemas["ErrorCode"].Value
	var enum []string
	for _, e := range codeSchema.Enum {
		enum = append(enum, e.(string))
	}
	var table []string
	for c := range httpapi.Codes() {
		table = append(table, string(c))
	}
	slices.Sort(enum)
	slices.Sort(table)
	if !slices.Equal(enum, table) {
		t.Fatalf("ErrorCode enum %v,\nrest's table has %v", enum, table)
	}
	documentedStatus, _ := codeSchema.Extensions["x-status-by-code"].(map[string]any)
	for c, status := range httpapi.Codes() {
		if got, _ := documentedStatus[string(c)].(float64); int(got) != status {
			t.Errorf("x-status-by-code: %s is %v, rest answers %d", c, documentedStatus[string(c)], status)
		}
	}

	// Every code is answered somewhere, under its own status, and shown in an example.
	answered := map[string]bool{}
	exemplified := map[string]bool{}
	visit := func(where string, status int, resp *openapi3.Response) {
		for _, c := range conformance.ErrorCodes(resp) {
			answered[c] = true
			if s, ok := httpapi.Codes()[credit.Code(c)]; !ok || s != status {
				t.Errorf("%s: %s listed under %d, rest answers it with %d", where, c, status, s)
			}
		}
		for _, mt := range resp.Content {
			for _, ex := range mt.Examples {
				if m, ok := ex.Value.Value.(map[string]any); ok {
					if e, ok := m["error"].(map[string]any); ok {
						exemplified[e["code"].(string)] = true
					}
				}
			}
		}
	}
	for name, op := range documentedOperations(doc) {
		for code, ref := range op.Responses.Map() {
			status, _ := strconv.Atoi(code)
			visit(name, status, ref.Value)
		}
	}
	visit("components.responses.RouteNotFound", 404, doc.Components.Responses["RouteNotFound"].Value)
	visit("components.responses.MethodNotAllowed", 405, doc.Components.Responses["MethodNotAllowed"].Value)
	for c := range httpapi.Codes() {
		if !answered[string(c)] {
			t.Errorf("no response lists %s in x-error-codes", c)
		}
		if !exemplified[string(c)] {
			t.Errorf("no example shows %s", c)
		}
	}
}
