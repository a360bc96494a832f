package playground_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
)

// TestPlaygroundInBrowser opens /playground in headless Chromium on a running server, types a
// key into the Headers tab, runs the starter query and checks that the result shows the
// store's companies. Chromium may reach only the test server, so the page must work offline.
// A screenshot is saved in the test's artifact directory (go test -artifacts keeps it).
func TestPlaygroundInBrowser(t *testing.T) {
	env := credittest.New(t)
	store := env.MustStore(t, "Demo Wholesale", "EUR")
	key := env.MustKey(t, store, "playground", credit.ScopeReadCredit)
	company := env.MustCompany(t, store, "Alpenblick Hotels AG", "25000.00")
	env.MustRecord(t, credit.LedgerEntryInput{CompanyID: company.ID, Kind: credit.KindOrderPlaced, Amount: "4800.00", OrderGID: "gid://platform/Order/5001"})

	ctx := credittest.Browser(t, 1400, 900)
	ctx, cancelTimeout := context.WithTimeout(ctx, 90*time.Second)
	defer cancelTimeout()

	var mu sync.Mutex
	var requested, consoleErrors []string
	chromedp.ListenTarget(ctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch ev := ev.(type) {
		case *network.EventRequestWillBeSent:
			requested = append(requested, ev.Request.URL)
		case *runtime.EventExceptionThrown:
			consoleErrors = append(consoleErrors, ev.ExceptionDetails.Error())
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.APITypeError {
				for _, a := range ev.Args {
					consoleErrors = append(consoleErrors, string(a.Value)+a.Description)
				}
			}
		}
	})

	headers, _ := json.MarshalIndent(map[string]string{"Authorization": "Bearer " + key}, "", "  ")
	var result string
	var screenshot []byte
	err := chromedp.Run(ctx,
		network.Enable(),
		chromedp.Navigate(env.Server.URL+"/playground"),
		chromedp.WaitVisible(`.graphiql-execute-button`, chromedp.ByQuery),
		// The Headers tab is open with a placeholder key; replace it as a user would.
		chromedp.WaitVisible(`.graphiql-editor-tool .graphiql-editor:not(.hidden) .CodeMirror`, chromedp.ByQuery),
		chromedp.Evaluate(setHeadersScript(string(headers)), nil),
		chromedp.Click(`.graphiql-execute-button`, chromedp.ByQuery),
		chromedp.Poll(resultContainingScript(company.Name), &result, chromedp.WithPollingTimeout(30*time.Second)),
		chromedp.FullScreenshot(&screenshot, 100), // 100: PNG
	)
	if err != nil {
		var html string
		_ = chromedp.Run(ctx, chromedp.OuterHTML("body", &html, chromedp.ByQuery))
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("playground: %v\nresult: %s\nconsole errors: %v\nrequests: %v\nbody: %.3000s", err, result, consoleErrors, requested, html)
	}
	// Close the browser before looking at what it did, so nothing is recorded meanwhile.
	if err := chromedp.Cancel(ctx); err != nil {
		t.Logf("closing Chromium: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, want := range []string{company.ID, `"status": "APPROVED"`, `"amount": "25000.00"`, "ORDER_PLACED"} {
		if !strings.Contains(result, want) {
			t.Errorf("the result lacks %s:\n%s", want, result)
		}
	}
	for _, u := range requested {
		if !strings.HasPrefix(u, env.Server.URL+"/") && !strings.HasPrefix(u, "data:") {
			t.Errorf("the playground requested %s: everything must come from the server", u)
		}
	}
	if len(consoleErrors) > 0 {
		t.Errorf("console errors: %v", consoleErrors)
	}
	shot := filepath.Join(t.ArtifactDir(), "playground.png")
	if err := os.WriteFile(shot, screenshot, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s (%d bytes)", shot, len(screenshot))
}

// resultContainingScript is the text of GraphiQL's result pane once it contains want, else
// false, for chromedp.Poll.
func resultContainingScript(want string) string {
	quoted, _ := json.Marshal(want)
	return `(() => {
	  const text = (document.querySelector(".result-window") || {}).innerText || "";
	  return text.includes(` + string(quoted) + `) ? text : false;
	})()`
}

// setHeadersScript replaces the text of GraphiQL's headers editor (CodeMirror 5) with headers.
func setHeadersScript(headers string) string {
	quoted, _ := json.Marshal(headers)
	return `(() => {
	  const editor = document.querySelector(".graphiql-editor-tool .graphiql-editor:not(.hidden) .CodeMirror");
	  if (!editor) throw new Error("no visible headers editor");
	  editor.CodeMirror.setValue(` + string(quoted) + `);
	  return true;
	})()`
}
