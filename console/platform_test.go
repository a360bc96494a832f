package console_test

import (
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/creditd/creditd/console"
	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
)

// platformSecret is the app secret the tests' stores are connected with.
const platformSecret = "shpss_0123456789abcdef0123456789abcdef"

// unknownCompanyGID is a platform company no store has, until a test creates it.
const unknownCompanyGID = "gid://platform/Company/777"

// deliverPlatform posts body to the API's platform door as the platform would, signed with
// secret, and returns the inbox row it answered with.
func deliverPlatform(t *testing.T, env *credittest.Env, shop, secret, topic, webhookID, body string) credit.InboxDelivery {
	t.Helper()
	r := env.Do(t, credittest.Request{Method: http.MethodPost, Path: "/platform/webhooks", Body: body, Header: map[string]string{
		"X-Platform-Topic": topic, "X-Platform-Shop-Domain": shop, "X-Platform-Webhook-Id": webhookID,
		"X-Platform-Triggered-At": "2026-03-02T08:00:00Z", "X-Platform-Hmac-Sha256": credit.SignPlatformBody(secret, []byte(body)),
	}})
	if r.Status != http.StatusOK {
		t.Fatalf("deliver %s %s: %d %s", topic, webhookID, r.Status, r.Body)
	}
	var d credit.InboxDelivery
	r.Decode(t, &d)
	return d
}

// paymentFor is a payments/create body without an order, for the platform company gid.
func paymentFor(n int, gid, amount string) string {
	return fmt.Sprintf(`{"id": "gid://platform/Payment/%d", "company_id": %q, "amount": {"amount": %q, "currency": "EUR"}, "processed_at": "2026-03-02T08:00:00Z"}`, n, gid, amount)
}

// connectAndFail connects store to shop and delivers a payment for a company the store does
// not have, which the inbox keeps as failed; it returns that delivery's ID.
func connectAndFail(t *testing.T, env *credittest.Env, store, shop, webhookID string) string {
	t.Helper()
	if _, err := env.Service.Platform.Connect(credittest.Staff(store), shop, platformSecret); err != nil {
		t.Fatalf("connect %s: %v", store, err)
	}
	d := deliverPlatform(t, env, shop, platformSecret, credit.TopicPaymentCreated, webhookID, paymentFor(len(webhookID), unknownCompanyGID, "120.00"))
	if d.Status != credit.InboxFailed {
		t.Fatalf("delivery %s: %+v, want failed", webhookID, d)
	}
	return d.ID
}

// TestPlatformPage: a staff member sees their store's connection and inbox only, filters it by
// status, retries a failed delivery (failed again while its company is unknown, applied once
// it exists, and a second retry changes nothing), and rotates the secret, after which the
// old one is still accepted for the grace; staff of another store see none of it and cannot
// retry it, and a form without the CSRF token is refused.
func TestPlatformPage(t *testing.T) {
	f := newFixture(t)
	mine, theirs := f.deliveries[f.key.ID], f.deliveries[f.otherKey.ID]
	order := deliverPlatform(t, f.Env, "alpine.myplatform.com", platformSecret, credit.TopicOrderCreated, "alpine-order-1",
		`{"id": "gid://platform/Order/5001", "company_id": "gid://platform/Company/42", "payment_terms": {"type": "NET", "due_in_days": 14}, "total": {"amount": "4800.00", "currency": "EUR"}, "created_at": "2026-03-02T08:00:00Z"}`)
	if order.Status != credit.InboxApplied {
		t.Fatalf("order: %+v", order)
	}
	anna, otto := f.browser(t), f.browser(t)
	anna.mustSignIn("anna@example.com", password)
	otto.mustSignIn("otto@example.com", password)

	p := anna.get("/platform").wantStatus(t, http.StatusOK)
	p.wantText(t, `<code id="shop-domain">alpine.myplatform.com</code>`, "Connected since", "2026-03-02 09:00 UTC", "None accepted",
		"alpine-payment-1", "alpine-order-1", "Unknown company", `id="retry-`+mine+`"`, "gid://platform/Order/5001", `aria-current="page">Platform`)
	p.wantNoText(t, "canary", theirs, `id="retry-`+order.ID+`"`)
	otto.get("/platform").wantStatus(t, http.StatusOK).wantText(t, "canary.myplatform.com", "canary-payment-1").
		wantNoText(t, "alpine", mine, order.ID)

	anna.get("/platform?status=failed").wantStatus(t, http.StatusOK).wantText(t, "alpine-payment-1").wantNoText(t, "alpine-order-1")
	anna.get("/platform?status=applied").wantStatus(t, http.StatusOK).wantText(t, "alpine-order-1").wantNoText(t, "alpine-payment-1")
	anna.get("/platform?status=waiting").wantStatus(t, http.StatusOK).wantText(t, "No delivery is waiting.")
	anna.get("/platform?status=lost").wantStatus(t, http.StatusBadRequest).wantText(t, "Status must be one of applied, ignored, waiting, failed, duplicate.")

	// Another store's delivery is not found for Otto, and stays failed.
	otto.get("/platform")
	otto.post("/platform/deliveries/"+mine+"/retry", nil).wantStatus(t, http.StatusNotFound)
	// Without the CSRF token nothing is retried or rotated.
	anna.post("/platform/deliveries/"+mine+"/retry", url.Values{"csrf": {""}}).wantStatus(t, http.StatusForbidden)
	anna.post("/platform/secret", url.Values{"csrf": {"forged"}, "secret": {"shpss_the_new_secret_0123456789"}, "grace": {"1h"}}).wantStatus(t, http.StatusForbidden)
	ledger := func() int {
		t.Helper()
		page, err := f.Service.Ledger.List(credittest.Staff(f.store), f.company.ID, credit.LedgerListParams{})
		if err != nil {
			t.Fatal(err)
		}
		return len(page.Data)
	}
	staff := credittest.Staff(f.store)
	if failed, _ := f.Service.Inbox.List(staff, credit.InboxListParams{Status: credit.InboxFailed}); len(failed.Data) != 1 {
		t.Fatalf("failed deliveries after the refused forms: %+v", failed.Data)
	}

	// The company is still unknown: failed again.
	anna.get("/platform?status=failed")
	anna.follow(anna.post("/platform/deliveries/"+mine+"/retry", url.Values{"status": {"failed"}})).
		wantText(t, "Delivery "+mine+" is failed: unknown company.", `id="retry-`+mine+`"`)
	// Fixed by creating the company: applied once.
	late, err := f.Service.Companies.Create(staff, credit.CompanyInput{Name: "Late Arrival GmbH", PlatformCompanyGID: unknownCompanyGID, PaymentTerms: "NET_30", CreditLimit: "500.00"})
	if err != nil {
		t.Fatal(err)
	}
	before := ledger()
	done := anna.post("/platform/deliveries/"+mine+"/retry", url.Values{"status": {"failed"}})
	if done.Location != "/platform?status=failed" {
		t.Errorf("retry returns to %q, want the inbox as it was filtered", done.Location)
	}
	anna.follow(done).wantText(t, "Delivery "+mine+" is applied.", "No delivery is failed.")
	anna.get("/platform?status=applied").wantText(t, "alpine-payment-1", `href="/companies/`+late.ID+`"`).wantNoText(t, `id="retry-`+mine+`"`)
	entries := func() []credit.LedgerEntry {
		page, err := f.Service.Ledger.List(staff, late.ID, credit.LedgerListParams{})
		if err != nil {
			t.Fatal(err)
		}
		return page.Data
	}
	if got := entries(); len(got) != 1 || got[0].Amount.Amount != "-120.00" {
		t.Fatalf("the late company's ledger after the retry: %+v", got)
	}
	// A second retry (a second click, another tab) changes nothing and says why.
	anna.follow(anna.post("/platform/deliveries/"+mine+"/retry", nil)).wantText(t, "Only failed deliveries are retried; "+mine+" is applied.")
	if got := entries(); len(got) != 1 || ledger() != before {
		t.Fatalf("a second retry wrote to the ledger: %+v", got)
	}
	// Otto's failed delivery is untouched.
	if d, _ := f.Service.Inbox.List(credittest.Staff(f.otherStore), credit.InboxListParams{Status: credit.InboxFailed}); len(d.Data) != 1 || d.Data[0].ID != theirs {
		t.Fatalf("the other store's inbox: %+v", d.Data)
	}

	// Rotation: a secret too short is refused beside its field and not shown again; a good one
	// replaces the secret, the old one still accepted for the grace chosen.
	anna.get("/platform")
	short := anna.post("/platform/secret", url.Values{"secret": {"tooshort"}, "grace": {"1h"}}).wantStatus(t, http.StatusUnprocessableEntity)
	short.wantText(t, `id="platform-secret-error">The platform secret must be 16 to 256 characters`).wantNoText(t, "tooshort")
	const newSecret = "shpss_the_new_secret_0123456789"
	rotated := anna.post("/platform/secret", url.Values{"secret": {newSecret}, "grace": {"1h"}})
	if rotated.Location != "/platform" {
		t.Fatalf("rotation: %d %q\n%.2000s", rotated.Status, rotated.Location, rotated.Body)
	}
	anna.follow(rotated).wantText(t, "The platform secret of shop alpine.myplatform.com is replaced; the previous one is still accepted until 2026-03-02 10:00 UTC.",
		`id="previous-secret">Still accepted until 2026-03-02 10:00 UTC`, `<option value="1h" selected>`).wantNoText(t, newSecret)
	for _, secret := range []string{platformSecret, newSecret} {
		d := deliverPlatform(t, f.Env, "alpine.myplatform.com", secret, credit.TopicPaymentCreated, "after-rotation-"+secret[:12]+fmt.Sprint(len(secret)), paymentFor(900+len(secret), "gid://platform/Company/42", "1.00"))
		if d.Status != credit.InboxApplied {
			t.Errorf("a delivery signed with %q after the rotation: %+v", secret, d)
		}
	}
	if strings.Contains(f.Logs.String(), newSecret) {
		t.Error("the log holds the platform secret")
	}
}

// TestPlatformPageNotConnected: a store without a connection is told how to connect it, with
// the command line as the program's other hints write it.
func TestPlatformPageNotConnected(t *testing.T) {
	e := newConsole(t, func(c *console.Config) { c.Command, c.DatabaseFlag = "go run ./cmd/creditd", " --db 'my shop.db'" })
	store := e.MustStore(t, "Unconnected AG", "EUR")
	e.MustStaff(t, store, "Una", "una@example.com", password)
	b := e.browser(t)
	b.mustSignIn("una@example.com", password)
	p := b.get("/platform").wantStatus(t, http.StatusOK).wantText(t, "The store is not connected", "No delivery.")
	hint := regexp.MustCompile(`<code id="connect-command">([^<]*)</code>`).FindStringSubmatch(p.Body)
	want := `printf '%s\n' 'THE-APP-SECRET' | go run ./cmd/creditd platform connect --db 'my shop.db' --store ` + store + ` --shop-domain SHOP.example.com --secret-stdin`
	if hint == nil || html.UnescapeString(hint[1]) != want {
		t.Fatalf("connect hint %q, want %q", hint, want)
	}
	b.post("/platform/secret", url.Values{"secret": {platformSecret}, "grace": {"1h"}}).wantStatus(t, http.StatusNotFound)
}
