package credit_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
	"github.com/creditd/creditd/ids"
)

// Wholesale applications (contract §5): recorded by staff, moved along submitted → in_review →
// needs_info ↔ in_review → approved | rejected, approval creating the company, and the
// erasure of a person's contact data.

// TestCreateApplicationChecksItsInput: an application needs a business name, a VAT number, a
// registry, a contact name and a plain contact email, each within its length; the VAT status is
// one of four and defaults to unverified (checked_at null), the registry to VIES; events about
// it never carry the contact.
func TestCreateApplicationChecksItsInput(t *testing.T) {
	t.Parallel()
	env := newRuleEnv(t, "EUR")
	valid := credit.ApplicationInput{BusinessName: "Applicant GmbH", VATNumber: "DE123456789", ContactName: "Ada Buyer", ContactEmail: "ada@example.com"}
	submitted := credit.At(time.Date(2026, 2, 27, 16, 30, 0, 123456000, time.UTC))
	for _, tc := range []struct {
		name   string
		change func(in *credit.ApplicationInput)
		param  string // "" for accepted
		check  func(a credit.Application) bool
	}{
		{"the defaults", func(in *credit.ApplicationInput) {}, "", func(a credit.Application) bool {
			return a.Status == credit.AppSubmitted && a.VAT == credit.VAT{Number: "DE123456789", Status: "unverified", Registry: "VIES"} &&
				a.SubmittedAt.Equal(env.Clock.Now()) && a.CompanyID == nil && !a.Contact.Redacted &&
				*a.Contact.Name == "Ada Buyer" && *a.Contact.Email == "ada@example.com" && a.BusinessName == "Applicant GmbH"
		}},
		{"a checked VAT number", func(in *credit.ApplicationInput) { in.VATStatus, in.VATRegistry = "valid", "HMRC" }, "", func(a credit.Application) bool {
			return a.VAT.Status == "valid" && a.VAT.Registry == "HMRC" && a.VAT.CheckedAt != nil && a.VAT.CheckedAt.Equal(env.Clock.Now())
		}},
		{"the registry down", func(in *credit.ApplicationInput) { in.VATStatus = "unavailable" }, "", func(a credit.Application) bool {
			return a.VAT.Status == "unavailable" && a.VAT.CheckedAt != nil
		}},
		{"a submission time", func(in *credit.ApplicationInput) { in.SubmittedAt = &submitted }, "", func(a credit.Application) bool {
			return a.SubmittedAt.Equal(submitted.Time)
		}},
		{"padded name and number", func(in *credit.ApplicationInput) { in.BusinessName, in.VATNumber = " Padded GmbH ", " DE1 " }, "", func(a credit.Application) bool {
			return a.BusinessName == "Padded GmbH" && a.VAT.Number == "DE1"
		}},
		{"a business name of 500 characters", func(in *credit.ApplicationInput) { in.BusinessName = strings.Repeat("b", 500) }, "", func(a credit.Application) bool { return len(a.BusinessName) == 500 }},
		{"no business name", func(in *credit.ApplicationInput) { in.BusinessName = " " }, "business_name", nil},
		{"a business name of 501 characters", func(in *credit.ApplicationInput) { in.BusinessName = strings.Repeat("b", 501) }, "business_name", nil},
		{"no VAT number", func(in *credit.ApplicationInput) { in.VATNumber = "" }, "vat_number", nil},
		{"a VAT number of 65 characters", func(in *credit.ApplicationInput) { in.VATNumber = strings.Repeat("1", 65) }, "vat_number", nil},
		{"a registry of 33 characters", func(in *credit.ApplicationInput) { in.VATRegistry = strings.Repeat("R", 33) }, "vat_registry", nil},
		{"no contact name", func(in *credit.ApplicationInput) { in.ContactName = "" }, "contact_name", nil},
		{"a contact name of 201 characters", func(in *credit.ApplicationInput) { in.ContactName = strings.Repeat("a", 201) }, "contact_name", nil},
		{"an unknown VAT status", func(in *credit.ApplicationInput) { in.VATStatus = "checked" }, "vat_status", nil},
		{"a VAT status in upper case", func(in *credit.ApplicationInput) { in.VATStatus = "VALID" }, "vat_status", nil},
		{"no contact email", func(in *credit.ApplicationInput) { in.ContactEmail = "" }, "contact_email", nil},
		{"not an email", func(in *credit.ApplicationInput) { in.ContactEmail = "ada at example.com" }, "contact_email", nil},
		{"an email with a display name", func(in *credit.ApplicationInput) { in.ContactEmail = "Ada <ada@example.com>" }, "contact_email", nil},
		{"an email with spaces", func(in *credit.ApplicationInput) { in.ContactEmail = " ada@example.com" }, "contact_email", nil},
		{"an email of 255 characters", func(in *credit.ApplicationInput) {
			in.ContactEmail = strings.Repeat("a", 64) + "@" + strings.Repeat("b", 186) + ".com"
		}, "contact_email", nil},
		// The fields are checked in order, the VAT status and the email last.
		{"no business name and a bad email", func(in *credit.ApplicationInput) { in.BusinessName, in.ContactEmail = "", "x" }, "business_name", nil},
	} {
		in := valid
		tc.change(&in)
		events := len(env.feed(t))
		env.Clock.Advance(time.Second)
		a, err := env.Service.Applications.Create(env.staff, in)
		if tc.param != "" {
			wantError(t, tc.name, err, credit.CodeValidationFailed, tc.param)
			if n := len(env.feed(t)); n != events {
				t.Errorf("%s: a refused application appended %d events", tc.name, n-events)
			}
			continue
		}
		if err != nil || !tc.check(a) {
			t.Errorf("%s: %+v %v", tc.name, a, err)
			continue
		}
		if got, err := env.Service.Applications.Get(env.staff, a.ID); err != nil || asJSON(got) != asJSON(a) {
			t.Errorf("%s: read back %s %v, created %s", tc.name, asJSON(got), err, asJSON(a))
		}
		feed := env.feed(t)[events:]
		if len(feed) != 1 || feed[0].Type != credit.EventTypeApplicationCreated || strings.Contains(string(feed[0].Data), "ada@example.com") ||
			strings.Contains(string(feed[0].Data), "Ada Buyer") || !strings.Contains(string(feed[0].Data), a.ID) {
			t.Errorf("%s: events %+v", tc.name, feed)
		}
	}
	_, err := env.Service.Applications.Create(apiKey(env.store, credit.AllScopes...), valid)
	wantError(t, "an API key", err, credit.CodeInsufficientScope, "")
}

// TestApplicationStatusTransitions: every pair of statuses, and names that are none, against
// contract §5's workflow: an allowed change is made, kept in the history under its author and
// announced by application.status_changed; any other is validation_failed on status, saying
// where the application can go, and changes nothing.
func TestApplicationStatusTransitions(t *testing.T) {
	t.Parallel()
	env := newRuleEnv(t, "EUR")
	allowed := map[string][]string{
		credit.AppSubmitted: {credit.AppInReview},
		credit.AppInReview:  {credit.AppNeedsInfo, credit.AppApproved, credit.AppRejected},
		credit.AppNeedsInfo: {credit.AppInReview},
	}
	path := map[string][]string{
		credit.AppInReview:  {credit.AppInReview},
		credit.AppNeedsInfo: {credit.AppInReview, credit.AppNeedsInfo},
		credit.AppApproved:  {credit.AppInReview, credit.AppApproved},
		credit.AppRejected:  {credit.AppInReview, credit.AppRejected},
	}
	for _, from := range credit.ApplicationStatuses {
		for _, to := range append(slices.Clone(credit.ApplicationStatuses), "archived", "", "IN_REVIEW") {
			name := from + " → " + to
			a := env.MustApplication(t, env.store, credit.ApplicationInput{BusinessName: name})
			for _, step := range path[from] {
				if _, _, err := env.Service.Applications.SetStatus(env.staff, approval(a.ID, step)); err != nil {
					t.Fatalf("%s: %s: %v", name, step, err)
				}
			}
			history, err := env.Service.Applications.History(env.staff, a.ID)
			if err != nil || len(history) != len(path[from]) {
				t.Fatalf("%s: history %+v %v", name, history, err)
			}
			events := len(env.feed(t))
			env.Clock.Advance(time.Second)
			got, created, err := env.Service.Applications.SetStatus(env.staff, approval(a.ID, to))
			if !slices.Contains(allowed[from], to) {
				wantError(t, name, err, credit.CodeValidationFailed, "status")
				switch {
				case !slices.Contains(credit.ApplicationStatuses, to):
					if err != nil && !strings.Contains(err.Error(), "status must be one of submitted, in_review, needs_info, approved, rejected") {
						t.Errorf("%s: %q does not list the statuses", name, err)
					}
				case len(allowed[from]) == 0:
					if err != nil && !strings.Contains(err.Error(), from+" is final") {
						t.Errorf("%s: %q does not say %s is final", name, err, from)
					}
				default:
					if want := "from " + from + " it can go to " + strings.Join(allowed[from], " or "); err != nil && !strings.Contains(err.Error(), want) {
						t.Errorf("%s: %q does not say %q", name, err, want)
					}
				}
				after, _ := env.Service.Applications.Get(env.staff, a.ID)
				again, _ := env.Service.Applications.History(env.staff, a.ID)
				if after.Status != from || len(again) != len(history) || len(env.feed(t)) != events {
					t.Errorf("%s: a refused change left %s, %d changes", name, after.Status, len(again))
				}
				continue
			}
			if err != nil || got.Status != to || (created != nil) != (to == credit.AppApproved) {
				t.Errorf("%s: %+v %+v %v", name, got, created, err)
				continue
			}
			history, err = env.Service.Applications.History(env.staff, a.ID)
			if err != nil || len(history) != len(path[from])+1 || history[0].From != from || history[0].To != to ||
				history[0].Actor != (credit.Actor{Type: "staff", Label: "test staff"}) || !history[0].OccurredAt.Equal(env.Clock.Now()) {
				t.Errorf("%s: history %+v %v", name, history, err)
			}
			feed := env.feed(t)[events:]
			last := feed[len(feed)-1]
			if last.Type != credit.EventTypeApplicationStatusChanged || !strings.Contains(string(last.Data), `"previous":{"status":"`+from+`"}`) ||
				!strings.Contains(string(last.Data), `"status":"`+to+`"`) {
				t.Errorf("%s: last event %s %s", name, last.Type, last.Data)
			}
		}
	}
}

// TestApprovalCreatesTheCompany: approving needs the new company's credit limit and payment
// terms (and takes its platform company GID); the terms follow the rules of a company's, and
// a refused approval leaves the application in review and creates nothing. An approval creates
// the company in the same write: named after the business, its timeline starting with the
// approval, linked both ways.
func TestApprovalCreatesTheCompany(t *testing.T) {
	t.Parallel()
	env := newRuleEnv(t, "EUR")
	taken := env.MustCompany(t, env.store, "Has Company/42", "10") // gid://platform/Company/42
	a := env.MustApplication(t, env.store, credit.ApplicationInput{BusinessName: "Applicant GmbH"})
	if _, _, err := env.Service.Applications.SetStatus(env.staff, credit.StatusChange{ApplicationID: a.ID, Status: credit.AppInReview}); err != nil {
		t.Fatal(err)
	}
	approve := func(limit, terms, gid string) credit.StatusChange {
		return credit.StatusChange{ApplicationID: a.ID, Status: credit.AppApproved, CreditLimit: limit, PaymentTerms: terms, PlatformCompanyGID: gid}
	}
	for _, tc := range []struct {
		name  string
		in    credit.StatusChange
		code  credit.Code
		param string
	}{
		{"no terms", approve("", "", ""), credit.CodeValidationFailed, "credit_limit"},
		{"no limit", approve("", "NET_30", ""), credit.CodeValidationFailed, "credit_limit"},
		{"no payment terms", approve("1000", "", ""), credit.CodeValidationFailed, "credit_limit"},
		{"terms without approving", credit.StatusChange{ApplicationID: a.ID, Status: credit.AppNeedsInfo, CreditLimit: "1000"}, credit.CodeValidationFailed, "status"},
		{"a GID without approving", credit.StatusChange{ApplicationID: a.ID, Status: credit.AppRejected, PlatformCompanyGID: "gid://platform/Company/7"}, credit.CodeValidationFailed, "status"},
		// The limit's errors name it "amount", as Companies.Create's do (ApprovalErrors, for
		// forms, names it credit_limit).
		{"a negative limit", approve("-1", "NET_30", ""), credit.CodeLimitBelowZero, "amount"},
		{"a limit of three decimals", approve("1.001", "NET_30", ""), credit.CodeInvalidAmount, "amount"},
		{"NET_0", approve("1000", "NET_0", ""), credit.CodeValidationFailed, "payment_terms"},
		{"NET_366", approve("1000", "NET_366", ""), credit.CodeValidationFailed, "payment_terms"},
		{"an order's GID", approve("1000", "NET_30", "gid://platform/Order/1"), credit.CodeValidationFailed, "platform_company_gid"},
		{"another company's GID", approve("1000", "NET_30", *taken.PlatformCompanyGID), credit.CodeValidationFailed, "platform_company_gid"},
	} {
		events := len(env.feed(t))
		_, created, err := env.Service.Applications.SetStatus(env.staff, tc.in)
		wantError(t, tc.name, err, tc.code, tc.param)
		if created != nil {
			t.Errorf("%s: created %+v", tc.name, created)
		}
		got, _ := env.Service.Applications.Get(env.staff, a.ID)
		page, _ := env.Service.Companies.List(env.staff, credit.CompanyListParams{})
		if got.Status != credit.AppInReview || got.CompanyID != nil || len(page.Data) != 1 || len(env.feed(t)) != events {
			t.Errorf("%s: a refused approval left %s and %d companies", tc.name, got.Status, len(page.Data))
		}
	}

	events := len(env.feed(t))
	env.Clock.Advance(time.Minute)
	got, created, err := env.Service.Applications.SetStatus(env.staff, approve("2500.5", "NET_45", "gid://platform/Company/7"))
	if err != nil || created == nil || got.Status != credit.AppApproved || got.CompanyID == nil || *got.CompanyID != created.ID {
		t.Fatalf("approve: %+v %+v %v", got, created, err)
	}
	c := env.company(t, created.ID)
	if c.Name != "Applicant GmbH" || c.CreditLimit.Amount != "2500.50" || c.PaymentTerms != "NET_45" || *c.PlatformCompanyGID != "gid://platform/Company/7" ||
		c.Outstanding.Amount != "0.00" || c.Status != credit.StatusApproved || asJSON(c) != asJSON(*created) {
		t.Errorf("the company %+v, answered %+v", c, created)
	}
	if id, err := env.Service.Applications.OfCompany(env.staff, c.ID); err != nil || id != a.ID {
		t.Errorf("the company's application: %q %v", id, err)
	}
	if id, err := env.Service.Applications.OfCompany(env.staff, taken.ID); err != nil || id != "" {
		t.Errorf("a company created otherwise: application %q %v", id, err)
	}
	if got := env.feedTypes(t, events); !slices.Equal(got, []string{string(credit.EventTypeCompanyCreated), string(credit.EventTypeApplicationStatusChanged)}) {
		t.Errorf("events %v", got)
	}
	tl := env.timeline(t, c.ID)
	if len(tl) != 1 || tl[0].Type != credit.TimelineApplicationApproved || tl[0].Actor.Label != "test staff" || tl[0].Data["application_id"] != a.ID ||
		tl[0].Data["payment_terms"] != "NET_45" || tl[0].Data["platform_company_gid"] != "gid://platform/Company/7" {
		t.Errorf("the company's timeline %+v", tl)
	}
	history, err := env.Service.Applications.History(env.staff, a.ID)
	if err != nil || len(history) != 2 || history[0].To != credit.AppApproved || history[0].CompanyID == nil || *history[0].CompanyID != c.ID || history[1].CompanyID != nil {
		t.Errorf("history %+v %v", history, err)
	}
	// Approved is final.
	_, _, err = env.Service.Applications.SetStatus(env.staff, approve("1", "NET_1", ""))
	wantError(t, "approving twice", err, credit.CodeValidationFailed, "status")
	// Approval is the admin side's, never a key's.
	b := env.MustApplication(t, env.store, credit.ApplicationInput{BusinessName: "B"})
	_, _, err = env.Service.Applications.SetStatus(apiKey(env.store, credit.AllScopes...), credit.StatusChange{ApplicationID: b.ID, Status: credit.AppInReview})
	wantError(t, "an API key", err, credit.CodeInsufficientScope, "")
	for name, id := range map[string]string{"an unknown application": ids.New("app"), "a company's ID": c.ID, "empty": ""} {
		_, _, err := env.Service.Applications.SetStatus(env.staff, credit.StatusChange{ApplicationID: id, Status: credit.AppInReview})
		wantError(t, name, err, credit.CodeNotFound, "")
		_, err = env.Service.Applications.History(env.staff, id)
		wantError(t, name+"'s history", err, credit.CodeNotFound, "")
	}
}

// TestApprovalErrorsNameEachField: ApprovalErrors checks each of an approval's terms on its
// own and returns every refusal at once, in the form's order, naming its field.
func TestApprovalErrorsNameEachField(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		limit, terms, gid, currency string
		want                        []string // code:param
	}{
		{"1000", "NET_30", "", "EUR", nil},
		{"1000", "NET_30", "gid://platform/Company/1", "EUR", nil},
		{"", "NET_30", "", "EUR", []string{"validation_failed:credit_limit"}},
		{"-1", "NET_30", "", "EUR", []string{"limit_below_zero:credit_limit"}},
		{"1.5", "NET_30", "", "JPY", []string{"invalid_amount:credit_limit"}},
		{"1.5", "NET_30", "", "EUR", nil},
		{"x", "NET_0", "gid://platform/Order/1", "EUR", []string{"invalid_amount:credit_limit", "validation_failed:payment_terms", "validation_failed:platform_company_gid"}},
		{"1", "", "", "EUR", []string{"validation_failed:payment_terms"}},
	} {
		var got []string
		for _, err := range credit.ApprovalErrors(tc.limit, tc.terms, tc.gid, tc.currency) {
			var e *credit.Error
			if !asError(err, &e) {
				t.Fatalf("%v is no *credit.Error", err)
			}
			got = append(got, string(e.Code)+":"+e.Param)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("ApprovalErrors(%q, %q, %q, %s) = %v, want %v", tc.limit, tc.terms, tc.gid, tc.currency, got, tc.want)
		}
	}
}

// TestErasePerson: erasing a person overwrites their contact name and email with nulls on
// every application of the store with that email, in any case, which then shows as redacted;
// other people and other stores' applications are untouched; erasing is staff's.
func TestErasePerson(t *testing.T) {
	t.Parallel()
	env := newRuleEnv(t, "EUR")
	other := env.MustStore(t, "Other", "EUR")
	mine := []credit.Application{
		env.MustApplication(t, env.store, credit.ApplicationInput{BusinessName: "One", ContactName: "Ada", ContactEmail: "ada@example.com"}),
		env.MustApplication(t, env.store, credit.ApplicationInput{BusinessName: "Two", ContactName: "Ada L.", ContactEmail: "ADA@Example.com"}),
	}
	bob := env.MustApplication(t, env.store, credit.ApplicationInput{BusinessName: "Three", ContactName: "Bob", ContactEmail: "bob@example.com"})
	theirs := env.MustApplication(t, other, credit.ApplicationInput{BusinessName: "Theirs", ContactName: "Ada", ContactEmail: "ada@example.com"})

	for name, email := range map[string]string{"empty": "", "blank": "  \t"} {
		_, err := env.Service.Applications.ErasePerson(env.staff, email)
		wantError(t, name, err, credit.CodeValidationFailed, "email")
	}
	_, err := env.Service.Applications.ErasePerson(apiKey(env.store, credit.AllScopes...), "ada@example.com")
	wantError(t, "an API key", err, credit.CodeInsufficientScope, "")

	env.Clock.Advance(time.Minute)
	n, err := env.Service.Applications.ErasePerson(env.staff, " Ada@example.COM ")
	if err != nil || n != 2 {
		t.Fatalf("erase: %d %v, want 2 applications", n, err)
	}
	for _, a := range mine {
		got, err := env.Service.Applications.Get(env.staff, a.ID)
		if err != nil || got.Contact != (credit.Contact{Redacted: true}) || got.BusinessName != a.BusinessName || got.Status != a.Status {
			t.Errorf("%s after the erasure: %+v %v", a.BusinessName, got, err)
		}
	}
	if got, _ := env.Service.Applications.Get(env.staff, bob.ID); got.Contact.Redacted || *got.Contact.Email != "bob@example.com" {
		t.Errorf("another person's application: %+v", got.Contact)
	}
	if got, _ := env.Service.Applications.Get(credittest.Staff(other), theirs.ID); got.Contact.Redacted || *got.Contact.Name != "Ada" {
		t.Errorf("another store's application: %+v", got.Contact)
	}
	if n, err := env.Service.Applications.ErasePerson(env.staff, "ada@example.com"); err != nil || n != 0 {
		t.Errorf("erasing again: %d %v, want 0", n, err)
	}
	// An application of the person recorded later keeps its contact: erasure is of what is there.
	later := env.MustApplication(t, env.store, credit.ApplicationInput{BusinessName: "Later", ContactName: "Ada", ContactEmail: "ada@example.com"})
	if got, _ := env.Service.Applications.Get(env.staff, later.ID); got.Contact.Redacted || *got.Contact.Email != "ada@example.com" {
		t.Errorf("an application recorded after the erasure: %+v", got.Contact)
	}
}
