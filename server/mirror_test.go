package server_test

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
)

// feedMirror keeps a store's companies from GET /v1/events alone (contract §11, 2026-11-27:
// every change of a company's representation has its event): a company.* event carries the
// company as it now is; a ledger_entry.created event moves its company's outstanding and
// available credit by the entry's amount, at the event's moment.
type feedMirror struct {
	env       *credittest.Env
	key       string
	after     string
	companies map[string]map[string]any
	// buffer is the store's available-credit buffer, a fraction of the credit limit.
	buffer decimal.Decimal
}

func (m *feedMirror) follow(t *testing.T) {
	t.Helper()
	query := ""
	if m.after != "" {
		query = "?after=" + m.after
	}
	events, _ := mustFeed(t, m.env, m.key, query, 250)
	for _, e := range events {
		m.apply(t, e)
	}
}

// apply applies one event of the feed, the next after m.after.
func (m *feedMirror) apply(t *testing.T, e feedEvent) {
	t.Helper()
	m.after = e.ID
	switch credit.EventType(e.Type) {
	case credit.EventTypeCompanyCreated, credit.EventTypeCompanyCreditLimitChanged, credit.EventTypeCompanyHoldPlaced,
		credit.EventTypeCompanyHoldLifted, credit.EventTypeCompanyHoldChanged:
		var c map[string]any
		mustUnmarshal(t, e.Data.Object, &c)
		m.companies[c["id"].(string)] = c
	case credit.EventTypeLedgerEntryCreated:
		var entry credit.LedgerEntry
		mustUnmarshal(t, e.Data.Object, &entry)
		c := m.companies[entry.CompanyID]
		amount := func(v any) decimal.Decimal { return decimal.RequireFromString(v.(map[string]any)["amount"].(string)) }
		outstanding := amount(c["outstanding"]).Add(decimal.RequireFromString(entry.Amount.Amount))
		limit := amount(c["credit_limit"])
		available := decimal.Max(decimal.Zero, limit.Sub(outstanding).Sub(limit.Mul(m.buffer).Round(2)))
		currency := entry.Amount.Currency
		c["outstanding"] = map[string]any{"amount": outstanding.StringFixed(2), "currency": currency}
		c["available_credit"] = map[string]any{"amount": available.StringFixed(2), "currency": currency}
		// updated_at moves to the change's moment, never back.
		if at, _ := time.Parse(time.RFC3339Nano, e.OccurredAt); at.After(mustTime(t, c["updated_at"])) {
			c["updated_at"] = e.OccurredAt
		}
	}
}

func mustTime(t *testing.T, v any) time.Time {
	t.Helper()
	at, err := time.Parse(time.RFC3339Nano, v.(string))
	if err != nil {
		t.Fatal(err)
	}
	return at
}

// check follows the feed and compares the mirror with GET /v1/companies/{id} for every company,
// and that no company's updated_at went back since the last check.
func (m *feedMirror) check(t *testing.T, step string, seen map[string]time.Time) {
	t.Helper()
	m.follow(t)
	for id, mirrored := range m.companies {
		var served map[string]any
		m.env.Get(t, m.key, "/v1/companies/"+id).WantStatus(t, 200).Decode(t, &served)
		if !reflect.DeepEqual(served, mirrored) {
			a, _ := json.Marshal(served)
			b, _ := json.Marshal(mirrored)
			t.Errorf("%s: company %s\nserved   %s\nmirrored %s", step, id, a, b)
		}
		at := mustTime(t, served["updated_at"])
		if at.Before(seen[id]) {
			t.Errorf("%s: company %s's updated_at went back from %v to %v", step, id, seen[id], at)
		}
		seen[id] = at
	}
}

// TestFeedMirrorStaysExact mirrors a store through the event feed alone while an overdue hold
// moves from one invoice to another (company.hold_changed), holds are placed and lifted by
// ledger writes and sweeps, a sweep runs as of a later moment and then the real one, and the
// clock of a writer runs behind: after every step the mirror equals GET /v1/companies/{id} for
// every company, and no company's updated_at ever decreases.
func TestFeedMirrorStaysExact(t *testing.T) {
	t.Parallel()
	env := credittest.New(t)
	st := env.MustStore(t, "Mirror", "EUR")
	key := env.MustKey(t, st, "erp", credit.ScopeReadCredit, credit.ScopeWriteCredit)
	m := &feedMirror{env: env, key: key, companies: map[string]map[string]any{}, buffer: decimal.RequireFromString("0.05")}
	seen := map[string]time.Time{}
	a := env.MustCompany(t, st, "Two invoices", "1000.00")
	b := env.MustCompany(t, st, "Later due", "1000.00")
	c := env.MustCompany(t, st, "Manual", "1000.00")
	m.check(t, "created", seen)
	sweep := func(step string) {
		t.Helper()
		if _, err := env.Service.Maintenance.SweepHolds(context.Background()); err != nil {
			t.Fatal(err)
		}
		m.check(t, step, seen)
	}

	env.MustRecord(t, order(a.ID, "gid://platform/Order/1", "100.00"))
	env.Clock.Advance(5 * day)
	env.MustRecord(t, order(a.ID, "gid://platform/Order/2", "200.00"))
	env.Clock.Advance(15 * day)
	env.MustRecord(t, order(b.ID, "gid://platform/Order/3", "50.00"))
	m.check(t, "orders", seen)
	env.Clock.Advance(16 * day) // day 36: orders 1 (due day 30) and 2 (due day 35) are overdue
	sweep("first sweep")
	if hold := m.companies[a.ID]["hold"].(map[string]any); hold["platform_order_gid"] != "gid://platform/Order/1" {
		t.Fatalf("hold on %v, want order 1", hold)
	}
	// Order 1 is paid while order 2 is overdue: the hold moves to order 2, and the feed says so.
	env.MustRecord(t, credit.LedgerEntryInput{CompanyID: a.ID, Kind: credit.KindPayment, Amount: "-100.00", OrderGID: "gid://platform/Order/1"})
	m.check(t, "hold moved to order 2", seen)
	if hold := m.companies[a.ID]["hold"].(map[string]any); hold["platform_order_gid"] != "gid://platform/Order/2" {
		t.Fatalf("mirrored hold on %v, want order 2", hold)
	}

	// A sweep as of day 60 finds order 3 (due day 50) overdue and holds b, stamped with the
	// service clock's day 36; the real sweep then lifts it, later, not earlier.
	if _, err := env.Service.Maintenance.SweepHoldsAsOf(context.Background(), env.Clock.Now().Add(24*day)); err != nil {
		t.Fatal(err)
	}
	m.check(t, "sweep as of day 60", seen)
	if m.companies[b.ID]["status"] != "on_hold" {
		t.Fatalf("the sweep as of day 60 placed no hold: %v", m.companies[b.ID])
	}
	if at := mustTime(t, m.companies[b.ID]["updated_at"]); at.After(env.Clock.Now()) {
		t.Fatalf("the sweep as of a later moment stamped %v, after the clock's %v", at, env.Clock.Now())
	}
	env.Clock.Advance(time.Hour)
	sweep("the real sweep")
	if m.companies[b.ID]["status"] != "approved" {
		t.Fatalf("the real sweep kept b on hold: %v", m.companies[b.ID])
	}

	// Manual hold, a limit change and an adjustment over REST; then a writer whose clock is three
	// hours behind (another instance's) writes: updated_at stays where it was, never goes back.
	env.Do(t, credittest.Request{Method: "POST", Path: "/v1/companies/" + c.ID + "/hold", Key: key, Body: map[string]string{"note": "check"}}).WantStatus(t, 200)
	env.Do(t, credittest.Request{Method: "PUT", Path: "/v1/companies/" + c.ID + "/credit-limit", Key: key, Body: map[string]string{"amount": "2000.00"}}).WantStatus(t, 200)
	m.check(t, "manual hold and limit", seen)
	env.Clock.Advance(-3 * time.Hour)
	env.Do(t, credittest.Request{Method: "POST", Path: "/v1/companies/" + a.ID + "/adjustments", Key: key, Body: map[string]string{"amount": "-5.00", "note": "behind"}}).WantStatus(t, 201)
	env.Clock.Advance(3 * time.Hour)
	m.check(t, "a writer behind", seen)

	// Order 2 paid: the overdue hold is lifted.
	env.MustRecord(t, credit.LedgerEntryInput{CompanyID: a.ID, Kind: credit.KindPayment, Amount: "-200.00", OrderGID: "gid://platform/Order/2"})
	m.check(t, "last overdue invoice paid", seen)
	if m.companies[a.ID]["status"] != "approved" {
		t.Fatalf("a still on hold: %v", m.companies[a.ID])
	}
}
