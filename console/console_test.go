package console_test

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
)

// TestCompaniesPage: the companies are listed by name with their figures, 25 a page, and the
// name search and the status filter narrow the list.
func TestCompaniesPage(t *testing.T) {
	f := newFixture(t)
	for i := 0; i < 27; i++ {
		f.MustCompany(t, f.store, fmt.Sprintf("Kunde %02d GmbH", i), "1000.00")
	}
	held := f.MustCompany(t, f.store, "Zum Goldenen Hirschen", "8000.00")
	if _, err := f.Service.Companies.PlaceHold(credittest.Staff(f.store), credit.HoldInput{CompanyID: held.ID}); err != nil {
		t.Fatal(err)
	}
	b := f.browser(t)
	b.mustSignIn("anna@example.com", password)

	first := b.get("/companies").wantStatus(t, http.StatusOK)
	first.wantText(t, "Alpenblick Hotels AG", `<td class="num">25,000.00</td>`, `<td class="num">23,750.00</td>`, "Kunde 00 GmbH", "Kunde 23 GmbH", "<td>Net 30</td>", "Next page",
		`<tfoot id="companies-totals">`, `Of which overdue</a></th><td class="num" id="companies-overdue">0.00</td>`, "Amounts in EUR.").wantNoText(t, "NET_30", " EUR</td>")
	first.wantNoText(t, "Kunde 24 GmbH", "Zum Goldenen Hirschen")
	next := regexp.MustCompile(`href="(/companies\?[^"]*cursor=[^"]+)"`).FindStringSubmatch(first.Body)
	if next == nil {
		t.Fatalf("no next page link:\n%s", first.Body)
	}
	second := b.get(strings.ReplaceAll(next[1], "&amp;", "&")).wantStatus(t, http.StatusOK)
	second.wantText(t, "Kunde 24 GmbH", "Kunde 26 GmbH", "Zum Goldenen Hirschen", "On hold · manual", "First page").wantNoText(t, "Kunde 23 GmbH", "Next page")

	b.get("/companies?q=hirsch").wantText(t, "Zum Goldenen Hirschen").wantNoText(t, "Alpenblick", "Kunde")
	b.get("/companies?status=on_hold").wantText(t, "Zum Goldenen Hirschen").wantNoText(t, "Alpenblick", "Kunde")
	b.get("/companies?status=approved&q=alpen").wantText(t, "Alpenblick Hotels AG").wantNoText(t, "Hirschen")
	b.get("/companies?status=bogus").wantStatus(t, http.StatusBadRequest).wantText(t, "Status must be approved or on_hold.")
	b.get("/companies?cursor=forged").wantStatus(t, http.StatusBadRequest).wantText(t, "Cursor is not valid for this list")
}

// TestCompanyActions: on a company's page a staff member places and lifts a hold, changes the
// limit, adjusts the balance and records platform entries; each result shows once after the
// redirect, each refusal shows the domain's message next to its field with the domain's
// status, and the timeline attributes each action to the member's name.
func TestCompanyActions(t *testing.T) {
	f := newFixture(t)
	b := f.browser(t)
	b.mustSignIn("anna@example.com", password)
	path := "/companies/" + f.company.ID
	b.get(path).wantStatus(t, http.StatusOK).wantText(t, "No hold", "Nothing happened yet", "No entries")

	// A hold, placed and lifted.
	p := b.follow(b.post(path+"/hold", url.Values{"note": {"Awaiting the signed contract"}}))
	p.wantText(t, "Alpenblick Hotels AG is on hold.", "Awaiting the signed contract", "Placed by", "Anna Berg", "Hold placed")
	b.get(path).wantNoText(t, "Alpenblick Hotels AG is on hold.") // the notice shows once
	api := f.Do(t, credittest.Request{Method: http.MethodGet, Path: "/v1/companies/" + f.company.ID, Key: f.MustKey(t, f.store, "check", credit.ScopeReadCredit)})
	if !strings.Contains(string(api.Body), `"placed_by":"Anna Berg"`) {
		t.Errorf("the API does not show the hold placed by the staff member: %s", api.Body)
	}
	b.post(path+"/hold", url.Values{"note": {"again"}}).wantStatus(t, http.StatusConflict).wantText(t, "already has a manual hold")
	b.follow(b.post(path+"/hold/lift", nil)).wantText(t, "The hold on Alpenblick Hotels AG is lifted.", "Hold lifted")
	b.post(path+"/hold/lift", nil).wantStatus(t, http.StatusNotFound).wantText(t, "has no hold", "Alpenblick Hotels AG")
	b.post(path+"/hold", url.Values{"note": {strings.Repeat("n", 501)}}).wantStatus(t, http.StatusUnprocessableEntity).
		wantText(t, `id="hold-note-error">Note must be at most 500 characters.`)

	// The credit limit.
	refused := b.post(path+"/credit-limit", url.Values{"amount": {"12,50"}, "reason": {"typo"}})
	refused.wantStatus(t, http.StatusUnprocessableEntity).wantText(t, `id="limit-amount-error">`, `value="12,50"`, `value="typo"`)
	b.post(path+"/credit-limit", url.Values{"amount": {"-1"}}).wantStatus(t, http.StatusUnprocessableEntity).
		wantText(t, `id="limit-amount-error">Credit limit must be zero or greater.`)
	b.follow(b.post(path+"/credit-limit", url.Values{"amount": {"30000"}, "reason": {"Annual review"}})).
		wantText(t, "Credit limit changed from 25,000.00 EUR to 30,000.00 EUR.", "Credit limit changed", "Annual review")

	// An adjustment, through the API's operation: on the timeline under the member's name.
	b.post(path+"/adjustments", url.Values{"amount": {"0"}, "note": {"x"}}).wantStatus(t, http.StatusUnprocessableEntity).
		wantText(t, `id="adjust-amount-error">An adjustment must not be zero.`)
	b.post(path+"/adjustments", url.Values{"amount": {"5"}, "note": {""}}).wantStatus(t, http.StatusUnprocessableEntity).
		wantText(t, `id="adjust-note-error">`)
	b.follow(b.post(path+"/adjustments", url.Values{"amount": {"-12.50"}, "note": {"Goodwill"}})).
		wantText(t, "Adjustment of −12.50 EUR recorded; outstanding is now −12.50 EUR.", "Adjustment created", "Goodwill")

	// Platform entries, with the contract's sign rules.
	// Payments, refunds and cancellations are entered as positive amounts; the sign comes from
	// the kind.
	b.post(path+"/ledger", url.Values{"kind": {"payment"}, "amount": {"-10.00"}}).wantStatus(t, http.StatusUnprocessableEntity).
		wantText(t, `id="entry-amount-error">Enter the payment as a positive amount`, `<option value="payment" selected>`, `value="-10.00"`)
	b.post(path+"/ledger", url.Values{"kind": {"refund"}, "amount": {"10.00"}}).wantStatus(t, http.StatusUnprocessableEntity).
		wantText(t, `id="entry-order-error">Refund entries need the order's GID.`, `value="10.00"`)
	b.post(path+"/ledger", url.Values{"kind": {"order_placed"}, "amount": {"100"}, "order": {"gid://platform/Order/7"}, "occurred_at": {"yesterday"}}).
		wantStatus(t, http.StatusUnprocessableEntity).wantText(t, `id="entry-occurred-error">Occurred at must be a date such as 2026-11-27, a date and time in UTC such as 2026-11-27 10:00`)
	b.follow(b.post(path+"/ledger", url.Values{"kind": {"order_placed"}, "amount": {"1200.00"}, "order": {"gid://platform/Order/7"}, "note": {"Spring order"}})).
		wantText(t, "Order placed of 1,200.00 EUR recorded; outstanding is now 1,187.50 EUR.", "gid://platform/Order/7", "Spring order")
	// A moment typed as people type it, the very form the message suggests: a date and time
	// in UTC; the ledger shows the entry at that moment.
	typed := f.Clock.Now().UTC().Add(-26 * time.Hour).Truncate(time.Minute)
	b.follow(b.post(path+"/ledger", url.Values{"kind": {"payment"}, "amount": {"0.50"}, "note": {"typed moment"}, "occurred_at": {typed.Format("2006-01-02 15:04") + " UTC"}})).
		wantText(t, `<td class="when">`+typed.Format("2006-01-02 15:04")+` UTC</td><td>Payment</td>`)

	// The timeline names the member for each action, newest first.
	page := b.get(path)
	timeline := page.Body[strings.Index(page.Body, `id="timeline-title"`):]
	for _, event := range []string{"Adjustment created", "Credit limit changed", "Hold lifted", "Hold placed"} {
		row := regexp.MustCompile(`<tr><td class="when">[^<]*</td><td>` + event + `</td><td><span class="actor actor-staff">([^<]*)</span>`).FindStringSubmatch(timeline)
		if row == nil || row[1] != "Anna Berg" {
			t.Errorf("timeline event %s is not attributed to Anna Berg: %v", event, row)
		}
	}

	// Ledger and timeline page on their own.
	for i := 0; i < 20; i++ {
		f.MustRecord(t, credit.LedgerEntryInput{CompanyID: f.company.ID, Kind: credit.KindPayment, Amount: "-1.00", Note: fmt.Sprintf("instalment %02d", i)})
	}
	page = b.get(path).wantText(t, "instalment 19", "Older entries")
	if ledger := page.Body[strings.Index(page.Body, `id="ledger-title"`):strings.Index(page.Body, `id="timeline-title"`)]; strings.Contains(ledger, "instalment 04") {
		t.Error("the ledger's first page shows instalment 04")
	}
	older := regexp.MustCompile(`href="(/companies/[^"?]+\?ledger=[^"#]+)#ledger-title"`).FindStringSubmatch(page.Body)
	if older == nil {
		t.Fatalf("no link to older entries:\n%s", page.Body)
	}
	page = b.get(strings.ReplaceAll(older[1], "&amp;", "&")).wantStatus(t, http.StatusOK).wantText(t, "instalment 04", "Spring order", "Newest entries")
	if ledger := page.Body[strings.Index(page.Body, `id="ledger-title"`):strings.Index(page.Body, `id="timeline-title"`)]; strings.Contains(ledger, "instalment 19") {
		t.Error("the ledger's second page shows instalment 19")
	}
	b.get(path+"?ledger=forged").wantStatus(t, http.StatusBadRequest)
}

// TestOverdueHoldRefusal: an automatic overdue hold cannot be lifted in the console while its
// invoice is unpaid, with the API's status and message; once paid it is gone.
func TestOverdueHoldRefusal(t *testing.T) {
	f := newFixture(t)
	old := credit.At(f.Clock.Now().Add(-40 * 24 * time.Hour))
	f.MustRecord(t, credit.LedgerEntryInput{CompanyID: f.company.ID, Kind: credit.KindOrderPlaced, Amount: "800.00", OrderGID: "gid://platform/Order/5003", OccurredAt: &old})
	key := f.MustKey(t, f.store, "erp", credit.ScopeWriteCredit)
	api := f.Do(t, credittest.Request{Method: http.MethodDelete, Path: "/v1/companies/" + f.company.ID + "/hold", Key: key})
	apiMessage := api.WantError(t, http.StatusConflict, "hold_not_liftable", "").Message

	b := f.browser(t)
	b.mustSignIn("anna@example.com", password)
	path := "/companies/" + f.company.ID
	// The page offers no lift, and says what lifts the hold instead.
	b.get(path).wantText(t, "On hold · overdue", "gid://platform/Order/5003", "Placed by", "system",
		`id="overdue-hold-help">This hold cannot be lifted by hand: a payment of the overdue invoice <code>gid://platform/Order/5003</code> lifts it`).
		wantNoText(t, `id="lift-hold"`)
	// A lift posted anyway (a stale page) lands back on the company's page with the API's
	// reason, its date written for people.
	refused := b.post(path+"/hold/lift", nil).wantStatus(t, http.StatusSeeOther)
	if refused.Location != path+"#hold" {
		t.Fatalf("a refused lift leads to %q, want the company's page", refused.Location)
	}
	due := regexp.MustCompile(`[0-9T:.-]+Z`).FindString(apiMessage)
	readable := strings.Replace(apiMessage, due, "2026-02-20 09:00 UTC", 1)
	b.follow(refused).wantText(t, strings.ToUpper(readable[:1])+readable[1:]+".").wantNoText(t, due)
	if co, _ := f.Service.Companies.Get(credittest.Staff(f.store), f.company.ID); co.Hold == nil {
		t.Fatal("the refused lift removed the hold")
	}
	timeline := b.get(path).Body
	timeline = timeline[strings.Index(timeline, `id="timeline-title"`):]
	for _, want := range []string{`<span class="actor actor-system">System</span></td><td>Was due: 2026-02-20 09:00 UTC; Kind: overdue; Invoice of order: gid://platform/Order/5003</td>`} {
		if !strings.Contains(timeline, want) {
			t.Errorf("the timeline lacks %s:\n%s", want, timeline)
		}
	}
	b.follow(b.post(path+"/ledger", url.Values{"kind": {"payment"}, "amount": {"800.00"}, "order": {"gid://platform/Order/5003"}})).
		wantText(t, "No hold", "Overdue hold lifted", "Payment of 800.00 EUR recorded")
}

// TestApplicationPages: applications are listed with a status filter; an application shows its
// contact and offers exactly the transitions of contract §5; approving asks for the limit and
// terms, refuses bad ones next to their fields, and creates the company.
func TestApplicationPages(t *testing.T) {
	f := newFixture(t)
	b := f.browser(t)
	b.mustSignIn("anna@example.com", password)
	b.get("/applications").wantStatus(t, http.StatusOK).wantText(t, "Bergbäckerei Huber", "DE123456789", "Submitted")
	b.get("/applications?status=approved").wantText(t, "No application is Approved.").wantNoText(t, "Bergbäckerei")
	b.get("/applications?status=nonsense").wantStatus(t, http.StatusBadRequest)

	path := "/applications/" + f.app.ID
	b.get(path).wantText(t, "Ada Buyer", "ada@example.com", "Start the review").wantNoText(t, "Approve and create", "Reject")
	b.follow(b.post(path+"/status", url.Values{"status": {"in_review"}})).wantText(t, "The application is now in review.", "Approve and create", "Reject", "Ask for more information")
	b.follow(b.post(path+"/status", url.Values{"status": {"needs_info"}})).wantText(t, "The application is now needs info.", "Start the review").wantNoText(t, "Approve and create")
	b.post(path+"/status", url.Values{"status": {"approved"}, "credit_limit": {"5000"}, "payment_terms": {"NET_30"}}).
		wantStatus(t, http.StatusUnprocessableEntity).wantText(t, "An application cannot go from needs_info to approved: from needs_info it can go to in_review.")
	b.follow(b.post(path+"/status", url.Values{"status": {"in_review"}}))
	b.post(path+"/status", url.Values{"status": {"approved"}, "credit_limit": {"5000"}, "payment_terms": {"NET_400"}}).
		wantStatus(t, http.StatusUnprocessableEntity).wantText(t, `id="approve-terms-error">The days to pay must be a whole number from 1 to 365.`, `value="5000"`)
	b.post(path+"/status", url.Values{"status": {"approved"}, "credit_limit": {"lots"}, "payment_terms": {"NET_30"}}).
		wantStatus(t, http.StatusUnprocessableEntity).wantText(t, `id="approve-limit-error">`)
	approved := b.post(path+"/status", url.Values{"status": {"approved"}, "credit_limit": {"5000"}, "payment_terms": {"NET_14"}})
	approved.wantStatus(t, http.StatusSeeOther)
	if !strings.HasPrefix(approved.Location, "/companies/co_") {
		t.Fatalf("approval leads to %q, want the new company", approved.Location)
	}
	b.follow(approved).wantText(t, "Application approved: Bergbäckerei Huber is a company with a credit limit of 5,000.00 EUR on Net 14.", "Bergbäckerei Huber", "Net 14")
	b.get(path).wantText(t, "Approved", "it has no further step").wantNoText(t, "Start the review")

	// An erased contact shows as such.
	if _, err := f.Service.Applications.ErasePerson(credittest.Staff(f.store), "ada@example.com"); err != nil {
		t.Fatal(err)
	}
	b.get(path).wantText(t, "erased at their request").wantNoText(t, "Ada Buyer")
}

// TestAPISettings: keys are listed with scopes, creation and last use; a key unused for 90
// days is flagged with a cleanup prompt; a new key's secret is shown once and works; a rotation
// shows its grace; a revoked key is refused by the REST API at once.
func TestAPISettings(t *testing.T) {
	f := newFixture(t)
	b := f.browser(t)
	b.mustSignIn("anna@example.com", password)
	settings := b.get("/settings/api").wantStatus(t, http.StatusOK)
	settings.wantText(t, "ERP", f.key.ID, "read_credit", "2026-03-02 09:00 UTC", "Never").wantNoText(t, "Clean up unused keys")

	// Cleanup prompt after 90 days without use.
	f.Clock.Advance(credit.DefaultStaleAfter)
	b.mustSignIn("anna@example.com", password)
	b.get("/settings/api").wantText(t, "Clean up unused keys", "One key has not been used for 90 days", "Unused for 90 days: consider revoking it.")

	// Creating: refusals next to the fields, then the secret, shown once.
	b.post("/settings/api/keys", url.Values{"label": {"Dashboard"}}).wantStatus(t, http.StatusUnprocessableEntity).
		wantText(t, `id="key-scopes-error">A key needs at least one scope.`, `value="Dashboard"`)
	b.post("/settings/api/keys", url.Values{"label": {" "}, "scopes": {"read_credit"}}).wantStatus(t, http.StatusUnprocessableEntity).
		wantText(t, `id="key-label-error">Label must not be empty.`, `<input type="checkbox" id="scope-read_credit" name="scopes" value="read_credit" checked>`)
	created := b.post("/settings/api/keys", url.Values{"label": {"Dashboard"}, "scopes": {"read_credit", "read_applications"}}).wantStatus(t, http.StatusOK)
	secret := regexp.MustCompile(`id="secret" type="text" readonly value="(ck_[0-9A-Za-z]+)"`).FindStringSubmatch(created.Body)
	if secret == nil {
		t.Fatalf("no secret on the page:\n%s", created.Body)
	}
	created.wantText(t, "Key “Dashboard” created", "it is shown only once")
	if created.Header.Get("Cache-Control") != "no-store" {
		t.Error("the secret's page may be cached")
	}
	f.Get(t, secret[1], "/v1/applications").WantStatus(t, http.StatusOK)
	list := b.get("/settings/api").wantText(t, "Dashboard", "read_applications").wantNoText(t, secret[1])
	keyID := regexp.MustCompile(`<code class="small">(key_[0-9A-Za-z]+)</code>`).FindAllStringSubmatch(list.Body, -1)
	if len(keyID) != 2 {
		t.Fatalf("keys on the page: %v", keyID)
	}
	dashboard := keyID[1][1]
	f.Clock.Advance(2 * time.Minute)
	f.Get(t, secret[1], "/v1/applications").WantStatus(t, http.StatusOK)
	b.get("/settings/api").wantText(t, "2026-05-31 09:02 UTC") // last used

	// Rotating with a grace of one hour.
	rotated := b.post("/settings/api/keys/"+dashboard+"/rotate", url.Values{"grace": {"1h"}}).wantStatus(t, http.StatusOK)
	rotated.wantText(t, "New secret for key "+dashboard, "keeps working until", "2026-05-31 10:02 UTC", "a grace of 1h0m0s")
	newSecret := regexp.MustCompile(`value="(ck_[0-9A-Za-z]+)"`).FindStringSubmatch(rotated.Body)[1]
	f.Get(t, secret[1], "/v1/applications").WantStatus(t, http.StatusOK)
	f.Get(t, newSecret, "/v1/applications").WantStatus(t, http.StatusOK)
	b.get("/settings/api")
	b.post("/settings/api/keys/"+dashboard+"/rotate", url.Values{"grace": {"forever"}}).wantStatus(t, http.StatusUnprocessableEntity).
		wantText(t, `id="grace-`+dashboard+`-error">Grace must be a duration such as 24h.`)
	b.post("/settings/api/keys/"+dashboard+"/rotate", url.Values{"grace": {"-1h"}}).wantStatus(t, http.StatusUnprocessableEntity).
		wantText(t, "Grace must not be negative.")
	f.Clock.Advance(time.Hour + time.Minute)
	f.Get(t, secret[1], "/v1/applications").WantError(t, http.StatusUnauthorized, "unauthenticated", "")

	// Revoking: refused by the API at once; a second revoke finds no live key.
	b.get("/settings/api")
	b.follow(b.post("/settings/api/keys/"+dashboard+"/revoke", nil)).wantText(t, "Key "+dashboard+" is revoked", "Revoked 2026-05-31")
	f.Get(t, newSecret, "/v1/applications").WantError(t, http.StatusUnauthorized, "unauthenticated", "")
	b.post("/settings/api/keys/"+dashboard+"/revoke", nil).wantStatus(t, http.StatusNotFound)
}

// TestPersonErasure: the erasure needs a confirmation, says how many applications it changed
// (without repeating the email), and the contact data is gone.
func TestPersonErasure(t *testing.T) {
	f := newFixture(t)
	b := f.browser(t)
	b.mustSignIn("anna@example.com", password)
	b.get("/privacy").wantStatus(t, http.StatusOK)
	b.post("/privacy/erase", url.Values{"email": {"ada@example.com"}}).wantStatus(t, http.StatusUnprocessableEntity).
		wantText(t, `id="erase-confirm-error">Confirm that the erasure cannot be undone.`, `value="ada@example.com"`)
	b.post("/privacy/erase", url.Values{"email": {" "}, "confirm": {"yes"}}).wantStatus(t, http.StatusUnprocessableEntity).
		wantText(t, `id="erase-email-error">Email must not be empty.`)
	done := b.follow(b.post("/privacy/erase", url.Values{"email": {"ADA@example.com"}, "confirm": {"yes"}}))
	done.wantText(t, "1 application had that email: its contact name and email are erased.").wantNoText(t, "ada@example.com")
	a, _ := f.Service.Applications.Get(credittest.Staff(f.store), f.app.ID)
	if !a.Contact.Redacted || a.Contact.Email != nil {
		t.Fatalf("contact after erasure: %+v", a.Contact)
	}
	b.follow(b.post("/privacy/erase", url.Values{"email": {"ada@example.com"}, "confirm": {"yes"}})).wantText(t, "No application had that email")
}

// TestSignOut: signing out ends the session on the server, not only in the browser.
func TestSignOut(t *testing.T) {
	f := newFixture(t)
	b := f.browser(t)
	b.mustSignIn("anna@example.com", password)
	token := b.cookie("creditd_session")
	b.follow(b.post("/logout", nil)).wantStatus(t, http.StatusOK).wantText(t, "You have signed out.")
	if _, _, err := f.Service.Staff.ResumeSession(t.Context(), token, credit.SessionPolicy{}); err == nil {
		t.Fatal("the session still works after sign-out")
	}
	b.get("/companies").wantStatus(t, http.StatusSeeOther)
}

// TestCompaniesSorted: the companies list sorts by status, outstanding and available credit
// across all its pages (a company last by name comes first when it owes the most), each
// heading's link reversing the order it shows; the totals row stays.
func TestCompaniesSorted(t *testing.T) {
	f := newFixture(t)
	for i := 0; i < 26; i++ {
		co := f.MustCompany(t, f.store, fmt.Sprintf("Kunde %02d GmbH", i), "1000.00")
		f.MustRecord(t, credit.LedgerEntryInput{CompanyID: co.ID, Kind: credit.KindOrderPlaced, Amount: fmt.Sprintf("%d.00", 10+i), OrderGID: fmt.Sprintf("gid://platform/Order/%d", 100+i)})
	}
	debtor := f.MustCompany(t, f.store, "Zeppelin Bau AG", "50000.00")
	f.MustRecord(t, credit.LedgerEntryInput{CompanyID: debtor.ID, Kind: credit.KindOrderPlaced, Amount: "9000.00", OrderGID: "gid://platform/Order/900"})
	held := f.MustCompany(t, f.store, "Yak Handel KG", "100.00")
	if _, err := f.Service.Companies.PlaceHold(credittest.Staff(f.store), credit.HoldInput{CompanyID: held.ID}); err != nil {
		t.Fatal(err)
	}
	b := f.browser(t)
	b.mustSignIn("anna@example.com", password)
	rows := func(p *page) []string {
		t.Helper()
		var names []string
		for _, m := range regexp.MustCompile(`<th scope="row"><a href="/companies/[^"]+">([^<]+)</a></th>`).FindAllStringSubmatch(p.Body, -1) {
			names = append(names, m[1])
		}
		return names
	}
	first := func(p *page, want string) {
		t.Helper()
		if got := rows(p); len(got) == 0 || got[0] != want {
			t.Errorf("first row %v, want %q", got, want)
		}
	}

	byName := b.get("/companies").wantStatus(t, http.StatusOK)
	first(byName, "Alpenblick Hotels AG")
	byName.wantText(t, `aria-sort="ascending"><a href="/companies?order=desc&sort=name">Name ↑</a>`, `href="/companies?order=desc&sort=outstanding">Outstanding</a>`)

	owes := b.get("/companies?sort=outstanding&order=desc").wantStatus(t, http.StatusOK)
	first(owes, "Zeppelin Bau AG")
	owes.wantText(t, `aria-sort="descending"`, `<tfoot id="companies-totals">`, "9,585.00", "Next page").wantNoText(t, "Kunde 00 GmbH")
	if got := rows(owes); len(got) != 25 || got[1] != "Kunde 25 GmbH" || got[24] != "Kunde 02 GmbH" {
		t.Errorf("by outstanding, largest first: %v", got)
	}
	next := regexp.MustCompile(`href="(/companies\?[^"]*page=2[^"]*)" rel="next"`).FindStringSubmatch(owes.Body)
	if next == nil {
		t.Fatalf("no next page in the sorted list:\n%s", owes.Body)
	}
	second := b.get(strings.ReplaceAll(next[1], "&amp;", "&")).wantStatus(t, http.StatusOK).wantText(t, "First page").wantNoText(t, "Next page")
	if got := rows(second); len(got) != 4 || got[0] != "Kunde 01 GmbH" || got[1] != "Kunde 00 GmbH" {
		t.Errorf("by outstanding, second page: %v", got)
	}
	first(b.get("/companies?sort=outstanding&order=asc"), "Alpenblick Hotels AG") // 0.00, first by name among the zeros

	first(b.get("/companies?sort=available&order=desc"), "Zeppelin Bau AG") // 50,000 less 9,000
	first(b.get("/companies?sort=available&order=asc"), "Yak Handel KG")
	first(b.get("/companies?sort=status&order=desc"), "Yak Handel KG")
	first(b.get("/companies?sort=status&order=desc&status=approved"), "Alpenblick Hotels AG")
	b.get("/companies?sort=outstanding&order=desc&q=kunde+2").wantStatus(t, http.StatusOK).wantText(t, "Kunde 25 GmbH").wantNoText(t, "Zeppelin")
}
