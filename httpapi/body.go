package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/creditd/creditd/credit"
)

// MaxBodyBytes bounds request bodies (contract §1).
const MaxBodyBytes = 64 << 10

// Field is one accepted member of a JSON request body: a string, an amount (a string, or a
// JSON number passed on so that the domain refuses it with invalid_amount in its own
// validation order, after the company lookup), or a JSON object kept raw. Any other JSON type
// is answered with invalid_request naming the member; null counts as absent.
type Field struct {
	name   string
	str    **string
	amount *credit.AmountInput
	object *json.RawMessage
}

// StringField accepts a string member into dst.
func StringField(name string, dst **string) Field { return Field{name: name, str: dst} }

// AmountField accepts an amount member into dst: its text, or, for a JSON number,
// ErrAmountNotString for the domain to answer.
func AmountField(name string, dst *credit.AmountInput) Field {
	return Field{name: name, str: &dst.Text, amount: dst}
}

// ObjectField accepts a JSON object member, kept raw in dst.
func ObjectField(name string, dst *json.RawMessage) Field { return Field{name: name, object: dst} }

// ReadBody reads a request body of at most MaxBodyBytes after checking its media type: JSON,
// in UTF-8 (a charset parameter other than utf-8 is refused). A body left out, empty or blank is
// taken as {} whatever its Content-Type (contract §1, amended 2026-11-28): many HTTP clients send
// Content-Type: application/json on every request, and a write whose members are all optional
// (DELETE /v1/companies/{id}/hold) must work from them; a write with a required member then
// answers validation_failed naming it, as for {}.
//
// Errors: unsupported_media_type, request_too_large, invalid_request.
func ReadBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	body, err := ReadRaw(w, r)
	if err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, nil
	}
	mt, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/json" {
		return nil, credit.Errorf(CodeUnsupportedMediaType, "send the body as JSON with Content-Type: application/json")
	}
	if cs, ok := params["charset"]; ok && !strings.EqualFold(cs, "utf-8") && !strings.EqualFold(cs, "utf8") {
		return nil, credit.Errorf(CodeUnsupportedMediaType, "request bodies are JSON in UTF-8: charset %q is not accepted (send charset=utf-8, or no charset)", cs)
	}
	if !utf8.Valid(body) {
		return nil, credit.Errorf(CodeInvalidRequest, "the request body must be UTF-8")
	}
	return body, nil
}

// ReadRaw reads a request body of at most MaxBodyBytes as it came, checking nothing else: for
// the platform's door, which checks the signature over the raw bytes before anything is read
// from them. ReadBody is ReadRaw plus the media type checks.
//
// Errors: request_too_large, invalid_request.
func ReadRaw(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return nil, credit.Errorf(CodeRequestTooLarge, "request bodies are limited to %d bytes", MaxBodyBytes)
	}
	if err != nil {
		return nil, credit.Errorf(CodeInvalidRequest, "the request body could not be read")
	}
	return body, nil
}

// DecodeObject reads body as one JSON object whose members are exactly among fields (names are
// case-sensitive), each at most once, and stores each member in its destination. An empty
// body counts as {}. REST write bodies and GraphQL's POST envelope both go through it.
//
// Errors: invalid_request, invalid_amount.
func DecodeObject(body []byte, fields ...Field) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return credit.Errorf(CodeInvalidRequest, "the request body is not valid JSON")
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return credit.Errorf(CodeInvalidRequest, "the request body must be a JSON object")
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return credit.Errorf(CodeInvalidRequest, "the request body is not valid JSON")
		}
		name, _ := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return credit.Errorf(CodeInvalidRequest, "the request body is not valid JSON")
		}
		if seen[name] {
			return credit.ParamErrorf(CodeInvalidRequest, name, "field %q appears more than once", name)
		}
		seen[name] = true
		var f *Field
		for i := range fields {
			if fields[i].name == name {
				f = &fields[i]
			}
		}
		if f == nil {
			return credit.ParamErrorf(CodeInvalidRequest, name, "unknown field %q%s", name, didYouMean(name, fields))
		}
		if err := f.decode(raw); err != nil {
			return err
		}
	}
	if _, err := dec.Token(); err != nil {
		return credit.Errorf(CodeInvalidRequest, "the request body is not valid JSON")
	}
	if dec.More() {
		return credit.Errorf(CodeInvalidRequest, "the request body must be a single JSON object")
	}
	if _, err := dec.Token(); err != io.EOF {
		return credit.Errorf(CodeInvalidRequest, "the request body must be a single JSON object")
	}
	return nil
}

func (f *Field) decode(raw json.RawMessage) error {
	raw = bytes.TrimSpace(raw)
	isNumber := len(raw) > 0 && (raw[0] == '-' || (raw[0] >= '0' && raw[0] <= '9'))
	switch {
	case bytes.Equal(raw, []byte("null")):
		switch {
		case f.object != nil:
			*f.object = nil
		case f.amount != nil:
			*f.amount = credit.AmountInput{}
		default:
			*f.str = nil
		}
		return nil
	case f.object != nil:
		if len(raw) == 0 || raw[0] != '{' {
			return credit.ParamErrorf(CodeInvalidRequest, f.name, "field %q must be a JSON object", f.name)
		}
		*f.object = raw
		return nil
	case len(raw) > 0 && raw[0] == '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return credit.ParamErrorf(CodeInvalidRequest, f.name, "field %q is not a valid string", f.name)
		}
		*f.str = &s
		return nil
	case f.amount != nil && isNumber:
		*f.amount = credit.AmountInput{Err: ErrAmountNotString(f.name)}
		return nil
	}
	return credit.ParamErrorf(CodeInvalidRequest, f.name, "field %q must be a string", f.name)
}

// didYouMean hints at the accepted field a wrongly-cased name meant, or lists the accepted
// fields.
func didYouMean(name string, fields []Field) string {
	names := make([]string, len(fields))
	for i, f := range fields {
		if strings.EqualFold(f.name, name) {
			return "; field names are case-sensitive: did you mean \"" + f.name + "\"?"
		}
		names[i] = f.name
	}
	if len(names) == 0 {
		return "; this request takes no body"
	}
	return "; accepted fields: " + strings.Join(names, ", ")
}
