package server_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
	"github.com/creditd/creditd/tenant"
)

const day = 24 * time.Hour

func order(companyID, gid, amount string) credit.LedgerEntryInput {
	return credit.LedgerEntryInput{CompanyID: companyID, Kind: credit.KindOrderPlaced, Amount: amount, OrderGID: gid}
}

func TestOverdueHoldLifecycle(t *testing.T) {
	f := newWriteFixture(t)
	env := f.env
	env.MustRecord(t, order(f.company.ID, "gid://platform/Order/1", "400.00"))
	env.Clock.Advance(29 * day)
	if res, err := env.Service.Maintenance.SweepHolds(context.Background()); err != nil || res.Placed != 0 {
		t.Fatalf("sweep before due: %+v %v", res, err)
	}
	if c := f.companyNow(t); c.Hold != nil {
		t.Fatalf("hold before the due date: %+v", c.Hold)
	}
	env.Clock.Advance(1*day + time.Second) // NET_30 passed
	res, err := env.Service.Maintenance.SweepHolds(context.Background())
	if err != nil || res.Placed != 1 {
		t.Fatalf("sweep after due: %+v %v", res, err)
	}
	c := f.companyNow(t)
	if c.Status != "on_hold" || c.Hold == nil || c.Hold.Kind != "overdue" || c.Hold.PlacedBy != "system" ||
		c.Hold.PlatformOrderGID == nil || *c.Hold.PlatformOrderGID != "gid://platform/Order/1" || c.Hold.DueAt == nil ||
		!c.Hold.DueAt.Equal(time.Date(2026, 4, 1, 9, 0, 0, 0, time.UTC)) {
		t.Fatalf("overdue hold: %+v", c.Hold)
	}
	// Neither the API nor staff can lift it while the invoice is unpaid.
	r := env.Do(t, credittest.Request{Method: "DELETE", Path: "/v1/companies/" + f.company.ID + "/hold", Key: f.full})
	if r.Status != http.StatusConflict || r.ErrorCode() != "hold_not_liftable" {
		t.Fatalf("lift overdue hold: %d %s", r.Status, r.Body)
	}
	if _, err := env.Service.Companies.LiftHold(tenant.Staff(context.Background(), f.storeID, "Ops"), f.company.ID); credit.CodeOf(err) != credit.CodeHoldNotLiftable {
		t.Fatalf("staff lift: %v", err)
	}
	if r := env.Do(t, credittest.Request{Method: "POST", Path: "/v1/companies/" + f.company.ID + "/hold", Key: f.full}); r.ErrorCode() != "hold_exists" {
		t.Fatalf("manual hold over overdue: %d %s", r.Status, r.Body)
	}
	// A partial payment leaves it overdue; the rest lifts it at once, on the ledger write.
	env.MustRecord(t, credit.LedgerEntryInput{CompanyID: f.company.ID, Kind: credit.KindPayment, Amount: "-150.00"})
	if c := f.companyNow(t); c.Hold == nil {
		t.Fatal("partial payment lifted the hold")
	}
	env.MustRecord(t, credit.LedgerEntryInput{CompanyID: f.company.ID, Kind: credit.KindPayment, Amount: "-250.00", OrderGID: "gid://platform/Order/1"})
	if c := f.companyNow(t); c.Hold != nil || c.Status != "approved" || c.Outstanding.Amount != "0.00" {
		t.Fatalf("paid invoice kept the hold: %+v", c)
	}
	ev := f.timeline(t)
	if len(ev) != 2 || ev[1].Type != credit.EventOverdueHoldPlaced || ev[0].Type != credit.EventOverdueHoldLifted ||
		ev[0].Actor != (credit.Actor{Type: "system", Label: "system"}) || ev[1].Actor.Type != "system" {
		t.Fatalf("timeline: %+v", ev)
	}
}

func TestOverdueDetectedOnLedgerWrite(t *testing.T) {
	f := newWriteFixture(t)
	old := credit.At(f.env.Clock.Now().Add(-45 * day))
	in := order(f.company.ID, "gid://platform/Order/7", "90.00")
	in.OccurredAt = &old
	f.env.MustRecord(t, in)
	if c := f.companyNow(t); c.Hold == nil || c.Hold.Kind != "overdue" {
		t.Fatalf("a back-dated overdue order did not place a hold: %+v", c)
	}
	// A refund referencing the order closes the invoice and lifts the hold.
	f.env.MustRecord(t, credit.LedgerEntryInput{CompanyID: f.company.ID, Kind: credit.KindRefund, Amount: "-90.00", OrderGID: "gid://platform/Order/7"})
	if c := f.companyNow(t); c.Hold != nil {
		t.Fatalf("refunded invoice kept the hold: %+v", c.Hold)
	}
}

func TestManualHoldIsNeverOverwritten(t *testing.T) {
	f := newWriteFixture(t)
	env := f.env
	staff := tenant.Staff(context.Background(), f.storeID, "Maria (credit desk)")
	if _, err := env.Service.Companies.PlaceHold(staff, credit.HoldInput{CompanyID: f.company.ID}); err != nil {
		t.Fatal(err)
	}
	env.MustRecord(t, order(f.company.ID, "gid://platform/Order/2", "100.00"))
	env.Clock.Advance(31 * day)
	if _, err := env.Service.Maintenance.SweepHolds(context.Background()); err != nil {
		t.Fatal(err)
	}
	c := f.companyNow(t)
	if c.Hold == nil || c.Hold.Kind != "manual" || c.Hold.PlacedBy != "Maria (credit desk)" {
		t.Fatalf("manual hold replaced: %+v", c.Hold)
	}
	// Lifting the manual hold lets the waiting overdue hold take its place at once.
	r := env.Do(t, credittest.Request{Method: "DELETE", Path: "/v1/companies/" + f.company.ID + "/hold", Key: f.full})
	var res credit.CompanyResult
	r.Decode(t, &res)
	if r.Status != 200 || res.Company.Hold == nil || res.Company.Hold.Kind != "overdue" {
		t.Fatalf("lift manual while overdue: %d %s", r.Status, r.Body)
	}
	ev := f.timeline(t)
	if len(ev) != 3 || ev[0].Type != credit.EventOverdueHoldPlaced || ev[1].Type != credit.EventHoldLifted || ev[2].Type != credit.EventHoldPlaced ||
		ev[2].Actor != (credit.Actor{Type: "staff", Label: "Maria (credit desk)"}) || ev[1].Actor.Label != "ERP sync" {
		t.Fatalf("timeline: %+v", ev)
	}
}

func TestUnallocatedPaymentsPayOldestFirst(t *testing.T) {
	f := newWriteFixture(t)
	env := f.env
	env.MustRecord(t, order(f.company.ID, "gid://platform/Order/10", "100.00"))
	env.Clock.Advance(5 * day)
	env.MustRecord(t, order(f.company.ID, "gid://platform/Order/11", "100.00"))
	env.MustRecord(t, credit.LedgerEntryInput{CompanyID: f.company.ID, Kind: credit.KindPayment, Amount: "-130.00"})
	// Order 10 is paid, order 11 has 70 open: it falls due 30 days after it was placed.
	env.Clock.Advance(26 * day)
	if _, err := env.Service.Maintenance.SweepHolds(context.Background()); err != nil {
		t.Fatal(err)
	}
	if c := f.companyNow(t); c.Hold != nil {
		t.Fatalf("hold while only a paid invoice is past due: %+v", c.Hold)
	}
	env.Clock.Advance(5 * day)
	if _, err := env.Service.Maintenance.SweepHolds(context.Background()); err != nil {
		t.Fatal(err)
	}
	c := f.companyNow(t)
	if c.Hold == nil || *c.Hold.PlatformOrderGID != "gid://platform/Order/11" {
		t.Fatalf("hold for the partly paid order: %+v", c.Hold)
	}
	// Overpaying leaves credit that pays the next order as soon as it is placed.
	env.MustRecord(t, credit.LedgerEntryInput{CompanyID: f.company.ID, Kind: credit.KindPayment, Amount: "-100.00"})
	if c := f.companyNow(t); c.Hold != nil || c.Outstanding.Amount != "-30.00" {
		t.Fatalf("after overpayment: %+v", c)
	}
	env.MustRecord(t, order(f.company.ID, "gid://platform/Order/12", "20.00"))
	env.Clock.Advance(40 * day)
	if _, err := env.Service.Maintenance.SweepHolds(context.Background()); err != nil {
		t.Fatal(err)
	}
	if c := f.companyNow(t); c.Hold != nil {
		t.Fatalf("an order covered by unapplied credit went overdue: %+v", c.Hold)
	}
}

func TestLedgerRecordRules(t *testing.T) {
	f := newWriteFixture(t)
	f.env.MustRecord(t, order(f.company.ID, "gid://platform/Order/1", "10.00"))
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
	if n := f.ledgerCount(t); n != 1 {
		t.Fatalf("refused entries were written: %d entries", n)
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
