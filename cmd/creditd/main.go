// Command creditd runs the credit service and its admin command line.
//
// Usage: creditd <command> [flags]; see `creditd help`.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	m := NewMain(os.Stdin, os.Stdout, os.Stderr)
	code := m.Run(ctx, os.Args[1:])
	if cerr := m.Close(); cerr != nil && code == 0 {
		fmt.Fprintln(os.Stderr, "creditd:", cerr)
		code = 1
	}
	os.Exit(code)
}
