package graph

import (
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
)

// TestResponseBufferSizedByLastResponse: a query's response buffer starts at its operation's
// last response size (with room to spare), another operation's starts empty, and a response
// that outgrows the hint raises it.
func TestResponseBufferSizedByLastResponse(t *testing.T) {
	op, other := &ast.OperationDefinition{Name: "A"}, &ast.OperationDefinition{Name: "B"}
	oc := &graphql.OperationContext{Operation: op}
	if c := responseBuffer(oc).Cap(); c != 0 {
		t.Fatalf("first buffer's capacity %d, want 0", c)
	}
	responseWritten(oc, 60_000)
	if c := responseBuffer(oc).Cap(); c < 60_000 || c > 70_000 {
		t.Fatalf("buffer after a 60,000-byte response has capacity %d", c)
	}
	if c := responseBuffer(&graphql.OperationContext{Operation: other}).Cap(); c != 0 {
		t.Fatalf("another operation's buffer has capacity %d", c)
	}
	responseWritten(oc, 50_000) // still fits
	responseWritten(oc, 80_000)
	if c := responseBuffer(oc).Cap(); c < 80_000 {
		t.Fatalf("buffer after an 80,000-byte response has capacity %d", c)
	}
}
