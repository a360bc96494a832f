package ids_test

import (
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/creditd/creditd/credittest/gosource"
	"github.com/creditd/creditd/ids"
)

// weakRandomAllowed lists the module's packages that may import math/rand, with the reason.
// None of them may be linked into creditd (checked below).
var weakRandomAllowed = map[string]string{
	"bench": "seeds synthetic benchmark databases deterministically; never linked into creditd",
}

// TestOnlyCryptoRandInTheProduct parses every non-test Go file of the module and fails when one
// imports math/rand or math/rand/v2 outside weakRandomAllowed: IDs, secrets and cursor secrets
// must come from crypto/rand, and the simplest guarantee is that nothing else is at hand.
func TestOnlyCryptoRandInTheProduct(t *testing.T) {
	t.Parallel()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	files := 0
	for _, path := range gosource.Files(t, root) {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		files++
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, path)
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if p != "math/rand" && p != "math/rand/v2" {
				continue
			}
			if _, ok := weakRandomAllowed[filepath.ToSlash(filepath.Dir(rel))]; !ok {
				t.Errorf("%s imports %s: IDs and secrets must come from crypto/rand (package ids); a package that truly needs a fast deterministic generator goes in weakRandomAllowed with its reason", rel, p)
			}
		}
	}
	if files < 20 {
		t.Fatalf("checked only %d files under %s: the walk is not covering the module", files, root)
	}
	t.Logf("%d non-test Go files checked", files)
	// The allowed packages stay out of the served binary.
	out, err := exec.Command("go", "list", "-deps", "github.com/creditd/creditd/cmd/creditd").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if rel, ok := strings.CutPrefix(dep, "github.com/creditd/creditd/"); ok {
			if why, allowed := weakRandomAllowed[rel]; allowed {
				t.Errorf("creditd links %s, which may use math/rand (%s)", dep, why)
			}
		}
	}
}

// TestRandomIsUniformAndUnique draws IDs and checks that none repeats and that every base62
// character appears about equally often: a biased or repeating source would show here.
func TestRandomIsUniformAndUnique(t *testing.T) {
	t.Parallel()
	const n = 20000
	seen := make(map[string]bool, n)
	counts := map[rune]int{}
	for range n {
		id := ids.New("co")
		if seen[id] || !ids.HasPrefix(id, "co") {
			t.Fatalf("ID %q repeated or malformed", id)
		}
		seen[id] = true
		for _, c := range id[3:] {
			counts[c]++
		}
	}
	if len(counts) != len(ids.Base62) {
		t.Fatalf("%d distinct characters, want %d", len(counts), len(ids.Base62))
	}
	want := float64(n*22) / float64(len(ids.Base62)) // about 7,100 per character
	for c, got := range counts {
		if d := float64(got) - want; d*d > 25*want { // beyond five standard deviations
			t.Errorf("character %q drawn %d times, want about %.0f", c, got, want)
		}
	}
}
