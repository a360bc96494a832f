package main

import (
	"os"
	"path/filepath"
	"runtime/debug"
	"testing"
)

// TestServeSetsGOGC: serve collects garbage at GOGC=200 unless GOGC is set.
func TestServeSetsGOGC(t *testing.T) {
	if _, ok := os.LookupEnv("GOGC"); ok {
		t.Skip("GOGC is set for this test run")
	}
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	serveInProcess(t, "serve", "--demo", "--db", filepath.Join(t.TempDir(), "gc.db"), "--addr", "127.0.0.1:0")
	if got := debug.SetGCPercent(100); got != serveGCPercent {
		t.Fatalf("GC percent after serve %d, want %d", got, serveGCPercent)
	}
	// With GOGC set, Go's runtime has read it; serve leaves it alone.
	setServeGC(func(name string) (string, bool) { return "150", name == "GOGC" })
	if got := debug.SetGCPercent(100); got != 100 {
		t.Fatalf("GC percent with GOGC set %d, want it left at 100", got)
	}
}
