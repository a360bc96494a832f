package credit_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
	"github.com/creditd/creditd/ent"
	"github.com/creditd/creditd/ent/company"
	"github.com/creditd/creditd/webhook"
)

// inboxFixture is a store connected to its shop, on the service alone (no HTTP).
type inboxFixture struct {
	env     *credittest.ServiceEnv
	store   string
	company credit.Company // gid://platform/Company/42
}

const inboxShop = "acme.myplatform.com"

func newInboxFixture(t *testing.T) *inboxFixture {
	t.Helper()
	sealer := credittest.NewSealer(t)
	env := credittest.NewService(t, credittest.Options{ServiceOptions: func(o *credit.Options) {
		o.WebhookSealer = func() (*webhook.Sealer, error) { return sealer, nil }
	}})
	f := &inboxFixture{env: env, store: env.MustStore(t, "Acme", "EUR")}
	f.company = env.MustCompany(t, f.store, "Buyer GmbH", "1000.00")
	if _, err := env.Service.Platform.Connect(credittest.Staff(f.store), inboxShop, platformTestSecret); err != nil {
		t.Fatal(err)
	}
	return f
}

// deliver signs body as the platform and hands it to the door's domain operation.
func (f *inboxFixture) deliver(t *testing.T, topic, webhookID, body string) credit.InboxDelivery {
	t.Helper()
	ctx, err := f.env.Service.Platform.Authenticate(context.Background(), inboxShop, credit.SignPlatformBody(platformTestSecret, []byte(body)), []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	d, err := f.env.Service.Inbox.Receive(ctx, credit.PlatformDeliveryInput{Topic: topic, WebhookID: webhookID, Body: []byte(body)})
	if err != nil {
		t.Fatalf("%s %s: %v", topic, webhookID, err)
	}
	return d
}

func (f *inboxFixture) outstanding(t *testing.T, id string) string {
	t.Helper()
	c, err := f.env.Service.Companies.Get(credittest.Staff(f.store), id)
	if err != nil {
		t.Fatal(err)
	}
	return c.Outstanding.Amount
}

func order(n int, companyGID string, total string) string {
	return fmt.Sprintf(`{"id":"gid://platform/Order/%d","company_id":%q,"payment_terms":{"type":"NET","due_in_days":30},"total":{"amount":%q,"currency":"EUR"},"created_at":"2026-03-01T10:00:00Z"}`, n, companyGID, total)
}

func payment(n, orderN int, companyGID, amount string) string {
	return fmt.Sprintf(`{"id":"gid://platform/Payment/%d","order_id":"gid://platform/Order/%d","company_id":%q,"amount":{"amount":%q,"currency":"EUR"},"processed_at":"2026-03-01T11:00:00Z"}`, n, orderN, companyGID, amount)
}

// TestPlatformDeliveriesApplyExactlyOnceInAnyOrder: the door's rules of contract §13 on the
// service: a payment before its order waits and is applied with it; a retry changes nothing;
// the same object under another webhook id is a duplicate; an order without a company or terms
// is ignored; an unknown company fails and is applied by a retry once the company exists.
func TestPlatformDeliveriesApplyExactlyOnceInAnyOrder(t *testing.T) {
	f := newInboxFixture(t)
	gid := "gid://platform/Company/42"

	steps := []struct {
		name, topic, webhookID, body string
		status, reason               string
		outstanding                  string
	}{
		{"payment before its order", "payments/create", "w1", payment(1, 100, gid, "100.00"), "waiting", credit.ReasonOrderNotArrived, "0.00"},
		{"the order, and the waiting payment with it", "orders/create", "w2", order(100, gid, "300.00"), "applied", "", "200.00"},
		{"the order's retry", "orders/create", "w2", order(100, gid, "300.00"), "applied", "", "200.00"},
		{"the order under another webhook id", "orders/create", "w3", order(100, gid, "300.00"), "duplicate", credit.ReasonDuplicate, "200.00"},
		{"an order of no company", "orders/create", "w4", `{"id":"gid://platform/Order/101","company_id":null,"total":{"amount":"5.00","currency":"EUR"},"created_at":"2026-03-01T10:00:00Z"}`, "ignored", credit.ReasonNoCompany, "200.00"},
		{"an order in another currency", "orders/create", "w5", `{"id":"gid://platform/Order/102","company_id":"gid://platform/Company/42","payment_terms":{"type":"NET","due_in_days":30},"total":{"amount":"5.00","currency":"USD"},"created_at":"2026-03-01T10:00:00Z"}`, "failed", credit.ReasonCurrencyMismatch, "200.00"},
		{"an unknown topic", "shop/update", "w6", `{}`, "ignored", credit.ReasonUnsupportedTopic, "200.00"},
	}
	for _, st := range steps {
		d := f.deliver(t, st.topic, st.webhookID, st.body)
		reason := ""
		if d.Reason != nil {
			reason = *d.Reason
		}
		if d.Status != st.status || reason != st.reason {
			t.Errorf("%s: %s (%s), want %s (%s)", st.name, d.Status, reason, st.status, st.reason)
		}
		if got := f.outstanding(t, f.company.ID); got != st.outstanding {
			t.Errorf("%s: outstanding %s, want %s", st.name, got, st.outstanding)
		}
	}
	waiting := f.deliver(t, "payments/create", "w1", payment(1, 100, gid, "100.00"))
	if waiting.Status != "applied" || waiting.LedgerEntryID == nil {
		t.Errorf("the payment that waited, delivered again: %+v, want applied with its entry", waiting)
	}

	// An unknown company fails, and a retry applies it once the company exists.
	failed := f.deliver(t, "orders/create", "w7", order(103, "gid://platform/Company/77", "40.00"))
	if failed.Status != "failed" || failed.Reason == nil || *failed.Reason != credit.ReasonUnknownCompany {
		t.Fatalf("an order of an unknown company: %+v, want failed unknown_company", failed)
	}
	ctx := credittest.Staff(f.store)
	if d, err := f.env.Service.Inbox.Retry(ctx, failed.ID); err != nil || d.Status != "failed" {
		t.Errorf("retried while the company is still unknown: %+v, %v; want failed again", d, err)
	}
	c, err := f.env.Service.Companies.Create(ctx, credit.CompanyInput{Name: "Late GmbH", PlatformCompanyGID: "gid://platform/Company/77", PaymentTerms: "NET_30", CreditLimit: "100.00"})
	if err != nil {
		t.Fatal(err)
	}
	if d, err := f.env.Service.Inbox.Retry(ctx, failed.ID); err != nil || d.Status != "applied" {
		t.Errorf("retried once the company exists: %+v, %v; want applied", d, err)
	}
	if got := f.outstanding(t, c.ID); got != "40.00" {
		t.Errorf("the late company's outstanding %s, want 40.00", got)
	}
	if _, err := f.env.Service.Inbox.Retry(ctx, failed.ID); credit.CodeOf(err) != credit.CodeValidationFailed {
		t.Errorf("retrying an applied delivery: %v, want validation_failed", err)
	}
}

// TestSweepPlacesOverdueHoldsOnce: the periodic sweep (contract §5) places an overdue hold
// once an invoice falls due unpaid, only once however often it runs, keeps a manual hold in
// place, and a payment of the invoice lifts the overdue hold without a sweep.
func TestSweepPlacesOverdueHoldsOnce(t *testing.T) {
	env := credittest.NewService(t)
	store := env.MustStore(t, "Acme", "EUR")
	overdue := env.MustCompany(t, store, "Late GmbH", "1000.00", "NET_7")
	manual := env.MustCompany(t, store, "Held GmbH", "1000.00", "NET_7")
	for i, c := range []credit.Company{overdue, manual} {
		env.MustRecord(t, credit.LedgerEntryInput{CompanyID: c.ID, Kind: credit.KindOrderPlaced, Amount: "100.00", OrderGID: fmt.Sprintf("gid://platform/Order/%d", i+1)})
	}
	ctx := credittest.Staff(store)
	if _, err := env.Service.Companies.PlaceHold(ctx, credit.HoldInput{CompanyID: manual.ID}); err != nil {
		t.Fatal(err)
	}
	sweep := func() credit.SweepResult {
		t.Helper()
		res, err := env.Service.Maintenance.SweepHolds(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if res := sweep(); res.Placed != 0 {
		t.Errorf("a sweep before any invoice is due placed %d holds", res.Placed)
	}
	env.Clock.Advance(8 * 24 * time.Hour)
	if res := sweep(); res.Placed != 1 {
		t.Errorf("the sweep after the due date placed %d holds, want 1", res.Placed)
	}
	if res := sweep(); res.Placed != 0 || res.Lifted != 0 {
		t.Errorf("a second sweep changed %+v, want nothing", res)
	}
	get := func(id string) credit.Company {
		c, err := env.Service.Companies.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	if h := get(overdue.ID).Hold; h == nil || h.Kind != credit.HoldOverdue || h.PlacedBy != "system" {
		t.Errorf("the overdue company's hold: %+v, want an overdue hold by system", h)
	}
	if h := get(manual.ID).Hold; h == nil || h.Kind != credit.HoldManual {
		t.Errorf("the held company's hold: %+v, want its manual hold kept", h)
	}
	env.MustRecord(t, credit.LedgerEntryInput{CompanyID: overdue.ID, Kind: credit.KindPayment, Amount: "-100.00", OrderGID: "gid://platform/Order/1"})
	if h := get(overdue.ID).Hold; h != nil {
		t.Errorf("after the invoice was paid: hold %+v, want none", h)
	}
}

// TestDeliveryFollowsTheGIDUnderTheLock (PostgreSQL): a delivery finds its company by platform
// GID before it locks the company, and a GID change no longer waits for the store's other
// writers, so the GID can move between the look-up and the lock. The delivery checks it again
// under the lock: here staff move Company/42 to another GID while the delivery waits for the
// company, and the order is then recorded as naming no company, not applied to the company
// that no longer has its GID. (Without the check under the lock, the order is applied to it.)
func TestDeliveryFollowsTheGIDUnderTheLock(t *testing.T) {
	if credittest.Backend() != "postgres" {
		t.Skip("on SQLite a delivery and a GID change never run beside each other")
	}
	f := newInboxFixture(t)
	staff := credittest.Staff(f.store)

	// Staff's change of the company's GID, holding the company's lock until released.
	locked, release, done := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	var pid int
	go func() {
		done <- f.env.DB.InTx(staff, func(tx *ent.Tx) error {
			if _, err := tx.Company.Query().Where(company.ID(f.company.ID), f.env.DB.ForUpdate).Only(staff); err != nil {
				return err
			}
			rows, err := tx.QueryContext(staff, `SELECT pg_backend_pid()`)
			if err != nil {
				return err
			}
			for rows.Next() {
				if err := rows.Scan(&pid); err != nil {
					return err
				}
			}
			rows.Close()
			if err := tx.Company.UpdateOneID(f.company.ID).SetPlatformCompanyGid("gid://platform/Company/43").Exec(staff); err != nil {
				return err
			}
			close(locked)
			<-release
			return nil
		})
	}()
	<-locked

	// The delivery, as f.deliver makes it, from a goroutine of its own (no t.Fatal there).
	type result struct {
		d   credit.InboxDelivery
		err error
	}
	delivered := make(chan result, 1)
	go func() {
		body := []byte(order(100, "gid://platform/Company/42", "300.00"))
		ctx, err := f.env.Service.Platform.Authenticate(context.Background(), inboxShop, credit.SignPlatformBody(platformTestSecret, body), body)
		if err != nil {
			delivered <- result{err: err}
			return
		}
		d, err := f.env.Service.Inbox.Receive(ctx, credit.PlatformDeliveryInput{Topic: "orders/create", WebhookID: "w1", Body: body})
		delivered <- result{d, err}
	}()
	// Release the change once the delivery waits for it (a backend blocked by its backend).
	for i := 0; ; i++ {
		var waiting int
		rows, err := f.env.DB.SQL.QueryContext(context.Background(), `SELECT count(*) FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))`, pid)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			if err := rows.Scan(&waiting); err != nil {
				t.Fatal(err)
			}
		}
		rows.Close()
		if waiting > 0 {
			break
		}
		if i == 300 {
			t.Fatal("the delivery never waited for the company's lock")
		}
		time.Sleep(10 * time.Millisecond)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	r := <-delivered
	if r.err != nil {
		t.Fatal(r.err)
	}
	d := r.d
	if d.Status != "failed" || d.Reason == nil || *d.Reason != credit.ReasonUnknownCompany {
		t.Errorf("delivery %s %v, want failed: %s", d.Status, d.Reason, credit.ReasonUnknownCompany)
	}
	if got := f.outstanding(t, f.company.ID); got != "0.00" {
		t.Errorf("the company whose GID moved owes %s, want 0.00", got)
	}
}
