package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/creditd/creditd/credittest"
)

// graphqlWsClient installs the graphql-ws package pinned in testdata/graphql-ws (package.json
// and package-lock.json) with credittest.NPMPackages, and returns its UMD build (which defines
// window.graphqlWs). Without npm the test is skipped, except under CI.
func graphqlWsClient(t *testing.T) []byte {
	t.Helper()
	dir := credittest.NPMPackages(t, filepath.Join("testdata", "graphql-ws"))
	js, err := os.ReadFile(filepath.Join(dir, "node_modules", "graphql-ws", "umd", "graphql-ws.js"))
	if err != nil {
		t.Fatal(err)
	}
	return js
}

// subscriptionPage is a dashboard that subscribes to the ledger events with graphql-ws and
// lists each entry as it arrives, reading its API and key from the query string.
const subscriptionPage = `<!doctype html>
<html><head><meta charset="utf-8"><title>live</title><script src="/graphql-ws.js"></script></head>
<body><p id="status">starting</p><ul id="entries"></ul>
<script>
const q = new URLSearchParams(location.search);
const status = document.getElementById("status");
const client = graphqlWs.createClient({
  url: q.get("api").replace(/^http/, "ws") + "/graphql",
  connectionParams: { Authorization: "Bearer " + q.get("key") },
  retryAttempts: 0,
  on: {
    connected: () => { status.textContent = "connected"; },
    closed: (e) => { status.textContent = "closed " + (e && e.code); },
  },
});
client.subscribe(
  { query: 'subscription { events(types: ["ledger_entry.created"]) { id type data } }' },
  {
    next: (v) => {
      const li = document.createElement("li");
      const o = v.data.events.data.object;
      li.textContent = o.id + " " + o.amount.amount + " " + o.note;
      document.getElementById("entries").appendChild(li);
    },
    error: (e) => { status.textContent = "error " + JSON.stringify(e && (e.code || e.message || e)); },
    complete: () => { status.textContent = "complete"; },
  },
);
</script></body></html>`

// TestBrowserSubscriptionAcrossInstances: a dashboard page on a --cors-origin origin subscribes
// with graphql-ws (from npm, pinned) to instance A and shows an adjustment made through REST
// on instance B, without polling, on SQLite and on PostgreSQL; the same page served from
// another origin is refused at the handshake and shows nothing.
func TestBrowserSubscriptionAcrossInstances(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Chromium and two servers")
	}
	credittest.ChromiumPath(t)
	js := graphqlWsClient(t)
	bin, err := instancesBinary()
	if err != nil {
		t.Fatal(err)
	}
	page := http.NewServeMux()
	page.HandleFunc("/graphql-ws.js", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/javascript")
		_, _ = w.Write(js)
	})
	page.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = io.WriteString(w, subscriptionPage)
	})
	dashboard := httptest.NewServer(page) // the --cors-origin
	defer dashboard.Close()
	foreign := httptest.NewServer(page) // another origin
	defer foreign.Close()

	for _, backend := range liveBackends(t) {
		t.Run(backend, func(t *testing.T) {
			d := newLiveDB(t, bin, backend)
			a := newLiveInstance(t, bin, "--db", d.dsn, "--cors-origin", dashboard.URL)
			b := newLiveInstance(t, bin, "--db", d.dsn)
			ctx := credittest.Browser(t, 800, 600)
			ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
			defer cancel()
			open := func(origin string) {
				t.Helper()
				u := origin + "/?" + url.Values{"api": {a.url()}, "key": {d.key}}.Encode()
				if err := chromedp.Run(ctx, chromedp.Navigate(u)); err != nil {
					t.Fatal(err)
				}
			}
			text := func(sel string) string {
				var s string
				if err := chromedp.Run(ctx, chromedp.Text(sel, &s, chromedp.ByID)); err != nil {
					t.Fatal(err)
				}
				return s
			}

			open(dashboard.URL)
			if err := chromedp.Run(ctx, chromedp.Poll(`document.getElementById("status").textContent === "connected"`, nil)); err != nil {
				t.Fatalf("the dashboard did not connect: status %q", text("status"))
			}
			time.Sleep(300 * time.Millisecond) // its subscribe message has been handled
			note := "live from B " + fmt.Sprint(time.Now().UnixNano())
			entry := adjustReturningEntry(t, b.url(), d.key, d.company, note)
			if err := chromedp.Run(ctx, chromedp.Poll(fmt.Sprintf(`document.getElementById("entries").textContent.includes(%q)`, entry+" 1.00 "+note), nil)); err != nil {
				t.Fatalf("the page did not show entry %s: entries %q, status %q", entry, text("entries"), text("status"))
			}

			open(foreign.URL)
			if err := chromedp.Run(ctx, chromedp.Poll(`document.getElementById("status").textContent.startsWith("closed") || document.getElementById("status").textContent.startsWith("error")`, nil)); err != nil {
				t.Fatalf("the foreign page's status %q", text("status"))
			}
			if got := text("status"); got == "connected" {
				t.Fatal("a page on a foreign origin connected")
			}
			adjustReturningEntry(t, b.url(), d.key, d.company, "not for the foreign page")
			time.Sleep(500 * time.Millisecond)
			if got := text("entries"); got != "" {
				t.Fatalf("the foreign page shows %q", got)
			}
		})
	}
}

// adjustReturningEntry makes an adjustment of 1.00 through REST and returns its ledger entry's ID.
func adjustReturningEntry(t *testing.T, base, key, company, note string) string {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"amount": "1.00", "note": note})
	req, _ := http.NewRequest(http.MethodPost, base+"/v1/companies/"+company+"/adjustments", strings.NewReader(string(body)))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		LedgerEntry struct{ ID string } `json:"ledger_entry"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("adjustment: %d %v", resp.StatusCode, err)
	}
	return out.LedgerEntry.ID
}
