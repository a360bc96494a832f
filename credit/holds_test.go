package credit_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/ids"
)

// Holds (contract §5): the automatic overdue hold, placed by a ledger write or the sweep once
// an invoice is past due and lifted when nothing is overdue any more, and the manual hold
// placed and lifted through the API or by staff.

// holdPrevious decodes data.previous of a company.hold_* event.
func holdPrevious(t *testing.T, ev credit.Event) (status string, hold *credit.Hold) {
	t.Helper()
	var data struct {
		Object   credit.Company `json:"object"`
		Previous struct {
			Status string       `json:"status"`
			Hold   *credit.Hold `json:"hold"`
		} `json:"previous"`
	}
	if err := json.Unmarshal(ev.Data, &data); err != nil {
		t.Fatalf("event %s: %v", ev.ID, err)
	}
	return data.Previous.Status, data.Previous.Hold
}

// TestOverdueHoldFromTheFirstMomentPastDue: an invoice is overdue from the first microsecond
// after its due date (occurred_at + NET days), not at it; the sweep then places the automatic
// hold, by the system, naming the invoice, once however often it runs; its days overdue count
// a started day as a whole one.
func TestOverdueHoldFromTheFirstMomentPastDue(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	due := start.Add(30 * day) // NET_30
	for _, tc := range []struct {
		name        string
		at          time.Duration // after the due date
		held        bool
		daysOverdue int
	}{
		{"a day before the due date", -day, false, 0},
		{"a microsecond before the due date", -time.Microsecond, false, 0},
		{"at the due date", 0, false, 0},
		{"a microsecond past due", time.Microsecond, true, 1},
		{"a whole day past due", day, true, 1},
		{"a day and a microsecond past due", day + time.Microsecond, true, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			env := newRuleEnv(t, "EUR")
			co := env.MustCompany(t, env.store, "Late GmbH", "1000.00", "NET_30")
			env.MustRecord(t, orderEntry(co.ID, 1, "400.00"))
			before := len(env.feed(t))

			now := due.Add(tc.at)
			env.Clock.Set(now)
			res := env.sweep(t)
			inv := env.invoices(t, co.ID)
			if len(inv) != 1 || !inv[0].DueAt.Equal(due) || inv[0].Status != credit.InvoiceOpen || inv[0].DaysOverdue != tc.daysOverdue {
				t.Fatalf("invoice %+v, want open, due %s, %d days overdue", inv, due, tc.daysOverdue)
			}
			c := env.company(t, co.ID)
			if !tc.held {
				if res != (credit.SweepResult{}) || c.Hold != nil || c.Status != credit.StatusApproved || len(env.feed(t)) != before {
					t.Fatalf("not yet overdue: sweep %+v, company %+v", res, c)
				}
				// A ledger write, which decides the overdue state too, decides the same.
				if _, c, err := env.Service.Ledger.Record(env.staff, credit.LedgerEntryInput{CompanyID: co.ID, Kind: credit.KindOpeningBalance, Amount: "0"}); err != nil || c.Hold != nil {
					t.Fatalf("not yet overdue, after a ledger write: %+v %v", c.Hold, err)
				}
				return
			}
			if res != (credit.SweepResult{Checked: 1, Placed: 1}) {
				t.Errorf("sweep %+v, want 1 checked and placed", res)
			}
			h := c.Hold
			if c.Status != credit.StatusOnHold || h == nil || h.Kind != credit.HoldOverdue || h.PlacedBy != "system" || h.Note != nil ||
				!h.PlacedAt.Equal(now) || h.PlatformOrderGID == nil || *h.PlatformOrderGID != orderGID(1) ||
				h.DueAt == nil || !h.DueAt.Equal(due) || !c.UpdatedAt.Equal(now) {
				t.Fatalf("company %+v hold %+v, want the system's overdue hold on order 1 placed at %s", c, h, now)
			}
			feed := env.feed(t)[before:]
			if len(feed) != 1 || feed[0].Type != credit.EventTypeCompanyHoldPlaced || !feed[0].OccurredAt.Equal(now) {
				t.Fatalf("events %+v, want one company.hold_placed", feed)
			}
			if status, prev := holdPrevious(t, feed[0]); status != credit.StatusApproved || prev != nil {
				t.Errorf("hold_placed's previous: %s %+v, want approved without a hold", status, prev)
			}
			tl := env.timeline(t, co.ID)
			last := tl[len(tl)-1]
			if last.Type != credit.TimelineOverdueHoldPlaced || last.Actor != (credit.Actor{Type: "system", Label: "system"}) ||
				last.Data["platform_order_gid"] != orderGID(1) || last.Data["due_at"] != credit.At(due).String() || last.Data["kind"] != credit.HoldOverdue {
				t.Errorf("timeline's last event %+v, want overdue_hold_placed by the system", last)
			}
			// Again, later: nothing changes.
			env.Clock.Advance(time.Hour)
			if res := env.sweep(t); res != (credit.SweepResult{Checked: 1}) {
				t.Errorf("second sweep %+v, want 1 checked, nothing placed or lifted", res)
			}
			if n := len(env.feed(t)); n != before+1 {
				t.Errorf("second sweep appended %d events", n-before-1)
			}
		})
	}
}

// TestSweepAsOfAnotherMoment: SweepHoldsAsOf decides what is overdue as of the moment given,
// and stamps what it changes with the service clock's time (contract §11), never the moment.
func TestSweepAsOfAnotherMoment(t *testing.T) {
	t.Parallel()
	env := newRuleEnv(t, "EUR")
	co := env.MustCompany(t, env.store, "Late GmbH", "1000.00", "NET_30")
	env.MustRecord(t, orderEntry(co.ID, 1, "400.00"))
	due := env.Clock.Now().Add(30 * day)
	env.Clock.Advance(time.Hour)
	now := env.Clock.Now()

	res, err := env.Service.Maintenance.SweepHoldsAsOf(context.Background(), due)
	if err != nil || res != (credit.SweepResult{}) {
		t.Fatalf("as of the due date: %+v %v, want nothing", res, err)
	}
	res, err = env.Service.Maintenance.SweepHoldsAsOf(context.Background(), due.Add(time.Microsecond))
	if err != nil || res != (credit.SweepResult{Checked: 1, Placed: 1}) {
		t.Fatalf("as of a microsecond past due: %+v %v, want one hold placed", res, err)
	}
	c := env.company(t, co.ID)
	if c.Hold == nil || c.Hold.Kind != credit.HoldOverdue || !c.Hold.PlacedAt.Equal(now) || !c.UpdatedAt.Equal(now) || !c.Hold.DueAt.Equal(due) {
		t.Fatalf("company %+v hold %+v, want an overdue hold stamped %s (the clock's), due %s", c, c.Hold, now, due)
	}
	tl := env.timeline(t, co.ID)
	if last := tl[len(tl)-1]; last.Type != credit.TimelineOverdueHoldPlaced || !last.OccurredAt.Equal(now) {
		t.Errorf("timeline's last event %+v, want overdue_hold_placed at %s", last, now)
	}
	feed := env.feed(t)
	if last := feed[len(feed)-1]; last.Type != credit.EventTypeCompanyHoldPlaced || !last.OccurredAt.Equal(now) {
		t.Errorf("feed's last event %+v, want company.hold_placed at %s", last, now)
	}

	// The invoice is not overdue as of now: that hold may be lifted, by the API as by staff.
	lifted, err := env.Service.Companies.LiftHold(apiKey(env.store, credit.ScopeWriteCredit), co.ID)
	if err != nil || lifted.Company.Hold != nil {
		t.Fatalf("lifting an overdue hold whose invoice is not overdue as of now: %+v %v", lifted, err)
	}
	if got := env.timelineTypes(t, co.ID, len(tl)); !slices.Equal(got, []string{"hold_lifted by ERP sync"}) {
		t.Errorf("timeline after the lift: %v", got)
	}
}

// TestSettlingTheOverdueInvoice: the ledger write that leaves no invoice overdue lifts the
// automatic hold at once, without a sweep, by the system; an entry that pays nothing of the
// invoice (a partial payment, an adjustment, an opening balance) leaves it in place.
func TestSettlingTheOverdueInvoice(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name        string
		entry       credit.LedgerEntryInput
		lifted      bool
		outstanding string
		recorded    string // the timeline event of the entry
	}{
		{"a payment of the order", credit.LedgerEntryInput{Kind: credit.KindPayment, Amount: "-400.00", OrderGID: orderGID(1)}, true, "0.00", string(credit.TimelineLedgerEntryRecorded)},
		{"a payment without an order", credit.LedgerEntryInput{Kind: credit.KindPayment, Amount: "-400.00"}, true, "0.00", string(credit.TimelineLedgerEntryRecorded)},
		{"an overpayment", credit.LedgerEntryInput{Kind: credit.KindPayment, Amount: "-500.00"}, true, "-100.00", string(credit.TimelineLedgerEntryRecorded)},
		{"a refund of the order", credit.LedgerEntryInput{Kind: credit.KindRefund, Amount: "-400.00", OrderGID: orderGID(1)}, true, "0.00", string(credit.TimelineLedgerEntryRecorded)},
		{"a cancellation of the order", credit.LedgerEntryInput{Kind: credit.KindCancellation, Amount: "-400.00", OrderGID: orderGID(1)}, true, "0.00", string(credit.TimelineLedgerEntryRecorded)},
		{"a partial payment", credit.LedgerEntryInput{Kind: credit.KindPayment, Amount: "-399.99", OrderGID: orderGID(1)}, false, "0.01", string(credit.TimelineLedgerEntryRecorded)},
		{"a negative adjustment, which pays no invoice", credit.LedgerEntryInput{Kind: credit.KindAdjustment, Amount: "-400.00", Note: "goodwill"}, false, "0.00", string(credit.TimelineAdjustmentCreated)},
		{"an opening balance, which pays no invoice", credit.LedgerEntryInput{Kind: credit.KindOpeningBalance, Amount: "-400.00"}, false, "0.00", string(credit.TimelineLedgerEntryRecorded)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			env := newRuleEnv(t, "EUR")
			co := env.MustCompany(t, env.store, "Late GmbH", "1000.00", "NET_30")
			placed := credit.At(env.Clock.Now().Add(-45 * day))
			in := orderEntry(co.ID, 1, "400.00")
			in.OccurredAt = &placed
			env.MustRecord(t, in)
			if h := env.company(t, co.ID).Hold; h == nil || h.Kind != credit.HoldOverdue {
				t.Fatalf("an order recorded 45 days back on NET_30: hold %+v, want the overdue hold at once", h)
			}
			feedBefore, timelineBefore := len(env.feed(t)), len(env.timeline(t, co.ID))

			tc.entry.CompanyID = co.ID
			env.Clock.Advance(time.Minute)
			e, c, err := env.Service.Ledger.Record(env.staff, tc.entry)
			if err != nil {
				t.Fatal(err)
			}
			if c.Outstanding.Amount != tc.outstanding || e.BalanceAfter.Amount != tc.outstanding {
				t.Errorf("outstanding %s, balance_after %s, want %s", c.Outstanding.Amount, e.BalanceAfter.Amount, tc.outstanding)
			}
			wantFeed := []string{string(credit.EventTypeLedgerEntryCreated)}
			if tc.lifted && tc.entry.Kind != credit.KindCancellation {
				// Settled, and not by a cancellation: paid (contract §17).
				wantFeed = append(wantFeed, string(credit.EventTypeInvoicePaid))
			}
			wantTimeline := []string{tc.recorded + " by test staff"}
			if tc.lifted {
				wantFeed = append(wantFeed, string(credit.EventTypeCompanyHoldLifted))
				wantTimeline = append(wantTimeline, string(credit.TimelineOverdueHoldLifted)+" by system")
				if c.Hold != nil || c.Status != credit.StatusApproved {
					t.Errorf("after %s: %+v, want no hold", tc.name, c)
				}
			} else if c.Hold == nil || c.Hold.Kind != credit.HoldOverdue || *c.Hold.PlatformOrderGID != orderGID(1) {
				t.Errorf("after %s: hold %+v, want the overdue hold on order 1 kept", tc.name, c.Hold)
			}
			if got := env.feedTypes(t, feedBefore); !slices.Equal(got, wantFeed) {
				t.Errorf("events %v, want %v", got, wantFeed)
			}
			// The entry's and the hold's timeline events are of one write; the hold's is
			// numbered first (appendEntry reconciles the hold before Record notes the entry).
			if got := env.timelineTypes(t, co.ID, timelineBefore); !slices.Equal(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(wantTimeline))) {
				t.Errorf("timeline %v, want %v", got, wantTimeline)
			}
			if tc.lifted {
				feed := env.feed(t)
				if status, prev := holdPrevious(t, feed[len(feed)-1]); status != credit.StatusOnHold || prev == nil || prev.Kind != credit.HoldOverdue {
					t.Errorf("hold_lifted's previous: %s %+v, want the overdue hold", status, prev)
				}
			}
			// What the write decided, a sweep leaves as it is.
			if res := env.sweep(t); res.Placed != 0 || res.Lifted != 0 {
				t.Errorf("a sweep after the write changed %+v", res)
			}
		})
	}
}

// TestOverdueHoldMovesToTheInvoiceStillUnpaid: when the invoice an overdue hold names is paid
// while another is overdue, the hold stays and names that one (company.hold_changed, whose
// previous hold names the paid invoice); paying the last lifts it.
func TestOverdueHoldMovesToTheInvoiceStillUnpaid(t *testing.T) {
	t.Parallel()
	env := newRuleEnv(t, "EUR")
	co := env.MustCompany(t, env.store, "Late GmbH", "1000.00", "NET_30")
	now := env.Clock.Now()
	for i, back := range []time.Duration{45 * day, 40 * day} {
		at := credit.At(now.Add(-back))
		in := orderEntry(co.ID, i+1, "100.00")
		in.OccurredAt = &at
		env.MustRecord(t, in)
	}
	if h := env.company(t, co.ID).Hold; h == nil || *h.PlatformOrderGID != orderGID(1) || !h.DueAt.Equal(now.Add(-15*day)) {
		t.Fatalf("hold %+v, want one naming order 1, the oldest due", h)
	}
	feedBefore, timelineBefore := len(env.feed(t)), len(env.timeline(t, co.ID))
	env.MustRecord(t, credit.LedgerEntryInput{CompanyID: co.ID, Kind: credit.KindPayment, Amount: "-100.00", OrderGID: orderGID(1)})
	c := env.company(t, co.ID)
	if c.Hold == nil || c.Hold.Kind != credit.HoldOverdue || *c.Hold.PlatformOrderGID != orderGID(2) || !c.Hold.DueAt.Equal(now.Add(-10*day)) {
		t.Fatalf("hold after paying order 1: %+v, want it naming order 2", c.Hold)
	}
	if got := env.feedTypes(t, feedBefore); !slices.Equal(got, []string{string(credit.EventTypeLedgerEntryCreated), string(credit.EventTypeInvoicePaid), string(credit.EventTypeCompanyHoldChanged)}) {
		t.Fatalf("events %v", got)
	}
	feed := env.feed(t)
	if status, prev := holdPrevious(t, feed[len(feed)-1]); status != credit.StatusOnHold || prev == nil || *prev.PlatformOrderGID != orderGID(1) {
		t.Errorf("hold_changed's previous: %s %+v, want the hold naming order 1", status, prev)
	}
	// The hold stays: the timeline records the payment only.
	if got := env.timelineTypes(t, co.ID, timelineBefore); !slices.Equal(got, []string{"ledger_entry_recorded by test staff"}) {
		t.Errorf("timeline %v", got)
	}
	env.MustRecord(t, credit.LedgerEntryInput{CompanyID: co.ID, Kind: credit.KindPayment, Amount: "-100.00"})
	if h := env.company(t, co.ID).Hold; h != nil {
		t.Errorf("hold after paying both: %+v, want none", h)
	}
}

// TestManualHoldAndOverdueHold: a manual hold is never replaced by the overdue hold, which
// waits behind it and takes its place when it is lifted; no manual hold can be placed over
// the overdue hold, which cannot be lifted while its invoice is unpaid.
func TestManualHoldAndOverdueHold(t *testing.T) {
	t.Parallel()
	env := newRuleEnv(t, "EUR")
	co := env.MustCompany(t, env.store, "Disputed GmbH", "1000.00", "NET_30")
	key := apiKey(env.store, credit.ScopeWriteCredit, credit.ScopeReadCredit)
	note := "dispute about order 1"
	if _, err := env.Service.Companies.PlaceHold(env.staff, credit.HoldInput{CompanyID: co.ID, Note: &note}); err != nil {
		t.Fatal(err)
	}
	placed := credit.At(env.Clock.Now().Add(-45 * day))
	in := orderEntry(co.ID, 1, "100.00")
	in.OccurredAt = &placed
	feedBefore := len(env.feed(t))
	env.MustRecord(t, in)
	if got := env.feedTypes(t, feedBefore); !slices.Equal(got, []string{string(credit.EventTypeLedgerEntryCreated)}) {
		t.Errorf("an overdue order under a manual hold appended %v", got)
	}
	if res := env.sweep(t); res != (credit.SweepResult{}) {
		t.Errorf("sweep %+v: a company under a manual hold is not the sweep's", res)
	}
	c := env.company(t, co.ID)
	if h := c.Hold; h == nil || h.Kind != credit.HoldManual || h.PlacedBy != "test staff" || h.Note == nil || *h.Note != note || h.PlatformOrderGID != nil {
		t.Fatalf("hold %+v, want the manual hold kept", h)
	}
	_, err := env.Service.Companies.PlaceHold(key, credit.HoldInput{CompanyID: co.ID})
	wantError(t, "a hold over the manual hold", err, credit.CodeHoldExists, "")

	// Lifting the manual hold: the overdue hold takes its place in the same write.
	feedBefore, timelineBefore := len(env.feed(t)), len(env.timeline(t, co.ID))
	env.Clock.Advance(time.Minute)
	res, err := env.Service.Companies.LiftHold(key, co.ID)
	if err != nil {
		t.Fatal(err)
	}
	if h := res.Company.Hold; h == nil || h.Kind != credit.HoldOverdue || h.PlacedBy != "system" || *h.PlatformOrderGID != orderGID(1) || !h.PlacedAt.Equal(env.Clock.Now()) {
		t.Fatalf("after lifting the manual hold: %+v, want the overdue hold", h)
	}
	if got := env.feedTypes(t, feedBefore); !slices.Equal(got, []string{string(credit.EventTypeCompanyHoldLifted), string(credit.EventTypeCompanyHoldPlaced)}) {
		t.Errorf("events %v", got)
	}
	feed := env.feed(t)
	if status, prev := holdPrevious(t, feed[len(feed)-2]); status != credit.StatusOnHold || prev == nil || prev.Kind != credit.HoldManual {
		t.Errorf("hold_lifted's previous: %s %+v, want the manual hold", status, prev)
	}
	if status, prev := holdPrevious(t, feed[len(feed)-1]); status != credit.StatusApproved || prev != nil {
		t.Errorf("hold_placed's previous: %s %+v, want no hold", status, prev)
	}
	if got := env.timelineTypes(t, co.ID, timelineBefore); !slices.Equal(got, []string{"hold_lifted by ERP sync", "overdue_hold_placed by system"}) {
		t.Errorf("timeline %v", got)
	}

	// The overdue hold: neither replaced nor lifted while the invoice is unpaid, by anyone.
	feedBefore, timelineBefore = len(env.feed(t)), len(env.timeline(t, co.ID))
	for who, ctx := range map[string]context.Context{"an API key": key, "staff": env.staff} {
		_, err := env.Service.Companies.PlaceHold(ctx, credit.HoldInput{CompanyID: co.ID, Note: &note})
		wantError(t, who+" placing a hold over the overdue hold", err, credit.CodeHoldExists, "")
		_, err = env.Service.Companies.LiftHold(ctx, co.ID)
		wantError(t, who+" lifting the overdue hold", err, credit.CodeHoldNotLiftable, "")
		if err != nil && !strings.Contains(err.Error(), orderGID(1)) {
			t.Errorf("hold_not_liftable %q does not name the unpaid invoice", err)
		}
	}
	if n := len(env.feed(t)); n != feedBefore {
		t.Errorf("refused hold writes appended %d events", n-feedBefore)
	}
	if n := len(env.timeline(t, co.ID)); n != timelineBefore {
		t.Errorf("refused hold writes appended %d timeline events", n-timelineBefore)
	}
	if h := env.company(t, co.ID).Hold; h == nil || h.Kind != credit.HoldOverdue || h.Note != nil {
		t.Errorf("hold after the refusals: %+v", h)
	}

	env.MustRecord(t, credit.LedgerEntryInput{CompanyID: co.ID, Kind: credit.KindPayment, Amount: "-100.00"})
	if h := env.company(t, co.ID).Hold; h != nil {
		t.Fatalf("hold after the payment: %+v", h)
	}
	_, err = env.Service.Companies.LiftHold(key, co.ID)
	wantError(t, "lifting without a hold", err, credit.CodeHoldNotFound, "")
}

// TestManualHoldPlaceAndLift: a manual hold's note is optional text of at most 500
// characters; the hold is attributed to its author; placing a second one and lifting a hold
// that is not there are refused and change nothing; each change appends exactly one feed event
// and one timeline event.
func TestManualHoldPlaceAndLift(t *testing.T) {
	t.Parallel()
	env := newRuleEnv(t, "EUR")
	key := apiKey(env.store, credit.ScopeWriteCredit)
	for _, tc := range []struct {
		name  string
		note  *string
		valid bool
	}{
		{"no note", nil, true},
		{"a note", ptr("payment dispute"), true},
		{"500 characters", ptr(strings.Repeat("n", 500)), true},
		{"500 characters of two bytes", ptr(strings.Repeat("ä", 500)), true},
		{"line breaks and tabs", ptr("line one\nline two\tand\r\nmore"), true},
		{"501 characters", ptr(strings.Repeat("n", 501)), false},
		{"empty", ptr(""), false},
		{"blank", ptr(" \n\t "), false},
		{"a NUL byte", ptr("a\x00b"), false},
		{"a control character", ptr("bell\x07"), false},
		{"DEL", ptr("del\x7f"), false},
		{"not UTF-8", ptr("caf\xe9"), false},
	} {
		co := env.MustCompany(t, env.store, tc.name, "100.00")
		feedBefore := len(env.feed(t))
		env.Clock.Advance(time.Second)
		placedAt := env.Clock.Now()
		res, err := env.Service.Companies.PlaceHold(key, credit.HoldInput{CompanyID: co.ID, Note: tc.note})
		if !tc.valid {
			wantError(t, tc.name, err, credit.CodeValidationFailed, "note")
			if c := env.company(t, co.ID); c.Hold != nil || len(env.feed(t)) != feedBefore || len(env.timeline(t, co.ID)) != 0 {
				t.Errorf("%s: a refused hold left %+v", tc.name, c.Hold)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		h := res.Company.Hold
		if res.Company.Status != credit.StatusOnHold || h == nil || h.Kind != credit.HoldManual || h.PlacedBy != "ERP sync" ||
			!h.PlacedAt.Equal(placedAt) || h.PlatformOrderGID != nil || h.DueAt != nil || !res.Company.UpdatedAt.Equal(placedAt) ||
			(h.Note == nil) != (tc.note == nil) || (h.Note != nil && *h.Note != *tc.note) {
			t.Fatalf("%s: placed %+v hold %+v", tc.name, res.Company, h)
		}
		// Placing again, by anyone, with another note: refused; the first hold stays as it was.
		env.Clock.Advance(time.Second)
		_, err = env.Service.Companies.PlaceHold(env.staff, credit.HoldInput{CompanyID: co.ID, Note: ptr("another")})
		wantError(t, tc.name+", placed again", err, credit.CodeHoldExists, "")
		if got := env.company(t, co.ID).Hold; got == nil || asJSON(got) != asJSON(h) {
			t.Errorf("%s: hold after the refusal %+v, want %+v", tc.name, got, h)
		}
		lifted, err := env.Service.Companies.LiftHold(key, co.ID)
		if err != nil || lifted.Company.Hold != nil || lifted.Company.Status != credit.StatusApproved || !lifted.Company.UpdatedAt.Equal(env.Clock.Now()) {
			t.Fatalf("%s: lift %+v %v", tc.name, lifted, err)
		}
		_, err = env.Service.Companies.LiftHold(key, co.ID)
		wantError(t, tc.name+", lifted again", err, credit.CodeHoldNotFound, "")

		if got := env.feedTypes(t, feedBefore); !slices.Equal(got, []string{string(credit.EventTypeCompanyHoldPlaced), string(credit.EventTypeCompanyHoldLifted)}) {
			t.Errorf("%s: events %v", tc.name, got)
		}
		tl := env.timeline(t, co.ID)
		if got := env.timelineTypes(t, co.ID, 0); !slices.Equal(got, []string{"hold_placed by ERP sync", "hold_lifted by ERP sync"}) {
			t.Fatalf("%s: timeline %v", tc.name, got)
		}
		wantNote := any(nil)
		if tc.note != nil {
			wantNote = *tc.note
		}
		if tl[0].Data["kind"] != credit.HoldManual || tl[0].Data["note"] != wantNote || tl[1].Data["kind"] != credit.HoldManual {
			t.Errorf("%s: timeline data %+v, %+v", tc.name, tl[0].Data, tl[1].Data)
		}
	}
}

// TestHoldsNeedWriteCredit: placing and lifting a hold needs write_credit; a company that is
// not the store's is not found, whatever the hold.
func TestHoldsNeedWriteCredit(t *testing.T) {
	t.Parallel()
	env := newRuleEnv(t, "EUR")
	co := env.MustCompany(t, env.store, "Buyer", "100.00")
	for _, tc := range []struct {
		name  string
		ctx   context.Context
		id    string
		code  credit.Code
		words string
	}{
		{"a read-only key", apiKey(env.store, credit.ScopeReadCredit, credit.ScopeReadApplications), co.ID, credit.CodeInsufficientScope, "this call needs scope write_credit"},
		{"no viewer", context.Background(), co.ID, credit.CodeUnauthenticated, "authentication required"},
		{"an unknown company", apiKey(env.store, credit.ScopeWriteCredit), ids.New("co"), credit.CodeNotFound, "no such company"},
		{"an application's ID", apiKey(env.store, credit.ScopeWriteCredit), ids.New("app"), credit.CodeNotFound, "no such company"},
		{"an empty ID", apiKey(env.store, credit.ScopeWriteCredit), "", credit.CodeNotFound, "no such company"},
	} {
		_, err := env.Service.Companies.PlaceHold(tc.ctx, credit.HoldInput{CompanyID: tc.id})
		wantError(t, tc.name+" placing", err, tc.code, "")
		if err != nil && !strings.Contains(err.Error(), tc.words) {
			t.Errorf("%s placing: %q does not say %q", tc.name, err, tc.words)
		}
		_, err = env.Service.Companies.LiftHold(tc.ctx, tc.id)
		wantError(t, tc.name+" lifting", err, tc.code, "")
	}
	if c := env.company(t, co.ID); c.Hold != nil {
		t.Errorf("refused writes placed %+v", c.Hold)
	}
}
