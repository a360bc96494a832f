// Package openapi serves the OpenAPI 3.1 document of the /v1 REST API (docs/openapi.yaml,
// embedded in the binary). The document is hand-written YAML; the test suite validates every request and
// response of the REST tests against it, so it cannot drift from what the server does.
package openapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"sync"

	"go.yaml.in/yaml/v3"

	"github.com/creditd/creditd/docs"
)

// document is docs/openapi.yaml, which the guides in docs/ link to.
var document = docs.OpenAPI

// YAML returns the document as written.
func YAML() []byte { return bytes.Clone(document) }

var (
	jsonOnce sync.Once
	jsonDoc  []byte
	jsonErr  error
)

// JSON returns the document converted to JSON, keeping the YAML's member order. The
// conversion runs once; the embedded document is fixed at build time, so a failure is a
// build defect that the package's tests catch.
func JSON() ([]byte, error) {
	jsonOnce.Do(func() { jsonDoc, jsonErr = ToJSON(document) })
	return jsonDoc, jsonErr
}

// MustHandlers returns the handlers of GET /v1/openapi.json (the document as JSON) and
// GET /v1/openapi.yaml (as written). They need no authentication and are not rate limited, so
// tools can fetch the document before they have a key. The YAML is converted here, once, so
// the server converts it at startup; the document is fixed at build time and the package's
// tests convert it, so a failure is a build defect and panics.
func MustHandlers() (jsonDoc, yamlDoc http.Handler) {
	doc, err := JSON()
	if err != nil {
		panic("openapi: the embedded document does not convert to JSON: " + err.Error())
	}
	return serve("application/json", doc), serve("application/yaml; charset=utf-8", document)
}

func serve(contentType string, body []byte) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", contentType)
		w.Header().Set("Cache-Control", "public, max-age=300")
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(http.StatusOK)
		// Written for HEAD too: the server sends none, and the ETag (server.conditional) is
		// the same as GET's.
		_, _ = w.Write(body)
	})
}

// ToJSON converts a YAML document to JSON, keeping mapping order. Only what JSON can say is
// accepted: mapping keys must be strings and numbers must be finite.
func ToJSON(src []byte) ([]byte, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(src, &root); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := writeJSON(&buf, &root); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func writeJSON(buf *bytes.Buffer, n *yaml.Node) error {
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) != 1 {
			return fmt.Errorf("line %d: want exactly one YAML document", n.Line)
		}
		return writeJSON(buf, n.Content[0])
	case yaml.AliasNode:
		return writeJSON(buf, n.Alias)
	case yaml.MappingNode:
		buf.WriteByte('{')
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Kind != yaml.ScalarNode || (k.Tag != "!!str" && k.Tag != "!!int" && k.Tag != "!!bool") {
				return fmt.Errorf("line %d: mapping keys must be plain strings", k.Line)
			}
			if i > 0 {
				buf.WriteByte(',')
			}
			writeString(buf, k.Value)
			buf.WriteByte(':')
			if err := writeJSON(buf, v); err != nil {
				return err
			}
		}
		buf.WriteByte('}')
		return nil
	case yaml.SequenceNode:
		buf.WriteByte('[')
		for i, c := range n.Content {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := writeJSON(buf, c); err != nil {
				return err
			}
		}
		buf.WriteByte(']')
		return nil
	case yaml.ScalarNode:
		return writeScalar(buf, n)
	}
	return fmt.Errorf("line %d: unsupported YAML node", n.Line)
}

func writeScalar(buf *bytes.Buffer, n *yaml.Node) error {
	switch n.Tag {
	case "!!null":
		buf.WriteString("null")
	case "!!bool":
		var b bool
		if err := n.Decode(&b); err != nil {
			return err
		}
		buf.WriteString(strconv.FormatBool(b))
	case "!!int":
		var i int64
		if err := n.Decode(&i); err != nil {
			return err
		}
		buf.WriteString(strconv.FormatInt(i, 10))
	case "!!float":
		var f float64
		if err := n.Decode(&f); err != nil {
			return err
		}
		if math.IsInf(f, 0) || math.IsNaN(f) {
			return fmt.Errorf("line %d: JSON has no infinities or NaN", n.Line)
		}
		buf.WriteString(strconv.FormatFloat(f, 'g', -1, 64))
	case "!!str", "!!timestamp", "!!binary":
		// Timestamps and binary stay the text they were written as.
		writeString(buf, n.Value)
	default:
		return fmt.Errorf("line %d: unsupported YAML tag %s", n.Line, n.Tag)
	}
	return nil
}

func writeString(buf *bytes.Buffer, s string) {
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	buf.Truncate(buf.Len() - 1) // Encode's newline
}
