package console_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
)

// BenchmarkCompanyPage measures a signed-in GET of a company's page with a full first page of
// ledger and timeline, through the whole console handler: the session look-up, the store, the
// company, its ledger and its timeline, and the template.
func BenchmarkCompanyPage(b *testing.B) {
	env := credittest.New(b)
	store := env.MustStore(b, "Bench", "EUR")
	env.MustStaff(b, store, "Anna", "anna@example.com", password)
	co := env.MustCompany(b, store, "Alpenblick Hotels AG", "25000.00")
	for i := 0; i < 20; i++ {
		env.MustRecord(b, credit.LedgerEntryInput{CompanyID: co.ID, Kind: credit.KindAdjustment, Amount: "1.00", Note: "n"})
		if _, err := env.Service.Companies.SetCreditLimit(credittest.Staff(store), credit.CreditLimitInput{CompanyID: co.ID, Amount: credit.Amount("25000.00")}); err != nil {
			b.Fatal(err)
		}
	}
	c := newConsoleFor(env)
	token, _, err := env.Service.Staff.SignIn(b.Context(), "anna@example.com", password, credit.SessionPolicy{})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		req := httptest.NewRequest(http.MethodGet, "/companies/"+co.ID, nil)
		req.AddCookie(&http.Cookie{Name: "creditd_session", Value: token})
		rec := httptest.NewRecorder()
		c.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("status %d", rec.Code)
		}
	}
}
