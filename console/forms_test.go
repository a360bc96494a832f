package console_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
)

// TestFormsInPeoplesTerms: in a store whose locale writes "10.000,00", the console reads
// amounts so and as "1500.00"; a refused approval shows every field's error at once beside its
// field, keeps what was typed, and its form posts to the application's own address, so the
// page shown with the errors can be reloaded; payment terms are a choice.
func TestFormsInPeoplesTerms(t *testing.T) {
	e := newConsole(t)
	st, err := e.Service.Stores.Create(credittest.Admin(), "Bäckerei Bedarf GmbH", "EUR", credit.DefaultBufferPercent, "de")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Service.Stores.Create(credittest.Admin(), "Bad", "EUR", 5, "German"); credit.CodeOf(err) != credit.CodeValidationFailed {
		t.Errorf("a store with locale German: %v", err)
	}
	e.MustStaff(t, st.ID, "Anna Berg", "anna@example.com", password)
	b := e.browser(t)
	b.mustSignIn("anna@example.com", password)
	app := e.MustApplication(t, st.ID, credit.ApplicationInput{BusinessName: "Bergbäckerei Huber"})
	if _, _, err := e.Service.Applications.SetStatus(credittest.Staff(st.ID), credit.StatusChange{ApplicationID: app.ID, Status: credit.AppInReview}); err != nil {
		t.Fatal(err)
	}
	page := b.get("/applications/"+app.ID).wantText(t, `action="/applications/`+app.ID+`" class="step step-approve"`,
		`<option value="NET_7">Net 7</option>`, `<option value="NET_30" selected>Net 30</option>`, `<option value="other">Other…</option>`)
	_ = page

	// Three fields wrong: three errors at once, each beside its field, the values kept.
	refused := b.post("/applications/"+app.ID, url.Values{"status": {credit.AppApproved}, "credit_limit": {"zehntausend"},
		"payment_terms": {"other"}, "payment_terms_days": {"400"}, "platform_company_gid": {"Company 7"}})
	refused.wantStatus(t, http.StatusUnprocessableEntity).wantText(t,
		`id="approve-limit-error">Enter the amount as a number such as 10.000,00 or 1500.00.`,
		`id="approve-terms-error">The days to pay must be a whole number from 1 to 365.`,
		`id="approve-gid-error">Platform company GID must look like gid://platform/Company/123.`,
		`value="zehntausend"`, `value="400"`, `value="Company 7"`, `<option value="other" selected>`)
	if got, _ := e.Service.Applications.Get(credittest.Staff(st.ID), app.ID); got.Status != credit.AppInReview {
		t.Errorf("a refused approval changed the application: %s", got.Status)
	}

	// The locale's form and the plain one.
	approved := b.post("/applications/"+app.ID, url.Values{"status": {credit.AppApproved}, "credit_limit": {"10.000,00"}, "payment_terms": {"NET_14"}})
	co := b.follow(approved).wantText(t, "a credit limit of 10,000.00 EUR on Net 14.")
	_ = co
	path := approved.Location
	b.follow(b.post(path, url.Values{"form": {"limit"}, "amount": {"12.500,50"}})).wantText(t, "Credit limit changed from 10,000.00 EUR to 12,500.50 EUR.")
	b.follow(b.post(path, url.Values{"form": {"entry"}, "kind": {credit.KindOpeningBalance}, "amount": {"1500.00"}})).wantText(t, "Opening balance of 1,500.00 EUR recorded")
	b.follow(b.post(path, url.Values{"form": {"entry"}, "kind": {credit.KindPayment}, "amount": {"1.200,25"}})).wantText(t, "Payment of 1,200.25 EUR recorded; outstanding is now 299.75 EUR.")
	b.post(path, url.Values{"form": {"limit"}, "amount": {"12,500.50"}}).wantStatus(t, http.StatusUnprocessableEntity)
}
