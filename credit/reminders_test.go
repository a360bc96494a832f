package credit_test

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/database"
)

// Reminders (contract §17): the store's schedule with its audit trail, and the sweep that emits
// invoice.reminder_due (the highest level due, once per invoice and level, also from concurrent
// sweeps of two instances) and invoice.promise_broken (once, the day after the promise's day),
// paused by a dispute and by a promise whose day has not passed.

// sweepReminders runs the reminder sweep as of the env's clock, failing the test on error.
func (e *ruleEnv) sweepReminders(t testing.TB) credit.ReminderSweepResult {
	t.Helper()
	res, err := e.Service.Maintenance.SweepReminders(context.Background())
	if err != nil {
		t.Fatalf("reminder sweep: %v", err)
	}
	return res
}

// setSchedule sets the store's reminder schedule as its staff.
func (e *ruleEnv) setSchedule(t testing.TB, days ...int) {
	t.Helper()
	if _, err := e.Service.Stores.SetReminderSchedule(e.staff, days); err != nil {
		t.Fatalf("schedule %v: %v", days, err)
	}
}

// reminderData is an invoice.reminder_due event's data.
type reminderData struct {
	Object      credit.Invoice `json:"object"`
	Level       int            `json:"level"`
	OffsetDays  int            `json:"offset_days"`
	DaysOverdue int            `json:"days_overdue"`
	OpenAmount  credit.Money   `json:"open_amount"`
	CompanyID   string         `json:"company_id"`
}

// reminderEvents returns the store's invoice.reminder_due events after the first skip.
func (e *ruleEnv) reminderEvents(t testing.TB, skip int) ([]credit.Event, []reminderData) {
	t.Helper()
	var evs []credit.Event
	var data []reminderData
	for _, ev := range e.feed(t)[skip:] {
		if ev.Type != credit.EventTypeInvoiceReminderDue {
			continue
		}
		var d reminderData
		if err := json.Unmarshal(ev.Data, &d); err != nil {
			t.Fatalf("event %s: %v", ev.ID, err)
		}
		evs, data = append(evs, ev), append(data, d)
	}
	return evs, data
}

// TestReminderSchedule: staff set the schedule (on the store's trail, with who and when),
// bad schedules are refused naming days and change nothing, an API key may not set it.
func TestReminderSchedule(t *testing.T) {
	t.Parallel()
	env := newRuleEnv(t, "EUR")
	if got, err := env.Service.Stores.ReminderSchedule(env.staff); err != nil || len(got.Days) != 0 || len(got.Changes) != 0 {
		t.Fatalf("the default schedule: %+v %v, want empty", got, err)
	}
	env.setSchedule(t, -3, 1, 7, 14, 30)
	env.Clock.Advance(time.Hour)
	env.setSchedule(t, -30, 0, 365)
	got, err := env.Service.Stores.ReminderSchedule(env.staff)
	if err != nil || !slices.Equal(got.Days, []int{-30, 0, 365}) || len(got.Changes) != 2 {
		t.Fatalf("schedule: %+v %v", got, err)
	}
	if c := got.Changes[0]; !slices.Equal(c.Previous, []int{-3, 1, 7, 14, 30}) || !slices.Equal(c.Days, []int{-30, 0, 365}) ||
		c.ChangedBy != "test staff" || !c.ChangedAt.Equal(env.Clock.Now()) {
		t.Errorf("the newest change: %+v", c)
	}
	if c := got.Changes[1]; len(c.Previous) != 0 || !slices.Equal(c.Days, []int{-3, 1, 7, 14, 30}) {
		t.Errorf("the first change: %+v", c)
	}

	for _, tc := range []struct {
		name string
		days []int
	}{
		{"11 offsets", []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}},
		{"unsorted", []int{7, 1}},
		{"a repeated offset", []int{1, 1}},
		{"31 days before the due date", []int{-31, 1}},
		{"366 days after", []int{1, 366}},
	} {
		_, err := env.Service.Stores.SetReminderSchedule(env.staff, tc.days)
		wantError(t, tc.name, err, credit.CodeValidationFailed, "days")
	}
	for _, text := range []string{"1,x", "1,,2", "1;2", "7,1"} {
		_, err := credit.ParseReminderDays(text)
		wantError(t, "days "+text, err, credit.CodeValidationFailed, "days")
	}
	if days, err := credit.ParseReminderDays(" -3, 1,7 "); err != nil || !slices.Equal(days, []int{-3, 1, 7}) {
		t.Errorf("ParseReminderDays: %v %v", days, err)
	}
	_, err = env.Service.Stores.SetReminderSchedule(apiKey(env.store, credit.AllScopes...), []int{1})
	wantError(t, "an API key", err, credit.CodeInsufficientScope, "")
	if after, _ := env.Service.Stores.ReminderSchedule(env.staff); !slices.Equal(after.Days, []int{-30, 0, 365}) || len(after.Changes) != 2 {
		t.Errorf("after the refusals: %+v", after)
	}
}

// TestRemindersDue: a level is due once its moment (due_at + offset) has passed; the sweep
// emits the highest level due not yet emitted, once; lower levels it passed over are never sent;
// the invoice lists what was emitted. A schedule set today sends an old invoice one reminder.
func TestRemindersDue(t *testing.T) {
	t.Parallel()
	env := newRuleEnv(t, "EUR")
	co, inv := env.openInvoice(t, "Late GmbH") // due 2026-04-01T09:00:00Z (NET_30)
	due := env.Clock.Now().Add(30 * day)
	env.setSchedule(t, -3, 1, 7, 14)

	start := len(env.feed(t))
	env.Clock.Set(due.Add(-3 * day)) // the first level's moment, not yet past
	if res := env.sweepReminders(t); res.Reminders != 0 {
		t.Fatalf("at the moment of level 1: %+v", res)
	}
	env.Clock.Advance(time.Microsecond)
	if res := env.sweepReminders(t); res.Reminders != 1 {
		t.Fatalf("past level 1: %+v", res)
	}
	if res := env.sweepReminders(t); res.Reminders != 0 {
		t.Fatalf("a second sweep: %+v", res)
	}
	// Past levels 2 and 3: only 3 is sent, once.
	env.Clock.Set(due.Add(8 * day))
	env.sweepReminders(t)
	env.sweepReminders(t)
	evs, data := env.reminderEvents(t, start)
	if len(data) != 2 || data[0].Level != 1 || data[0].OffsetDays != -3 || data[1].Level != 3 || data[1].OffsetDays != 7 {
		t.Fatalf("reminders %+v", data)
	}
	if d := data[1]; d.DaysOverdue != 8 || d.OpenAmount.Amount != "100.00" || d.CompanyID != co || d.Object.ID != inv || d.Object.Status != credit.InvoiceOpen {
		t.Errorf("level 3's data: %+v", d)
	}
	if id, err := evs[1].CompanyID(); err != nil || id != co {
		t.Errorf("the event's company %q %v", id, err)
	}
	got, err := env.Service.Invoices.Get(env.staff, inv)
	if err != nil {
		t.Fatal(err)
	}
	want := []credit.InvoiceReminder{
		{Level: 1, OffsetDays: -3, DueAt: credit.At(due.Add(-3 * day)), EventID: evs[0].ID},
		{Level: 3, OffsetDays: 7, DueAt: credit.At(due.Add(7 * day)), EventID: evs[1].ID},
	}
	if g, w := mustJSONText(t, got.Reminders), mustJSONText(t, want); g != w {
		t.Errorf("the invoice's reminders\n got %s\nwant %s", g, w)
	}
	// The event's object lists the reminder it announces.
	if n := len(data[1].Object.Reminders); n != 2 || data[1].Object.Reminders[1].EventID != evs[1].ID {
		t.Errorf("the object's reminders: %+v", data[1].Object.Reminders)
	}
	if got := env.timelineTypes(t, co, 0); !slices.Contains(got, "reminder_due by system") {
		t.Errorf("timeline %v, want the reminders by the system", got)
	}

	// A schedule set now for an invoice overdue long ago: one reminder, the highest.
	_, old := env.openInvoice(t, "Older GmbH")
	mark := len(env.feed(t))
	env.Clock.Set(env.Clock.Now().Add(60 * day))
	env.sweepReminders(t)
	_, data = env.reminderEvents(t, mark)
	var levels []int
	for _, d := range data {
		if d.Object.ID == old {
			levels = append(levels, d.Level)
		}
	}
	if !slices.Equal(levels, []int{4}) {
		t.Errorf("an old invoice's reminders: levels %v, want [4]", levels)
	}
	// A paid invoice keeps the reminders it had (it got level 4 meanwhile) and gets no more.
	env.MustRecord(t, credit.LedgerEntryInput{CompanyID: co, Kind: credit.KindPayment, Amount: "-100.00"})
	env.Clock.Advance(30 * day)
	env.sweepReminders(t)
	if got, _ := env.Service.Invoices.Get(env.staff, inv); got.Status != credit.InvoicePaid || len(got.Reminders) != 3 {
		t.Errorf("paid: %+v", got)
	}
}

// TestRemindersPauseForDisputesAndPromises: a disputed invoice gets no reminder until the
// dispute is resolved; under a promise none until the day after its day, when
// invoice.promise_broken is emitted once and reminders resume.
func TestRemindersPauseForDisputesAndPromises(t *testing.T) {
	t.Parallel()
	env := newRuleEnv(t, "EUR")
	co, inv := env.openInvoice(t, "Slow GmbH")
	due := env.Clock.Now().Add(30 * day)
	env.setSchedule(t, 1, 10)

	// Disputed: nothing while open; resolved: level 1.
	if _, err := env.Service.Invoices.OpenDispute(env.staff, credit.DisputeInput{InvoiceID: inv, Reason: "wrong price"}); err != nil {
		t.Fatal(err)
	}
	env.Clock.Set(due.Add(2 * day))
	if res := env.sweepReminders(t); res.Reminders != 0 {
		t.Fatalf("a disputed invoice: %+v", res)
	}
	if _, err := env.Service.Invoices.ResolveDispute(env.staff, inv); err != nil {
		t.Fatal(err)
	}
	if res := env.sweepReminders(t); res.Reminders != 1 {
		t.Fatalf("after resolving: %+v", res)
	}

	// A promise for 2026-04-20: nothing up to the end of that day, though level 2 fell due
	// on 2026-04-11.
	if _, err := env.Service.Invoices.RecordPromise(env.staff, credit.PromiseInput{InvoiceID: inv, PromisedFor: "2026-04-20"}); err != nil {
		t.Fatal(err)
	}
	start := len(env.feed(t))
	for _, at := range []time.Time{due.Add(12 * day), time.Date(2026, 4, 20, 23, 59, 59, 999999000, time.UTC)} {
		env.Clock.Set(at)
		if res := env.sweepReminders(t); res.Reminders != 0 || res.PromisesBroken != 0 {
			t.Fatalf("under the promise at %s: %+v", at, res)
		}
	}
	// The day after: broken once, and the reminders resume.
	env.Clock.Set(time.Date(2026, 4, 21, 0, 0, 0, 0, time.UTC))
	if res := env.sweepReminders(t); res.PromisesBroken != 1 || res.Reminders != 1 {
		t.Fatalf("the day after the promise: %+v", res)
	}
	env.Clock.Advance(day)
	if res := env.sweepReminders(t); res.PromisesBroken != 0 || res.Reminders != 0 {
		t.Fatalf("the sweep after: %+v", res)
	}
	if got, want := env.feedTypes(t, start), []string{string(credit.EventTypeInvoicePromiseBroken), string(credit.EventTypeInvoiceReminderDue)}; !slices.Equal(got, want) {
		t.Errorf("feed %v, want %v", got, want)
	}
	got, err := env.Service.Invoices.Get(env.staff, inv)
	if err != nil || got.Promise == nil || got.Promise.BrokenAt == nil || len(got.Reminders) != 2 {
		t.Fatalf("after the broken promise: %+v %v", got, err)
	}
	// A new promise can be broken again, once.
	if _, err := env.Service.Invoices.RecordPromise(env.staff, credit.PromiseInput{InvoiceID: inv, PromisedFor: "2026-04-25"}); err != nil {
		t.Fatal(err)
	}
	env.Clock.Set(time.Date(2026, 4, 26, 0, 0, 0, 0, time.UTC))
	if res := env.sweepReminders(t); res.PromisesBroken != 1 {
		t.Fatalf("the second promise: %+v", res)
	}
	if res := env.sweepReminders(t); res.PromisesBroken != 0 {
		t.Fatalf("the second promise, swept again: %+v", res)
	}
	// A promise kept (the invoice paid) is never broken.
	_, paid := env.openInvoice(t, "Payer GmbH")
	if _, err := env.Service.Invoices.RecordPromise(env.staff, credit.PromiseInput{InvoiceID: paid, PromisedFor: "2026-04-27"}); err != nil {
		t.Fatal(err)
	}
	env.MustRecord(t, credit.LedgerEntryInput{CompanyID: env.invoiceCompany(t, paid), Kind: credit.KindPayment, Amount: "-100.00"})
	env.Clock.Set(time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC))
	if res := env.sweepReminders(t); res.PromisesBroken != 0 {
		t.Errorf("a paid invoice's promise: %+v", res)
	}
	if got := env.timelineTypes(t, co, 0); !slices.Contains(got, "promise_broken by system") {
		t.Errorf("timeline %v, want the broken promise by the system", got)
	}
}

// invoiceCompany returns the company of an invoice of the env's store.
func (e *ruleEnv) invoiceCompany(t testing.TB, id string) string {
	t.Helper()
	inv, err := e.Service.Invoices.Get(e.staff, id)
	if err != nil {
		t.Fatal(err)
	}
	return inv.CompanyID
}

// TestConcurrentSweepsEmitOnce: two instances (two services, each with its own connection to
// the database) sweep at the same moment, many times over: each level of each invoice is
// emitted exactly once, and each broken promise once.
func TestConcurrentSweepsEmitOnce(t *testing.T) {
	t.Parallel()
	env := newRuleEnv(t, "EUR")
	env.setSchedule(t, 1, 5, 20)
	const companies = 6
	var promised []string
	for i := 0; i < companies; i++ {
		_, inv := env.openInvoice(t, "Buyer "+string(rune('A'+i)))
		if i%2 == 0 {
			if _, err := env.Service.Invoices.RecordPromise(env.staff, credit.PromiseInput{InvoiceID: inv, PromisedFor: "2026-04-03"}); err != nil {
				t.Fatal(err)
			}
			promised = append(promised, inv)
		}
	}
	db2, err := database.Open(context.Background(), env.DSN)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db2.Close() })
	other := credit.New(db2, credit.Options{Now: env.Clock.Now})
	services := []*credit.Service{env.Service, other}

	start := len(env.feed(t))
	due := time.Date(2026, 4, 1, 9, 0, 0, 0, time.UTC)
	for _, at := range []time.Duration{2 * day, 6 * day, 21 * day} {
		env.Clock.Set(due.Add(at))
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for round := 0; round < 4; round++ {
			for _, svc := range services {
				wg.Add(1)
				go func(svc *credit.Service) {
					defer wg.Done()
					if _, err := svc.Maintenance.SweepReminders(context.Background()); err != nil {
						errs <- err
					}
				}(svc)
			}
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatalf("a concurrent sweep: %v", err)
		}
	}
	_, data := env.reminderEvents(t, start)
	seen := map[string]int{}
	for _, d := range data {
		seen[d.Object.ID+"/"+string(rune('0'+d.Level))]++
	}
	// Unpromised invoices: levels 1, 2, 3. Promised ones (until 2026-04-03, broken on the 4th):
	// nothing on the 3rd, then levels 2 and 3.
	want := companies*3 - len(promised)
	if len(data) != want {
		t.Errorf("%d reminders, want %d: %v", len(data), want, seen)
	}
	for k, n := range seen {
		if n != 1 {
			t.Errorf("%s emitted %d times", k, n)
		}
	}
	broken := 0
	for _, ev := range env.feed(t)[start:] {
		if ev.Type == credit.EventTypeInvoicePromiseBroken {
			broken++
		}
	}
	if broken != len(promised) {
		t.Errorf("%d promises broken, want %d", broken, len(promised))
	}
}

// mustJSONText is v's JSON.
func mustJSONText(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
