package console_test

import (
	"regexp"
	"testing"

	"github.com/creditd/creditd/credit"
)

// TestLedgerRunningBalance: each ledger row shows the company's outstanding right after that
// entry (balance_after), so a credit manager reads the running balance without adding up.
func TestLedgerRunningBalance(t *testing.T) {
	e := newConsole(t)
	store := e.MustStore(t, "Demo Wholesale GmbH", "EUR")
	e.MustStaff(t, store, "Anna Berg", "anna@example.com", password)
	b := e.browser(t)
	b.mustSignIn("anna@example.com", password)
	c := e.MustCompany(t, store, "Alpenblick Hotels AG", "25000.00")
	e.MustRecord(t, credit.LedgerEntryInput{CompanyID: c.ID, Kind: credit.KindOrderPlaced, Amount: "4800.00", OrderGID: "gid://platform/Order/5001"})
	e.MustRecord(t, credit.LedgerEntryInput{CompanyID: c.ID, Kind: credit.KindPayment, Amount: "-1200.00"})

	page := b.get("/companies/" + c.ID)
	ledger := section(page.Body, "ledger-title")
	if !regexp.MustCompile(`<th scope="col" class="num">Balance</th>`).MatchString(ledger) {
		t.Errorf("the ledger has no Balance column:\n%s", ledger)
	}
	// Newest first: the payment leaves 3,600.00, the order before it 4,800.00.
	want := regexp.MustCompile(`(?s)<td>Payment</td><td class="num">−1,200\.00 EUR</td><td class="num">3,600\.00 EUR</td>.*<td class="num">4,800\.00 EUR</td><td class="num">4,800\.00 EUR</td>`)
	if !want.MatchString(ledger) {
		t.Errorf("the ledger does not show each entry's balance after it:\n%s", ledger)
	}
	if !regexp.MustCompile(`<div class="table-scroll">\s*<table class="data ledger">`).MatchString(ledger) {
		t.Errorf("the ledger table is not inside a scrolling box, so it can overflow its card:\n%s", ledger)
	}
}
