package credit_test

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
)

// eventData decodes an event's data: its object and the values it replaced.
func eventData(t testing.TB, ev credit.Event) (object json.RawMessage, previous map[string]any) {
	t.Helper()
	var data struct {
		Object   json.RawMessage `json:"object"`
		Previous map[string]any  `json:"previous"`
	}
	if err := json.Unmarshal(ev.Data, &data); err != nil {
		t.Fatalf("event %s: %v", ev.ID, err)
	}
	return data.Object, data.Previous
}

// wantSameJSON fails unless got and want encode the same JSON value.
func wantSameJSON(t testing.TB, what string, got json.RawMessage, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("%s: %v in %s", what, err, got)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("%s: %v in the wanted %s", what, err, want)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("%s\n got %s\nwant %s", what, got, want)
	}
}

// TestEveryWriteAppendsItsEvent makes every kind of write there is, as an API key (what REST
// and GraphQL call), as staff (the console and the command line) and as the system (the
// sweeps), and checks the feed holds exactly their events, in order, each with the resource as
// the domain's view shows it (what the APIs answer) and the values the write replaced, and no
// personal data or secret anywhere; erasing the applicant changes no event.
func TestEveryWriteAppendsItsEvent(t *testing.T) {
	t.Parallel()
	e := newRuleEnv(t, "EUR")
	erp := apiKey(e.store, credit.AllScopes...)
	var want []string
	// expect appends the types a write should have appended and returns the first one's index
	// in the feed.
	expect := func(types ...credit.EventType) int {
		at := len(want)
		for _, typ := range types {
			want = append(want, string(typ))
		}
		return at
	}
	full := e.MustIssuedKey(t, e.store, "erp", credit.AllScopes...)
	keyCreated := expect(credit.EventTypeKeyCreated)
	co := e.MustCompany(t, e.store, "Hotel Adler", "1000.00")
	expect(credit.EventTypeCompanyCreated)

	// An API key's writes.
	adj, err := e.Service.Ledger.CreateAdjustment(erp, credit.AdjustmentInput{CompanyID: co.ID, Amount: credit.Amount("-12.50"), Note: strp("goodwill")})
	if err != nil {
		t.Fatal(err)
	}
	adjusted := expect(credit.EventTypeLedgerEntryCreated)
	limit, err := e.Service.Companies.SetCreditLimit(erp, credit.CreditLimitInput{CompanyID: co.ID, Amount: credit.Amount("2000.00"), Reason: strp("good payer")})
	if err != nil {
		t.Fatal(err)
	}
	limited := expect(credit.EventTypeCompanyCreditLimitChanged)
	placed, err := e.Service.Companies.PlaceHold(erp, credit.HoldInput{CompanyID: co.ID, Note: strp("dispute")})
	if err != nil {
		t.Fatal(err)
	}
	held := expect(credit.EventTypeCompanyHoldPlaced)
	lifted, err := e.Service.Companies.LiftHold(erp, co.ID)
	if err != nil {
		t.Fatal(err)
	}
	unheld := expect(credit.EventTypeCompanyHoldLifted)

	// Staff's ledger: an adjustment, an order already past due (its overdue hold), then the
	// payment that pays its invoice and lifts that hold.
	e.MustRecord(t, credit.LedgerEntryInput{CompanyID: co.ID, Kind: credit.KindAdjustment, Amount: "1.00", Note: "cli adjustment"})
	expect(credit.EventTypeLedgerEntryCreated)
	back := credit.At(e.Clock.Now().Add(-60 * day))
	e.MustRecord(t, credit.LedgerEntryInput{CompanyID: co.ID, Kind: credit.KindOrderPlaced, Amount: "100.00", OrderGID: "gid://platform/Order/1", OccurredAt: &back})
	overduePlaced := 1 + expect(credit.EventTypeLedgerEntryCreated, credit.EventTypeCompanyHoldPlaced)
	e.MustRecord(t, credit.LedgerEntryInput{CompanyID: co.ID, Kind: credit.KindPayment, Amount: "-100.00", OrderGID: "gid://platform/Order/1"})
	overdueLifted := 2 + expect(credit.EventTypeLedgerEntryCreated, credit.EventTypeInvoicePaid, credit.EventTypeCompanyHoldLifted)

	// The sweep: an order falls due while nothing is written.
	e.MustRecord(t, credit.LedgerEntryInput{CompanyID: co.ID, Kind: credit.KindOrderPlaced, Amount: "50.00", OrderGID: "gid://platform/Order/2"})
	e.Clock.Advance(31 * day)
	if res, err := e.Service.Maintenance.SweepHolds(credittest.Admin()); err != nil || res.Placed != 1 {
		t.Fatalf("sweep: %+v %v", res, err)
	}
	swept := 1 + expect(credit.EventTypeLedgerEntryCreated, credit.EventTypeCompanyHoldPlaced)
	// An older order, recorded late, becomes the overdue invoice the hold names.
	older := credit.At(e.Clock.Now().Add(-90 * day))
	e.MustRecord(t, credit.LedgerEntryInput{CompanyID: co.ID, Kind: credit.KindOrderPlaced, Amount: "10.00", OrderGID: "gid://platform/Order/3", OccurredAt: &older})
	expect(credit.EventTypeLedgerEntryCreated, credit.EventTypeCompanyHoldChanged)

	// The collection writes on order 2's invoice: a promise recorded and withdrawn, a dispute
	// opened and resolved.
	open, err := e.Service.Invoices.List(e.staff, co.ID, credit.InvoiceListParams{Status: credit.InvoiceOpen})
	if err != nil || len(open.Data) == 0 {
		t.Fatalf("open invoices: %v %v", open, err)
	}
	inv := open.Data[0].ID
	today := e.Clock.Now().Format(time.DateOnly)
	if _, err := e.Service.Invoices.RecordPromise(erp, credit.PromiseInput{InvoiceID: inv, PromisedFor: today}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Service.Invoices.WithdrawPromise(erp, inv); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Service.Invoices.OpenDispute(erp, credit.DisputeInput{InvoiceID: inv, Reason: "wrong price"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Service.Invoices.ResolveDispute(erp, inv); err != nil {
		t.Fatal(err)
	}
	expect(credit.EventTypeInvoicePromiseRecorded, credit.EventTypeInvoicePromiseWithdrawn,
		credit.EventTypeInvoiceDisputed, credit.EventTypeInvoiceDisputeResolved)
	// The reminder sweep: a promise for today, broken tomorrow; a schedule whose one level is
	// due for both open invoices (order 2's, then order 3's).
	e.setSchedule(t, 1)
	if _, err := e.Service.Invoices.RecordPromise(erp, credit.PromiseInput{InvoiceID: inv, PromisedFor: today}); err != nil {
		t.Fatal(err)
	}
	e.Clock.Advance(day)
	if res := e.sweepReminders(t); res.PromisesBroken != 1 || res.Reminders != 2 {
		t.Fatalf("reminder sweep: %+v", res)
	}
	expect(credit.EventTypeInvoicePromiseRecorded, credit.EventTypeInvoicePromiseBroken,
		credit.EventTypeInvoiceReminderDue, credit.EventTypeInvoiceReminderDue)
	// Staff correct the company's platform company GID (its representation changes).
	if _, err := e.Service.Companies.SetPlatformCompanyGID(e.staff, co.ID, "gid://platform/Company/4242"); err != nil {
		t.Fatal(err)
	}
	expect(credit.EventTypeCompanyPlatformGIDChanged)

	// Applications: created, reviewed, approved (which creates a company first).
	app := e.MustApplication(t, e.store, credit.ApplicationInput{BusinessName: "Gasthof Linde", ContactName: "Maria Huber", ContactEmail: "maria.huber@example.com"})
	if _, _, err := e.Service.Applications.SetStatus(e.staff, credit.StatusChange{ApplicationID: app.ID, Status: credit.AppInReview}); err != nil {
		t.Fatal(err)
	}
	_, approved, err := e.Service.Applications.SetStatus(e.staff, credit.StatusChange{ApplicationID: app.ID, Status: credit.AppApproved, CreditLimit: "500", PaymentTerms: "NET_14"})
	if err != nil {
		t.Fatal(err)
	}
	approval := 2 + expect(credit.EventTypeApplicationCreated, credit.EventTypeApplicationStatusChanged,
		credit.EventTypeCompanyCreated, credit.EventTypeApplicationStatusChanged)

	// Keys: made, rotated, revoked.
	other := e.MustIssuedKey(t, e.store, "old integration", credit.ScopeReadCredit)
	if _, err := e.Service.Keys.Rotate(e.staff, other.ID, time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := e.Service.Keys.Revoke(e.staff, other.ID); err != nil {
		t.Fatal(err)
	}
	revoked := 2 + expect(credit.EventTypeKeyCreated, credit.EventTypeKeyRotated, credit.EventTypeKeyRevoked)

	events := e.feed(t)
	if got := e.feedTypes(t, 0); !slices.Equal(got, want) {
		t.Fatalf("the feed's types\n got %v\nwant %v", got, want)
	}
	for _, typ := range credit.EventTypes {
		if !slices.Contains(want, string(typ)) {
			t.Errorf("no write appended %s", typ)
		}
	}
	raw := asJSON(events)
	for _, banned := range []string{"contact", "Maria", "Huber", "maria.huber", "ck_", full.Secret, other.Secret, "hash"} {
		if strings.Contains(raw, banned) {
			t.Errorf("the feed contains %q: %s", banned, raw)
		}
	}

	// Each object is the resource's view after the write; previous, what the write replaced.
	object := func(i int) json.RawMessage { o, _ := eventData(t, events[i]); return o }
	previous := func(i int) json.RawMessage { _, p := eventData(t, events[i]); return json.RawMessage(asJSON(p)) }
	wantSameJSON(t, "the adjustment's entry", object(adjusted), asJSON(adj.LedgerEntry))
	wantSameJSON(t, "the limit's company", object(limited), asJSON(limit.Company))
	wantSameJSON(t, "the limit's previous", previous(limited), `{"credit_limit": {"amount": "1000.00", "currency": "EUR"}}`)
	wantSameJSON(t, "the hold's company", object(held), asJSON(placed.Company))
	wantSameJSON(t, "the hold's previous", previous(held), `{"status": "approved", "hold": null}`)
	wantSameJSON(t, "the lifted hold's company", object(unheld), asJSON(lifted.Company))
	if _, prev := eventData(t, events[unheld]); prev["status"] != credit.StatusOnHold || !strings.Contains(asJSON(prev["hold"]), `"note":"dispute"`) {
		t.Errorf("the lifted hold's previous: %v", prev)
	}
	for _, i := range []int{keyCreated, adjusted} {
		if _, prev := eventData(t, events[i]); prev != nil {
			t.Errorf("%s replaced nothing but has previous %v", events[i].Type, prev)
		}
	}
	// The overdue holds name their kind and the system.
	for _, i := range []int{overduePlaced, swept} {
		var c credit.Company
		if err := json.Unmarshal(object(i), &c); err != nil || c.Hold == nil || c.Hold.Kind != credit.HoldOverdue || c.Hold.PlacedBy != "system" {
			t.Errorf("event %d, an overdue hold placed: %s", i, object(i))
		}
		wantSameJSON(t, "an overdue hold's previous", previous(i), `{"status": "approved", "hold": null}`)
	}
	var after, before struct {
		Hold *credit.Hold `json:"hold"`
	}
	_ = json.Unmarshal(object(overdueLifted), &after)
	_ = json.Unmarshal(previous(overdueLifted), &before)
	if after.Hold != nil || before.Hold == nil || before.Hold.Kind != credit.HoldOverdue {
		t.Errorf("the overdue hold lifted: %s, previous %s", object(overdueLifted), previous(overdueLifted))
	}
	// The approval's company is the company as it reads, and the application's object has no
	// contact.
	wantSameJSON(t, "the approval's company", object(approval), asJSON(e.company(t, approved.ID)))
	wantSameJSON(t, "the approval's previous", previous(approval+1), `{"status": "in_review"}`)
	var appObj map[string]any
	_ = json.Unmarshal(object(approval+1), &appObj)
	if appObj["status"] != "approved" || appObj["id"] != app.ID || len(appObj) != 5 {
		t.Errorf("the application's object %v", appObj)
	}
	var keyObj credit.KeyEventObject
	_ = json.Unmarshal(object(revoked), &keyObj)
	if keyObj.ID != other.ID || keyObj.RevokedAt == nil || keyObj.Label != "old integration" {
		t.Errorf("key.revoked's object %s", object(revoked))
	}

	// Erasing the applicant changes no event: they never carried the person.
	if n, err := e.Service.Applications.ErasePerson(e.staff, "maria.huber@example.com"); err != nil || n != 1 {
		t.Fatalf("erase: %d %v", n, err)
	}
	if again := asJSON(e.feed(t)); again != raw {
		t.Errorf("the erasure changed the feed:\nbefore %s\nafter  %s", raw, again)
	}
}
