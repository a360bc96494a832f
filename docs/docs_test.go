// The docs' tests keep them true: the GraphQL examples run against the demo data, the error
// table matches the OpenAPI document (itself checked against the REST error table), and
// relative links resolve.
package docs_test

import (
	"context"
	"encoding/json"
	"github.com/creditd/creditd/demo"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
	"github.com/creditd/creditd/openapi/conformance"
	"github.com/creditd/creditd/server"
)

// fences returns the bodies of the fenced code blocks of a given language in a Markdown file.
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
		case cur == nil && line == "```"+lang:
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
	values := map[string]any{
		"companyId": companyID,
		"after":     nil,
		"since":     "2026-01-01T00:00:00Z",
		"lastEntry": ledger.Data[len(ledger.Data)-1].ID,
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

// TestLinksResolve checks the relative links between the guides.
func TestLinksResolve(t *testing.T) {
	files, _ := filepath.Glob("*.md")
	files = append(files, filepath.Join("..", "README.md"))
	link := regexp.MustCompile(`\]\(([^)#:]+)(#[^)]*)?\)`)
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			continue // the README may not exist yet
		}
		for _, m := range link.FindAllStringSubmatch(string(raw), -1) {
			if _, err := os.Stat(filepath.Join(filepath.Dir(f), m[1])); err != nil {
				t.Errorf("%s links to %s, which does not exist", f, m[1])
			}
		}
	}
}
