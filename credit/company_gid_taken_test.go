package credit_test

import (
	"strings"
	"testing"

	"github.com/creditd/creditd/credit"
)

// TestTakenCompanyGIDNamesItsHolder: a platform company GID names one company of a store, and
// a refusal of a taken one says which company has it, so whoever typed it can go and look:
// when a company is created, when its GID is set, and on another store's company never (each
// store has its own GIDs).
func TestTakenCompanyGIDNamesItsHolder(t *testing.T) {
	t.Parallel()
	env := newRuleEnv(t, "EUR")
	holder := env.MustCompany(t, env.store, "Alpenblick Hotels AG", "1000.00") // gid://platform/Company/42
	other := env.MustCompany(t, env.store, "Brauhaus Kessler KG", "1000.00")
	want := "gid://platform/Company/42 already belongs to Alpenblick Hotels AG (" + holder.ID + ")"

	_, err := env.Service.Companies.Create(env.staff, credit.CompanyInput{Name: "Alpenblick again", PlatformCompanyGID: "gid://platform/Company/42", PaymentTerms: "NET_30", CreditLimit: "10.00"})
	wantError(t, "create", err, credit.CodeValidationFailed, "platform_company_gid")
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("create: %v, want it to say %q", err, want)
	}
	_, err = env.Service.Companies.SetPlatformCompanyGID(env.staff, other.ID, "gid://platform/Company/42")
	wantError(t, "set", err, credit.CodeValidationFailed, "platform_company_gid")
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("set: %v, want it to say %q", err, want)
	}

	// Another store may use the same GID for its own company.
	elsewhere := env.MustStore(t, "Elsewhere", "EUR")
	if c := env.MustCompany(t, elsewhere, "Elsewhere GmbH", "1.00"); c.PlatformCompanyGID == nil || *c.PlatformCompanyGID != "gid://platform/Company/42" {
		t.Errorf("another store's first company: %+v", c.PlatformCompanyGID)
	}
}
