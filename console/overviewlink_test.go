package console_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/creditd/creditd/credit"
)

// TestCompaniesOverdueLinks: the overview's "Companies overdue" figure leads to the
// receivables filtered to the companies with overdue invoices, which lists the overdue one.
func TestCompaniesOverdueLinks(t *testing.T) {
	e := newConsole(t)
	store := e.MustStore(t, "Demo Wholesale GmbH", "EUR")
	e.MustStaff(t, store, "Anna Berg", "anna@example.com", password)
	alpen := e.MustCompany(t, store, "Alpenblick Hotels AG", "1000.00", "NET_14")
	e.MustRecord(t, credit.LedgerEntryInput{CompanyID: alpen.ID, Kind: credit.KindOrderPlaced, Amount: "850.00", OrderGID: "gid://platform/Order/1"})
	e.Clock.Advance(15 * 24 * time.Hour)
	e.MustCompany(t, store, "Brauhaus Kessler KG", "8000.00")

	b := e.browser(t)
	b.mustSignIn("anna@example.com", password)
	b.get("/").wantStatus(t, http.StatusOK).
		wantText(t, `<dt>Companies overdue</dt><dd><a href="/receivables?overdue=1" id="companies-overdue">1</a>`)
	b.get("/receivables?overdue=1").wantStatus(t, http.StatusOK).
		wantText(t, "Alpenblick Hotels AG").wantNoText(t, "Brauhaus Kessler KG")
}
