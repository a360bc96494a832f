package credit_test

import (
	"testing"
	"time"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
)

// collectionIDs is the invoice IDs of a collections list, in order.
func collectionIDs(l credit.CollectionList[credit.CollectionInvoice]) []string {
	out := []string{}
	for _, r := range l.Data {
		out = append(out, r.Invoice.ID)
	}
	return out
}

// TestCollections: the day's collection work of a store follows the sweep: today's reminders
// (of invoices still open, by level), the promises due, then broken, and the open disputes,
// each with its company's name; another store's work never shows.
func TestCollections(t *testing.T) {
	t.Parallel()
	env := newRuleEnv(t, "EUR")
	co := env.MustCompany(t, env.store, "Alpenblick Hotels AG", "10000.00", "NET_30").ID
	for n := 1; n <= 4; n++ {
		env.MustRecord(t, orderEntry(co, n, "100.00"))
	}
	invs := env.invoices(t, co)
	kept, promised, disputed := invs[0].ID, invs[1].ID, invs[2].ID
	env.setSchedule(t, 1, 7)
	if _, err := env.Service.Invoices.RecordPromise(env.staff, credit.PromiseInput{InvoiceID: promised, PromisedFor: "2026-04-05"}); err != nil {
		t.Fatal(err)
	}
	if _, err := env.Service.Invoices.OpenDispute(env.staff, credit.DisputeInput{InvoiceID: disputed, Reason: "damaged"}); err != nil {
		t.Fatal(err)
	}
	other := env.MustStore(t, "Other", "EUR")
	otherCo := env.MustCompany(t, other, "Elsewhere", "100.00").ID
	env.MustRecord(t, orderEntry(otherCo, 1, "5.00"))
	foreign := env.invoicesOf(t, other, otherCo)[0].ID
	if _, err := env.Service.Invoices.OpenDispute(credittest.Staff(other), credit.DisputeInput{InvoiceID: foreign, Reason: "other store"}); err != nil {
		t.Fatal(err)
	}

	read := func() credit.Collections {
		t.Helper()
		c, err := env.Service.Reports.Collections(env.staff)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	wantIDs := func(what string, got []string, want ...string) {
		t.Helper()
		if len(want) == 0 {
			want = []string{}
		}
		if len(got) != len(want) || (len(got) > 0 && got[0] != want[0]) {
			t.Errorf("%s: %v, want %v", what, got, want)
		}
	}
	remIDs := func(c credit.Collections) []string {
		out := []string{}
		for _, r := range c.Reminders.Data {
			out = append(out, r.Invoice.ID)
		}
		return out
	}

	// Due 2026-04-01 09:00; on 04-03 level 1 is due for the invoices neither promised nor
	// disputed; the fourth is paid since, so it needs no more work.
	env.Clock.Set(time.Date(2026, 4, 3, 10, 0, 0, 0, time.UTC))
	if res := env.sweepReminders(t); res.Reminders != 2 {
		t.Fatalf("the sweep of 04-03: %+v", res)
	}
	env.MustRecord(t, credit.LedgerEntryInput{CompanyID: co, Kind: credit.KindPayment, Amount: "-100.00", OrderGID: orderGID(4)})
	c := read()
	if c.Day != "2026-04-03" {
		t.Errorf("day %s", c.Day)
	}
	wantIDs("reminders of 04-03", remIDs(c), kept)
	if r := c.Reminders.Data; len(r) == 1 && (r[0].Reminder.Level != 1 || r[0].CompanyName != "Alpenblick Hotels AG" || r[0].Reminder.EventID == "") {
		t.Errorf("the reminder: %+v", r[0])
	}
	wantIDs("promises due on 04-03", collectionIDs(c.PromisesDue))
	wantIDs("disputes", collectionIDs(c.Disputes), disputed)
	if d := c.Disputes.Data; len(d) == 1 && (d[0].Invoice.Dispute == nil || d[0].CompanyName != "Alpenblick Hotels AG") {
		t.Errorf("the dispute: %+v", d[0])
	}

	// The promise's day: due, no reminder today yet.
	env.Clock.Set(time.Date(2026, 4, 5, 12, 0, 0, 0, time.UTC))
	env.sweepReminders(t)
	c = read()
	wantIDs("reminders of 04-05", remIDs(c))
	wantIDs("promises due on 04-05", collectionIDs(c.PromisesDue), promised)
	wantIDs("promises broken on 04-05", collectionIDs(c.PromisesBroken))

	// The day after: broken, and its reminder resumes.
	env.Clock.Set(time.Date(2026, 4, 6, 12, 0, 0, 0, time.UTC))
	if res := env.sweepReminders(t); res.PromisesBroken != 1 || res.Reminders != 1 {
		t.Fatalf("the sweep of 04-06: %+v", res)
	}
	c = read()
	wantIDs("reminders of 04-06", remIDs(c), promised)
	wantIDs("promises due on 04-06", collectionIDs(c.PromisesDue))
	wantIDs("promises broken on 04-06", collectionIDs(c.PromisesBroken), promised)
	wantIDs("disputes on 04-06", collectionIDs(c.Disputes), disputed)

	// A key of the store without read_credit may not read it.
	if _, err := env.Service.Reports.Collections(apiKey(env.store, credit.ScopeWriteCredit)); credit.CodeOf(err) != credit.CodeInsufficientScope {
		t.Errorf("without read_credit: %v", err)
	}
}
