package server_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
	"github.com/creditd/creditd/graph"
	"github.com/creditd/creditd/server"
	"github.com/creditd/creditd/tenant"
	"github.com/creditd/creditd/webhook"
)

// platformFixture is a store connected to its shop, with a company the platform knows as
// gid://platform/Company/42 on NET_30.
type platformFixture struct {
	env     *credittest.Env
	storeID string
	company credit.Company
	key     string
	shop    string
	secret  string
}

const testPlatformSecret = "shpss_0123456789abcdef0123456789abcdef"

func newPlatformFixture(t *testing.T, config ...func(*server.Config)) *platformFixture {
	t.Helper()
	sealer := credittest.NewSealer(t)
	env := credittest.New(t, credittest.Options{ServiceOptions: func(o *credit.Options) {
		o.WebhookSealer = func() (*webhook.Sealer, error) { return sealer, nil }
	}, ServerConfig: func(c *server.Config) {
		for _, f := range config {
			f(c)
		}
	}})
	f := &platformFixture{env: env, shop: "acme.myplatform.com", secret: testPlatformSecret}
	f.storeID = env.MustStore(t, "Acme", "EUR")
	f.company = env.MustCompany(t, f.storeID, "Buyer GmbH", "1000.00")
	f.key = env.MustKey(t, f.storeID, "ERP", credit.ScopeReadCredit, credit.ScopeWriteCredit)
	if _, err := env.Service.Platform.Connect(credittest.Staff(f.storeID), f.shop, f.secret); err != nil {
		t.Fatalf("connect: %v", err)
	}
	return f
}

// deliver posts body as the platform would, signed with secret.
func (f *platformFixture) deliver(t *testing.T, shop, secret, topic, webhookID, body string) *credittest.Response {
	t.Helper()
	return f.env.Do(t, credittest.Request{Method: http.MethodPost, Path: "/platform/webhooks", Body: body, Header: map[string]string{
		"X-Platform-Topic": topic, "X-Platform-Shop-Domain": shop, "X-Platform-Webhook-Id": webhookID,
		"X-Platform-Triggered-At": "2026-03-02T09:00:00Z", "X-Platform-Hmac-Sha256": credit.SignPlatformBody(secret, []byte(body)),
	}})
}

// send delivers body signed correctly and returns the inbox row it answered with.
func (f *platformFixture) send(t *testing.T, topic, webhookID, body string) credit.InboxDelivery {
	t.Helper()
	r := f.deliver(t, f.shop, f.secret, topic, webhookID, body)
	if r.Status != http.StatusOK {
		t.Fatalf("deliver %s %s: %d %s", topic, webhookID, r.Status, r.Body)
	}
	var d credit.InboxDelivery
	r.Decode(t, &d)
	return d
}

func (f *platformFixture) inbox(t *testing.T, status string) []credit.InboxDelivery {
	t.Helper()
	page, err := f.env.Service.Inbox.List(credittest.Staff(f.storeID), credit.InboxListParams{Status: status, ListParams: credit.ListParams{Limit: ptr(250)}})
	if err != nil {
		t.Fatalf("inbox: %v", err)
	}
	return page.Data
}

func (f *platformFixture) companyNow(t *testing.T, id string) credit.Company {
	t.Helper()
	var c credit.Company
	f.env.Get(t, f.key, "/v1/companies/"+id).WantStatus(t, http.StatusOK).Decode(t, &c)
	return c
}

func (f *platformFixture) ledger(t *testing.T, id string) []credit.LedgerEntry {
	t.Helper()
	var page credit.Page[credit.LedgerEntry]
	f.env.Get(t, f.key, "/v1/companies/"+id+"/ledger?limit=250").WantStatus(t, http.StatusOK).Decode(t, &page)
	return page.Data
}

func ptr[T any](v T) *T { return &v }

func orderBody(n int, company string, days *int, amount string) string {
	terms := "null"
	if days != nil {
		terms = fmt.Sprintf(`{"type": "NET", "due_in_days": %d}`, *days)
	}
	co := "null"
	if company != "" {
		co = fmt.Sprintf("%q", company)
	}
	return fmt.Sprintf(`{"id": "gid://platform/Order/%d", "company_id": %s, "payment_terms": %s, "total": {"amount": %q, "currency": "EUR"}, "created_at": "2026-03-01T10:00:00Z", "note": "ignored member"}`,
		n, co, terms, amount)
}

func paymentBody(n, order int, company, amount string) string {
	o := "null"
	if order > 0 {
		o = fmt.Sprintf(`"gid://platform/Order/%d"`, order)
	}
	return fmt.Sprintf(`{"id": "gid://platform/Payment/%d", "order_id": %s, "company_id": %q, "amount": {"amount": %q, "currency": "EUR"}, "processed_at": "2026-03-02T08:00:00Z"}`,
		n, o, company, amount)
}

const gid42 = "gid://platform/Company/42"

// TestPlatformDoorRefusesWhatIsNotSigned: a bad or missing signature, an unknown shop and a
// rotated-out secret after its grace are 401, and nothing is stored; the previous secret is
// accepted during its grace.
func TestPlatformDoorRefusesWhatIsNotSigned(t *testing.T) {
	f := newPlatformFixture(t)
	body := orderBody(1, gid42, ptr(14), "100.00")
	refused := func(what string, r *credittest.Response) {
		t.Helper()
		r.WantError(t, http.StatusUnauthorized, "unauthenticated", "")
		if rows := f.inbox(t, ""); len(rows) != 0 {
			t.Fatalf("%s: stored %d inbox rows", what, len(rows))
		}
		if c := f.companyNow(t, f.company.ID); c.Outstanding.Amount != "0.00" {
			t.Fatalf("%s: outstanding %s", what, c.Outstanding.Amount)
		}
	}
	refused("wrong secret", f.deliver(t, f.shop, "shpss_not_the_secret_0123456789", credit.TopicOrderCreated, "w1", body))
	refused("unknown shop", f.deliver(t, "other.myplatform.com", f.secret, credit.TopicOrderCreated, "w1", body))
	refused("missing signature", f.env.Do(t, credittest.Request{Method: http.MethodPost, Path: "/platform/webhooks", Body: body, Header: map[string]string{
		"X-Platform-Topic": credit.TopicOrderCreated, "X-Platform-Shop-Domain": f.shop, "X-Platform-Webhook-Id": "w1"}}))
	// A signature over another body.
	r := f.env.Do(t, credittest.Request{Method: http.MethodPost, Path: "/platform/webhooks", Body: strings.Replace(body, "100.00", "1.00", 1), Header: map[string]string{
		"X-Platform-Topic": credit.TopicOrderCreated, "X-Platform-Shop-Domain": f.shop, "X-Platform-Webhook-Id": "w2",
		"X-Platform-Hmac-Sha256": credit.SignPlatformBody(f.secret, []byte(body))}})
	if r.Status != http.StatusUnauthorized {
		t.Fatalf("signature of another body: %d", r.Status)
	}

	// Rotation: the old secret works for its grace, then 401.
	const newSecret = "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"
	if _, err := f.env.Service.Platform.RotateSecret(credittest.Staff(f.storeID), newSecret, time.Hour); err != nil {
		t.Fatal(err)
	}
	f.env.Clock.Advance(59 * time.Minute)
	if r := f.deliver(t, f.shop, f.secret, credit.TopicOrderCreated, "w3", orderBody(3, gid42, ptr(14), "1.00")); r.Status != http.StatusOK {
		t.Fatalf("old secret during its grace: %d %s", r.Status, r.Body)
	}
	if r := f.deliver(t, f.shop, newSecret, credit.TopicOrderCreated, "w4", orderBody(4, gid42, ptr(14), "1.00")); r.Status != http.StatusOK {
		t.Fatalf("new secret: %d %s", r.Status, r.Body)
	}
	f.env.Clock.Advance(2 * time.Minute)
	before := len(f.inbox(t, ""))
	if r := f.deliver(t, f.shop, f.secret, credit.TopicOrderCreated, "w5", orderBody(5, gid42, ptr(14), "1.00")); r.Status != http.StatusUnauthorized {
		t.Fatalf("old secret after its grace: %d %s", r.Status, r.Body)
	}
	if after := len(f.inbox(t, "")); after != before {
		t.Fatalf("old secret after grace stored a row: %d -> %d", before, after)
	}
}

// TestPlatformFailedDeliveries: each reason a correctly signed delivery cannot be applied is
// 200 and kept as failed with its reason, and nothing reaches the ledger; `platform retry`
// applies an unknown company's order once the company exists, and only once.
func TestPlatformFailedDeliveries(t *testing.T) {
	f := newPlatformFixture(t)
	cases := []struct {
		name, topic, body, reason string
	}{
		{"unknown company", credit.TopicOrderCreated, orderBody(1, "gid://platform/Company/999", ptr(14), "100.00"), credit.ReasonUnknownCompany},
		{"other currency", credit.TopicOrderCreated, strings.Replace(orderBody(2, gid42, ptr(14), "100.00"), "EUR", "USD", 1), credit.ReasonCurrencyMismatch},
		{"amount as a number", credit.TopicOrderCreated, strings.Replace(orderBody(3, gid42, ptr(14), "100.00"), `"100.00"`, "100.00", 1), credit.ReasonInvalidAmount},
		{"malformed amount", credit.TopicPaymentCreated, paymentBody(4, 0, gid42, "1e3"), credit.ReasonInvalidAmount},
		{"too many decimals", credit.TopicPaymentCreated, paymentBody(5, 0, gid42, "1.001"), credit.ReasonInvalidAmount},
		{"zero", credit.TopicRefundCreated, `{"id": "gid://platform/Refund/6", "order_id": "gid://platform/Order/1", "company_id": "` + gid42 + `", "amount": {"amount": "0.00", "currency": "EUR"}, "created_at": "2026-03-02T08:00:00Z"}`, credit.ReasonInvalidAmount},
		{"not JSON", credit.TopicOrderCreated, `{"id": `, credit.ReasonUnparseableBody},
		{"no id", credit.TopicPaymentCreated, `{"company_id": "` + gid42 + `", "amount": {"amount": "1.00", "currency": "EUR"}, "processed_at": "2026-03-02T08:00:00Z"}`, credit.ReasonUnparseableBody},
		{"bad timestamp", credit.TopicOrderCancelled, `{"id": "gid://platform/Order/1", "company_id": "` + gid42 + `", "cancelled_at": "yesterday"}`, credit.ReasonUnparseableBody},
		{"refund without order", credit.TopicRefundCreated, `{"id": "gid://platform/Refund/7", "company_id": "` + gid42 + `", "amount": {"amount": "1.00", "currency": "EUR"}, "created_at": "2026-03-02T08:00:00Z"}`, credit.ReasonUnparseableBody},
	}
	// An order recorded for one company, and a payment naming it for another.
	other := f.env.MustCompany(t, f.storeID, "Other GmbH", "100.00")
	f.send(t, credit.TopicOrderCreated, "order-8", orderBody(8, gid42, ptr(14), "10.00"))
	cases = append(cases, struct{ name, topic, body, reason string }{"order of another company", credit.TopicPaymentCreated,
		paymentBody(8, 8, *other.PlatformCompanyGID, "1.00"), credit.ReasonOrderOfAnotherCompany})
	ids := map[string]string{}
	for i, tc := range cases {
		d := f.send(t, tc.topic, fmt.Sprintf("fail-%d", i), tc.body)
		if d.Status != credit.InboxFailed || d.Reason == nil || *d.Reason != tc.reason || d.LedgerEntryID != nil {
			t.Errorf("%s: %+v, want failed %s", tc.name, d, tc.reason)
		}
		ids[tc.name] = d.ID
	}
	if n, m := len(f.ledger(t, f.company.ID)), len(f.ledger(t, other.ID)); n != 1 || m != 0 {
		t.Fatalf("failed deliveries wrote ledger entries: %d and %d, want the order's alone", n, m)
	}
	if got := len(f.inbox(t, credit.InboxFailed)); got != len(cases) {
		t.Fatalf("inbox shows %d failed, want %d", got, len(cases))
	}

	staff := credittest.Staff(f.storeID)
	// Still unknown: failed again, nothing applied.
	if d, err := f.env.Service.Inbox.Retry(staff, ids["unknown company"]); err != nil || d.Status != credit.InboxFailed {
		t.Fatalf("retry before the company exists: %+v %v", d, err)
	}
	co, err := f.env.Service.Companies.Create(staff, credit.CompanyInput{Name: "Late GmbH", PlatformCompanyGID: "gid://platform/Company/999", PaymentTerms: "NET_30", CreditLimit: "500.00"})
	if err != nil {
		t.Fatal(err)
	}
	d, err := f.env.Service.Inbox.Retry(staff, ids["unknown company"])
	if err != nil || d.Status != credit.InboxApplied || d.LedgerEntryID == nil || d.CompanyID == nil || *d.CompanyID != co.ID {
		t.Fatalf("retry once the company exists: %+v %v", d, err)
	}
	if _, err := f.env.Service.Inbox.Retry(staff, ids["unknown company"]); credit.CodeOf(err) != credit.CodeValidationFailed {
		t.Fatalf("second retry of an applied delivery: %v", err)
	}
	if c := f.companyNow(t, co.ID); c.Outstanding.Amount != "100.00" || len(f.ledger(t, co.ID)) != 1 {
		t.Fatalf("after retry: outstanding %s, %d entries", c.Outstanding.Amount, len(f.ledger(t, co.ID)))
	}
}

// TestPlatformDeliveriesApplyOnceInAnyOrder: the platform's terms set the due date; a payment
// before its order waits and is applied with it; retries and the same object under another
// webhook id change nothing; ignored orders and their payments; cancellation of what is open.
func TestPlatformDeliveriesApplyOnceInAnyOrder(t *testing.T) {
	f := newPlatformFixture(t)
	co := f.company.ID

	// The payment arrives first: it waits.
	p := f.send(t, credit.TopicPaymentCreated, "w-pay", paymentBody(1, 1, gid42, "40.00"))
	if p.Status != credit.InboxWaiting || len(f.ledger(t, co)) != 0 {
		t.Fatalf("payment before its order: %+v", p)
	}
	o := f.send(t, credit.TopicOrderCreated, "w-order", orderBody(1, gid42, ptr(14), "100.00"))
	if o.Status != credit.InboxApplied || o.LedgerEntryID == nil {
		t.Fatalf("order: %+v", o)
	}
	entries := f.ledger(t, co)
	if len(entries) != 2 || entries[1].Kind != credit.KindOrderPlaced || entries[0].Kind != credit.KindPayment || entries[0].Amount.Amount != "-40.00" {
		t.Fatalf("ledger after the order: %+v", entries)
	}
	if c := f.companyNow(t, co); c.Outstanding.Amount != "60.00" {
		t.Fatalf("outstanding %s, want 60.00", c.Outstanding.Amount)
	}
	if rows := f.inbox(t, credit.InboxWaiting); len(rows) != 0 {
		t.Fatalf("still waiting: %+v", rows)
	}
	// Retries and the same objects under other webhook ids: nothing changes.
	if again := f.send(t, credit.TopicOrderCreated, "w-order", orderBody(1, gid42, ptr(14), "100.00")); again.ID != o.ID {
		t.Fatalf("retry answered another row: %+v", again)
	}
	dup := f.send(t, credit.TopicPaymentCreated, "w-pay-2", paymentBody(1, 1, gid42, "40.00"))
	if dup.Status != credit.InboxDuplicate || dup.DuplicateOf == nil || *dup.DuplicateOf != p.ID {
		t.Fatalf("same payment under another webhook id: %+v", dup)
	}
	if n := len(f.ledger(t, co)); n != 2 {
		t.Fatalf("duplicates reached the ledger: %d entries", n)
	}

	// The order's own terms (14 days) win over the company's NET_30: overdue after 14 days.
	f.env.Clock.Set(time.Date(2026, 3, 15, 10, 0, 1, 0, time.UTC))
	if _, err := f.env.Service.Maintenance.SweepHolds(context.Background()); err != nil {
		t.Fatal(err)
	}
	c := f.companyNow(t, co)
	if c.Hold == nil || c.Hold.Kind != "overdue" || c.Hold.DueAt == nil || !c.Hold.DueAt.Equal(time.Date(2026, 3, 15, 10, 0, 0, 0, time.UTC)) {
		t.Fatalf("hold after the platform's 14 days: %+v", c.Hold)
	}
	// The cancellation reverses what is still open (60.00) and lifts the hold; a second
	// cancellation (another webhook id) is a duplicate.
	cancel := `{"id": "gid://platform/Order/1", "company_id": "` + gid42 + `", "cancelled_at": "2026-03-15T11:00:00Z"}`
	if d := f.send(t, credit.TopicOrderCancelled, "w-cancel", cancel); d.Status != credit.InboxApplied {
		t.Fatalf("cancellation: %+v", d)
	}
	c = f.companyNow(t, co)
	if c.Outstanding.Amount != "0.00" || c.Hold != nil {
		t.Fatalf("after cancellation: %+v", c)
	}
	if e := f.ledger(t, co)[0]; e.Kind != credit.KindCancellation || e.Amount.Amount != "-60.00" {
		t.Fatalf("cancellation entry: %+v", e)
	}
	if d := f.send(t, credit.TopicOrderCancelled, "w-cancel-2", cancel); d.Status != credit.InboxDuplicate {
		t.Fatalf("second cancellation: %+v", d)
	}

	// Ignored: an order without terms, one without a company, another topic; a payment for
	// the ignored order is ignored too, whether it came before or after.
	early := f.send(t, credit.TopicPaymentCreated, "w-early", paymentBody(2, 2, gid42, "5.00"))
	for _, tc := range []struct{ topic, body, reason string }{
		{credit.TopicOrderCreated, orderBody(2, gid42, nil, "50.00"), credit.ReasonNoPaymentTerms},
		{credit.TopicOrderCreated, orderBody(3, "", ptr(30), "50.00"), credit.ReasonNoCompany},
		{"customers/create", `{"id": 1}`, credit.ReasonUnsupportedTopic},
		{credit.TopicPaymentCreated, paymentBody(3, 2, gid42, "5.00"), credit.ReasonOrderIgnored},
	} {
		d := f.send(t, tc.topic, "w-ign-"+tc.reason, tc.body)
		if d.Status != credit.InboxIgnored || *d.Reason != tc.reason {
			t.Errorf("%s: %+v, want ignored %s", tc.topic, d, tc.reason)
		}
	}
	for _, d := range f.inbox(t, "") {
		if d.ID == early.ID && (d.Status != credit.InboxIgnored || *d.Reason != credit.ReasonOrderIgnored) {
			t.Errorf("payment that waited for an ignored order: %+v", d)
		}
	}
	if n := len(f.ledger(t, co)); n != 3 {
		t.Fatalf("ignored deliveries reached the ledger: %d entries", n)
	}

	// The timeline names the platform as the actor of its entries.
	page, err := f.env.Service.Timeline.List(credittest.Staff(f.storeID), co, credit.ListParams{Limit: ptr(250)})
	if err != nil {
		t.Fatal(err)
	}
	platform := 0
	for _, ev := range page.Data {
		if ev.Type == credit.TimelinePlatformEntryRecorded {
			platform++
			if ev.Actor != (credit.Actor{Type: tenant.ActorPlatform, Label: "platform"}) {
				t.Errorf("platform entry attributed to %+v", ev.Actor)
			}
		}
	}
	if platform != 3 {
		t.Errorf("%d platform entries on the timeline, want 3", platform)
	}
}

// TestPlatformDeliveriesStayInTheirStore: the same company GID in two stores; a delivery for
// shop A never touches store B.
func TestPlatformDeliveriesStayInTheirStore(t *testing.T) {
	f := newPlatformFixture(t)
	other := f.env.MustStore(t, "Other", "EUR")
	otherCo := f.env.MustCompany(t, other, "Other Buyer", "1000.00")
	if otherCo.PlatformCompanyGID == nil || *otherCo.PlatformCompanyGID != gid42 {
		t.Fatalf("other store's company: %+v", otherCo.PlatformCompanyGID)
	}
	if _, err := f.env.Service.Platform.Connect(credittest.Staff(other), "other.myplatform.com", "shpss_other_secret_0123456789"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.env.Service.Platform.Connect(credittest.Staff(other), f.shop, "shpss_other_secret_0123456789"); credit.CodeOf(err) != credit.CodeValidationFailed {
		t.Fatalf("second connection: %v", err)
	}
	f.send(t, credit.TopicOrderCreated, "w1", orderBody(1, gid42, ptr(14), "100.00"))
	otherKey := f.env.MustKey(t, other, "other ERP", credit.ScopeReadCredit)
	var c credit.Company
	f.env.Get(t, otherKey, "/v1/companies/"+otherCo.ID).WantStatus(t, http.StatusOK).Decode(t, &c)
	if c.Outstanding.Amount != "0.00" {
		t.Fatalf("store B's company moved: %s", c.Outstanding.Amount)
	}
	if c := f.companyNow(t, f.company.ID); c.Outstanding.Amount != "100.00" {
		t.Fatalf("store A's company: %s", c.Outstanding.Amount)
	}
	page, err := f.env.Service.Inbox.List(credittest.Staff(other), credit.InboxListParams{})
	if err != nil || len(page.Data) != 0 {
		t.Fatalf("store B's inbox: %+v %v", page.Data, err)
	}
	// Store A's secret does not sign for store B's shop.
	if r := f.deliver(t, "other.myplatform.com", f.secret, credit.TopicOrderCreated, "w2", orderBody(2, gid42, ptr(14), "1.00")); r.Status != http.StatusUnauthorized {
		t.Fatalf("A's secret for B's shop: %d", r.Status)
	}
}

// TestPlatformCreditCheck: approved within the available credit, declined beyond it, on hold
// (which wins over insufficient credit), for an unknown company and another currency; it
// writes nothing.
func TestPlatformCreditCheck(t *testing.T) {
	f := newPlatformFixture(t)
	check := func(company, amount, currency string) map[string]any {
		t.Helper()
		body := fmt.Sprintf(`{"company_id": %q, "amount": {"amount": %q, "currency": %q}}`, company, amount, currency)
		r := f.env.Do(t, credittest.Request{Method: http.MethodPost, Path: "/platform/credit-checks", Body: body, Header: map[string]string{
			"X-Platform-Shop-Domain": f.shop, "X-Platform-Hmac-Sha256": credit.SignPlatformBody(f.secret, []byte(body))}})
		if r.Status != http.StatusOK {
			t.Fatalf("credit check: %d %s", r.Status, r.Body)
		}
		return r.JSON(t)
	}
	want := func(got map[string]any, decision string, reason any) {
		t.Helper()
		if got["decision"] != decision || got["reason"] != reason {
			t.Fatalf("credit check: %v, want %s %v", got, decision, reason)
		}
	}
	// Limit 1000.00, buffer 5%: 950.00 available.
	got := check(gid42, "950.00", "EUR")
	want(got, "approved", nil)
	if got["company_id"] != f.company.ID || got["available_credit"].(map[string]any)["amount"] != "950.00" {
		t.Fatalf("approved check: %v", got)
	}
	want(check(gid42, "950.01", "EUR"), "declined", "insufficient_credit")
	want(check("gid://platform/Company/7", "1.00", "EUR"), "declined", "unknown_company")
	want(check(gid42, "1.00", "USD"), "declined", "currency_mismatch")
	staff := credittest.Staff(f.storeID)
	if _, err := f.env.Service.Companies.PlaceHold(staff, credit.HoldInput{CompanyID: f.company.ID}); err != nil {
		t.Fatal(err)
	}
	want(check(gid42, "1.00", "EUR"), "declined", "on_hold")
	want(check(gid42, "5000.00", "EUR"), "declined", "on_hold")
	body := `{"company_id": "` + gid42 + `", "amount": {"amount": 5, "currency": "EUR"}}`
	r := f.env.Do(t, credittest.Request{Method: http.MethodPost, Path: "/platform/credit-checks", Body: body, Header: map[string]string{
		"X-Platform-Shop-Domain": f.shop, "X-Platform-Hmac-Sha256": credit.SignPlatformBody(f.secret, []byte(body))}})
	r.WantError(t, http.StatusUnprocessableEntity, "invalid_amount", "amount")
	r = f.env.Do(t, credittest.Request{Method: http.MethodPost, Path: "/platform/credit-checks", Body: `{}`, Header: map[string]string{
		"X-Platform-Shop-Domain": f.shop, "X-Platform-Hmac-Sha256": credit.SignPlatformBody("wrong secret 0123456789", []byte(`{}`))}})
	r.WantError(t, http.StatusUnauthorized, "unauthenticated", "")
}

// TestPlatformDoorHasItsOwnLimit: the platform's requests are limited per store on their own
// allowance, which the API's does not share: beyond it 429 with Retry-After, while API keys of
// the store still get through, and the platform's requests leave the API's allowance alone.
func TestPlatformDoorHasItsOwnLimit(t *testing.T) {
	f := newPlatformFixture(t, func(c *server.Config) { c.PlatformRateLimit = 2; c.RateLimit = 3 })
	for i := range 2 {
		f.send(t, credit.TopicOrderCreated, fmt.Sprintf("w%d", i), orderBody(i+1, gid42, ptr(14), "1.00"))
	}
	r := f.deliver(t, f.shop, f.secret, credit.TopicOrderCreated, "w2", orderBody(3, gid42, ptr(14), "1.00"))
	r.WantError(t, http.StatusTooManyRequests, "rate_limited", "")
	if r.Header.Get("Retry-After") == "" {
		t.Fatal("429 without Retry-After")
	}
	for range 3 {
		f.env.Get(t, f.key, "/v1/companies/"+f.company.ID).WantStatus(t, http.StatusOK)
	}
	if rows := f.inbox(t, ""); len(rows) != 2 {
		t.Fatalf("the refused delivery was stored: %d rows", len(rows))
	}
}

// TestPlatformMetrics: deliveries by topic and outcome, the waiting and failed inbox rows, and
// credit-check decisions are on /metrics.
func TestPlatformMetrics(t *testing.T) {
	f := newPlatformFixture(t)
	f.send(t, credit.TopicPaymentCreated, "w1", paymentBody(1, 9, gid42, "5.00"))
	f.send(t, credit.TopicOrderCreated, "w2", orderBody(2, "gid://platform/Company/404", ptr(14), "1.00"))
	f.send(t, credit.TopicOrderCreated, "w3", orderBody(3, gid42, ptr(14), "1.00"))
	f.send(t, "shop/update", "w4", `{}`)
	body := `{"company_id": "` + gid42 + `", "amount": {"amount": "1.00", "currency": "EUR"}}`
	f.env.Do(t, credittest.Request{Method: http.MethodPost, Path: "/platform/credit-checks", Body: body, Header: map[string]string{
		"X-Platform-Shop-Domain": f.shop, "X-Platform-Hmac-Sha256": credit.SignPlatformBody(f.secret, []byte(body))}}).WantStatus(t, http.StatusOK)
	m := string(f.env.Get(t, "", "/metrics").WantStatus(t, http.StatusOK).Body)
	for _, want := range []string{
		`creditd_platform_deliveries_total{outcome="waiting",topic="payments/create"} 1`,
		`creditd_platform_deliveries_total{outcome="failed",topic="orders/create"} 1`,
		`creditd_platform_deliveries_total{outcome="applied",topic="orders/create"} 1`,
		`creditd_platform_deliveries_total{outcome="ignored",topic="other"} 1`,
		"creditd_platform_inbox_waiting 1",
		"creditd_platform_inbox_failed 1",
		`creditd_platform_credit_checks_total{decision="approved",reason=""} 1`,
	} {
		if !strings.Contains(m, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

// TestPlatformDoorAnswers503WhenTheDatabaseIsDown: the platform retries what is not answered
// 200, so an outage is 503 unavailable with Retry-After, never 401 or 500.
func TestPlatformDoorAnswers503WhenTheDatabaseIsDown(t *testing.T) {
	f := newPlatformFixture(t)
	if err := f.env.DB.SQL.Close(); err != nil {
		t.Fatal(err)
	}
	r := f.deliver(t, f.shop, f.secret, credit.TopicOrderCreated, "w1", orderBody(1, gid42, ptr(14), "1.00"))
	if r.Status != http.StatusServiceUnavailable || r.Header.Get("Retry-After") == "" || r.ErrorCode() != "unavailable" {
		t.Fatalf("delivery while the database is down: %d %s", r.Status, r.Body)
	}
}

// TestPlatformEntriesAreThePlatformsOnTheTimeline: an order from the door is on the company's
// timeline under actor platform, and GraphQL names that actor with a value of its ActorType
// enum (a value the schema lacks breaks clients that check enums).
func TestPlatformEntriesAreThePlatformsOnTheTimeline(t *testing.T) {
	f := newPlatformFixture(t)
	if d := f.send(t, "orders/create", "wh-timeline-1", orderBody(9001, *f.company.PlatformCompanyGID, ptr(14), "100.00")); d.Status != credit.InboxApplied {
		t.Fatalf("order: %+v", d)
	}
	r := f.env.Do(t, credittest.Request{Method: http.MethodPost, Path: "/graphql", Key: f.key,
		Body: map[string]string{"query": fmt.Sprintf(`{ company(id: %q) { timeline(first: 1) { edges { node { type actor { type label } } } } } }`, f.company.ID)}})
	if r.Status != http.StatusOK || !strings.Contains(string(r.Body), `"actor":{"type":"PLATFORM","label":"platform"}`) || strings.Contains(string(r.Body), `"errors"`) {
		t.Fatalf("timeline: %d %s", r.Status, r.Body)
	}
	enum := graph.NewExecutableSchema(graph.Config{}).Schema().Types["ActorType"]
	if enum == nil || enum.EnumValues.ForName("PLATFORM") == nil {
		t.Errorf("the schema's ActorType has no PLATFORM")
	}
}
