package credit_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/creditd/creditd/credit"
)

// TestRecordRulesPerKind: contract §5's sign convention for each kind of entry the admin side
// records (Ledger.Record), when an order's GID is required, allowed or refused, that an order is
// recorded once and the entries that reference one need it in the ledger; each accepted entry's
// balance_after is the running sum, and the company's outstanding follows; a refused one
// writes nothing.
func TestRecordRulesPerKind(t *testing.T) {
	t.Parallel()
	env := newRuleEnv(t, "EUR")
	co := env.MustCompany(t, env.store, "Buyer", "1000.00", "NET_30")
	for _, tc := range []struct {
		kind, amount, gid, note string
		code                    credit.Code // "" for accepted
		param                   string
		shown                   string // the accepted amount as shown
	}{
		{kind: "order_placed", amount: "100", gid: orderGID(1), shown: "100.00"},
		{kind: "order_placed", amount: "100", gid: orderGID(1), code: credit.CodeValidationFailed, param: "order"}, // recorded already
		{kind: "order_placed", amount: "0", gid: orderGID(2), code: credit.CodeInvalidAmount, param: "amount"},
		{kind: "order_placed", amount: "-1", gid: orderGID(2), code: credit.CodeInvalidAmount, param: "amount"},
		{kind: "order_placed", amount: "10", code: credit.CodeValidationFailed, param: "order"},
		{kind: "order_placed", amount: "-1", code: credit.CodeInvalidAmount, param: "amount"}, // the sign before the order
		{kind: "order_placed", amount: "10", gid: "gid://platform/Company/1", code: credit.CodeValidationFailed, param: "order"},
		{kind: "order_placed", amount: "10", gid: "gid://platform/Order/", code: credit.CodeValidationFailed, param: "order"},
		{kind: "order_placed", amount: "10", gid: "gid://platform/Order/123456789012345678901", code: credit.CodeValidationFailed, param: "order"},
		{kind: "order_placed", amount: "10.001", gid: orderGID(2), code: credit.CodeInvalidAmount, param: "amount"},
		{kind: "order_placed", amount: "1e2", gid: orderGID(2), code: credit.CodeInvalidAmount, param: "amount"},
		{kind: "payment", amount: "-30", gid: orderGID(1), shown: "-30.00"},
		{kind: "payment", amount: "-30", shown: "-30.00"},
		{kind: "payment", amount: "-30", gid: orderGID(99), code: credit.CodeValidationFailed, param: "order"}, // not in the ledger
		{kind: "payment", amount: "30", code: credit.CodeInvalidAmount, param: "amount"},
		{kind: "payment", amount: "0", code: credit.CodeInvalidAmount, param: "amount"},
		{kind: "payment", amount: "-0.00", code: credit.CodeInvalidAmount, param: "amount"},
		{kind: "payment", amount: "abc", code: credit.CodeInvalidAmount, param: "amount"},
		{kind: "refund", amount: "-10", gid: orderGID(1), shown: "-10.00"},
		{kind: "refund", amount: "-10", code: credit.CodeValidationFailed, param: "order"},
		{kind: "refund", amount: "10", gid: orderGID(1), code: credit.CodeInvalidAmount, param: "amount"},
		{kind: "cancellation", amount: "-10", gid: orderGID(1), shown: "-10.00"},
		{kind: "cancellation", amount: "-10", gid: orderGID(99), code: credit.CodeValidationFailed, param: "order"},
		{kind: "cancellation", amount: "0", gid: orderGID(1), code: credit.CodeInvalidAmount, param: "amount"},
		{kind: "adjustment", amount: "3", note: "typo fix", shown: "3.00"},
		{kind: "adjustment", amount: "-3.5", shown: "-3.50"},
		{kind: "adjustment", amount: "0", code: credit.CodeInvalidAmount, param: "amount"},
		{kind: "adjustment", amount: "3", gid: orderGID(1), code: credit.CodeValidationFailed, param: "order"},
		{kind: "opening_balance", amount: "-5", shown: "-5.00"},
		{kind: "opening_balance", amount: "0", shown: "0.00"},
		{kind: "opening_balance", amount: "5.05", note: "from the old system", shown: "5.05"},
		{kind: "opening_balance", amount: "5", gid: orderGID(1), code: credit.CodeValidationFailed, param: "order"},
		{kind: "gift", amount: "1", code: credit.CodeValidationFailed, param: "kind"},
		{kind: "", amount: "1", code: credit.CodeValidationFailed, param: "kind"},
		{kind: "ORDER_PLACED", amount: "1", gid: orderGID(3), code: credit.CodeValidationFailed, param: "kind"},
		{kind: "gift", amount: "abc", code: credit.CodeInvalidAmount, param: "amount"}, // the amount before the kind
		{kind: "payment", amount: "-1", note: strings.Repeat("n", 501), code: credit.CodeValidationFailed, param: "note"},
		{kind: "payment", amount: "-1", note: "a\x00b", code: credit.CodeValidationFailed, param: "note"},
		{kind: "payment", amount: "-1", note: "   ", code: credit.CodeValidationFailed, param: "note"},
		{kind: "order_placed", amount: "2", gid: orderGID(2), shown: "2.00"},
	} {
		name := tc.kind + " " + tc.amount + " " + tc.gid
		events, timeline, entries := len(env.feed(t)), len(env.timeline(t, co.ID)), env.ledger(t, co.ID)
		env.Clock.Advance(time.Second)
		e, c, err := env.Service.Ledger.Record(env.staff, credit.LedgerEntryInput{CompanyID: co.ID, Kind: tc.kind, Amount: tc.amount, OrderGID: tc.gid, Note: tc.note})
		if tc.code != "" {
			wantError(t, name, err, tc.code, tc.param)
			if got := env.ledger(t, co.ID); len(got) != len(entries) || len(env.feed(t)) != events || len(env.timeline(t, co.ID)) != timeline {
				t.Errorf("%s: a refused entry wrote something", name)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		balance := tc.shown
		if len(entries) > 0 {
			balance = addAmounts(entries[0].BalanceAfter.Amount, tc.shown)
		}
		if e.Kind != tc.kind || e.Amount != (credit.Money{Amount: tc.shown, Currency: "EUR"}) || e.BalanceAfter.Amount != balance ||
			c.Outstanding != e.BalanceAfter || (e.PlatformOrderGID == nil) != (tc.gid == "") || (e.Note == nil) != (tc.note == "") ||
			!e.OccurredAt.Equal(env.Clock.Now()) || e.CompanyID != co.ID {
			t.Errorf("%s: entry %+v, company outstanding %s; want balance_after %s", name, e, c.Outstanding.Amount, balance)
		}
		if got := env.ledger(t, co.ID); len(got) != len(entries)+1 || asJSON(got[0]) != asJSON(e) {
			t.Errorf("%s: the ledger's newest entry %s, want %s", name, asJSON(got[0]), asJSON(e))
		}
		if got := env.feedTypes(t, events); !slices.Equal(got, []string{string(credit.EventTypeLedgerEntryCreated)}) {
			t.Errorf("%s: events %v", name, got)
		}
		want := credit.TimelineLedgerEntryRecorded
		if tc.kind == credit.KindAdjustment {
			want = credit.TimelineAdjustmentCreated
		}
		tl := env.timeline(t, co.ID)[timeline:]
		if len(tl) != 1 || tl[0].Type != want || tl[0].Actor != (credit.Actor{Type: "staff", Label: "test staff"}) || tl[0].Data["ledger_entry_id"] != e.ID {
			t.Errorf("%s: timeline %+v, want one %s by test staff", name, tl, want)
		}
		by, err := env.Service.Ledger.Recorders(env.staff, co.ID, []string{e.ID})
		if err != nil || by[e.ID] != (credit.Actor{Type: "staff", Label: "test staff"}) {
			t.Errorf("%s: recorded by %+v %v", name, by, err)
		}
	}

	// Order 1 (100.00) was paid 30.00 by reference and 30.00 without one (the oldest open
	// invoice first), refunded 10.00 and cancelled 10.00: 20.00 is open. Order 2 is open.
	inv := env.invoices(t, co.ID)
	if len(inv) != 2 || inv[0].PlatformOrderGID != orderGID(1) || inv[0].OpenAmount.Amount != "20.00" || inv[0].Status != credit.InvoiceOpen ||
		inv[1].PlatformOrderGID != orderGID(2) || inv[1].OpenAmount.Amount != "2.00" || inv[1].Amount.Amount != "2.00" {
		t.Errorf("invoices %+v", inv)
	}
	if c := env.company(t, co.ID); c.Outstanding.Amount != "21.55" {
		t.Errorf("outstanding %s, want 21.55", c.Outstanding.Amount)
	}
}

// TestRecordedEntriesSettleInvoices: an order is an invoice due its company's NET days after the
// entry's occurred_at, which may be back-dated; payments without an order settle the oldest
// open invoices first, and what is left is credit that settles the next orders as they are
// placed.
func TestRecordedEntriesSettleInvoices(t *testing.T) {
	t.Parallel()
	env := newRuleEnv(t, "EUR")
	co := env.MustCompany(t, env.store, "Buyer", "1000.00", "NET_14")
	now := env.Clock.Now()
	back := credit.At(now.Add(-3 * day))
	first := orderEntry(co.ID, 1, "100.00")
	first.OccurredAt = &back
	if e := env.MustRecord(t, first); !e.OccurredAt.Equal(back.Time) {
		t.Errorf("occurred_at %s, want the back-dated %s", e.OccurredAt, back)
	}
	env.MustRecord(t, orderEntry(co.ID, 2, "50.00"))
	env.MustRecord(t, credit.LedgerEntryInput{CompanyID: co.ID, Kind: credit.KindPayment, Amount: "-120.00"})
	// Overpaid by 80.00: order 3 (60.00) is settled at once, order 4 (30.00) in part.
	env.MustRecord(t, credit.LedgerEntryInput{CompanyID: co.ID, Kind: credit.KindPayment, Amount: "-110.00"})
	env.MustRecord(t, orderEntry(co.ID, 3, "60.00"))
	env.MustRecord(t, orderEntry(co.ID, 4, "30.00"))

	type want struct {
		gid, open, status string
		due               time.Time
	}
	wants := []want{
		{orderGID(1), "0.00", credit.InvoicePaid, back.Add(14 * day)},
		{orderGID(2), "0.00", credit.InvoicePaid, now.Add(14 * day)},
		{orderGID(3), "0.00", credit.InvoicePaid, now.Add(14 * day)},
		{orderGID(4), "10.00", credit.InvoiceOpen, now.Add(14 * day)},
	}
	inv := env.invoices(t, co.ID)
	if len(inv) != len(wants) {
		t.Fatalf("invoices %+v", inv)
	}
	for i, w := range wants {
		if got := inv[i]; got.PlatformOrderGID != w.gid || got.OpenAmount.Amount != w.open || got.Status != w.status || !got.DueAt.Equal(w.due) {
			t.Errorf("invoice %d: %+v, want %s open %s (%s) due %s", i, got, w.gid, w.open, w.status, w.due)
		}
	}
	if c := env.company(t, co.ID); c.Outstanding.Amount != "10.00" {
		t.Errorf("outstanding %s, want 10.00", c.Outstanding.Amount)
	}
	// The ledger lists entries in the order they were appended, whatever their occurred_at.
	entries := env.ledger(t, co.ID)
	if len(entries) != 6 || entries[5].PlatformOrderGID == nil || *entries[5].PlatformOrderGID != orderGID(1) {
		t.Errorf("the ledger's oldest entry %+v, want order 1's", entries[len(entries)-1])
	}
}
