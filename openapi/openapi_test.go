package openapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	speakeasy "github.com/speakeasy-api/openapi/openapi"
	"go.yaml.in/yaml/v3"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
	"github.com/creditd/creditd/openapi"
	"github.com/creditd/creditd/server"
)

// TestDocumentIsValidOpenAPI31 loads the document as kin-openapi does for OpenAPI 3.1 and
// validates it, examples included, in both forms it is served in.
func TestDocumentIsValidOpenAPI31(t *testing.T) {
	js, err := openapi.JSON()
	if err != nil {
		t.Fatal(err)
	}
	for name, src := range map[string][]byte{"yaml": openapi.YAML(), "json": js} {
		doc, err := openapi3.NewLoader().LoadFromData(src)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !doc.IsOpenAPI31OrLater() {
			t.Fatalf("%s: OpenAPI %s, want 3.1", name, doc.OpenAPI)
		}
		if err := doc.Validate(context.Background(), openapi3.EnableExamplesValidation()); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
}

// TestDocumentPassesASecondValidator validates the document with a second, independent
// OpenAPI 3.1 implementation (Speakeasy's, which checks each object against the 3.1 structure
// and each schema against JSON Schema 2020-12), since kin-openapi accepts some invalid input.
func TestDocumentPassesASecondValidator(t *testing.T) {
	ctx := context.Background()
	doc, problems, err := speakeasy.Unmarshal(ctx, bytes.NewReader(openapi.YAML()))
	if err != nil {
		t.Fatal(err)
	}
	problems = append(problems, doc.Validate(ctx)...)
	for _, p := range problems {
		t.Error(p)
	}
	if doc.OpenAPI != "3.1.0" {
		t.Errorf("openapi %q, want 3.1.0", doc.OpenAPI)
	}
}

// TestJSONSaysWhatTheYAMLSays compares the converted document with a plain YAML decoding, and
// checks that member order is kept (openapi first, as written).
func TestJSONSaysWhatTheYAMLSays(t *testing.T) {
	js, err := openapi.JSON()
	if err != nil {
		t.Fatal(err)
	}
	var fromYAML any
	if err := yaml.Unmarshal(openapi.YAML(), &fromYAML); err != nil {
		t.Fatal(err)
	}
	viaJSON, err := json.Marshal(fromYAML)
	if err != nil {
		t.Fatal(err)
	}
	var want, got any
	if err := json.Unmarshal(viaJSON, &want); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(js, &got); err != nil {
		t.Fatalf("converted document is not JSON: %v", err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatal("converted JSON differs from the YAML")
	}
	if !bytes.HasPrefix(js, []byte(`{"openapi":"3.1.0","info":{"title":`)) {
		t.Fatalf("member order not kept: %.60s", js)
	}
}

func TestToJSON(t *testing.T) {
	cases := []struct{ in, want string }{
		{"a: 1\nb: [true, null, 1.5, \"x\"]\nc: {d: e}\n", `{"a":1,"b":[true,null,1.5,"x"],"c":{"d":"e"}}`},
		{"z: 1\na: 2\n", `{"z":1,"a":2}`},
		{"base: &b {x: 1}\nuse: *b\n", `{"base":{"x":1},"use":{"x":1}}`},
		{"s: \"<&>\"\nt: 2026-03-02\n200: ok\n", `{"s":"<&>","t":"2026-03-02","200":"ok"}`},
		{"s: |\n  two\n  lines\n", `{"s":"two\nlines\n"}`},
	}
	for _, c := range cases {
		got, err := openapi.ToJSON([]byte(c.in))
		if err != nil || string(got) != c.want {
			t.Errorf("ToJSON(%q) = %s, %v; want %s", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{"[1]: x\n", "a: .inf\n", "a: [\n"} {
		if got, err := openapi.ToJSON([]byte(bad)); err == nil {
			t.Errorf("ToJSON(%q) = %s, want an error", bad, got)
		}
	}
}

// TestServedDocument fetches the document as a tool would: without a key, even when the store's
// allowance is spent, and checks that paths beside it still answer 404.
func TestServedDocument(t *testing.T) {
	env := credittest.New(t, credittest.Options{ServerConfig: func(c *server.Config) { c.RateLimit = 1 }})
	st := env.MustStore(t, "Acme", "EUR")
	key := env.MustKey(t, st, "erp", credit.ScopeReadCredit)
	env.Get(t, key, "/v1/companies").WantStatus(t, 200)
	env.Get(t, key, "/v1/companies").WantError(t, 429, "rate_limited", "")

	js, _ := openapi.JSON()
	for _, c := range []struct {
		path, contentType string
		body              []byte
	}{
		{"/v1/openapi.json", "application/json", js},
		{"/v1/openapi.yaml", "application/yaml; charset=utf-8", openapi.YAML()},
	} {
		for _, k := range []string{"", key, "ck_wrong"} {
			r := env.Get(t, k, c.path).WantStatus(t, 200)
			if r.Header.Get("Content-Type") != c.contentType || !bytes.Equal(r.Body, c.body) {
				t.Errorf("%s: Content-Type %q, %d bytes; want %q, %d bytes", c.path, r.Header.Get("Content-Type"), len(r.Body), c.contentType, len(c.body))
			}
			if r.Header.Get("X-RateLimit-Limit") != "" || r.Header.Get("X-Request-Id") == "" {
				t.Errorf("%s: headers %v", c.path, r.Header)
			}
		}
		if r := env.Do(t, credittest.Request{Method: http.MethodHead, Path: c.path}); r.Status != 200 || len(r.Body) != 0 {
			t.Errorf("HEAD %s: %d, %d bytes", c.path, r.Status, len(r.Body))
		}
		r := env.Do(t, credittest.Request{Method: http.MethodPost, Path: c.path, Body: "{}"})
		r.WantError(t, 405, "method_not_allowed", "")
		if !strings.Contains(r.Header.Get("Allow"), "GET") {
			t.Errorf("POST %s: Allow %q", c.path, r.Header.Get("Allow"))
		}
	}
	for _, p := range []string{"/v1/openapi", "/v1/openapi.yml", "/v1/openapi.json/x", "/v1/swagger.json", "/v1/"} {
		env.Get(t, "", p).WantError(t, 404, "not_found", "")
	}
}

// TestResponseSchemasAreOpen holds the document to contract §11 (2026-11-24): clients must
// accept members and event types they do not know, so no schema of anything the service sends
// (a response body, an event, a webhook body) says additionalProperties: false; only request
// bodies are closed. And Event, a union, takes an event of a type it does not list.
func TestResponseSchemasAreOpen(t *testing.T) {
	doc, err := openapi3.NewLoader().LoadFromData(openapi.YAML())
	if err != nil {
		t.Fatal(err)
	}
	if closed := closedSchemas(doc); len(closed) > 0 {
		t.Errorf("response schemas with additionalProperties: false (clients must accept members they do not know):\n%s", strings.Join(closed, "\n"))
	}

	event := doc.Components.Schemas["Event"].Value
	for name, body := range map[string]string{
		"an unknown type": `{"id":"ev_3bQk0Yp1gWm7Zr5Tn8Vx2c","type":"invoice.created","occurred_at":"2026-03-02T09:00:00.000000Z","data":{"object":{"id":"inv_1"},"new":1}}`,
		"a known type with a new member": `{"id":"ev_3bQk0Yp1gWm7Zr5Tn8Vx2c","type":"key.revoked","occurred_at":"2026-03-02T09:00:00.000000Z","new":true,
			"data":{"object":{"id":"key_1","label":"ERP","scopes":["read_credit"],"created_at":"2026-03-02T09:00:00.000000Z","revoked_at":"2026-03-02T09:00:00.000000Z","new":1},"previous":{"revoked_at":null}}}`,
	} {
		var v any
		if err := json.Unmarshal([]byte(body), &v); err != nil {
			t.Fatal(err)
		}
		if err := event.VisitJSON(v); err != nil {
			t.Errorf("Event refuses %s: %v", name, err)
		}
	}
}

// closedSchemas lists the schemas with additionalProperties: false that a response of the
// document can contain, by where they are reached from.
func closedSchemas(doc *openapi3.T) []string {
	var out []string
	seen := map[*openapi3.Schema]bool{}
	var walk func(where string, ref *openapi3.SchemaRef)
	walk = func(where string, ref *openapi3.SchemaRef) {
		if ref == nil || ref.Value == nil || seen[ref.Value] {
			return
		}
		if ref.Ref != "" {
			where = ref.Ref
		}
		s := ref.Value
		seen[s] = true
		if s.AdditionalProperties.Has != nil && !*s.AdditionalProperties.Has {
			out = append(out, where)
		}
		for name, p := range s.Properties {
			walk(where+"/"+name, p)
		}
		walk(where+"/items", s.Items)
		walk(where+"/additionalProperties", s.AdditionalProperties.Schema)
		for _, list := range [][]*openapi3.SchemaRef{s.OneOf, s.AnyOf, s.AllOf} {
			for _, c := range list {
				walk(where, c)
			}
		}
	}
	for name, r := range doc.Components.Responses {
		for _, mt := range r.Value.Content {
			walk("#/components/responses/"+name, mt.Schema)
		}
	}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			for status, r := range op.Responses.Map() {
				if r.Value == nil {
					continue
				}
				for _, mt := range r.Value.Content {
					walk(method+" "+path+" "+status, mt.Schema)
				}
			}
		}
	}
	// Events are also sent as webhook bodies, which no operation's response names.
	walk("#/components/schemas/Event", doc.Components.Schemas["Event"])
	return out
}
