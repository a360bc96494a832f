package scalar

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql"

	"github.com/creditd/creditd/credit"
)

// The rewrite of generated.go (graph/internal/rewrite) marshals a field whose scalar is
// Decimal, DateTime or an enum without gqlgen's field context, error path and recover: it
// counts on MarshalDecimal, MarshalDateTime and MarshalEnum to return a value for any input,
// never graphql.Null, that writes valid JSON without an error, and on Plain to return those
// values unwrapped. This test holds that claim.
func TestMarshalCannotFail(t *testing.T) {
	strs := []string{"", "0", "1500.00", "-0.01", "12345678901234567890.123456", "abc", "1e5",
		`<>&"\`, "line\nbreak\u2028\u2029", "ümlaut €", "\x00\x7f", string([]byte{0xff, 0xfe})}
	var values []graphql.Marshaler
	for _, s := range strs {
		values = append(values, check(t, "MarshalDecimal("+s+")", MarshalDecimal(s)))
		values = append(values, check(t, "MarshalDecimalInput("+s+")", MarshalDecimalInput(DecimalInput{Value: s})))
		values = append(values, MarshalEnum(s))
	}
	for _, tm := range []time.Time{{}, time.Unix(0, 0), time.Date(2026, 1, 31, 9, 30, 0, 123456789, time.UTC),
		time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.FixedZone("x", 3600))} {
		values = append(values, check(t, "MarshalDateTime("+tm.String()+")", MarshalDateTime(credit.Timestamp{Time: tm})))
	}
	for i, v := range values {
		if v == nil || v == graphql.Null {
			t.Fatalf("value %d is null", i)
		}
		var buf bytes.Buffer
		v.MarshalGQL(&buf)
		var s string
		if err := json.Unmarshal(buf.Bytes(), &s); err != nil {
			t.Fatalf("value %d wrote %q, not a JSON string: %v", i, buf.Bytes(), err)
		}
	}
}

// check fails unless m writes without an error, is a plain graphql.Marshaler that writes the
// same, and is returned by Plain as it is.
func check(t *testing.T, name string, m graphql.ContextMarshaler) graphql.Marshaler {
	t.Helper()
	var ctxBuf, buf bytes.Buffer
	if err := m.MarshalGQLContext(context.Background(), &ctxBuf); err != nil {
		t.Fatalf("%s: MarshalGQLContext: %v", name, err)
	}
	p, ok := m.(graphql.Marshaler)
	if !ok {
		t.Fatalf("%s: %T is not a graphql.Marshaler", name, m)
	}
	p.MarshalGQL(&buf)
	if !bytes.Equal(buf.Bytes(), ctxBuf.Bytes()) {
		t.Fatalf("%s: MarshalGQL wrote %q, MarshalGQLContext %q", name, buf.Bytes(), ctxBuf.Bytes())
	}
	if got := Plain(context.Background(), m); got != p {
		t.Fatalf("%s: Plain wrapped it: %T", name, got)
	}
	return p
}
