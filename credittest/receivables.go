package credittest

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/creditd/creditd/credit"
)

// ReceivablesSeed is a store seeded with invoices in every aging bucket, some partly paid (by
// order and by payments without one, applied oldest first), one refunded in part and one
// cancelled, with amounts whose sums a binary floating-point sum gets wrong.
type ReceivablesSeed struct {
	Store     string
	Companies []credit.Company // by name: "Acme", "Bolt", "Cask", "Dune", "Echo"
	// Cancelled is the company and order GID of the cancelled invoice.
	CancelledCompany, CancelledOrder string
}

// SeedReceivables creates the ReceivablesSeed store, in EUR, with NET_30 companies whose orders
// are back-dated so that, as of the clock, they fall in each bucket.
func (e *ServiceEnv) SeedReceivables(tb testing.TB) ReceivablesSeed {
	tb.Helper()
	st := e.MustStore(tb, "Receivables", "EUR")
	seed := ReceivablesSeed{Store: st}
	now := e.Clock.Now()
	day := 24 * time.Hour
	order := 0
	place := func(c credit.Company, amount string, ageDays int) string {
		order++
		gid := fmt.Sprintf("gid://platform/Order/%d", 7000+order)
		at := credit.At(now.Add(-time.Duration(ageDays)*day - time.Duration(order)*time.Minute))
		e.MustRecord(tb, credit.LedgerEntryInput{CompanyID: c.ID, Kind: credit.KindOrderPlaced, Amount: amount, OrderGID: gid, OccurredAt: &at})
		return gid
	}
	record := func(c credit.Company, kind, amount, gid string) {
		e.MustRecord(tb, credit.LedgerEntryInput{CompanyID: c.ID, Kind: kind, Amount: amount, OrderGID: gid})
	}
	for _, name := range []string{"Acme", "Bolt", "Cask", "Dune", "Echo"} {
		seed.Companies = append(seed.Companies, e.MustCompany(tb, st, name, "900000000000000", "NET_30"))
	}
	acme, bolt, cask, dune, echo := seed.Companies[0], seed.Companies[1], seed.Companies[2], seed.Companies[3], seed.Companies[4]
	// Acme: one invoice in each bucket (issued 10, 45, 70, 100 and 150 days ago; due 30 days
	// later), amounts beyond float64's 15-16 significant digits.
	place(acme, "98765432109876.54", 10)
	place(acme, "100000000000.01", 45)
	place(acme, "0.07", 70)
	place(acme, "333333333333.33", 100)
	place(acme, "1.10", 150)
	// And one just past each boundary: 30 and 60 days and a few minutes past due.
	place(acme, "2.22", 60)
	place(acme, "3.33", 90)
	// Bolt: partly paid by order, and a payment without an order that settles the oldest
	// invoice and part of the next.
	place(bolt, "1000.00", 130)
	place(bolt, "2000.00", 65)
	b3 := place(bolt, "500.50", 20)
	record(bolt, credit.KindPayment, "-200.25", b3)
	record(bolt, credit.KindPayment, "-1500.00", "")
	// Cask: one invoice cancelled in full, one refunded in part.
	c1 := place(cask, "750.00", 40)
	c2 := place(cask, "300.00", 5)
	record(cask, credit.KindCancellation, "-750.00", c1)
	record(cask, credit.KindRefund, "-0.30", c2)
	seed.CancelledCompany, seed.CancelledOrder = cask.ID, c1
	// Dune: paid in full, then a credit balance (unapplied payment) that the next order uses.
	d1 := place(dune, "99.99", 95)
	record(dune, credit.KindPayment, "-99.99", d1)
	record(dune, credit.KindPayment, "-40.00", "")
	place(dune, "100.00", 33)
	// Echo: nothing but an adjustment, which is no invoice.
	if _, err := e.Service.Ledger.CreateAdjustment(Staff(st), credit.AdjustmentInput{CompanyID: echo.ID, Amount: credit.Amount("12.34"), Note: strPtr("goodwill")}); err != nil {
		tb.Fatalf("adjustment: %v", err)
	}
	return seed
}

func strPtr(s string) *string { return &s }

// RecomputedInvoice is an invoice as ReplayInvoices finds it from the ledger alone.
type RecomputedInvoice struct {
	OrderGID  string
	Amount    decimal.Decimal
	Open      decimal.Decimal
	Issued    time.Time
	Due       time.Time
	Cancelled bool
}

// ReplayInvoices recomputes a company's invoices from its ledger, read through the service, as
// contract §5 states the rule: an order is an invoice due after the company's NET days
// (constant in these tests); entries that reference it reduce it; payments without an order
// go to the oldest open invoices, and what is left waits for the next orders.
func (e *ServiceEnv) ReplayInvoices(tb testing.TB, companyID string) []RecomputedInvoice {
	tb.Helper()
	invoices, _ := e.replayLedger(tb, companyID)
	return invoices
}

// ReplayNotInvoiced recomputes from a company's ledger what is on no open invoice (amended
// §15) the long way: opening balances and adjustments, plus what references or settles
// invoices beyond their amounts (an invoice refunded below zero), less the payments left
// unapplied after every open invoice was settled (a credit balance).
func (e *ServiceEnv) ReplayNotInvoiced(tb testing.TB, companyID string) decimal.Decimal {
	tb.Helper()
	invoices, rest := e.replayLedger(tb, companyID)
	sum := rest
	for _, inv := range invoices {
		if inv.Open.IsNegative() {
			sum = sum.Add(inv.Open)
		}
	}
	return sum
}

// replayLedger replays a company's ledger into its invoices and the sum of what is on none:
// opening balances and adjustments less the unapplied payments.
func (e *ServiceEnv) replayLedger(tb testing.TB, companyID string) ([]RecomputedInvoice, decimal.Decimal) {
	tb.Helper()
	ctx := e.StaffOf(tb, companyID)
	c, err := e.Service.Companies.Get(ctx, companyID)
	if err != nil {
		tb.Fatal(err)
	}
	days, err := strconv.Atoi(strings.TrimPrefix(c.PaymentTerms, "NET_"))
	if err != nil {
		tb.Fatal(err)
	}
	var entries []credit.LedgerEntry
	p := credit.LedgerListParams{ListParams: credit.ListParams{Limit: intPtr(250)}}
	for {
		page, err := e.Service.Ledger.List(ctx, companyID, p)
		if err != nil {
			tb.Fatal(err)
		}
		entries = append(entries, page.Data...)
		if !page.HasMore {
			break
		}
		p.Cursor = *page.NextCursor
	}
	// Pages are newest first.
	for i, j := 0, len(entries)-1; i < j; i, j = i+1, j-1 {
		entries[i], entries[j] = entries[j], entries[i]
	}
	var invoices []*RecomputedInvoice
	byGID := map[string]*RecomputedInvoice{}
	unapplied, other := decimal.Zero, decimal.Zero
	for _, le := range entries {
		amount := decimal.RequireFromString(le.Amount.Amount)
		switch le.Kind {
		case "order_placed":
			inv := &RecomputedInvoice{OrderGID: *le.PlatformOrderGID, Amount: amount, Open: amount, Issued: le.OccurredAt.Time,
				Due: le.OccurredAt.Add(time.Duration(days) * 24 * time.Hour)}
			use := decimal.Min(unapplied, inv.Open)
			inv.Open, unapplied = inv.Open.Sub(use), unapplied.Sub(use)
			invoices = append(invoices, inv)
			byGID[inv.OrderGID] = inv
		case "payment", "refund", "cancellation":
			if le.PlatformOrderGID != nil {
				inv := byGID[*le.PlatformOrderGID]
				inv.Open = inv.Open.Add(amount)
				if le.Kind == "cancellation" {
					inv.Cancelled = true
				}
				continue
			}
			left := amount.Neg()
			for _, inv := range invoices {
				use := decimal.Min(left, decimal.Max(inv.Open, decimal.Zero))
				inv.Open, left = inv.Open.Sub(use), left.Sub(use)
			}
			unapplied = unapplied.Add(left)
		case "opening_balance", "adjustment":
			other = other.Add(amount)
		}
	}
	out := make([]RecomputedInvoice, len(invoices))
	for i, inv := range invoices {
		out[i] = *inv
	}
	return out, other.Sub(unapplied)
}

func intPtr(n int) *int { return &n }

// RecomputedAging is an aging computed from replayed invoices: Buckets are current, 1–30,
// 31–60, 61–90 and over 90 days past due, a started day counting as one.
type RecomputedAging struct {
	Buckets [5]decimal.Decimal
	Total   decimal.Decimal
	Overdue decimal.Decimal
}

// AgeInvoices sums the open amounts of invoices by days past due as of now.
func AgeInvoices(invoices []RecomputedInvoice, now time.Time) RecomputedAging {
	var a RecomputedAging
	for _, inv := range invoices {
		if !inv.Open.IsPositive() {
			continue
		}
		b := 0
		if inv.Due.Before(now) {
			late := now.Sub(inv.Due)
			switch days := int((late + 24*time.Hour - 1) / (24 * time.Hour)); {
			case days <= 30:
				b = 1
			case days <= 60:
				b = 2
			case days <= 90:
				b = 3
			default:
				b = 4
			}
			a.Overdue = a.Overdue.Add(inv.Open)
		}
		a.Buckets[b] = a.Buckets[b].Add(inv.Open)
		a.Total = a.Total.Add(inv.Open)
	}
	return a
}

// Strings returns the aging as fixed two-decimal strings: current, 1–30, 31–60, 61–90, over
// 90, total.
func (a RecomputedAging) Strings() []string {
	out := make([]string, 0, 6)
	for _, b := range a.Buckets {
		out = append(out, b.StringFixed(2))
	}
	return append(out, a.Total.StringFixed(2))
}

// AgingStrings returns a domain aging in the order of RecomputedAging.Strings.
func AgingStrings(a credit.Aging) []string {
	return []string{a.Current.Amount, a.Days1To30.Amount, a.Days31To60.Amount, a.Days61To90.Amount, a.Over90.Amount, a.Total.Amount}
}

// SeedReconcile is SeedReceivables with what is on no invoice added (amended §15): opening
// balances (positive and a negative one), adjustments on companies with invoices, a payment
// without an order that exceeds everything open (a credit balance), and a company whose only
// entries are an opening balance and a partial payment of it. Companies are those of
// ReceivablesSeed plus "Fjord" (opening balance, partly paid) and "Gale" (a credit balance).
func (e *ServiceEnv) SeedReconcile(tb testing.TB) ReceivablesSeed {
	tb.Helper()
	seed := e.SeedReceivables(tb)
	acme, bolt, cask := seed.Companies[0], seed.Companies[1], seed.Companies[2]
	record := func(c credit.Company, kind, amount, gid string) {
		e.MustRecord(tb, credit.LedgerEntryInput{CompanyID: c.ID, Kind: kind, Amount: amount, OrderGID: gid})
	}
	adjust := func(c credit.Company, amount string) {
		if _, err := e.Service.Ledger.CreateAdjustment(Staff(seed.Store), credit.AdjustmentInput{CompanyID: c.ID, Amount: credit.Amount(amount), Note: strPtr("correction")}); err != nil {
			tb.Fatalf("adjustment: %v", err)
		}
	}
	record(acme, credit.KindOpeningBalance, "1200.00", "")
	adjust(acme, "-0.10")
	record(bolt, credit.KindOpeningBalance, "-25.05", "")
	adjust(cask, "7.77")
	fjord := e.MustCompany(tb, seed.Store, "Fjord", "5000.00", "NET_30")
	record(fjord, credit.KindOpeningBalance, "800.00", "")
	record(fjord, credit.KindPayment, "-300.01", "")
	gale := e.MustCompany(tb, seed.Store, "Gale", "5000.00", "NET_30")
	at := credit.At(e.Clock.Now().Add(-50 * 24 * time.Hour))
	e.MustRecord(tb, credit.LedgerEntryInput{CompanyID: gale.ID, Kind: credit.KindOrderPlaced, Amount: "400.00", OrderGID: "gid://platform/Order/7901", OccurredAt: &at})
	record(gale, credit.KindPayment, "-150.00", "gid://platform/Order/7901")
	record(gale, credit.KindPayment, "-1000.00", "")
	seed.Companies = append(seed.Companies, fjord, gale)
	return seed
}

// LedgerSum is the sum of a company's ledger, read page by page through the service: the
// company's outstanding as the contract defines it, recomputed.
func (e *ServiceEnv) LedgerSum(tb testing.TB, companyID string) decimal.Decimal {
	tb.Helper()
	ctx := e.StaffOf(tb, companyID)
	sum := decimal.Zero
	p := credit.LedgerListParams{ListParams: credit.ListParams{Limit: intPtr(250)}}
	for {
		page, err := e.Service.Ledger.List(ctx, companyID, p)
		if err != nil {
			tb.Fatal(err)
		}
		for _, le := range page.Data {
			sum = sum.Add(decimal.RequireFromString(le.Amount.Amount))
		}
		if !page.HasMore {
			return sum
		}
		p.Cursor = *page.NextCursor
	}
}
