package main

import (
	"strings"
	"testing"
)

// Each rewrite fails on code without the shape it rewrites, so that a gqlgen upgrade that
// changes the shape cannot silently undo it.
func TestRewritesFailOnAnotherShape(t *testing.T) {
	src := "package graph\n\nfunc f() {\n\t\t\tgo f(i)\n}\n"
	for name, f := range map[string]func(string) (string, error){
		"sequential": sequential, "plainScalars": plainScalars, "plainLeaves": plainLeaves,
		"rememberedFields": rememberedFields, "responseBuffers": responseBuffers, "deferredLeftOut": deferredLeftOut,
	} {
		if name == "sequential" {
			if out, err := f(src); err != nil || strings.Contains(out, "go f(i)") {
				t.Fatalf("sequential: %v\n%s", err, out)
			}
			continue
		}
		if _, err := f(src); err == nil {
			t.Errorf("%s rewrote code without its shape", name)
		}
	}
	if _, err := rewrite(src); err == nil {
		t.Errorf("rewrite rewrote code without the shapes")
	}
}
