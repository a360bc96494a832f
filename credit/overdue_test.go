package credit_test

import (
	"context"
	"testing"
	"time"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
	"github.com/creditd/creditd/tenant"
)

// overdueFixture is a store with one NET_30 company and the contexts that act on it: the ERP's
// key ("ERP sync", reading and writing credit) and a staff member.
type overdueFixture struct {
	env     *credittest.ServiceEnv
	storeID string
	company credit.Company
	erp     context.Context
	staff   context.Context
}

func newOverdueFixture(t *testing.T) *overdueFixture {
	t.Helper()
	env := credittest.NewService(t)
	st := env.MustStore(t, "Acme", "EUR")
	return &overdueFixture{
		env:     env,
		storeID: st,
		company: env.MustCompany(t, st, "Buyer GmbH", "1000.00"),
		erp:     tenant.APIKey(context.Background(), st, "key_erp", "ERP sync", []string{credit.ScopeReadCredit, credit.ScopeWriteCredit}),
		staff:   tenant.Staff(context.Background(), st, "Maria (credit desk)"),
	}
}

func (f *overdueFixture) companyNow(t *testing.T) credit.Company {
	t.Helper()
	c, err := f.env.Service.Companies.Get(f.erp, f.company.ID)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func (f *overdueFixture) sweep(t *testing.T) credit.SweepResult {
	t.Helper()
	res, err := f.env.Service.Maintenance.SweepHolds(context.Background())
	if err != nil {
		t.Fatalf("sweep: %v", err)
	}
	return res
}

// timeline returns what the writes under test added to the company's timeline, newest first.
func (f *overdueFixture) timeline(t *testing.T) []credit.TimelineEvent {
	t.Helper()
	return f.env.WritesOnTimeline(t, f.company.ID)
}

// TestOverdueHoldLifecycle: the sweep places the overdue hold once an invoice is past due
// (not before); neither the ERP nor staff can lift it or place a manual hold over it; a
// partial payment keeps it and the payment of the rest lifts it on the ledger write, each
// change on the timeline as the system's.
func TestOverdueHoldLifecycle(t *testing.T) {
	f := newOverdueFixture(t)
	env := f.env
	env.MustRecord(t, orderEntry(f.company.ID, 1, "400.00"))
	env.Clock.Advance(29 * day)
	if res := f.sweep(t); res.Placed != 0 {
		t.Fatalf("sweep before due: %+v", res)
	}
	if c := f.companyNow(t); c.Hold != nil {
		t.Fatalf("hold before the due date: %+v", c.Hold)
	}
	env.Clock.Advance(1*day + time.Second) // NET_30 passed
	if res := f.sweep(t); res.Placed != 1 {
		t.Fatalf("sweep after due: %+v", res)
	}
	c := f.companyNow(t)
	if c.Status != "on_hold" || c.Hold == nil || c.Hold.Kind != "overdue" || c.Hold.PlacedBy != "system" ||
		c.Hold.PlatformOrderGID == nil || *c.Hold.PlatformOrderGID != "gid://platform/Order/1" || c.Hold.DueAt == nil ||
		!c.Hold.DueAt.Equal(time.Date(2026, 4, 1, 9, 0, 0, 0, time.UTC)) {
		t.Fatalf("overdue hold: %+v", c.Hold)
	}
	for name, ctx := range map[string]context.Context{"the ERP": f.erp, "staff": f.staff} {
		if _, err := env.Service.Companies.LiftHold(ctx, f.company.ID); credit.CodeOf(err) != credit.CodeHoldNotLiftable {
			t.Fatalf("%s lifts the overdue hold: %v, want hold_not_liftable", name, err)
		}
	}
	if _, err := env.Service.Companies.PlaceHold(f.erp, credit.HoldInput{CompanyID: f.company.ID}); credit.CodeOf(err) != credit.CodeHoldExists {
		t.Fatalf("a manual hold over the overdue one: %v, want hold_exists", err)
	}
	env.MustRecord(t, credit.LedgerEntryInput{CompanyID: f.company.ID, Kind: credit.KindPayment, Amount: "-150.00"})
	if c := f.companyNow(t); c.Hold == nil {
		t.Fatal("partial payment lifted the hold")
	}
	env.MustRecord(t, credit.LedgerEntryInput{CompanyID: f.company.ID, Kind: credit.KindPayment, Amount: "-250.00", OrderGID: "gid://platform/Order/1"})
	if c := f.companyNow(t); c.Hold != nil || c.Status != "approved" || c.Outstanding.Amount != "0.00" {
		t.Fatalf("paid invoice kept the hold: %+v", c)
	}
	ev := f.timeline(t)
	if len(ev) != 2 || ev[1].Type != credit.TimelineOverdueHoldPlaced || ev[0].Type != credit.TimelineOverdueHoldLifted ||
		ev[0].Actor != (credit.Actor{Type: "system", Label: "system"}) || ev[1].Actor.Type != "system" {
		t.Fatalf("timeline: %+v", ev)
	}
}

// TestOverdueDetectedOnLedgerWrite: a back-dated order already past due places the hold on
// its own write, and a refund that closes the invoice lifts it.
func TestOverdueDetectedOnLedgerWrite(t *testing.T) {
	f := newOverdueFixture(t)
	old := credit.At(f.env.Clock.Now().Add(-45 * day))
	in := orderEntry(f.company.ID, 7, "90.00")
	in.OccurredAt = &old
	f.env.MustRecord(t, in)
	if c := f.companyNow(t); c.Hold == nil || c.Hold.Kind != "overdue" {
		t.Fatalf("a back-dated overdue order did not place a hold: %+v", c)
	}
	f.env.MustRecord(t, credit.LedgerEntryInput{CompanyID: f.company.ID, Kind: credit.KindRefund, Amount: "-90.00", OrderGID: "gid://platform/Order/7"})
	if c := f.companyNow(t); c.Hold != nil {
		t.Fatalf("refunded invoice kept the hold: %+v", c.Hold)
	}
}

// TestManualHoldIsNeverOverwritten: the sweep leaves a manual hold in place however overdue
// the company is; lifting it lets the waiting overdue hold take its place at once.
func TestManualHoldIsNeverOverwritten(t *testing.T) {
	f := newOverdueFixture(t)
	env := f.env
	if _, err := env.Service.Companies.PlaceHold(f.staff, credit.HoldInput{CompanyID: f.company.ID}); err != nil {
		t.Fatal(err)
	}
	env.MustRecord(t, orderEntry(f.company.ID, 2, "100.00"))
	env.Clock.Advance(31 * day)
	f.sweep(t)
	if c := f.companyNow(t); c.Hold == nil || c.Hold.Kind != "manual" || c.Hold.PlacedBy != "Maria (credit desk)" {
		t.Fatalf("manual hold replaced: %+v", c.Hold)
	}
	res, err := env.Service.Companies.LiftHold(f.erp, f.company.ID)
	if err != nil || res.Company.Hold == nil || res.Company.Hold.Kind != "overdue" {
		t.Fatalf("lift manual while overdue: %+v %v", res, err)
	}
	ev := f.timeline(t)
	if len(ev) != 3 || ev[0].Type != credit.TimelineOverdueHoldPlaced || ev[1].Type != credit.TimelineHoldLifted || ev[2].Type != credit.TimelineHoldPlaced ||
		ev[2].Actor != (credit.Actor{Type: "staff", Label: "Maria (credit desk)"}) || ev[1].Actor.Label != "ERP sync" {
		t.Fatalf("timeline: %+v", ev)
	}
}

// TestUnallocatedPaymentsPayOldestFirst: a payment without an order pays the oldest open
// invoices first, so only the partly paid newer one goes overdue; credit left over pays the
// next order as soon as it is placed.
func TestUnallocatedPaymentsPayOldestFirst(t *testing.T) {
	f := newOverdueFixture(t)
	env := f.env
	env.MustRecord(t, orderEntry(f.company.ID, 10, "100.00"))
	env.Clock.Advance(5 * day)
	env.MustRecord(t, orderEntry(f.company.ID, 11, "100.00"))
	env.MustRecord(t, credit.LedgerEntryInput{CompanyID: f.company.ID, Kind: credit.KindPayment, Amount: "-130.00"})
	env.Clock.Advance(26 * day)
	f.sweep(t)
	if c := f.companyNow(t); c.Hold != nil {
		t.Fatalf("hold while only a paid invoice is past due: %+v", c.Hold)
	}
	env.Clock.Advance(5 * day)
	f.sweep(t)
	if c := f.companyNow(t); c.Hold == nil || *c.Hold.PlatformOrderGID != "gid://platform/Order/11" {
		t.Fatalf("hold for the partly paid order: %+v", c.Hold)
	}
	env.MustRecord(t, credit.LedgerEntryInput{CompanyID: f.company.ID, Kind: credit.KindPayment, Amount: "-100.00"})
	if c := f.companyNow(t); c.Hold != nil || c.Outstanding.Amount != "-30.00" {
		t.Fatalf("after overpayment: %+v", c)
	}
	env.MustRecord(t, orderEntry(f.company.ID, 12, "20.00"))
	env.Clock.Advance(40 * day)
	f.sweep(t)
	if c := f.companyNow(t); c.Hold != nil {
		t.Fatalf("an order covered by unapplied credit went overdue: %+v", c.Hold)
	}
}

// TestLedgerRecordRules: each kind of ledger entry takes only amounts of its sign and the order
// reference its rule allows; a refused entry writes nothing.
func TestLedgerRecordRules(t *testing.T) {
	f := newOverdueFixture(t)
	f.env.MustRecord(t, orderEntry(f.company.ID, 1, "10.00"))
	for _, tc := range []struct {
		in   credit.LedgerEntryInput
		code credit.Code
	}{
		{credit.LedgerEntryInput{Kind: "order_placed", Amount: "-1.00", OrderGID: "gid://platform/Order/2"}, credit.CodeInvalidAmount},
		{credit.LedgerEntryInput{Kind: "order_placed", Amount: "1.00"}, credit.CodeValidationFailed},
		{credit.LedgerEntryInput{Kind: "order_placed", Amount: "1.00", OrderGID: "gid://platform/Order/1"}, credit.CodeValidationFailed},
		{credit.LedgerEntryInput{Kind: "order_placed", Amount: "1.00", OrderGID: "gid://platform/Company/1"}, credit.CodeValidationFailed},
		{credit.LedgerEntryInput{Kind: "payment", Amount: "1.00"}, credit.CodeInvalidAmount},
		{credit.LedgerEntryInput{Kind: "payment", Amount: "-1.00", OrderGID: "gid://platform/Order/99"}, credit.CodeValidationFailed},
		{credit.LedgerEntryInput{Kind: "refund", Amount: "-1.00"}, credit.CodeValidationFailed},
		{credit.LedgerEntryInput{Kind: "cancellation", Amount: "0", OrderGID: "gid://platform/Order/1"}, credit.CodeInvalidAmount},
		{credit.LedgerEntryInput{Kind: "adjustment", Amount: "0"}, credit.CodeInvalidAmount},
		{credit.LedgerEntryInput{Kind: "adjustment", Amount: "1", OrderGID: "gid://platform/Order/1"}, credit.CodeValidationFailed},
		{credit.LedgerEntryInput{Kind: "opening_balance", Amount: "1", OrderGID: "gid://platform/Order/1"}, credit.CodeValidationFailed},
		{credit.LedgerEntryInput{Kind: "gift", Amount: "1"}, credit.CodeValidationFailed},
	} {
		tc.in.CompanyID = f.company.ID
		if _, _, err := f.env.Service.Ledger.Record(credittest.Staff(f.storeID), tc.in); credit.CodeOf(err) != tc.code {
			t.Errorf("%+v: got %v, want %s", tc.in, err, tc.code)
		}
	}
	page, err := f.env.Service.Ledger.List(f.erp, f.company.ID, credit.LedgerListParams{})
	if err != nil || len(page.Data) != 1 {
		t.Fatalf("refused entries were written: %d entries, %v", len(page.Data), err)
	}
	for _, ok := range []credit.LedgerEntryInput{
		{Kind: "opening_balance", Amount: "-5.00"},
		{Kind: "opening_balance", Amount: "0"},
		{Kind: "cancellation", Amount: "-10.00", OrderGID: "gid://platform/Order/1"},
		{Kind: "adjustment", Amount: "3.00", Note: "typo fix"},
	} {
		ok.CompanyID = f.company.ID
		f.env.MustRecord(t, ok)
	}
	if c := f.companyNow(t); c.Outstanding.Amount != "-2.00" {
		t.Fatalf("outstanding %s", c.Outstanding.Amount)
	}
}
