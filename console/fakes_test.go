package console_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/creditd/creditd/console"
	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/tenant"
)

// fakeStaff has one session, tok_fake, of a member of st_fake, and records the notices set on it.
type fakeStaff struct {
	console.Staff
	notices []string
}

func (f *fakeStaff) ResumeSession(ctx context.Context, token string, _ credit.SessionPolicy) (context.Context, credit.StaffSession, error) {
	if token != "tok_fake" {
		return nil, credit.StaffSession{}, credit.Errorf(credit.CodeUnauthenticated, "no such session")
	}
	return tenant.Staff(ctx, "st_fake", "Anna Berger"), credit.StaffSession{ID: "ses_fake", StoreID: "st_fake", StaffName: "Anna Berger", Email: "anna@example.com"}, nil
}

func (f *fakeStaff) SetSessionNotice(_ context.Context, _, notice string) error {
	f.notices = append(f.notices, notice)
	return nil
}

type fakeStores struct{ console.Stores }

func (fakeStores) Current(context.Context) (credit.StoreInfo, error) {
	return credit.StoreInfo{ID: "st_fake", Name: "Fake Wholesale", Currency: "EUR", Locale: "en"}, nil
}

// fakeCompanies lists its company, or fails with err, creates companies or refuses with
// createErr, and records what it was asked.
type fakeCompanies struct {
	console.Companies
	company   credit.Company
	err       error
	createErr error
	lists     []credit.CompanyListParams
	created   []credit.CompanyInput
}

func (f *fakeCompanies) List(_ context.Context, p credit.CompanyListParams) (credit.Page[credit.Company], error) {
	f.lists = append(f.lists, p)
	if f.err != nil {
		return credit.Page[credit.Company]{}, f.err
	}
	return credit.Page[credit.Company]{Data: []credit.Company{f.company}}, nil
}

func (f *fakeCompanies) Create(_ context.Context, in credit.CompanyInput) (credit.Company, error) {
	f.created = append(f.created, in)
	return credit.Company{ID: "co_new", Name: in.Name}, f.createErr
}

type fakeReports struct{ console.Reports }

func (fakeReports) Receivables(context.Context) (credit.Receivables, error) {
	return credit.Receivables{}, nil
}

// TestTransportOverFakes: what the console itself does, with no database behind it: a page
// renders what the domain answers and passes its filters on; a refusal of the domain shows
// with the contract's message and status, an internal error without its text; a form's
// refusals show beside their fields, its own (the days of other payment terms) and the
// domain's, and a form the checks refuse never reaches the operation.
func TestTransportOverFakes(t *testing.T) {
	staff := &fakeStaff{}
	companies := &fakeCompanies{company: credit.Company{ID: "co_fake", Name: "Hotel Adler", Status: credit.StatusApproved, PaymentTerms: "NET_30",
		Outstanding: credit.Money{Amount: "1250.00", Currency: "EUR"}}}
	s := console.Services{Staff: staff, Stores: fakeStores{}, Companies: companies, Reports: fakeReports{}}
	ts := httptest.NewServer(console.NewWith(s, console.Config{Logger: slog.New(slog.NewJSONHandler(io.Discard, nil))}))
	t.Cleanup(ts.Close)
	b := (&consoleEnv{URL: ts.URL}).browser(t)

	b.get("/companies").wantStatus(t, http.StatusSeeOther)
	b.setCookie("creditd_session", "tok_fake")

	b.get("/companies?q=adler").wantStatus(t, http.StatusOK).wantText(t, "Hotel Adler", "1,250.00", "Fake Wholesale", "Anna Berger")
	if len(companies.lists) != 1 || companies.lists[0].Search == nil || *companies.lists[0].Search != "adler" {
		t.Errorf("the search reached the domain as %+v", companies.lists)
	}

	companies.err = credit.ParamErrorf(credit.CodeInvalidParameter, "cursor", "cursor is not one of this list's")
	b.get("/companies?cursor=x").wantStatus(t, http.StatusBadRequest).wantText(t, "Cursor is not one of this list's.")
	companies.err = errors.New("disk on fire")
	b.get("/companies").wantStatus(t, http.StatusInternalServerError).wantNoText(t, "disk on fire")
	companies.err = nil

	b.get("/companies/new").wantStatus(t, http.StatusOK)
	p := b.post("/companies/new", url.Values{"name": {" "}, "payment_terms": {"other"}, "payment_terms_days": {"a month"}, "credit_limit": {"lots"}})
	p.wantStatus(t, http.StatusUnprocessableEntity).wantText(t, `id="new-company-name-error">Name must not be empty.`,
		`id="new-company-terms-error">The days to pay must be a whole number from 1 to 365.`,
		`id="new-company-limit-error">Enter the amount as a number such as 10,000.00 or 1500.00.`)
	if len(companies.created) != 0 {
		t.Fatalf("a refused form reached the domain: %+v", companies.created)
	}

	companies.createErr = credit.ParamErrorf(credit.CodeValidationFailed, "platform_company_gid", "platform_company_gid is another company's")
	form := url.Values{"name": {"Gasthof Sonne"}, "payment_terms": {"other"}, "payment_terms_days": {"45"}, "credit_limit": {"5,000.00"},
		"platform_company_gid": {"gid://platform/Company/7"}}
	b.post("/companies/new", form).wantStatus(t, http.StatusUnprocessableEntity).
		wantText(t, `id="new-company-gid-error">Platform company GID is another company's.`)
	if len(companies.created) != 1 || companies.created[0].PaymentTerms != "NET_45" || companies.created[0].CreditLimit != "5000.00" {
		t.Fatalf("the form reached the domain as %+v", companies.created)
	}

	companies.createErr = nil
	if p := b.post("/companies/new", form); p.Status != http.StatusSeeOther || p.Location != "/companies/co_new" {
		t.Fatalf("a company created: %d %q", p.Status, p.Location)
	}
	if len(staff.notices) != 1 || staff.notices[0] != "Company Gasthof Sonne created." {
		t.Errorf("the session's notices: %q", staff.notices)
	}
}
