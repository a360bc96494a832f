// Command sequential rewrites gqlgen's generated executor (graph/generated.go) so that the
// items of a list are marshalled one after another on the request's goroutine instead of one
// goroutine each. gqlgen starts a goroutine per item of every list of objects, with no option
// to turn it off; for a dashboard of 50 companies with 5 ledger entries each that was 300
// goroutines a request, their stacks growing as the fields below them ran. creditd's
// resolvers never wait for a sibling (the batch loads in graph/batch.go run in whichever
// resolver asks first, without timers), so running the items in order changes no result.
//
// It runs after gqlgen from `go generate` (generate.go) and fails when the generated code no
// longer has the shape it rewrites, so that a gqlgen upgrade cannot silently undo it.
package main

import (
	"bytes"
	"fmt"
	"os"
)

func main() {
	if err := run("graph/generated.go"); err != nil {
		fmt.Fprintln(os.Stderr, "sequential:", err)
		os.Exit(1)
	}
}

func run(path string) error {
	src, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	spawn := []byte("\t\t\tgo f(i)\n")
	done := []byte("\t\t\tf(i) // sequential: see graph/internal/sequential\n")
	n := bytes.Count(src, spawn)
	if n == 0 && bytes.Contains(src, done) {
		return nil // already rewritten
	}
	if n == 0 {
		return fmt.Errorf("%s: no %q to rewrite: did gqlgen's list template change?", path, bytes.TrimSpace(spawn))
	}
	out := bytes.ReplaceAll(src, spawn, done)
	return os.WriteFile(path, out, 0o644)
}
