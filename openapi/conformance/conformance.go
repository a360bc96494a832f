// Package conformance checks HTTP exchanges with the /v1 REST API against the OpenAPI document,
// so that a change in the server's behaviour without a change in the document fails the tests.
// credittest installs it for every request a test sends through Env.Do.
//
// What it checks, beyond what openapi3filter checks on its own:
//   - every status a /v1 operation answers with is documented for it;
//   - response objects carry no member the document does not name (the document itself leaves
//     them open, so clients tolerate additions; the server may not add one silently);
//   - an error's code is one the response lists in x-error-codes, and the code's status is the
//     one the response has;
//   - a 403's message names the scope the operation lists in x-scopes;
//   - a /v1 path that is not in the document is answered with 404 not_found, and a documented
//     path called with another method with 405 method_not_allowed whose Allow header lists
//     exactly the documented methods (plus HEAD where GET is).
//
// Requests are validated only when the server accepted them (2xx): tests send invalid requests
// on purpose, and then only the response has to match the document.
package conformance

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"

	"github.com/creditd/creditd/openapi"
)

// Validator checks exchanges against one OpenAPI document. It is safe for concurrent use.
type Validator struct {
	doc          *openapi3.T
	router       routers.Router
	statusByCode map[string]int
}

// New loads and validates an OpenAPI document (YAML or JSON) and prepares it for checking.
func New(document []byte) (*Validator, error) {
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(document)
	if err != nil {
		return nil, fmt.Errorf("load OpenAPI document: %w", err)
	}
	if err := doc.Validate(context.Background(), openapi3.EnableExamplesValidation()); err != nil {
		return nil, fmt.Errorf("OpenAPI document is invalid: %w", err)
	}
	// Match paths alone: the test server's address is not the document's server.
	doc.Servers = nil
	closeObjects(doc)
	router, err := legacy.NewRouter(doc)
	if err != nil {
		return nil, fmt.Errorf("route OpenAPI document: %w", err)
	}
	v := &Validator{doc: doc, router: router, statusByCode: map[string]int{}}
	if s := doc.Components.Schemas["ErrorCode"]; s != nil && s.Value != nil {
		raw, _ := json.Marshal(s.Value.Extensions["x-status-by-code"])
		_ = json.Unmarshal(raw, &v.statusByCode)
	}
	if len(v.statusByCode) == 0 {
		return nil, errors.New("OpenAPI document: components.schemas.ErrorCode has no x-status-by-code")
	}
	return v, nil
}

// Doc returns the loaded document (with object schemas closed and servers removed).
func (v *Validator) Doc() *openapi3.T { return v.doc }

var (
	defaultOnce sync.Once
	defaultV    *Validator
	defaultErr  error
)

// Default returns the validator of the embedded document, loaded once.
func Default() (*Validator, error) {
	defaultOnce.Do(func() { defaultV, defaultErr = New(openapi.YAML()) })
	return defaultV, defaultErr
}

// Observe checks one exchange against the embedded document and reports a mismatch as a test
// error. Paths outside /v1 (GraphQL, operational endpoints) are not checked. req's body must be
// readable again through GetBody.
func Observe(tb testing.TB, req *http.Request, status int, header http.Header, body []byte) {
	tb.Helper()
	v, err := Default()
	if err != nil {
		tb.Errorf("OpenAPI conformance: %v", err)
		return
	}
	if err := v.Check(req, status, header, body); err != nil {
		tb.Errorf("OpenAPI conformance: %s %s → %d does not match docs/openapi.yaml:\n%v\nresponse body: %s", req.Method, req.URL.RequestURI(), status, err, truncate(body))
	}
}

func truncate(b []byte) string {
	if len(b) > 2000 {
		return string(b[:2000]) + "…"
	}
	return string(b)
}

// Check validates one exchange: the response always, the request when the response is 2xx.
// It returns nil for paths outside /v1.
func (v *Validator) Check(req *http.Request, status int, header http.Header, body []byte) error {
	if req.URL.Path != "/v1" && !strings.HasPrefix(req.URL.Path, "/v1/") {
		return nil
	}
	if req.Method == http.MethodOptions && req.Header.Get("Origin") != "" && req.Header.Get("Access-Control-Request-Method") != "" {
		return nil // a CORS preflight, answered before the API (contract §14); OpenAPI does not describe them
	}
	if header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			return fmt.Errorf("Content-Encoding gzip, but the body is not gzip: %v", err)
		}
		if body, err = io.ReadAll(zr); err != nil {
			return fmt.Errorf("Content-Encoding gzip, but the body does not decompress: %v", err)
		}
	}
	routed := req
	if req.Method == http.MethodHead {
		// ServeMux answers HEAD with the GET handler; check it as that GET without a body.
		routed = req.Clone(req.Context())
		routed.Method = http.MethodGet
	}
	route, pathParams, err := v.router.FindRoute(routed)
	if err != nil {
		return v.checkUnrouted(routed, status, header, body)
	}
	reqInput := &openapi3filter.RequestValidationInput{
		Request:    routed,
		PathParams: pathParams,
		Route:      route,
		Options:    filterOptions(openapi3filter.Options{AuthenticationFunc: bearerPresent, MultiError: true}),
	}
	respInput := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: reqInput,
		Status:                 status,
		Header:                 header,
		Options: filterOptions(openapi3filter.Options{
			IncludeResponseStatus: true,
			// A stream of JSON lines is checked line by line below: kin-openapi decodes no such body.
			// A PDF's body is binary, checked by its own tests (pdftotext).
			ExcludeResponseBody: req.Method == http.MethodHead || isNDJSON(header) || strings.HasPrefix(header.Get("Content-Type"), "application/pdf"),
			MultiError:          true,
		}),
	}
	respInput.SetBodyBytes(body)
	var problems []string
	if err := openapi3filter.ValidateResponse(context.Background(), respInput); err != nil {
		problems = append(problems, "response: "+err.Error())
	}
	if ref := route.Operation.Responses.Status(status); ref != nil && ref.Value != nil && isNDJSON(header) {
		if mt := ref.Value.Content.Get(header.Get("Content-Type")); mt == nil {
			problems = append(problems, "response: Content-Type "+header.Get("Content-Type")+" is not documented")
		} else if err := checkLines(mt, body); err != nil {
			problems = append(problems, "response: "+err.Error())
		}
	} else if ref != nil && ref.Value != nil {
		if err := v.checkError(ref.Value, status, body); err != nil {
			problems = append(problems, "response: "+err.Error())
		}
		if status == http.StatusForbidden {
			if err := checkScopeMessage(route.Operation, body); err != nil {
				problems = append(problems, "response: "+err.Error())
			}
		}
	}
	if status >= 200 && status < 300 {
		if err := validateRequest(req, reqInput); err != nil {
			problems = append(problems, "request (accepted by the server): "+err.Error())
		}
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "\n"))
	}
	return nil
}

// isNDJSON reports whether a response is newline-delimited JSON (the export's stream).
func isNDJSON(header http.Header) bool {
	return strings.HasPrefix(header.Get("Content-Type"), "application/x-ndjson")
}

// checkLines checks each line of a newline-delimited JSON body against mt's schema.
func checkLines(mt *openapi3.MediaType, body []byte) error {
	for i, line := range bytes.Split(bytes.TrimSuffix(body, []byte("\n")), []byte("\n")) {
		var value any
		if err := json.Unmarshal(line, &value); err != nil {
			return fmt.Errorf("line %d is not JSON: %w", i+1, err)
		}
		if mt.Schema != nil && mt.Schema.Value != nil {
			if err := mt.Schema.Value.VisitJSON(value, openapi3.EnableJSONSchema2020(), openapi3.MultiErrors(), openapi3.SetSchemaErrorMessageCustomizer(schemaError)); err != nil {
				return fmt.Errorf("line %d: %w", i+1, err)
			}
		}
	}
	return nil
}

// schemaError words a schema mismatch in one line: where, and what is wrong. kin-openapi's
// default message appends the whole schema, which buries the point.
func schemaError(err *openapi3.SchemaError) string {
	return fmt.Sprintf("at /%s: %s", strings.Join(err.JSONPointer(), "/"), err.Reason)
}

func filterOptions(o openapi3filter.Options) *openapi3filter.Options {
	o.WithCustomSchemaErrorFunc(schemaError)
	return &o
}

// validateRequest checks the request, its body re-read through GetBody.
func validateRequest(req *http.Request, input *openapi3filter.RequestValidationInput) error {
	r := input.Request
	if req.GetBody != nil && req.Method != http.MethodHead {
		rc, err := req.GetBody()
		if err != nil {
			return fmt.Errorf("re-read request body: %w", err)
		}
		r = r.Clone(r.Context())
		r.Body = rc
		input.Request = r
	} else if r.Body != nil && r.Body != http.NoBody {
		return errors.New("request body cannot be re-read: set GetBody")
	}
	return openapi3filter.ValidateRequest(context.Background(), input)
}

// bearerPresent stands in for authentication during request validation: the server decided
// whether the key was good, the document only asks for a bearer credential.
func bearerPresent(_ context.Context, in *openapi3filter.AuthenticationInput) error {
	scheme, token, ok := strings.Cut(in.RequestValidationInput.Request.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(token) == "" {
		return errors.New("no bearer credential")
	}
	return nil
}

// checkUnrouted checks the answer to a /v1 request the document has no operation for.
func (v *Validator) checkUnrouted(req *http.Request, status int, header http.Header, body []byte) error {
	methods := v.documentedMethods(req)
	name, want := "RouteNotFound", http.StatusNotFound
	if len(methods) > 0 {
		name, want = "MethodNotAllowed", http.StatusMethodNotAllowed
	}
	if status != want {
		if len(methods) > 0 {
			return fmt.Errorf("%s is not documented for this path (documented: %s): want %d, got %d", req.Method, strings.Join(methods, ", "), want, status)
		}
		return fmt.Errorf("no documented operation at %s: want %d, got %d", req.URL.Path, want, status)
	}
	ref := v.doc.Components.Responses[name]
	if ref == nil || ref.Value == nil {
		return fmt.Errorf("components.responses.%s is missing", name)
	}
	if err := v.checkResponseObject(ref.Value, status, header, body); err != nil {
		return fmt.Errorf("against components.responses.%s: %w", name, err)
	}
	if len(methods) > 0 {
		var allow []string
		for m := range strings.SplitSeq(header.Get("Allow"), ",") {
			if m = strings.TrimSpace(m); m != "" && m != http.MethodHead {
				allow = append(allow, m)
			}
		}
		slices.Sort(allow)
		if !slices.Equal(allow, methods) {
			//lint:ignore ST1005 the message starts with the header's name, Allow
			return fmt.Errorf("Allow %q, but the document has %s for this path", header.Get("Allow"), strings.Join(methods, ", "))
		}
	}
	return nil
}

// documentedMethods lists, sorted, the methods the document has for req's path.
func (v *Validator) documentedMethods(req *http.Request) []string {
	var out []string
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
		probe := req.Clone(req.Context())
		probe.Method = m
		if _, _, err := v.router.FindRoute(probe); err == nil {
			out = append(out, m)
		}
	}
	slices.Sort(out)
	return out
}

// checkResponseObject validates headers and body against a response object that no operation
// references (the answers to unknown routes and methods).
func (v *Validator) checkResponseObject(resp *openapi3.Response, status int, header http.Header, body []byte) error {
	for name, h := range resp.Headers {
		if h.Value == nil {
			continue
		}
		got := header.Get(name)
		if got == "" {
			if h.Value.Required {
				return fmt.Errorf("header %s is required", name)
			}
			continue
		}
		if s := h.Value.Schema; s != nil && s.Value != nil && s.Value.Type.Is(openapi3.TypeString) {
			if err := s.Value.VisitJSON(got, openapi3.EnableJSONSchema2020(), openapi3.SetSchemaErrorMessageCustomizer(schemaError)); err != nil {
				return fmt.Errorf("header %s: %w", name, err)
			}
		}
	}
	mt := resp.Content.Get(header.Get("Content-Type"))
	if mt == nil {
		return fmt.Errorf("Content-Type %q is not documented", header.Get("Content-Type"))
	}
	if isNDJSON(header) {
		return checkLines(mt, body)
	}
	var value any
	if err := json.Unmarshal(body, &value); err != nil {
		return fmt.Errorf("body is not JSON: %w", err)
	}
	if mt.Schema != nil && mt.Schema.Value != nil {
		if err := mt.Schema.Value.VisitJSON(value, openapi3.EnableJSONSchema2020(), openapi3.MultiErrors(), openapi3.SetSchemaErrorMessageCustomizer(schemaError)); err != nil {
			return fmt.Errorf("body: %w", err)
		}
	}
	return v.checkError(resp, status, body)
}

// checkError checks an error body's code against the response's x-error-codes and the code's
// documented status.
func (v *Validator) checkError(resp *openapi3.Response, status int, body []byte) error {
	if status < 400 {
		return nil
	}
	var e struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	if err := json.Unmarshal(body, &e); err != nil || e.Error.Code == "" {
		return fmt.Errorf("status %d without an error code", status)
	}
	codes := errorCodes(resp)
	if len(codes) == 0 {
		return fmt.Errorf("the document lists no x-error-codes for status %d", status)
	}
	if !slices.Contains(codes, e.Error.Code) {
		return fmt.Errorf("error code %q is not among this response's documented codes %v", e.Error.Code, codes)
	}
	if want, ok := v.statusByCode[e.Error.Code]; !ok || want != status {
		return fmt.Errorf("error code %q is documented with status %d, not %d", e.Error.Code, want, status)
	}
	return nil
}

// errorCodes returns a response object's x-error-codes.
func errorCodes(resp *openapi3.Response) []string {
	var codes []string
	raw, err := json.Marshal(resp.Extensions["x-error-codes"])
	if err == nil {
		_ = json.Unmarshal(raw, &codes)
	}
	return codes
}

// ErrorCodes returns the x-error-codes of a response object; the coverage tests use it.
func ErrorCodes(resp *openapi3.Response) []string { return errorCodes(resp) }

// Scopes returns an operation's x-scopes.
func Scopes(op *openapi3.Operation) []string {
	var scopes []string
	raw, err := json.Marshal(op.Extensions["x-scopes"])
	if err == nil {
		_ = json.Unmarshal(raw, &scopes)
	}
	return scopes
}

// checkScopeMessage checks that a 403 names the scope the operation documents.
func checkScopeMessage(op *openapi3.Operation, body []byte) error {
	var e struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	_ = json.Unmarshal(body, &e)
	scopes := Scopes(op)
	// x-parameter-scopes: scopes that a parameter's addition needs (the export's include).
	var more []string
	if raw, err := json.Marshal(op.Extensions["x-parameter-scopes"]); err == nil {
		_ = json.Unmarshal(raw, &more)
	}
	for _, s := range append(scopes, more...) {
		if strings.Contains(e.Error.Message, s) {
			return nil
		}
	}
	return fmt.Errorf("403 message %q does not name the operation's scope %v", e.Error.Message, scopes)
}

// closeObjects forbids members the document does not name in every object schema that lists
// properties and says nothing about others. The published document stays open so clients
// tolerate additions; the server under test may not make them silently.
func closeObjects(doc *openapi3.T) {
	seen := map[*openapi3.Schema]bool{}
	var walk func(ref *openapi3.SchemaRef)
	walk = func(ref *openapi3.SchemaRef) {
		if ref == nil || ref.Value == nil || seen[ref.Value] {
			return
		}
		s := ref.Value
		seen[s] = true
		if len(s.Properties) > 0 && s.AdditionalProperties.Has == nil && s.AdditionalProperties.Schema == nil {
			closed := false
			s.AdditionalProperties.Has = &closed
		}
		// The document's fallback for event types it does not list (x-unknown-event-types)
		// lets clients read types added later; the server may only send the listed ones.
		s.OneOf = slices.DeleteFunc(s.OneOf, func(c *openapi3.SchemaRef) bool {
			return c.Value != nil && c.Value.Extensions["x-unknown-event-types"] == true
		})
		for _, p := range s.Properties {
			walk(p)
		}
		walk(s.Items)
		for _, list := range [][]*openapi3.SchemaRef{s.OneOf, s.AnyOf, s.AllOf} {
			for _, c := range list {
				walk(c)
			}
		}
	}
	for _, s := range doc.Components.Schemas {
		walk(s)
	}
	for _, r := range doc.Components.Responses {
		if r.Value != nil {
			for _, mt := range r.Value.Content {
				walk(mt.Schema)
			}
		}
	}
	for _, item := range doc.Paths.Map() {
		for _, op := range item.Operations() {
			for _, r := range op.Responses.Map() {
				if r.Value != nil {
					for _, mt := range r.Value.Content {
						walk(mt.Schema)
					}
				}
			}
		}
	}
}
