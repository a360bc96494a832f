package console_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
)

// TestNewCompanyForm: the companies list links the form; it creates a company with what was
// typed (other payment terms, a limit in the store's locale, a GID) and shows its page; a GID
// another company has is refused beside its field, naming that company, the rest kept.
func TestNewCompanyForm(t *testing.T) {
	f := newFixture(t)
	b := f.browser(t)
	b.mustSignIn("anna@example.com", password)
	b.get("/companies").wantText(t, `<a class="button-secondary" href="/companies/new" id="new-company">New company</a>`)
	b.get("/companies/new").wantStatus(t, http.StatusOK)
	made := b.post("/companies/new", url.Values{"name": {" Seilbahn Zermatt AG "}, "payment_terms": {"other"}, "payment_terms_days": {"45"},
		"credit_limit": {"12,500.50"}, "platform_company_gid": {"gid://platform/Company/4711"}})
	if made.Status != http.StatusSeeOther || !strings.HasPrefix(made.Header.Get("Location"), "/companies/co_") {
		t.Fatalf("create: %d %s", made.Status, made.Header.Get("Location"))
	}
	b.follow(made).wantText(t, "Company Seilbahn Zermatt AG created.", "<h1>Seilbahn Zermatt AG</h1>")
	id := strings.TrimPrefix(made.Header.Get("Location"), "/companies/")
	co, err := f.Service.Companies.Get(credittest.Staff(f.store), id)
	if err != nil || co.PaymentTerms != "NET_45" || co.CreditLimit.Amount != "12500.50" || co.PlatformCompanyGID == nil || *co.PlatformCompanyGID != "gid://platform/Company/4711" {
		t.Errorf("the company created: %+v %v", co, err)
	}

	b.get("/companies/new")
	taken := b.post("/companies/new", url.Values{"name": {"Seilbahn Again"}, "payment_terms": {"NET_30"}, "credit_limit": {"100"},
		"platform_company_gid": {"gid://platform/Company/4711"}}).wantStatus(t, http.StatusUnprocessableEntity)
	taken.wantText(t, `id="new-company-gid-error">`, "Seilbahn Zermatt AG", `value="Seilbahn Again"`, `value="100"`)
	if page, err := f.Service.Companies.List(credittest.Staff(f.store), credit.CompanyListParams{}); err != nil || len(page.Data) != 2 {
		t.Errorf("companies: %d %v, want the fixture's and the one created", len(page.Data), err)
	}
}
