package graph_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
	"github.com/creditd/creditd/demo"
	"github.com/creditd/creditd/server"
)

// TestDashboardClientsInBrowser runs docs/graphql.md's Apollo Client and urql Graphcache
// set-ups, as the document writes them, in headless Chromium on a --cors-origin origin: each
// runs the document's Dashboard query, then its TypedEvents query, then (after a write) the
// Dashboard again, as a poll; the dashboard the cache then holds shows every company's live
// figures, not an event's snapshot of them nor the figures before the write; the console
// has no warning (no missing possibleTypes, no "Cache data may be lost", no "Invalid key"). The
// Dashboard's @defer'red ledgers come after the companies: Apollo shows the companies before
// their ledgers, and meros reads the parts.
//
// The clients come from npm at the versions of testdata/clients/package-lock.json, installed
// by npm ci into the user's cache directory once per lock file (credittest.NPMPackages), and
// bundled with esbuild from the same install. Without npm or Chromium the test is skipped, except under CI.
func TestDashboardClientsInBrowser(t *testing.T) {
	credittest.ChromiumPath(t) // skips first without Chromium
	modules := credittest.NPMPackages(t, filepath.Join("testdata", "clients"))
	docs, err := os.ReadFile("../docs/graphql.md")
	if err != nil {
		t.Fatal(err)
	}
	bundle := func(introspection []byte) []byte { return bundleClients(t, modules, string(docs), introspection) }

	var page, script []byte
	pages := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/bundle.js" {
			w.Header().Set("Content-Type", "text/javascript")
			_, _ = w.Write(script)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write(page)
	}))
	defer pages.Close()

	env := credittest.New(t, credittest.Options{ServerConfig: func(c *server.Config) { c.CORSOrigins = []string{pages.URL} }})
	d, _, err := demo.Seed(context.Background(), env.Service)
	if err != nil {
		t.Fatal(err)
	}
	var key, writeKey string
	for _, k := range d.Keys {
		switch {
		case slices.Contains(k.Scopes, credit.ScopeWriteCredit):
			writeKey = k.Secret
		case slices.Contains(k.Scopes, credit.ScopeReadApplications):
			key = k.Secret
		}
	}
	// Every company's latest snapshot is made older than the company: its limit changes, then
	// its balance (an entry's event carries the entry, not the company).
	ctx := viewerOf(d.StoreID)
	companies, err := env.Service.Companies.List(ctx, credit.CompanyListParams{ListParams: credit.ListParams{Limit: ptrInt(250)}})
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range companies.Data {
		if _, err := env.Service.Companies.SetCreditLimit(ctx, credit.CreditLimitInput{CompanyID: c.ID, Amount: credit.Amount("40000.00")}); err != nil {
			t.Fatal(err)
		}
		env.MustRecord(t, credit.LedgerEntryInput{CompanyID: c.ID, Kind: credit.KindOrderPlaced, Amount: "123.45", OrderGID: fmt.Sprintf("gid://platform/Order/%d", 90000+i)})
	}

	// The schema's introspection (graphql-js's query, as GraphiQL and graphql-codegen send it),
	// which urql.js imports.
	introspection := env.Do(t, credittest.Request{Method: http.MethodPost, Path: "/graphql", Key: key,
		Body: map[string]any{"query": introspectionQuery}}).WantStatus(t, http.StatusOK)
	var schema struct {
		Data json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(introspection.Body, &schema); err != nil || len(schema.Data) == 0 {
		t.Fatalf("introspection: %v %s", err, introspection.Body[:min(len(introspection.Body), 500)])
	}
	script = bundle(schema.Data)

	config, _ := json.Marshal(map[string]string{
		"api": env.Server.URL, "key": key, "writeKey": writeKey, "company": companies.Data[0].ID,
		"dashboard": docQuery(t, string(docs), "Dashboard"), "events": docQuery(t, string(docs), "TypedEvents"),
	})
	page = fmt.Appendf(nil, `<!doctype html><meta charset="utf-8"><title>dashboard</title><script>window.config = %s;</script><script src="/bundle.js"></script>`, config)

	bctx := credittest.Browser(t, 1000, 800)
	if err := chromedp.Run(bctx); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var console []string
	chromedp.ListenTarget(bctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch ev := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			var args []string
			for _, a := range ev.Args {
				if a.Value != nil {
					args = append(args, string(a.Value))
				} else {
					args = append(args, a.Description)
				}
			}
			console = append(console, string(ev.Type)+": "+strings.Join(args, " "))
		case *runtime.EventExceptionThrown:
			console = append(console, "exception: "+ev.ExceptionDetails.Text+" "+exceptionText(ev.ExceptionDetails))
		}
	})
	var raw string
	if err := chromedp.Run(bctx,
		chromedp.Navigate(pages.URL+"/"),
		chromedp.Poll(`window.done === true && JSON.stringify(window.results)`, &raw, chromedp.WithPollingTimeout(60*time.Second)),
	); err != nil {
		t.Fatalf("page: %v\nconsole:\n%s", err, strings.Join(console, "\n"))
	}
	// The figures now, after the page's adjustment: the clients' refetch must show them.
	live := map[string]map[string]any{}
	companies, err = env.Service.Companies.List(ctx, credit.CompanyListParams{ListParams: credit.ListParams{Limit: ptrInt(250)}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range companies.Data {
		hold := any(nil)
		if c.Hold != nil {
			hold = strings.ToUpper(c.Hold.Kind)
		}
		live[c.Name] = map[string]any{"status": strings.ToUpper(c.Status), "creditLimit": c.CreditLimit.Amount,
			"outstanding": c.Outstanding.Amount, "availableCredit": c.AvailableCredit.Amount, "hold": hold}
	}
	var results struct {
		Write        struct{ Error string }
		Apollo, Urql clientOutcome
		Meros        struct {
			Error       string
			ContentType string
			Parts       []struct {
				JSON          bool
				HasNext       *bool
				Companies     int
				LedgersInData int
				Incremental   []struct {
					Path   []any
					Ledger bool
				}
			}
		}
	}
	if err := json.Unmarshal([]byte(raw), &results); err != nil {
		t.Fatalf("%v: %s", err, raw)
	}
	t.Logf("Apollo Client's results: %+v; urql's: %+v; meros's parts: %d", results.Apollo.Emissions, results.Urql.Emissions, len(results.Meros.Parts))
	mu.Lock()
	t.Logf("console:\n%s", strings.Join(console, "\n"))
	for _, m := range console {
		if !strings.HasPrefix(m, "log: ") && !strings.HasPrefix(m, "info: ") && !strings.HasPrefix(m, "debug: ") ||
			regexp.MustCompile(`(?i)possibleTypes|cache data may be lost|invalid key|heuristic|no id`).MatchString(m) {
			t.Errorf("console: %s", m)
		}
	}
	mu.Unlock()

	if results.Write.Error != "" {
		t.Fatalf("the page's write: %s", results.Write.Error)
	}
	for name, o := range map[string]clientOutcome{"Apollo Client": results.Apollo, "urql": results.Urql} {
		if o.Error != "" {
			t.Errorf("%s: %s", name, o.Error)
			continue
		}
		if o.Events == 0 {
			t.Errorf("%s: the events query listed no event", name)
		}
		if len(o.Figures) != len(live) {
			t.Errorf("%s shows %d companies, the store has %d", name, len(o.Figures), len(live))
		}
		for company, want := range live {
			got := o.Figures[company]
			for field, v := range want {
				if got[field] != v {
					t.Errorf("%s shows %s's %s as %v; it is %v", name, company, field, got[field], v)
				}
			}
			if got["ledger"] == float64(-1) {
				t.Errorf("%s shows %s without its ledger", name, company)
			}
		}
		if last := o.Emissions[len(o.Emissions)-1]; last.Companies != len(live) || last.Ledgers != len(live) {
			t.Errorf("%s's last result: %+v", name, o.Emissions)
		}
	}
	// Apollo shows the companies before their deferred ledgers.
	if !slices.ContainsFunc(results.Apollo.Emissions, func(e emissionOutcome) bool { return e.Companies == len(live) && e.Ledgers == 0 }) {
		t.Errorf("Apollo Client never showed the companies before their ledgers: %+v", results.Apollo.Emissions)
	}
	// meros reads the parts: companies first, then every ledger at its path, hasNext false on
	// the last.
	m := results.Meros
	if m.Error != "" || m.ContentType != `multipart/mixed; boundary="-"; deferSpec=20220824` || len(m.Parts) < 2 {
		t.Fatalf("meros: %+v", m)
	}
	if p := m.Parts[0]; !p.JSON || p.HasNext == nil || !*p.HasNext || p.Companies != len(live) || p.LedgersInData != 0 {
		t.Errorf("meros's first part: %+v", p)
	}
	ledgers := 0
	for i, p := range m.Parts[1:] {
		if p.HasNext == nil || *p.HasNext != (i < len(m.Parts)-2) {
			t.Errorf("meros's part %d of %d: hasNext %v", i+1, len(m.Parts), p.HasNext)
		}
		if len(p.Incremental) != 1 {
			t.Errorf("meros's part %d has %d deferred fragments, want 1", i+1, len(p.Incremental))
		}
		for _, inc := range p.Incremental {
			if inc.Ledger && len(inc.Path) == 4 && inc.Path[0] == "companies" {
				ledgers++
			}
		}
	}
	if ledgers != len(live) {
		t.Errorf("meros read %d ledgers for %d companies: %+v", ledgers, len(live), m.Parts)
	}
}

type emissionOutcome struct {
	State     string
	Companies int
	Ledgers   int
}

type clientOutcome struct {
	Error     string
	Emissions []emissionOutcome
	Events    int
	Figures   map[string]map[string]any
}

func exceptionText(d *runtime.ExceptionDetails) string {
	if d.Exception != nil {
		return d.Exception.Description
	}
	return ""
}

func ptrInt(n int) *int { return &n }

// docQuery is the GraphQL example of graphql.md that defines the operation name.
func docQuery(tb testing.TB, doc, name string) string {
	tb.Helper()
	for _, block := range fencedBlocks(doc, "graphql") {
		if strings.HasPrefix(block, "query "+name+" ") || strings.HasPrefix(block, "query "+name+"(") {
			return block
		}
	}
	tb.Fatalf("graphql.md has no query %s", name)
	return ""
}

// fencedBlocks are the bodies of the Markdown code blocks of a language.
func fencedBlocks(doc, lang string) []string {
	var out []string
	for _, part := range strings.Split(doc, "```"+lang+"\n")[1:] {
		body, _, _ := strings.Cut(part, "\n```")
		out = append(out, body+"\n")
	}
	return out
}

// bundleClients bundles testdata/clients/page.js with docs/graphql.md's apollo.js, urql.js
// and live.js for the browser, in their development builds (which warn about cache problems).
func bundleClients(tb testing.TB, modules, docs string, introspection []byte) []byte {
	tb.Helper()
	files := map[string]string{}
	for _, block := range fencedBlocks(docs, "js") {
		if name, ok := strings.CutPrefix(strings.SplitN(block, "\n", 2)[0], "// "); ok {
			files[name] = block
		}
	}
	page, err := os.ReadFile(filepath.Join("testdata", "clients", "page.js"))
	if err != nil {
		tb.Fatal(err)
	}
	files["page.js"] = string(page)
	files["introspection.json"] = string(introspection)
	for _, name := range []string{"apollo.js", "urql.js", "live.js", "page.js", "introspection.json"} {
		if files[name] == "" {
			tb.Fatalf("graphql.md has no js block starting with // %s", name)
		}
	}
	return credittest.Bundle(tb, modules, files, "page.js")
}
