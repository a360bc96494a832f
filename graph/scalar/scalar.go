// Package scalar maps creditd's GraphQL scalars and enums onto the Go forms the credit domain
// already uses, so its views bind to the schema without copies: Decimal is a decimal string,
// DateTime is credit.Timestamp, and enums are the domain's lower-case codes (approved, on_hold)
// shown in GraphQL's upper case (APPROVED, ON_HOLD).
//
// Input errors are *credit.Error values with the REST API's codes, naming the argument or input
// field at fault, so GraphQL reports the same code and param as REST for the same mistake.
package scalar

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/httpapi"
)

// safeString is a string that needs no escaping in JSON (digits, signs, ASCII letters,
// punctuation of timestamps), written between quotes as it is. As a graphql.Marshaler that is
// one small allocation a value, where a closure (graphql.MarshalString, WriterFunc) and a
// context wrapper were three or four; a dashboard has about 2,000 such values.
type safeString string

func (s safeString) MarshalGQL(w io.Writer) {
	_, _ = io.WriteString(w, `"`)
	_, _ = io.WriteString(w, string(s))
	_, _ = io.WriteString(w, `"`)
}

// MarshalGQLContext makes a safeString a graphql.ContextMarshaler too: Decimal and DateTime
// are context scalars (their inputs name the argument at fault).
func (s safeString) MarshalGQLContext(_ context.Context, w io.Writer) error {
	s.MarshalGQL(w)
	return nil
}

// contextString is graphql.MarshalString as a graphql.ContextMarshaler, for strings that
// need escaping.
type contextString string

func (s contextString) MarshalGQLContext(_ context.Context, w io.Writer) error {
	s.MarshalGQL(w)
	return nil
}

// MarshalGQL makes a contextString a plain graphql.Marshaler too (Plain).
func (s contextString) MarshalGQL(w io.Writer) { graphql.MarshalString(string(s)).MarshalGQL(w) }

// MarshalDecimal writes a decimal string, already formatted by the domain, as a GraphQL string.
func MarshalDecimal(s string) graphql.ContextMarshaler {
	if !plainDecimal(s) {
		return contextString(s)
	}
	return safeString(s)
}

// plainDecimal reports whether s has only the characters of a formatted amount.
func plainDecimal(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && c != '.' && c != '-' {
			return false
		}
	}
	return true
}

// UnmarshalDecimal reads a Decimal where only its text matters.
//
// Errors: as UnmarshalDecimalInput, with a number refused at once with invalid_amount.
func UnmarshalDecimal(ctx context.Context, v any) (string, error) {
	d, err := UnmarshalDecimalInput(ctx, v)
	if err == nil && d.Number {
		err = httpapi.ErrAmountNotString(inputName(ctx, "amount"))
	}
	return d.Value, err
}

// DecimalInput is a Decimal argument as the client sent it. Mutation inputs bind to it, so
// that a number sent instead of a string reaches the domain, which refuses it with
// invalid_amount in its own order of checks (an unknown company is not_found first), exactly
// as for a REST body.
type DecimalInput struct {
	// Value is the decimal string; empty when a number was sent.
	Value string
	// Number is set when the client sent a number (a JSON number in variables, or an Int or
	// Float literal in the query).
	Number bool
}

// MarshalDecimalInput writes the decimal string.
func MarshalDecimalInput(d DecimalInput) graphql.ContextMarshaler { return MarshalDecimal(d.Value) }

// UnmarshalDecimalInput reads a Decimal input: a string, or a number, which is recorded as such
// for the domain to refuse. Its format is checked by the domain, which knows the currency's
// minor digits.
//
// Errors: invalid_request for any other value.
func UnmarshalDecimalInput(ctx context.Context, v any) (DecimalInput, error) {
	switch v := v.(type) {
	case string:
		return DecimalInput{Value: v}, nil
	case json.Number, int, int32, int64, float32, float64:
		return DecimalInput{Number: true}, nil
	}
	name := inputName(ctx, "amount")
	return DecimalInput{}, credit.ParamErrorf(httpapi.CodeInvalidRequest, name, "%s must be a decimal string such as \"1500.00\"", name)
}

// MarshalDateTime writes a timestamp in the service's one timestamp format.
func MarshalDateTime(t credit.Timestamp) graphql.ContextMarshaler { return dateTime(t) }

// dateTime writes itself without making its text first.
type dateTime credit.Timestamp

func (t dateTime) MarshalGQLContext(_ context.Context, w io.Writer) error {
	t.MarshalGQL(w)
	return nil
}

// MarshalGQL makes a dateTime a plain graphql.Marshaler too (Plain). Like gqlgen's own
// marshalers it does not report a failed write: the writer is the response's buffer.
func (t dateTime) MarshalGQL(w io.Writer) {
	var buf [len(credit.TimestampLayout) + 8]byte
	_, _ = w.Write(credit.Timestamp(t).AppendJSON(buf[:0]))
}

// UnmarshalDateTime reads an RFC 3339 timestamp with any offset and optional fraction.
//
// Errors: invalid_parameter naming the argument, as REST's updated_since.
func UnmarshalDateTime(ctx context.Context, v any) (credit.Timestamp, error) {
	name := inputName(ctx, "DateTime")
	s, ok := v.(string)
	if ok {
		if t, err := credit.ParseTimestamp(s); err == nil {
			return t, nil
		}
		// A + sent raw in a GET /graphql URL arrives as a space.
		if _, err := credit.ParseTimestamp(strings.Replace(s, " ", "+", 1)); err == nil {
			return credit.Timestamp{}, credit.ParamErrorf(credit.CodeInvalidParameter, name, "%s has a space where its offset's + should be: in a GET /graphql URL, a raw + means a space, so send it as %%2B", name)
		}
	}
	return credit.Timestamp{}, credit.ParamErrorf(credit.CodeInvalidParameter, name, "%s must be an RFC 3339 timestamp such as 2026-01-31T09:30:00Z or 2026-01-31T10:30:00+01:00", name)
}

// MarshalDate writes a day, YYYY-MM-DD, as the domain formatted it.
func MarshalDate(day string) graphql.ContextMarshaler {
	if _, err := time.Parse(time.DateOnly, day); err != nil {
		return contextString(day)
	}
	return safeString(day)
}

// UnmarshalDate reads a day as YYYY-MM-DD.
//
// Errors: invalid_parameter naming the argument, as REST's from and to.
func UnmarshalDate(ctx context.Context, v any) (string, error) {
	name := inputName(ctx, "Date")
	if s, ok := v.(string); ok {
		if _, err := time.Parse(time.DateOnly, s); err == nil {
			return s, nil
		}
	}
	return "", credit.ParamErrorf(credit.CodeInvalidParameter, name, "%s must be a date, YYYY-MM-DD", name)
}

// MarshalEnum shows a domain code as a GraphQL enum value: on_hold becomes ON_HOLD.
func MarshalEnum(code string) graphql.Marshaler {
	if v, ok := enumValues.Load(code); ok {
		return v.(graphql.Marshaler)
	}
	upper := strings.ToUpper(code)
	var v graphql.Marshaler = graphql.MarshalString(upper)
	if plainEnum(upper) {
		v = safeString(upper)
		enumValues.Store(code, v)
	}
	return v
}

// enumValues holds the marshalled enum value of each code seen: the codes are the schema's
// enum values, a few dozen.
var enumValues sync.Map // string -> graphql.Marshaler

// plainEnum reports whether s is made of the characters of GraphQL enum values.
func plainEnum(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < 'A' || c > 'Z') && (c < '0' || c > '9') && c != '_' {
			return false
		}
	}
	return true
}

// UnmarshalEnum turns an enum value, already validated against the schema, back into the
// domain's code: ON_HOLD becomes on_hold.
func UnmarshalEnum(v any) (string, error) {
	s, ok := v.(string)
	if !ok {
		return "", credit.Errorf(httpapi.CodeInvalidRequest, "an enum value must be a string")
	}
	return strings.ToLower(s), nil
}

// inputName is the name of the argument or input field being read, for error params.
func inputName(ctx context.Context, fallback string) string {
	if pc := graphql.GetPathContext(ctx); pc != nil && pc.Field != nil {
		return *pc.Field
	}
	return fallback
}

// Plain is the value of a context scalar as a graphql.Marshaler: the value itself when it is
// one (the Decimal and DateTime values of this package are), else gqlgen's wrapper with ctx.
// generated.go calls it instead of graphql.WrapContextMarshaler (graph/internal/rewrite),
// which costs an allocation a value.
func Plain(ctx context.Context, m graphql.ContextMarshaler) graphql.Marshaler {
	if p, ok := m.(graphql.Marshaler); ok {
		return p
	}
	return graphql.WrapContextMarshaler(ctx, m)
}
