package playground_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
	"github.com/creditd/creditd/graph/playground"
)

// TestPlaygroundInBrowser opens /playground in headless Chromium on a running server with no
// key, then types one into the Headers tab as a user would, with a typo corrected on the way.
// The Docs pane must then list the schema's types without the re-fetch button being pressed,
// after exactly one introspection request (none for the placeholder, none per keystroke, none
// for the typo), and the starter query must show the store's companies. Chromium may reach only
// the test server, so the page must work offline. A screenshot is saved in the test's artifact
// directory (go test -artifacts keeps it).
func TestPlaygroundInBrowser(t *testing.T) {
	env := credittest.New(t)
	store := env.MustStore(t, "Demo Wholesale", "EUR")
	key := env.MustKey(t, store, "playground", credit.ScopeReadCredit)
	company := env.MustCompany(t, store, "Alpenblick Hotels AG", "25000.00")
	env.MustRecord(t, credit.LedgerEntryInput{CompanyID: company.ID, Kind: credit.KindOrderPlaced, Amount: "4800.00", OrderGID: "gid://platform/Order/5001"})
	ctx, log := startChromium(t)

	// The typo is a well-formed key too, so without the debounce it would be introspected.
	typo := key[:len(key)-1] + otherBase62(key[len(key)-1])
	var noKeyDocs, docs, result string
	var screenshot []byte
	err := chromedp.Run(ctx,
		chromedp.Navigate(env.Server.URL+"/playground"),
		chromedp.WaitVisible(`.graphiql-execute-button`, chromedp.ByQuery),
		chromedp.WaitVisible(headersEditor, chromedp.ByQuery),
		chromedp.Click(`[aria-label="Show Documentation Explorer"]`, chromedp.ByQuery),
		chromedp.Poll(docsTextScript, &noKeyDocs, chromedp.WithPollingTimeout(10*time.Second)),
		// The Headers tab is open with a placeholder key; select it and type over it.
		chromedp.Evaluate(selectPlaceholderScript, nil),
		// The typo is corrected at a person's typing pace, quicker than the playground's
		// debounce but slow enough for a refetch on every change to show up.
		chromedp.KeyEvent(typo),
		chromedp.Sleep(typingPause),
		chromedp.KeyEvent(kb.Backspace),
		chromedp.Sleep(typingPause),
		chromedp.KeyEvent(key[len(key)-1:]),
		chromedp.Poll(docsListingScript("Company"), &docs, chromedp.WithPollingTimeout(30*time.Second)),
		// Long enough for a debounced refetch that was wrongly scheduled to have gone out.
		chromedp.Sleep(time.Second),
		chromedp.Click(`.graphiql-execute-button`, chromedp.ByQuery),
		chromedp.Poll(resultContainingScript(company.Name), &result, chromedp.WithPollingTimeout(30*time.Second)),
		chromedp.FullScreenshot(&screenshot, 100), // 100: PNG
	)
	if err != nil {
		log.fatal(ctx, t, err, "docs: %s\nresult: %s", docs, result)
	}
	log.close(ctx, t)

	if strings.Contains(noKeyDocs, "Error fetching schema") || !strings.Contains(noKeyDocs, "No GraphQL schema available") {
		t.Errorf("with no key the Docs pane says %q, want GraphiQL's note that there is no schema", noKeyDocs)
	}
	if got := log.introspections(); len(got) != 1 || got[0] != "Bearer "+key {
		t.Errorf("introspection requests sent with Authorization %q, want one with the typed key", got)
	}
	for _, want := range []string{company.ID, `"status": "APPROVED"`, `"amount": "25000.00"`, "ORDER_PLACED"} {
		if !strings.Contains(result, want) {
			t.Errorf("the result lacks %s:\n%s", want, result)
		}
	}
	log.check(t, env.Server.URL, key)
	saveScreenshot(t, "playground.png", screenshot)
}

// TestPlaygroundKeyInLink opens the link Link builds: in a new tab, and in a tab that already
// shows the playground, where only the fragment changes. Either way the key must be in the
// Headers tab, the Docs pane must list the schema's types, the fragment must be gone from the
// address, and the key must not be in the browser's storage or any requested URL.
func TestPlaygroundKeyInLink(t *testing.T) {
	env := credittest.New(t)
	store := env.MustStore(t, "Demo Wholesale", "EUR")
	key := env.MustKey(t, store, "playground", credit.ScopeReadCredit)
	link := playground.Link(env.Server.URL, key)

	for _, tc := range []struct {
		name string
		open chromedp.Tasks
	}{
		{"new tab", chromedp.Tasks{chromedp.Navigate(link)}},
		{"open playground", chromedp.Tasks{
			chromedp.Navigate(env.Server.URL + "/playground"),
			chromedp.WaitVisible(headersEditor, chromedp.ByQuery),
			// Wait until GraphiQL has saved its tabs, as on a returning visit.
			chromedp.Poll(`localStorage.getItem("graphiql:tabState") !== null`, nil, chromedp.WithPollingTimeout(10*time.Second)),
			chromedp.Evaluate(`location.href = `+jsString(link), nil),
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, log := startChromium(t)
			var docs, headers, href, storage string
			var screenshot []byte
			err := chromedp.Run(ctx,
				tc.open,
				// An empty fragment and a headers editor mean the page has read the key (after
				// reloading, in the open tab); a page that kept the fragment never gets past here.
				waitUntil(`location.hash === "" && document.querySelector(`+jsString(headersEditor)+`) !== null`, 10*time.Second),
				chromedp.WaitVisible(`.graphiql-execute-button`, chromedp.ByQuery),
				chromedp.Click(`[aria-label="Show Documentation Explorer"]`, chromedp.ByQuery),
				chromedp.Poll(docsListingScript("Company"), &docs, chromedp.WithPollingTimeout(30*time.Second)),
				chromedp.Evaluate(`document.querySelector(`+jsString(headersEditor)+`).CodeMirror.getValue()`, &headers),
				chromedp.Evaluate(`location.href`, &href),
				chromedp.Sleep(time.Second), // GraphiQL saves its tabs half a second after a change.
				chromedp.Evaluate(`JSON.stringify(localStorage) + JSON.stringify(sessionStorage)`, &storage),
				chromedp.FullScreenshot(&screenshot, 100),
			)
			if err != nil {
				log.fatal(ctx, t, err, "docs: %s", docs)
			}
			log.close(ctx, t)

			var parsed map[string]string
			if err := json.Unmarshal([]byte(headers), &parsed); err != nil || parsed["Authorization"] != "Bearer "+key {
				t.Errorf("the Headers tab holds %q, want the link's key", headers)
			}
			if href != env.Server.URL+"/playground" {
				t.Errorf("the address is %s, want the fragment removed", href)
			}
			if strings.Contains(storage, key) {
				t.Errorf("the key was saved in the browser's storage: %s", storage)
			}
			if got := log.introspections(); len(got) != 1 || got[0] != "Bearer "+key {
				t.Errorf("introspection requests sent with Authorization %q, want one with the link's key", got)
			}
			log.check(t, env.Server.URL, key)
			saveScreenshot(t, "playground-link-"+strings.ReplaceAll(tc.name, " ", "-")+".png", screenshot)
		})
	}
}

// typingPause is the time between two keystrokes of someone typing quickly, well under the
// half second the playground waits for the headers to settle.
const typingPause = 120 * time.Millisecond

// headersEditor is the CodeMirror element of GraphiQL's visible headers editor.
const headersEditor = `.graphiql-editor-tool .graphiql-editor:not(.hidden) .CodeMirror`

// browserLog records what the page did: the URLs it requested, the Authorization header of
// each introspection request it sent, and the errors it logged or threw.
type browserLog struct {
	mu                   sync.Mutex
	requested, errors    []string
	introspectionHeaders []string
}

// startChromium starts a fresh headless Chromium that can reach only 127.0.0.1, and returns a
// browser context whose events are recorded in the log. It is closed when the test ends.
func startChromium(t *testing.T) (context.Context, *browserLog) {
	t.Helper()
	ctx := credittest.Browser(t, 1400, 900)
	ctx, cancelTimeout := context.WithTimeout(ctx, 90*time.Second)
	t.Cleanup(cancelTimeout)

	log := &browserLog{}
	chromedp.ListenTarget(ctx, func(ev any) {
		log.mu.Lock()
		defer log.mu.Unlock()
		switch ev := ev.(type) {
		case *network.EventRequestWillBeSent:
			log.requested = append(log.requested, ev.Request.URL)
			if isIntrospection(ev.Request) {
				auth, _ := ev.Request.Headers["Authorization"].(string)
				log.introspectionHeaders = append(log.introspectionHeaders, auth)
			}
		case *runtime.EventExceptionThrown:
			log.errors = append(log.errors, ev.ExceptionDetails.Error())
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.APITypeError {
				for _, a := range ev.Args {
					log.errors = append(log.errors, string(a.Value)+a.Description)
				}
			}
		}
	})
	if err := chromedp.Run(ctx, network.Enable()); err != nil {
		t.Fatalf("starting Chromium: %v", err)
	}
	return ctx, log
}

// isIntrospection reports whether r posts GraphiQL's introspection query.
func isIntrospection(r *network.Request) bool {
	if r.Method != "POST" {
		return false
	}
	var body strings.Builder
	for _, e := range r.PostDataEntries {
		b, err := base64.StdEncoding.DecodeString(e.Bytes)
		if err != nil {
			return false
		}
		body.Write(b)
	}
	var params struct {
		OperationName string `json:"operationName"`
	}
	return json.Unmarshal([]byte(body.String()), &params) == nil && params.OperationName == "IntrospectionQuery"
}

// introspections is the Authorization header of each introspection request sent so far.
func (l *browserLog) introspections() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.introspectionHeaders)
}

// fatal ends the test after a failed browser run, with the page's body and what it did.
func (l *browserLog) fatal(ctx context.Context, t *testing.T, err error, format string, args ...any) {
	t.Helper()
	var html string
	_ = chromedp.Run(ctx, chromedp.OuterHTML("body", &html, chromedp.ByQuery))
	l.mu.Lock()
	defer l.mu.Unlock()
	t.Fatalf("playground: %v\n%s\nconsole errors: %v\nrequests: %v\nbody: %.3000s", err, fmt.Sprintf(format, args...), l.errors, l.requested, html)
}

// close closes the browser before the test looks at what it did, so nothing is recorded
// meanwhile.
func (l *browserLog) close(ctx context.Context, t *testing.T) {
	t.Helper()
	if err := chromedp.Cancel(ctx); err != nil {
		t.Logf("closing Chromium: %v", err)
	}
}

// check fails the test if the page requested anything but the server's own files, put the key
// in a URL, or logged an error.
func (l *browserLog) check(t *testing.T, serverURL, key string) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, u := range l.requested {
		if !strings.HasPrefix(u, serverURL+"/") && !strings.HasPrefix(u, "data:") {
			t.Errorf("the playground requested %s: everything must come from the server", u)
		}
		if strings.Contains(u, key) {
			t.Errorf("the playground put the key in a URL: %s", u)
		}
	}
	if len(l.errors) > 0 {
		t.Errorf("console errors: %v", l.errors)
	}
}

// saveScreenshot writes a PNG into the test's artifact directory.
func saveScreenshot(t *testing.T, name string, png []byte) {
	t.Helper()
	shot := filepath.Join(t.ArtifactDir(), name)
	if err := os.WriteFile(shot, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s (%d bytes)", shot, len(png))
}

// otherBase62 is a base62 digit other than c, to make a well-formed key that is not the key.
func otherBase62(c byte) string {
	if c == 'A' {
		return "B"
	}
	return "A"
}

// resultContainingScript is the text of GraphiQL's result pane once it contains want, else
// false, for chromedp.Poll.
func resultContainingScript(want string) string {
	return `(() => {
	  const text = (document.querySelector(".result-window") || {}).innerText || "";
	  return text.includes(` + jsString(want) + `) ? text : false;
	})()`
}

// waitUntil evaluates expression until it is true. Unlike chromedp.Poll it survives the page
// being reloaded meanwhile, which ends a poll running in the page with an error.
func waitUntil(expression string, timeout time.Duration) chromedp.Action {
	return chromedp.ActionFunc(func(ctx context.Context) error {
		deadline := time.Now().Add(timeout)
		for {
			var ok bool
			err := chromedp.Evaluate(expression, &ok).Do(ctx)
			if err == nil && ok {
				return nil
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("waiting %v for %s: last error %v", timeout, expression, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	})
}

// jsString is s as a JavaScript string literal.
func jsString(s string) string {
	quoted, _ := json.Marshal(s)
	return string(quoted)
}

// selectPlaceholderScript focuses the headers editor (CodeMirror 5) and selects the
// placeholder key in it, so that typed keys replace it.
var selectPlaceholderScript = `(() => {
  const cm = document.querySelector(` + jsString(headersEditor) + `).CodeMirror;
  const text = cm.getValue();
  const at = text.indexOf("<your API key>");
  if (at < 0) throw new Error("no placeholder in the headers editor: " + text);
  cm.focus();
  cm.setSelection(cm.posFromIndex(at), cm.posFromIndex(at + "<your API key>".length));
  return true;
})()`

// docsTextScript is the text of the open Docs pane once it has settled on a message or a
// schema (it shows a spinner while fetching), else false, for chromedp.Poll.
const docsTextScript = `(() => {
  const docs = document.querySelector(".graphiql-doc-explorer");
  if (!docs || docs.querySelector(".graphiql-spinner")) return false;
  return docs.innerText.trim() || false;
})()`

// docsListingScript is the text of the open Docs pane once it lists the type named name among
// the schema's types, else false, for chromedp.Poll.
func docsListingScript(name string) string {
	return `(() => {
  const docs = document.querySelector(".graphiql-doc-explorer");
  if (!docs) return false;
  const names = Array.from(docs.querySelectorAll(".graphiql-doc-explorer-type-name"), a => a.textContent);
  return names.includes(` + jsString(name) + `) ? docs.innerText : false;
})()`
}

// TestPlaygroundRunsSubscription runs a subscription from the playground: the page opens a
// WebSocket to /graphql (graphql-transport-ws, the key from the Headers tab in
// connection_init), and an event written afterwards appears in the result pane.
func TestPlaygroundRunsSubscription(t *testing.T) {
	env := credittest.New(t)
	store := env.MustStore(t, "Demo Wholesale", "EUR")
	key := env.MustKey(t, store, "playground", credit.ScopeReadCredit)
	company := env.MustCompany(t, store, "Alpenblick Hotels AG", "25000.00")
	ctx, log := startChromium(t)
	const subscription = `subscription Live { events(types: ["ledger_entry.created"]) { id type data } }`
	var result string
	err := chromedp.Run(ctx,
		chromedp.Navigate(playground.Link(env.Server.URL, key)),
		waitUntil(`location.hash === "" && document.querySelector(`+jsString(headersEditor)+`) !== null`, 10*time.Second),
		chromedp.WaitVisible(`.graphiql-execute-button`, chromedp.ByQuery),
		chromedp.Click(`[aria-label="Show Documentation Explorer"]`, chromedp.ByQuery),
		chromedp.Poll(docsListingScript("Company"), nil, chromedp.WithPollingTimeout(30*time.Second)),
		chromedp.Evaluate(`document.querySelector(".graphiql-query-editor .CodeMirror").CodeMirror.setValue(`+jsString(subscription)+`)`, nil),
		// GraphiQL reads the operation's name from the editor after a pause.
		chromedp.Sleep(time.Second),
		chromedp.Click(`.graphiql-execute-button`, chromedp.ByQuery),
		waitUntil(`document.querySelector(".graphiql-execute-button") !== null`, 5*time.Second),
	)
	if err != nil {
		log.fatal(ctx, t, err, "before the event")
	}
	// The subscription is open on the server before the event is written.
	deadline := time.Now().Add(10 * time.Second)
	for env.Service.Events.SubscriptionStats().Open != 1 {
		if time.Now().After(deadline) {
			var text string
			_ = chromedp.Run(ctx, chromedp.Evaluate(`(document.querySelector(".result-window") || {}).innerText || ""`, &text))
			log.check(t, env.Server.URL, key)
			t.Fatalf("the playground opened no subscription; result pane: %s", text)
		}
		time.Sleep(20 * time.Millisecond)
	}
	entry := env.MustRecord(t, credit.LedgerEntryInput{CompanyID: company.ID, Kind: credit.KindOrderPlaced, Amount: "4800.00", OrderGID: "gid://platform/Order/5001"})
	if err := chromedp.Run(ctx, chromedp.Poll(resultContainingScript(entry.ID), &result, chromedp.WithPollingTimeout(30*time.Second))); err != nil {
		log.fatal(ctx, t, err, "result: %s", result)
	}
	log.close(ctx, t)
	if !strings.Contains(result, "ledger_entry.created") {
		t.Errorf("the result lacks the event's type:\n%s", result)
	}
	log.check(t, env.Server.URL, key)
}
