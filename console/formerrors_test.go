package console_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
)

// browserConstraint finds an input attribute with which the browser refuses a submit itself.
var browserConstraint = regexp.MustCompile(`<(input|select|textarea)[^>]*\s(required|min="[^"]*"|max="[^"]*"|minlength="[^"]*"|pattern="[^"]*")[\s>]`)

// TestEveryFormRefusesEveryFieldAtOnce: each of the console's forms with several fields,
// posted with two to four of them wrong, is shown again with every refusal beside its field,
// what was typed kept (but a secret), with status 422, and nothing written. Each form posts to
// its page's own address, so the page shown with the refusals is the page the browser was
// on, and reloading it asks for the page, not another answer from the form's target.
func TestEveryFormRefusesEveryFieldAtOnce(t *testing.T) {
	f := newFixture(t)
	b := f.browser(t)
	b.mustSignIn("anna@example.com", password)
	staff := credittest.Staff(f.store)
	companyPath := "/companies/" + f.company.ID
	long := strings.Repeat("n", 501)
	endpoint := f.endpoints[f.key.ID]

	for _, tc := range []struct {
		name, page string
		// action is the form's opening tag, which posts to the page's own address.
		action string
		values url.Values
		// want are the refusals beside their fields and the values kept; absent must not show.
		want, absent []string
	}{
		{"credit limit", companyPath, `<form method="post" action="` + companyPath + `">`,
			url.Values{"form": {"limit"}, "amount": {"-5"}, "reason": {long}},
			[]string{`id="limit-amount-error">Credit limit must be zero or greater.`, `id="limit-reason-error">Reason must be at most 500 characters.`,
				`value="-5"`, `value="` + long + `"`}, nil},
		{"adjustment", companyPath, `<form method="post" action="` + companyPath + `">`,
			url.Values{"form": {"adjust"}, "amount": {"0"}, "note": {" "}},
			[]string{`id="adjust-amount-error">An adjustment must not be zero.`, `id="adjust-note-error">Note must not be empty.`, `value="0"`}, nil},
		{"platform entry", companyPath, `<form method="post" action="` + companyPath + `">`,
			url.Values{"form": {"entry"}, "kind": {credit.KindPayment}, "amount": {"-10.00"}, "order": {"order 7"}, "note": {long}, "occurred_at": {"yesterday"}},
			[]string{`id="entry-amount-error">Enter the payment as a positive amount`, `id="entry-order-error">Order must look like gid://platform/Order/123.`,
				`id="entry-note-error">Note must be at most 500 characters.`, `id="entry-occurred-error">Occurred at must be a date such as 2026-11-27`,
				`<option value="payment" selected>`, `value="-10.00"`, `value="order 7"`, `value="yesterday"`}, nil},
		{"entry of an unknown kind, amount unreadable", companyPath, `<form method="post" action="` + companyPath + `">`,
			url.Values{"form": {"entry"}, "kind": {"loan"}, "amount": {"zehn"}, "order": {"gid://platform/Order/7"}},
			[]string{`id="entry-kind-error">Kind must be one of order_placed`, `id="entry-amount-error">Enter the amount as a number such as 10,000.00 or 1500.00.`,
				`value="zehn"`, `value="gid://platform/Order/7"`}, nil},
		{"API key", "/settings/api", `<form method="post" action="/settings/api">`,
			url.Values{"form": {"create"}, "label": {strings.Repeat("k", 101)}},
			[]string{`id="key-label-error">Label must be at most 100 characters.`, `id="key-scopes-error">A key needs at least one scope.`,
				`value="` + strings.Repeat("k", 101) + `"`}, nil},
		{"webhook endpoint", "/webhooks", `<form method="post" action="/webhooks">`,
			url.Values{"form": {"create"}, "url": {"ftp://erp.example.com/hooks"}, "description": {long}, "events": {"company.hold_placed", "order.paid"}},
			[]string{`id="webhook-url-error">The URL must be http(s)://host[:port]/path`, `id="webhook-description-error">Description must be at most 500 characters.`,
				`id="webhook-events-error">Unknown event type "order.paid"`,
				`value="ftp://erp.example.com/hooks"`, `<input type="checkbox" id="event-company.hold_placed" name="events" value="company.hold_placed" checked>`}, nil},
		{"platform secret, a grace the form cannot read", "/platform", `<form method="post" action="/platform" class="narrow step" autocomplete="off">`,
			url.Values{"form": {"rotate"}, "secret": {"tooshort"}, "grace": {"forever"}},
			[]string{`id="platform-secret-error">The platform secret must be 16 to 256 characters`, `id="platform-grace-error">Grace must be a duration such as 24h.`},
			[]string{"tooshort"}},
		{"platform secret, a negative grace", "/platform", `<form method="post" action="/platform" class="narrow step" autocomplete="off">`,
			url.Values{"form": {"rotate"}, "secret": {" padded secret 0123456789 "}, "grace": {"-1h"}},
			[]string{`id="platform-secret-error">The platform secret must be 16 to 256 characters`, `id="platform-grace-error">Grace must not be negative.`},
			[]string{"padded secret"}},
		{"new company", "/companies/new", `<form method="post" action="/companies/new" id="new-company-form">`,
			url.Values{"name": {long}, "payment_terms": {"other"}, "payment_terms_days": {"400"}, "credit_limit": {"-5"}, "platform_company_gid": {"Company 7"}},
			[]string{`id="new-company-name-error">Name must be at most 500 characters.`,
				`id="new-company-terms-error">The days to pay must be a whole number from 1 to 365.`,
				`id="new-company-limit-error">Credit limit must be zero or greater.`,
				`id="new-company-gid-error">Platform company GID must look like gid://platform/Company/123.`,
				`value="` + long + `"`, `<option value="other" selected>`, `value="400"`, `value="-5"`, `value="Company 7"`}, nil},
		{"new company, nothing typed", "/companies/new", `<form method="post" action="/companies/new" id="new-company-form">`,
			url.Values{"name": {""}, "payment_terms": {"NET_30"}, "credit_limit": {"zehn"}, "platform_company_gid": {""}},
			[]string{`id="new-company-name-error">Name must not be empty.`, `id="new-company-limit-error">Enter the amount as a number such as 10,000.00 or 1500.00.`,
				`value="zehn"`, `<option value="NET_30" selected>`}, []string{`new-company-gid-error`, `new-company-terms-error`}},
		{"erasure", "/privacy", `<form method="post" action="/privacy">`,
			url.Values{"email": {"  "}},
			[]string{`id="erase-email-error">Email must not be empty.`, `id="erase-confirm-error">Confirm that the erasure cannot be undone.`}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			page := b.get(tc.page).wantStatus(t, http.StatusOK).wantText(t, tc.action)
			// No check of the browser's own stops the submit at the first wrong field before
			// the server can show every refusal (required, min, max, pattern); aria-required
			// still tells assistive technology which fields are required.
			if m := browserConstraint.FindString(page.Body); m != "" {
				t.Errorf("%s has a browser-side constraint %q that stops a submit one field at a time (maxlength only stops typing, and may stay)", tc.page, m)
			}
			refused := b.post(tc.page, tc.values).wantStatus(t, http.StatusUnprocessableEntity)
			refused.wantText(t, tc.want...).wantText(t, tc.action).wantNoText(t, tc.absent...)
			// Beside their fields, not above the button.
			refused.wantNoText(t, `<div class="alert" role="alert">`)
		})
	}

	// Nothing was written.
	co, err := f.Service.Companies.Get(staff, f.company.ID)
	if err != nil || co.CreditLimit.Amount != "25000.00" || co.Outstanding.Amount != "0.00" {
		t.Errorf("the company after the refusals: %+v %v", co, err)
	}
	if page, err := f.Service.Companies.List(staff, credit.CompanyListParams{}); err != nil || len(page.Data) != 1 {
		t.Errorf("companies after the refusals: %d %v", len(page.Data), err)
	}
	if ledger, err := f.Service.Ledger.List(staff, f.company.ID, credit.LedgerListParams{}); err != nil || len(ledger.Data) != 0 {
		t.Errorf("the ledger after the refusals: %+v %v", ledger.Data, err)
	}
	if keys, err := f.Service.Keys.List(staff, time.Hour); err != nil || len(keys) != 1 {
		t.Errorf("keys after the refusals: %+v %v", keys, err)
	}
	if endpoints, err := f.Service.Webhooks.ListEndpoints(staff); err != nil || len(endpoints) != 1 {
		t.Errorf("endpoints after the refusals: %+v %v", endpoints, err)
	}
	if conn, err := f.Service.Platform.Status(staff); err != nil || conn.PreviousSecretExpiresAt != nil {
		t.Errorf("the platform connection after the refusals: %+v %v", conn, err)
	}
	if a, err := f.Service.Applications.Get(staff, f.app.ID); err != nil || a.Contact.Redacted {
		t.Errorf("the application after the refusals: %+v %v", a, err)
	}

	// The one-field forms of those pages post to the page's address too: a key's and an
	// endpoint's rotation (the record named in the form) and a redelivery.
	b.get("/settings/api").wantText(t, `<input type="hidden" name="form" value="rotate"><input type="hidden" name="key" value="`+f.key.ID+`">`)
	b.post("/settings/api", url.Values{"form": {"rotate"}, "key": {f.key.ID}, "grace": {"forever"}}).wantStatus(t, http.StatusUnprocessableEntity).
		wantText(t, `id="grace-`+f.key.ID+`-error">Grace must be a duration such as 24h.`)
	b.get("/webhooks").wantText(t, `<input type="hidden" name="form" value="rotate"><input type="hidden" name="endpoint" value="`+endpoint+`">`)
	b.post("/webhooks", url.Values{"form": {"rotate"}, "endpoint": {endpoint}, "grace": {"-1h"}}).wantStatus(t, http.StatusUnprocessableEntity).
		wantText(t, `id="grace-`+endpoint+`-error">Grace must not be negative.`)
	b.get("/webhooks/"+endpoint).wantText(t, `<form method="post" action="/webhooks/`+endpoint+`">`)
	b.post("/webhooks/"+endpoint, url.Values{"form": {"redeliver"}, "event_other": {"ev_0000000000000000000000"}}).wantStatus(t, http.StatusNotFound).
		wantText(t, `id="redeliver-event-error">`, `value="ev_0000000000000000000000"`)
	// Another store's key or endpoint named in the form is not found, as an unknown one is.
	for _, tc := range []struct {
		page, field, theirs, unknown string
	}{
		{"/settings/api", "key", f.otherKey.ID, "key_0000000000000000000000"},
		{"/webhooks", "endpoint", f.endpoints[f.otherKey.ID], "we_0000000000000000000000"},
	} {
		b.get(tc.page)
		theirs := b.post(tc.page, url.Values{"form": {"rotate"}, tc.field: {tc.theirs}, "grace": {"1h"}}).wantStatus(t, http.StatusNotFound)
		b.get(tc.page)
		none := b.post(tc.page, url.Values{"form": {"rotate"}, tc.field: {tc.unknown}, "grace": {"1h"}}).wantStatus(t, http.StatusNotFound)
		if strings.ReplaceAll(theirs.comparable(), tc.theirs, "ID") != strings.ReplaceAll(none.comparable(), tc.unknown, "ID") {
			t.Errorf("%s: another store's %s and an unknown one answer differently:\n%s\n---\n%s", tc.page, tc.field, theirs.Body, none.Body)
		}
	}
	// A form none of the page's is refused.
	for _, page := range []string{"/settings/api", "/webhooks", "/webhooks/" + endpoint, "/platform"} {
		b.get(page)
		b.post(page, url.Values{"form": {"delete"}}).wantStatus(t, http.StatusBadRequest)
	}
}
