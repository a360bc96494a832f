package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/creditd/creditd/credit"
)

// TestQuickstartAgreesWithTheReadme: a new user who follows the README and then the quickstart
// works on one database, and the quickstart promises only what the demo seeds.
func TestQuickstartAgreesWithTheReadme(t *testing.T) {
	raw, err := os.ReadFile("quickstart.md")
	if err != nil {
		t.Fatal(err)
	}
	quick := string(raw)
	serve := regexp.MustCompile(`(?m)^go run \./cmd/creditd serve --demo.*$`).FindString(quick)
	if serve == "" || strings.Contains(serve, "--db") {
		t.Errorf("the quickstart's serve line %q must use the README's database (the default creditd.db)", serve)
	}
	for _, cmd := range regexp.MustCompile("`((?:go run \\./cmd/)?creditd [a-z]+ [a-z]+)").FindAllStringSubmatch(quick, -1) {
		if strings.HasPrefix(cmd[1], "creditd ") && !strings.Contains(quick, "go run ./cmd/"+cmd[1]) {
			t.Errorf("the quickstart names %q, which a reader who used go run does not have, without its go run form", cmd[1])
		}
	}
	// The demo seeds no approved application (approving one creates a company).
	if strings.Contains(quick, "every status") {
		t.Error(`the quickstart promises applications "in every status"; the demo seeds no approved one`)
	}
	for _, st := range []string{credit.AppSubmitted, credit.AppRejected} {
		if !strings.Contains(quick, strings.ReplaceAll(st, "_", " ")) {
			t.Errorf("the quickstart does not name the demo's %s application", st)
		}
	}

	// The README's console step restarts the server instead of starting a second on :8080.
	readme, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if regexp.MustCompile(`(?m)^go run \./cmd/creditd serve --demo --admin-addr`).Match(readme) {
		t.Error("the README's console step starts a second serve --demo while the first holds :8080")
	}
}

// TestGitIgnoresTheWebhookKey: `git add -A` must not commit the webhook master key that creditd
// writes beside a SQLite database, nor leave the database's lock directory untracked after a
// demo (a directory pattern, "name/", is matched by its name).
func TestGitIgnoresTheWebhookKey(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", ".gitignore"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"creditd.db.webhook-key", "demo.db.webhook-key", "creditd.db-locks"} {
		ignored := false
		for _, pattern := range strings.Split(string(raw), "\n") {
			pattern = strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(pattern), "/"), "/")
			if ok, _ := filepath.Match(pattern, name); ok && pattern != "" && !strings.HasPrefix(pattern, "#") {
				ignored = true
			}
		}
		if !ignored {
			t.Errorf(".gitignore does not cover %s", name)
		}
	}
}
