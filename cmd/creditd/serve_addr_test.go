package main

import (
	"flag"
	"io"
	"testing"

	"github.com/creditd/creditd/credit"
)

// TestDemoListensOnThisMachine: serve --demo, which prints full-access keys, listens on loopback
// unless --addr says otherwise (any address, even the non-demo default); serve without --demo
// keeps listening on every interface.
func TestDemoListensOnThisMachine(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--demo"}, "127.0.0.1:8080"},
		{[]string{"--demo", "--addr", ":8080"}, ":8080"},
		{[]string{"--demo", "--addr", "[::]:9000"}, "[::]:9000"},
		{[]string{"--addr", "127.0.0.1:0", "--demo"}, "127.0.0.1:0"},
		{nil, ":8080"},
		{[]string{"--addr", "10.0.0.5:8080"}, "10.0.0.5:8080"},
	} {
		fs := flag.NewFlagSet("serve", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		f := declareServeFlags(fs, &credit.Options{})
		if err := fs.Parse(tc.args); err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		if got := f.listenAddr(); got != tc.want {
			t.Errorf("serve %v listens on %q, want %q", tc.args, got, tc.want)
		}
	}
}
