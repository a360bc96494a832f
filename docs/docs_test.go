// The docs' tests keep them true: the GraphQL examples run against the demo data, the shell
// examples of the README and the guides run as written against a real demo
// (examples_test.go), the error table matches the OpenAPI document (itself checked against the
// REST error table), relative links resolve inside the repository, and sections of the
// contract are cited as links.
package docs_test

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
	"github.com/creditd/creditd/demo"
	"github.com/creditd/creditd/openapi/conformance"
	"github.com/creditd/creditd/server"
)

// anyLanguage asks fences for the blocks of every language, and those without one.
const anyLanguage = "*"

// fences returns the bodies of the fenced code blocks of a given language (or anyLanguage) in
// a Markdown file.
func fences(t *testing.T, file, lang string) []string {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	var cur *strings.Builder
	for _, line := range strings.Split(string(raw), "\n") {
		switch {
		case cur == nil && (line == "```"+lang || lang == anyLanguage && strings.HasPrefix(line, "```")):
			cur = &strings.Builder{}
		case cur != nil && line == "```":
			out = append(out, cur.String())
			cur = nil
		case cur != nil:
			cur.WriteString(line + "\n")
		}
	}
	return out
}

var variableRef = regexp.MustCompile(`\$([A-Za-z_][A-Za-z0-9_]*)`)

// TestGraphQLExamplesRun runs every GraphQL example of graphql.md against creditd with the demo
// data: each must answer without errors.
func TestGraphQLExamplesRun(t *testing.T) {
	env := credittest.New(t, credittest.Options{ServerConfig: func(c *server.Config) { c.RateLimit = 10_000 }})
	d, _, err := demo.Seed(context.Background(), env.Service)
	if err != nil {
		t.Fatal(err)
	}
	var dashboard, full string
	for _, k := range d.Keys {
		switch {
		case slices.Contains(k.Scopes, credit.ScopeWriteCredit):
			full = k.Secret
		case slices.Contains(k.Scopes, credit.ScopeReadApplications):
			dashboard = k.Secret
		}
	}
	var page credit.Page[credit.Company]
	env.Get(t, full, "/v1/companies?limit=250").WantStatus(t, 200).Decode(t, &page)
	var companyID string
	for _, c := range page.Data {
		if c.Name == "Alpenblick Hotels AG" {
			companyID = c.ID
		}
	}
	var ledger credit.Page[credit.LedgerEntry]
	env.Get(t, full, "/v1/companies/"+companyID+"/ledger").WantStatus(t, 200).Decode(t, &ledger)
	var events credit.Page[credit.Event]
	env.Get(t, full, "/v1/events?limit=1").WantStatus(t, 200).Decode(t, &events)
	values := map[string]any{
		"companyId": companyID,
		"after":     nil,
		"since":     "2026-01-01T00:00:00Z",
		"lastEntry": ledger.Data[len(ledger.Data)-1].ID,
		"entryId":   ledger.Data[0].ID,
		"lastEvent": events.Data[0].ID,
	}

	examples := fences(t, "graphql.md", "graphql")
	if len(examples) < 8 {
		t.Fatalf("found %d GraphQL examples in graphql.md", len(examples))
	}
	for i, q := range examples {
		name, _, _ := strings.Cut(strings.Fields(q)[1], "(")
		t.Run(strconv.Itoa(i)+" "+name, func(t *testing.T) {
			vars := map[string]any{}
			for _, m := range variableRef.FindAllStringSubmatch(q, -1) {
				v, ok := values[m[1]]
				if !ok {
					t.Fatalf("no test value for $%s", m[1])
				}
				vars[m[1]] = v
			}
			if strings.HasPrefix(q, "subscription") {
				// Subscriptions run over a WebSocket: the example must deliver an event.
				c := credittest.MustDialWS(t, env.Server.URL, dashboard, credittest.WSOptions{})
				c.Subscribe(t, "1", q, vars)
				m := c.Read(t, 10*time.Second)
				if m == nil || m.Type != "next" || strings.Contains(string(m.Payload), `"errors"`) {
					t.Fatalf("subscription example: %+v", m)
				}
				return
			}
			req := credittest.Request{Method: "POST", Path: "/graphql", Key: dashboard, Body: map[string]any{"query": q, "variables": vars}}
			if strings.HasPrefix(q, "mutation") {
				req.Key = full
				req.Header = map[string]string{"Idempotency-Key": "docs-example-" + strconv.Itoa(i)}
			}
			r := env.Do(t, req).WantStatus(t, 200)
			var out struct {
				Data   map[string]any  `json:"data"`
				Errors json.RawMessage `json:"errors"`
			}
			r.Decode(t, &out)
			if len(out.Errors) > 0 || len(out.Data) == 0 {
				t.Fatalf("example answers with errors: %s", r.Body)
			}
		})
	}
}

// TestErrorTableMatchesTheDocument compares the table of errors.md with the OpenAPI document's
// codes and statuses, which rest's tests compare with the REST error table.
func TestErrorTableMatchesTheDocument(t *testing.T) {
	v, err := conformance.Default()
	if err != nil {
		t.Fatal(err)
	}
	documented, _ := v.Doc().Components.Schemas["ErrorCode"].Value.Extensions["x-status-by-code"].(map[string]any)
	raw, err := os.ReadFile("errors.md")
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("^\\| ([0-9]{3}) \\| `([a-z_]+)` \\|")
	table := map[string]int{}
	for _, line := range strings.Split(string(raw), "\n") {
		if m := row.FindStringSubmatch(line); m != nil {
			status, _ := strconv.Atoi(m[1])
			table[m[2]] = status
		}
	}
	if len(table) != len(documented) {
		t.Errorf("errors.md lists %d codes, the OpenAPI document %d", len(table), len(documented))
	}
	for code, s := range documented {
		if status, ok := table[code]; !ok || float64(status) != s.(float64) {
			t.Errorf("%s: errors.md says %d, the OpenAPI document %v", code, status, s)
		}
	}
}

// TestLinksResolve checks every relative link of every Markdown file in the repository: its
// file exists inside the repository (a clone has nothing beside it), and a #section names a
// heading of that file, as GitHub makes anchors of headings.
func TestLinksResolve(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	link := regexp.MustCompile(`\]\(([^)\s]*)\)`)
	for _, f := range repositoryFiles(t, root, ".md") {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, f)
		for _, m := range link.FindAllStringSubmatch(string(raw), -1) {
			target, section, _ := strings.Cut(m[1], "#")
			if strings.Contains(target, ":") { // https:, mailto:
				continue
			}
			path := f
			if target != "" {
				path = filepath.Join(filepath.Dir(f), target)
			}
			if inside, _ := filepath.Rel(root, path); inside == ".." || strings.HasPrefix(inside, "../") {
				t.Errorf("%s links to %s, outside the repository", rel, m[1])
				continue
			}
			if _, err := os.Stat(path); err != nil {
				t.Errorf("%s links to %s, which does not exist", rel, m[1])
				continue
			}
			if section != "" && strings.HasSuffix(path, ".md") && !slices.Contains(headingAnchors(t, path), section) {
				t.Errorf("%s links to %s: %s has no heading with the anchor #%s", rel, m[1], filepath.Base(path), section)
			}
		}
	}
}

// TestNothingPointsOutside looks through every text file of the repository for paths into the
// directories that surrounded it while it was written: a clone has only itself.
func TestNothingPointsOutside(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	outside := []string{"../" + "shared", "/work/" + "shared", "/work/" + "main", "/tmp/" + "issue"}
	for _, ext := range []string{".md", ".go", ".yaml", ".yml", ".sh", ".graphqls", ".json", ".mjs", ".awk"} {
		for _, f := range repositoryFiles(t, root, ext) {
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, o := range outside {
				if strings.Contains(string(raw), o) {
					rel, _ := filepath.Rel(root, f)
					t.Errorf("%s mentions %s, which a clone of the repository does not have", rel, o)
				}
			}
		}
	}
}

// TestContractSectionsAreLinks checks that every "§N" a reader meets in the README or a guide is
// a link to that section of docs/contract.md; the contract and the specification may refer to
// their own sections.
func TestContractSectionsAreLinks(t *testing.T) {
	files, _ := filepath.Glob("*.md")
	files = append(files, filepath.Join("..", "README.md"))
	linked := regexp.MustCompile(`\[§([0-9]+)\]\(([^)]*)\)`)
	for _, f := range files {
		if f == "contract.md" || f == "specification.md" {
			continue
		}
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		text := string(raw)
		for _, m := range linked.FindAllStringSubmatch(text, -1) {
			if target := m[2]; !strings.Contains(target, "contract.md#"+m[1]+"-") {
				t.Errorf("%s: §%s links to %s, not to section %s of the contract", f, m[1], target, m[1])
			}
		}
		if rest := linked.ReplaceAllString(text, ""); strings.Contains(rest, "§") {
			i := strings.Index(rest, "§")
			t.Errorf("%s: %q cites a section without linking it", f, rest[max(0, i-40):min(len(rest), i+10)])
		}
	}
}

// repositoryFiles lists the files under root whose names end in ext, leaving out Git's own
// directory and installed node modules.
func repositoryFiles(t *testing.T, root, ext string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ext) {
			out = append(out, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// headingAnchors returns the anchors GitHub gives a Markdown file's headings: lower case,
// punctuation dropped, spaces turned into hyphens ("## 3. Errors" is #3-errors).
func headingAnchors(t *testing.T, file string) []string {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var anchors []string
	inCode := false
	for _, line := range strings.Split(string(raw), "\n") {
		if strings.HasPrefix(line, "```") {
			inCode = !inCode
		}
		heading, ok := strings.CutPrefix(strings.TrimLeft(line, "#"), " ")
		if inCode || !strings.HasPrefix(line, "#") || !ok {
			continue
		}
		var b strings.Builder
		for _, r := range strings.ToLower(heading) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		anchors = append(anchors, b.String())
	}
	return anchors
}
