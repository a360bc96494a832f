package graph

import (
	"reflect"
	"testing"

	"github.com/99designs/gqlgen/graphql"
)

// TestNoFieldMiddleware keeps the handler free of field middleware (AroundFields, or any
// extension that is a graphql.FieldInterceptor). generated.go's plain leaves
// (graph/internal/rewrite) skip graphql.ResolveField, which is where gqlgen runs field
// middleware: a field middleware added to the handler would silently not run for them. It
// reads the extensions of the handler NewHandlerWith builds, in gqlgen's executor.
func TestNoFieldMiddleware(t *testing.T) {
	h := NewHandlerWith(Services{}, Options{})
	srv := reflect.ValueOf(h.srv).Elem()
	exec := srv.FieldByName("exec")
	if !exec.IsValid() || exec.Kind() != reflect.Pointer || exec.IsNil() {
		t.Fatalf("gqlgen's handler.Server has no executor field exec: this test must learn its new shape")
	}
	exts := exec.Elem().FieldByName("extensions")
	if !exts.IsValid() || exts.Kind() != reflect.Slice {
		t.Fatalf("gqlgen's executor has no extensions slice: this test must learn its new shape")
	}
	if exts.Len() == 0 {
		t.Fatalf("no extensions read: the handler has some (introspection, limits...)")
	}
	interceptor := reflect.TypeFor[graphql.FieldInterceptor]()
	for i := 0; i < exts.Len(); i++ {
		ext := exts.Index(i)
		if ext.IsNil() {
			continue
		}
		if typ := ext.Elem().Type(); typ.Implements(interceptor) {
			t.Errorf("extension %d (%v) is field middleware: generated.go's plain leaves would skip it (see graph/internal/rewrite)", i, typ)
		}
	}
}
