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
	"strconv"
	"strings"

	"github.com/99designs/gqlgen/graphql"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/httpapi"
)

// MarshalDecimal writes a decimal string, already formatted by the domain, as a GraphQL string.
func MarshalDecimal(s string) graphql.ContextMarshaler {
	return graphql.ContextWriterFunc(func(ctx context.Context, w io.Writer) error {
		graphql.MarshalString(s).MarshalGQL(w)
		return nil
	})
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
func MarshalDateTime(t credit.Timestamp) graphql.ContextMarshaler {
	return graphql.ContextWriterFunc(func(ctx context.Context, w io.Writer) error {
		_, err := io.WriteString(w, strconv.Quote(t.String()))
		return err
	})
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

// MarshalEnum shows a domain code as a GraphQL enum value: on_hold becomes ON_HOLD.
func MarshalEnum(code string) graphql.Marshaler {
	return graphql.MarshalString(strings.ToUpper(code))
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
