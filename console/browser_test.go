package console_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
)

// updateScreenshots names the environment variable that refreshes the README's screenshots in
// docs/images; without it the screenshots go only to the test's artifact directory.
const updateScreenshots = "CREDITD_UPDATE_SCREENSHOTS"

// TestConsoleInBrowser drives the console in headless Chromium as a credit manager's morning
// goes: signs in to the overview, goes to an overdue company, whose unpaid overdue hold offers
// no lift, and from the receivables to its open invoices, records its payment as a positive
// amount (the ledger and the timeline name the member, the store's aging moves), approves an
// application with its platform company GID and retries the platform's failed delivery for
// it from the company's page, follows the links between the company and its application,
// approves another without a GID, sets the GID on the company's page and retries its failed
// delivery; then places and lifts a hold, creates a key whose secret the REST API accepts, and
// revokes it (accepting the confirmation the page's script asks for), after which the REST API
// refuses it (before that, records a promise to pay and opens a dispute on an open invoice, finds
// both on the collections page and resolves the dispute from its link), adds a webhook endpoint, reads its (empty) deliveries, sends it a test event and
// reads the attempt, and finds a failed delivery with its amount in the platform inbox.
// Chromium may reach only the console, so the pages must need nothing from elsewhere; no
// script error may occur. Screenshots of the main pages are saved in the test's artifact
// directory (go test -artifacts keeps them), and in docs/images with CREDITD_UPDATE_SCREENSHOTS=1.
func TestConsoleInBrowser(t *testing.T) {
	f := newConsole(t, withWebhookSender)
	// The ERP's webhook receiver, for the test event the walk sends.
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	t.Cleanup(receiver.Close)
	store := f.MustStore(t, "Demo Wholesale GmbH", "EUR")
	f.MustStaff(t, store, "Anna Berg", "anna@example.com", password)
	staff := credittest.Staff(store)
	// A key nobody used for 90 days, for the cleanup prompt.
	f.MustIssuedKey(t, store, "Old price-list export", credit.ScopeReadCredit)
	// The ledger's history over the last 90 days, for the overview's chart.
	f.Clock.Advance(30 * 24 * time.Hour)
	alpen := f.MustCompany(t, store, "Alpenblick Hotels AG", "25000.00")
	cafe := f.MustCompany(t, store, "Café Morgenrot", "3000.00")
	f.MustRecord(t, credit.LedgerEntryInput{CompanyID: cafe.ID, Kind: credit.KindOpeningBalance, Amount: "1200.00"})
	vogt := f.MustCompany(t, store, "Dachdeckerei Vogt", "12000.00", "NET_60")
	f.Clock.Advance(25 * 24 * time.Hour)
	f.MustRecord(t, credit.LedgerEntryInput{CompanyID: vogt.ID, Kind: credit.KindOrderPlaced, Amount: "6400.00", OrderGID: "gid://platform/Order/4001"})
	f.Clock.Advance(20 * 24 * time.Hour)
	f.MustRecord(t, credit.LedgerEntryInput{CompanyID: vogt.ID, Kind: credit.KindOrderPlaced, Amount: "4950.00", OrderGID: "gid://platform/Order/4002"})
	f.MustRecord(t, credit.LedgerEntryInput{CompanyID: cafe.ID, Kind: credit.KindPayment, Amount: "-400.00"})
	f.Clock.Advance(credit.DefaultStaleAfter + 24*time.Hour - 75*24*time.Hour)
	f.MustIssuedKey(t, store, "ERP (production)", credit.AllScopes...)

	f.MustRecord(t, credit.LedgerEntryInput{CompanyID: alpen.ID, Kind: credit.KindOrderPlaced, Amount: "4800.00", OrderGID: "gid://platform/Order/5001"})
	kessler := f.MustCompany(t, store, "Brauhaus Kessler KG", "8000.00", "NET_14")
	due := credit.At(f.Clock.Now().Add(-20 * 24 * time.Hour))
	f.MustRecord(t, credit.LedgerEntryInput{CompanyID: kessler.ID, Kind: credit.KindOrderPlaced, Amount: "2950.00", OrderGID: "gid://platform/Order/5003", OccurredAt: &due})
	f.MustRecord(t, credit.LedgerEntryInput{CompanyID: cafe.ID, Kind: credit.KindOrderPlaced, Amount: "640.00", OrderGID: "gid://platform/Order/5004"})
	f.MustRecord(t, credit.LedgerEntryInput{CompanyID: cafe.ID, Kind: credit.KindPayment, Amount: "-640.00", OrderGID: "gid://platform/Order/5004"})
	app := f.MustApplication(t, store, credit.ApplicationInput{BusinessName: "Bergbäckerei Huber", VATNumber: "DE298765432", VATStatus: "valid", ContactName: "Maria Huber", ContactEmail: "maria@baeckerei-huber.example"})
	app2 := f.MustApplication(t, store, credit.ApplicationInput{BusinessName: "Gasthof Zur Post", ContactName: "Paul Wirt", ContactEmail: "paul@zurpost.example"})
	if _, err := f.Service.Companies.PlaceHold(credittest.Staff(store), credit.HoldInput{CompanyID: cafe.ID}); err != nil {
		t.Fatal(err)
	}

	ctx := credittest.Browser(t, 1280, 800)
	ctx, cancel := context.WithTimeout(ctx, 4*time.Minute)
	defer cancel()

	var mu sync.Mutex
	var requested, scriptErrors []string
	chromedp.ListenTarget(ctx, func(ev any) {
		switch ev := ev.(type) {
		case *network.EventRequestWillBeSent:
			mu.Lock()
			requested = append(requested, ev.Request.URL)
			mu.Unlock()
		case *runtime.EventExceptionThrown:
			mu.Lock()
			scriptErrors = append(scriptErrors, ev.ExceptionDetails.Error())
			mu.Unlock()
		case *cdppage.EventJavascriptDialogOpening:
			// The revoke button asks for confirmation; accept it as a person would.
			go func() { _ = chromedp.Run(ctx, cdppage.HandleJavaScriptDialog(true)) }()
		}
	})

	shots := map[string][]byte{}
	// shot keeps a screenshot of the whole page as a laptop screen 1280 pixels wide shows it.
	shot := func(name string) chromedp.Action {
		return chromedp.ActionFunc(func(ctx context.Context) error {
			var buf []byte
			if err := chromedp.FullScreenshot(&buf, 100).Do(ctx); err != nil {
				return err
			}
			shots[name] = buf
			return nil
		})
	}
	// bodyText waits until a page that has finished loading shows want, then keeps its text.
	// It evaluates again after errors, since a form's submission replaces the document under
	// it, and only a complete document is safe for the next action.
	var text string
	bodyText := func(want string) chromedp.Action {
		return chromedp.ActionFunc(func(ctx context.Context) error {
			deadline := time.Now().Add(45 * time.Second)
			for {
				var ok bool
				err := chromedp.Evaluate(`document.readyState === "complete" && document.body.innerText.includes(`+jsString(want)+`)`, &ok).Do(ctx)
				if err == nil && ok {
					return chromedp.Evaluate(`document.body.innerText`, &text).Do(ctx)
				}
				if time.Now().After(deadline) {
					_ = chromedp.Evaluate(`document.body.innerText`, &text).Do(ctx)
					return fmt.Errorf("the page never showed %q; it shows:\n%s", want, text)
				}
				select {
				case <-ctx.Done():
					return ctx.Err()
				case <-time.After(100 * time.Millisecond):
				}
			}
		})
	}
	run := func(step string, actions ...chromedp.Action) {
		t.Helper()
		for i, action := range actions {
			if err := chromedp.Run(ctx, action); err != nil {
				var html string
				_ = chromedp.Run(ctx, chromedp.OuterHTML("body", &html, chromedp.ByQuery))
				t.Fatalf("%s, action %d: %v\npage: %.4000s\nconsole log:\n%s", step, i+1, err, html, f.Logs.String())
			}
		}
	}

	// Deliveries of the platform for the two applicants' platform companies fail until a
	// company has their GID.
	const huberGID, postGID = unknownCompanyGID, "gid://platform/Company/778"
	failedHuber := connectAndFail(t, f.Env, store, "demo-wholesale.myplatform.com", "wh-payment-7001")
	failedPost := deliverPlatform(t, f.Env, "demo-wholesale.myplatform.com", platformSecret, credit.TopicPaymentCreated, "wh-payment-7002",
		paymentFor(7002, postGID, "75.00")).ID

	run("sign in",
		network.Enable(),
		chromedp.EmulateViewport(1280, 800),
		chromedp.Navigate(f.URL+"/companies"),
		chromedp.WaitVisible(`#email`, chromedp.ByID),
		shot("login"),
		chromedp.SendKeys(`#email`, "anna@example.com", chromedp.ByID),
		chromedp.SendKeys(`#password`, password, chromedp.ByID),
		chromedp.Click(`#sign-in`, chromedp.ByID),
		chromedp.WaitVisible(`#overview-figures`, chromedp.ByID),
		bodyText("Overdue today"),
		shot("overview"),
	)
	if !strings.Contains(text, "Anna Berg") || !strings.Contains(text, "Demo Wholesale GmbH") || !strings.Contains(text, "Brauhaus Kessler KG") {
		t.Errorf("the overview does not say who is signed in where, or lacks the overdue company:\n%s", text)
	}

	run("an overdue company from the overview: its unpaid overdue hold offers no lift, and says what lifts it",
		chromedp.Click(`#overdue a[href="/companies/`+kessler.ID+`"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`#overdue-hold-help`, chromedp.ByID),
		bodyText("a payment of the overdue invoice gid://platform/Order/5003 lifts it automatically"),
		chromedp.ScrollIntoView(`#hold`, chromedp.ByID),
		shot("overdue-hold"),
	)
	var lifts int
	run("count lift buttons", chromedp.Evaluate(`document.querySelectorAll("#lift-hold").length`, &lifts))
	if lifts != 0 {
		t.Errorf("the unpaid overdue hold offers %d lift buttons", lifts)
	}

	var storeAging string
	run("read the store's aging",
		chromedp.Navigate(f.URL+"/receivables"),
		chromedp.WaitVisible(`#company-aging`, chromedp.ByID),
		bodyText("Companies overdue"),
		chromedp.Text(`#store-aging tbody`, &storeAging, chromedp.ByQuery),
		shot("receivables"),
	)
	run("record the overdue invoice's payment as a positive amount; the timeline names the member",
		chromedp.Click(`#company-aging a[href="/companies/`+kessler.ID+`#invoices-title"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`#open-invoices`, chromedp.ByID),
		bodyText("gid://platform/Order/5003"),
		shot("open-invoices"),
		chromedp.SetValue(`#entry-kind`, credit.KindPayment, chromedp.ByID),
		chromedp.SendKeys(`#entry-amount`, "2950.00", chromedp.ByID),
		chromedp.SendKeys(`#entry-order`, "gid://platform/Order/5003", chromedp.ByID),
		chromedp.Click(`#record-entry`, chromedp.ByID),
		bodyText("Payment of 2,950.00 EUR recorded"),
		bodyText("No open invoice."),
		bodyText("No hold"),
	)
	for _, want := range []string{"Ledger entry recorded\tAnna Berg\tAmount: −2,950.00 EUR; Kind: payment", "Payment\t−2,950.00 EUR\t0.00 EUR\tgid://platform/Order/5003\t\tAnna Berg"} {
		if !strings.Contains(text, want) {
			t.Errorf("the company's page lacks %q:\n%s", want, text)
		}
	}
	run("the store's aging moved",
		chromedp.Click(`a[href="/receivables"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`#store-aging`, chromedp.ByID),
	)
	var agingAfter string
	run("read the aging", chromedp.Text(`#store-aging tbody`, &agingAfter, chromedp.ByQuery))
	if !strings.Contains(storeAging, "2,950.00") || strings.Contains(agingAfter, "2,950.00") || agingAfter == storeAging {
		t.Errorf("the store's aging did not move with the payment: before %q, after %q", storeAging, agingAfter)
	}

	run("approve an application with its platform company GID; its failed delivery is retried from the company's page",
		chromedp.Click(`a[href="/applications"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`a[href="/applications/`+app.ID+`"]`, chromedp.ByQuery),
		shot("applications"),
		chromedp.Click(`a[href="/applications/`+app.ID+`"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`#to-in_review`, chromedp.ByID),
		chromedp.Click(`#to-in_review`, chromedp.ByID),
		bodyText("The application is now in review."),
		chromedp.SendKeys(`#approve-limit`, "6000.00", chromedp.ByID),
		chromedp.SetValue(`#approve-terms`, "NET_30", chromedp.ByID),
		chromedp.SendKeys(`#approve-gid`, huberGID, chromedp.ByID),
		shot("application"),
		chromedp.Click(`#approve`, chromedp.ByID),
		bodyText("Application approved: Bergbäckerei Huber is a company with a credit limit of 6,000.00 EUR on Net 30."),
		chromedp.WaitVisible(`#retry-`+failedHuber, chromedp.ByID),
		chromedp.Click(`#retry-`+failedHuber, chromedp.ByID),
		bodyText("Delivery "+failedHuber+" is applied."),
		bodyText("Application approved\tAnna Berg"),
	)
	run("the company links back to its application, which links to the company",
		chromedp.Click(`#company-application`, chromedp.ByID),
		chromedp.WaitVisible(`#application-company a`, chromedp.ByQuery),
		chromedp.Click(`#application-company a`, chromedp.ByQuery),
		chromedp.WaitVisible(`#platform-company`, chromedp.ByID),
		bodyText("Commerce platform"), // the retried payment, recorded by the platform
	)

	run("approve another without a GID, set it on the company's page, and retry",
		chromedp.Navigate(f.URL+"/applications/"+app2.ID),
		chromedp.WaitVisible(`#to-in_review`, chromedp.ByID),
		chromedp.Click(`#to-in_review`, chromedp.ByID),
		bodyText("The application is now in review."),
		chromedp.SendKeys(`#approve-limit`, "2000.00", chromedp.ByID),
		chromedp.SetValue(`#approve-terms`, "NET_14", chromedp.ByID),
		chromedp.Click(`#approve`, chromedp.ByID),
		bodyText("It has no platform company GID yet"),
		chromedp.WaitVisible(`#no-gid`, chromedp.ByID),
		chromedp.SendKeys(`#company-gid`, postGID, chromedp.ByID),
		chromedp.Click(`#set-gid`, chromedp.ByID),
		bodyText("1 failed platform delivery for it can now be retried below."),
		chromedp.ScrollIntoView(`#platform-company`, chromedp.ByID),
		shot("company-gid"),
		chromedp.Click(`#retry-`+failedPost, chromedp.ByID),
		bodyText("Delivery "+failedPost+" is applied."),
		bodyText("Platform company GID changed\tAnna Berg"),
	)
	applied, err := f.Service.Inbox.List(staff, credit.InboxListParams{Status: credit.InboxApplied})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{failedHuber, failedPost} {
		if !slices.ContainsFunc(applied.Data, func(x credit.InboxDelivery) bool { return x.ID == id }) {
			t.Errorf("delivery %s is not applied", id)
		}
	}

	run("the companies with the store's totals",
		chromedp.Click(`a[href="/companies"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`#companies-totals`, chromedp.ByID),
		bodyText("Alpenblick Hotels AG"),
		shot("companies"),
	)

	// A form with several wrong fields: the browser sends it as typed (no required, min or
	// pattern stops it at the first), and the page shows every refusal beside its field at
	// once, what was typed kept; put right, it creates the company.
	var refusals []string
	var kept map[string]string
	run("a new company with four wrong fields, then put right",
		chromedp.Click(`#new-company`, chromedp.ByID),
		chromedp.WaitVisible(`#new-company-form`, chromedp.ByID),
		chromedp.SendKeys(`#new-company-name`, "  ", chromedp.ByID),
		chromedp.SetValue(`#new-company-terms`, "other", chromedp.ByID),
		chromedp.SendKeys(`#new-company-terms-days`, "400", chromedp.ByID),
		chromedp.SendKeys(`#new-company-limit`, "-5", chromedp.ByID),
		chromedp.SendKeys(`#new-company-gid`, "Company 7", chromedp.ByID),
		chromedp.Click(`#create-company`, chromedp.ByID),
		bodyText("Platform company GID must look like gid://platform/Company/123."),
		chromedp.Evaluate(`[...document.querySelectorAll("#new-company-form .field-error")].map(e => e.id + ": " + e.innerText)`, &refusals),
		chromedp.Evaluate(`Object.fromEntries(["new-company-terms", "new-company-terms-days", "new-company-limit", "new-company-gid"].map(id => [id, document.getElementById(id).value]))`, &kept),
		shot("company-new-refused"),
		chromedp.SendKeys(`#new-company-name`, "Gipfelhütte Catering GmbH", chromedp.ByID),
		chromedp.SetValue(`#new-company-terms`, "NET_14", chromedp.ByID),
		chromedp.SetValue(`#new-company-limit`, "3500.00", chromedp.ByID),
		chromedp.SetValue(`#new-company-gid`, "gid://platform/Company/9001", chromedp.ByID),
		chromedp.Click(`#create-company`, chromedp.ByID),
		bodyText("Company Gipfelhütte Catering GmbH created."),
		chromedp.WaitVisible(`#behaviour`, chromedp.ByID),
		bodyText("Payment behaviour"),
	)
	wantRefusals := []string{
		"new-company-name-error: Name must not be empty.",
		"new-company-terms-error: The days to pay must be a whole number from 1 to 365.",
		"new-company-limit-error: Credit limit must be zero or greater.",
		"new-company-gid-error: Platform company GID must look like gid://platform/Company/123.",
	}
	if !slices.Equal(refusals, wantRefusals) {
		t.Errorf("the new company form's refusals:\n%s\nwant\n%s", strings.Join(refusals, "\n"), strings.Join(wantRefusals, "\n"))
	}
	if want := map[string]string{"new-company-terms": "other", "new-company-terms-days": "400", "new-company-limit": "-5", "new-company-gid": "Company 7"}; !maps.Equal(kept, want) {
		t.Errorf("the refused form kept %v, want %v", kept, want)
	}

	var ledgerFits bool
	run("place and lift a hold",
		chromedp.Navigate(f.URL+"/companies/"+alpen.ID),
		chromedp.WaitVisible(`#place-hold`, chromedp.ByID),
		chromedp.SendKeys(`#hold-note`, "Awaiting the signed framework contract", chromedp.ByID),
		chromedp.Click(`#place-hold`, chromedp.ByID),
		bodyText("Alpenblick Hotels AG is on hold."),
		shot("company"),
		// At 1280 px the ledger, with its Balance column, fits its card: nothing to scroll sideways.
		chromedp.Evaluate(`(() => { const t = document.querySelector("table.ledger"), c = t.closest(".card"); return t.getBoundingClientRect().right <= c.getBoundingClientRect().right && t.scrollWidth <= t.parentElement.clientWidth })()`, &ledgerFits),
		chromedp.Click(`#lift-hold`, chromedp.ByID),
		bodyText("The hold on Alpenblick Hotels AG is lifted."),
	)
	if !ledgerFits {
		t.Error("at 1280 px the ledger table is wider than its card")
	}
	for _, want := range []string{"Hold placed\tAnna Berg", "Hold lifted\tAnna Berg"} {
		if !strings.Contains(text, want) {
			t.Errorf("the timeline lacks %q:\n%s", want, text)
		}
	}

	// Collections: a promise for today and a dispute on Alpenblick's open invoice, both on the
	// collections page, which links back to the invoice, where the dispute is resolved.
	alpenInvoices, err := f.Service.Invoices.List(staff, alpen.ID, credit.InvoiceListParams{Status: credit.InvoiceOpen})
	if err != nil || len(alpenInvoices.Data) != 1 {
		t.Fatalf("Alpenblick's open invoices: %+v %v", alpenInvoices, err)
	}
	inv := alpenInvoices.Data[0].ID
	today := f.Clock.Now().UTC().Format(time.DateOnly)
	run("record a promise to pay and open a dispute on an open invoice",
		chromedp.Navigate(f.URL+"/companies/"+alpen.ID),
		chromedp.WaitVisible(`#invoice-`+inv, chromedp.ByID),
		chromedp.Click(`#invoice-`+inv+` summary`, chromedp.ByQuery),
		chromedp.WaitVisible(`#promise-day-`+inv, chromedp.ByID),
		chromedp.SendKeys(`#promise-day-`+inv, today, chromedp.ByID),
		chromedp.SendKeys(`#promise-note-`+inv, "Transfer on Friday", chromedp.ByID),
		chromedp.Click(`#promise-`+inv, chromedp.ByID),
		bodyText("Promise recorded: gid://platform/Order/5001 to be paid by "+today),
		chromedp.Click(`#invoice-`+inv+` summary`, chromedp.ByQuery),
		chromedp.WaitVisible(`#dispute-reason-`+inv, chromedp.ByID),
		chromedp.SendKeys(`#dispute-reason-`+inv, "Two pallets arrived damaged", chromedp.ByID),
		chromedp.Click(`#dispute-`+inv, chromedp.ByID),
		bodyText("gid://platform/Order/5001 is disputed"),
		bodyText("Two pallets arrived damaged"),
		chromedp.ScrollIntoView(`#invoices`, chromedp.ByID),
		shot("invoice-collection"),
	)
	run("the collections page lists the promise due and the dispute, and links to the invoice",
		chromedp.Click(`a[href="/collections"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`#disputes`, chromedp.ByID),
		bodyText("Promises due"),
		bodyText("Transfer on Friday"),
		bodyText("Two pallets arrived damaged"),
		shot("collections"),
		chromedp.Click(`#disputes a`, chromedp.ByQuery),
		chromedp.WaitVisible(`#invoice-`+inv, chromedp.ByID),
		chromedp.Click(`#invoice-`+inv+` summary`, chromedp.ByQuery),
		chromedp.WaitVisible(`#resolve-`+inv, chromedp.ByID),
		chromedp.Click(`#resolve-`+inv, chromedp.ByID),
		bodyText("The dispute on gid://platform/Order/5001 is resolved; reminders resume."),
		bodyText("Dispute resolved\tAnna Berg"),
	)

	var secret string
	run("create a key",
		chromedp.Click(`a[href="/settings/api"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`#create-key`, chromedp.ByID),
		chromedp.SendKeys(`#key-label`, "Dashboard (finance)", chromedp.ByID),
		chromedp.Click(`#scope-read_credit`, chromedp.ByID),
		chromedp.Click(`#scope-read_applications`, chromedp.ByID),
		chromedp.Click(`#create-key`, chromedp.ByID),
		chromedp.WaitVisible(`#secret`, chromedp.ByID),
		chromedp.Value(`#secret`, &secret, chromedp.ByID),
		shot("new-key"),
	)
	if !strings.HasPrefix(secret, "ck_") {
		t.Fatalf("secret shown: %q", secret)
	}
	f.Get(t, secret, "/v1/applications").WantStatus(t, http.StatusOK)

	run("revoke the key",
		chromedp.Click(`a[href="/settings/api"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`#cleanup-prompt`, chromedp.ByID),
		bodyText("Dashboard (finance)"),
		shot("api-settings"),
		chromedp.ActionFunc(func(ctx context.Context) error {
			var id string
			if err := chromedp.Evaluate(`[...document.querySelectorAll("tr")].find(r => r.innerText.includes("Dashboard (finance)")).id.replace("key-", "")`, &id).Do(ctx); err != nil {
				return err
			}
			return chromedp.Click(`#revoke-`+id, chromedp.ByID).Do(ctx)
		}),
		bodyText("is revoked: its secrets no longer work."),
	)
	f.Get(t, secret, "/v1/applications").WantError(t, http.StatusUnauthorized, "unauthenticated", "")

	var endpointID string
	run("create a webhook endpoint and read its deliveries",
		chromedp.Click(`a[href="/webhooks"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`#create-webhook`, chromedp.ByID),
		chromedp.SendKeys(`#webhook-url`, receiver.URL+"/hooks/creditd", chromedp.ByID),
		chromedp.SendKeys(`#webhook-description`, "ERP credit sync", chromedp.ByID),
		chromedp.Click(`[id="event-company.hold_placed"]`, chromedp.ByQuery),
		chromedp.Click(`[id="event-company.hold_lifted"]`, chromedp.ByQuery),
		chromedp.Click(`#create-webhook`, chromedp.ByID),
		chromedp.WaitVisible(`#secret`, chromedp.ByID),
		bodyText("Endpoint “ERP credit sync” added"),
		chromedp.Click(`a[href="/webhooks"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`#endpoints`, chromedp.ByID),
		bodyText("ERP credit sync"),
		shot("webhooks"),
		chromedp.Evaluate(`[...document.querySelectorAll("#endpoints tbody tr")].find(r => r.innerText.includes("ERP credit sync")).id.replace("endpoint-", "")`, &endpointID),
		chromedp.Click(`#endpoints a`, chromedp.ByQuery),
		chromedp.WaitVisible(`#no-attempts`, chromedp.ByID),
		bodyText("No delivery was attempted yet."),
		bodyText("Nothing is waiting."),
	)
	run("send a test event and read its attempt",
		chromedp.Click(`#send-test`, chromedp.ByID),
		chromedp.WaitVisible(`#attempts`, chromedp.ByID),
		bodyText(" sent: "),
		bodyText("(HTTP 200)"),
		shot("webhook-test"),
	)
	if endpoints, err := f.Service.Webhooks.ListEndpoints(staff); err != nil || len(endpoints) != 1 || endpoints[0].ID != endpointID || endpoints[0].Description != "ERP credit sync" {
		t.Errorf("endpoints after the form: %+v %v (page said %s)", endpoints, err, endpointID)
	}

	// A payment for a platform company the store does not have: failed, in the inbox.
	deliverPlatform(t, f.Env, "demo-wholesale.myplatform.com", platformSecret, credit.TopicPaymentCreated, "wh-payment-7003",
		paymentFor(7003, "gid://platform/Company/779", "310.00"))
	run("the platform inbox shows the deliveries with names and amounts",
		chromedp.Click(`a[href="/platform"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`#inbox`, chromedp.ByID),
		bodyText("demo-wholesale.myplatform.com"),
		bodyText("Unknown company"),
		bodyText("Gasthof Zur Post"),
		shot("platform"),
	)

	if err := chromedp.Cancel(ctx); err != nil {
		t.Logf("closing Chromium: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, u := range requested {
		if !strings.HasPrefix(u, f.URL+"/") {
			t.Errorf("the console requested %s: everything must come from the console", u)
		}
	}
	if len(scriptErrors) > 0 {
		t.Errorf("script errors: %v", scriptErrors)
	}
	saveScreenshots(t, shots)
}

// saveScreenshots writes the screenshots to the test's artifact directory and, when asked
// with CREDITD_UPDATE_SCREENSHOTS=1, over the README's copies in docs/images.
func saveScreenshots(t *testing.T, shots map[string][]byte) {
	t.Helper()
	dirs := []string{t.ArtifactDir()}
	if os.Getenv(updateScreenshots) != "" {
		dirs = append(dirs, filepath.Join("..", "docs", "images"))
	}
	for _, dir := range dirs {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, png := range shots {
			if len(png) < 1000 || string(png[1:4]) != "PNG" {
				t.Fatalf("screenshot %s is not a PNG (%d bytes)", name, len(png))
			}
			path := filepath.Join(dir, "console-"+name+".png")
			if err := os.WriteFile(path, png, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		t.Logf("%d screenshots in %s", len(shots), dir)
	}
}

func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
