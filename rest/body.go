package rest

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"unicode/utf8"

	"github.com/creditd/creditd/credit"
)

// MaxBodyBytes bounds request bodies (contract §1).
const MaxBodyBytes = 64 << 10

// field is one accepted member of a JSON request body. Every accepted member is a string;
// an amount given as a JSON number is passed on as such (the domain answers invalid_amount),
// any other wrong type is answered with invalid_request.
type field struct {
	name string
	dst  **string
	// number, when set, accepts a JSON number too and records that one was sent; the domain
	// refuses it with invalid_amount in its own validation order (after the company lookup).
	number *bool
}

// ReadBody reads a request body of at most MaxBodyBytes after checking its media type.
// An empty body is allowed (bodies whose members are all optional).
//
// Errors: unsupported_media_type, request_too_large, invalid_request.
func ReadBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return nil, credit.Errorf(credit.CodeRequestTooLarge, "request bodies are limited to %d bytes", MaxBodyBytes)
	}
	if err != nil {
		return nil, credit.Errorf(credit.CodeInvalidRequest, "the request body could not be read")
	}
	if len(body) == 0 {
		return body, nil
	}
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/json" {
		return nil, credit.Errorf(credit.CodeUnsupportedMediaType, "send the body as JSON with Content-Type: application/json")
	}
	if !utf8.Valid(body) {
		return nil, credit.Errorf(credit.CodeInvalidRequest, "the request body must be UTF-8")
	}
	return body, nil
}

// decodeObject reads body as one JSON object whose members are exactly among fields (names are
// case-sensitive), each at most once, and stores each string member in its destination.
// A null member counts as absent. An empty body counts as {}.
//
// Errors: invalid_request, invalid_amount.
func decodeObject(body []byte, fields ...field) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return credit.Errorf(credit.CodeInvalidRequest, "the request body is not valid JSON")
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return credit.Errorf(credit.CodeInvalidRequest, "the request body must be a JSON object")
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return credit.Errorf(credit.CodeInvalidRequest, "the request body is not valid JSON")
		}
		name, _ := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return credit.Errorf(credit.CodeInvalidRequest, "the request body is not valid JSON")
		}
		if seen[name] {
			return credit.ParamErrorf(credit.CodeInvalidRequest, name, "field %q appears more than once", name)
		}
		seen[name] = true
		var f *field
		for i := range fields {
			if fields[i].name == name {
				f = &fields[i]
			}
		}
		if f == nil {
			return credit.ParamErrorf(credit.CodeInvalidRequest, name, "unknown field %q%s", name, didYouMean(name, fields))
		}
		if err := decodeString(raw, f); err != nil {
			return err
		}
	}
	if _, err := dec.Token(); err != nil {
		return credit.Errorf(credit.CodeInvalidRequest, "the request body is not valid JSON")
	}
	if dec.More() {
		return credit.Errorf(credit.CodeInvalidRequest, "the request body must be a single JSON object")
	}
	if _, err := dec.Token(); err != io.EOF {
		return credit.Errorf(credit.CodeInvalidRequest, "the request body must be a single JSON object")
	}
	return nil
}

func decodeString(raw json.RawMessage, f *field) error {
	raw = bytes.TrimSpace(raw)
	switch {
	case bytes.Equal(raw, []byte("null")):
		*f.dst = nil
		return nil
	case len(raw) > 0 && raw[0] == '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return credit.ParamErrorf(credit.CodeInvalidRequest, f.name, "field %q is not a valid string", f.name)
		}
		*f.dst = &s
		return nil
	case f.number != nil && len(raw) > 0 && (raw[0] == '-' || (raw[0] >= '0' && raw[0] <= '9')):
		*f.dst = nil
		*f.number = true
		return nil
	}
	return credit.ParamErrorf(credit.CodeInvalidRequest, f.name, "field %q must be a string", f.name)
}

// didYouMean hints at the accepted field a wrongly-cased name meant.
func didYouMean(name string, fields []field) string {
	for _, f := range fields {
		if bytes.EqualFold([]byte(f.name), []byte(name)) {
			return "; field names are case-sensitive: did you mean \"" + f.name + "\"?"
		}
	}
	return ""
}
