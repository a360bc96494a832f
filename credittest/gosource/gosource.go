// Package gosource lists the module's own Go source files, for the tests that read it. It imports
// nothing of the module, so any test may use it: docs' in-package tests cannot import credittest
// (credittest → openapi → docs would be a cycle).
package gosource

import (
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Files returns the paths of the module's Go files under root, sorted: every .go file
// but those of hidden directories, testdata (fixtures, not code of the module) and
// node_modules (the browser tests' packages). The tests that read the module's own source
// (which packages may import math/rand, whether a doc's Go name exists, whether the README
// lists every package) walk it through here, so they agree on what the module's code is.
func Files(tb testing.TB, root string) []string {
	tb.Helper()
	var files []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(path, ".go") {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	if len(files) == 0 {
		tb.Fatalf("no Go files under %s", root)
	}
	slices.Sort(files)
	return files
}
