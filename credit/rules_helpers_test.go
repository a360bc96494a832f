package credit_test

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
	"github.com/creditd/creditd/tenant"
	"github.com/creditd/creditd/webhook"
)

// Helpers of the rule tests (holds_test.go, ledger_test.go, keys_test.go …): the domain on a
// real database through credittest.NewService, without HTTP, and exact checks of its answers.

const day = 24 * time.Hour

// ruleEnv is one store on the domain service alone, with its staff's context.
type ruleEnv struct {
	*credittest.ServiceEnv
	store string
	// staff is a member of the store's staff, "test staff" on the timeline.
	staff context.Context
}

// newRuleEnv returns a fresh database with one store in currency. The clock starts at
// 2026-03-02T09:00:00Z.
func newRuleEnv(t *testing.T, currency string, opts ...credittest.Options) *ruleEnv {
	t.Helper()
	env := credittest.NewService(t, opts...)
	st := env.MustStore(t, "Acme", currency)
	return &ruleEnv{ServiceEnv: env, store: st, staff: credittest.Staff(st)}
}

// sealingOptions gives the service a master key, so that webhook secrets can be sealed.
func sealingOptions(t *testing.T, allowPrivate bool) credittest.Options {
	sealer := credittest.NewSealer(t)
	return credittest.Options{ServiceOptions: func(o *credit.Options) {
		o.WebhookSealer = func() (*webhook.Sealer, error) { return sealer, nil }
		o.AllowPrivateWebhooks = allowPrivate
	}}
}

// apiKey is the context of a request authenticated by an API key of store with scopes,
// labelled "ERP sync" on the timeline.
func apiKey(store string, scopes ...string) context.Context {
	return tenant.APIKey(context.Background(), store, "key_rules", "ERP sync", scopes)
}

// wantError fails unless err is the domain's *credit.Error with exactly code and param, and a
// message for people.
func wantError(t testing.TB, what string, err error, code credit.Code, param string) {
	t.Helper()
	var e *credit.Error
	if !errors.As(err, &e) {
		t.Errorf("%s: got %v, want %s (param %q)", what, err, code, param)
		return
	}
	if e.Code != code || e.Param != param || e.Message == "" {
		t.Errorf("%s: got %s (param %q, message %q), want %s (param %q)", what, e.Code, e.Param, e.Message, code, param)
	}
}

// company reads a company as the store's staff sees it.
func (e *ruleEnv) company(t testing.TB, id string) credit.Company {
	t.Helper()
	c, err := e.Service.Companies.Get(e.staff, id)
	if err != nil {
		t.Fatalf("company %s: %v", id, err)
	}
	return c
}

// feed returns the store's event feed, oldest first.
func (e *ruleEnv) feed(t testing.TB) []credit.Event {
	t.Helper()
	limit := credit.MaxPageSize
	p, err := e.Service.Events.List(e.staff, credit.EventListParams{ListParams: credit.ListParams{Limit: &limit}})
	if err != nil {
		t.Fatalf("events: %v", err)
	}
	return p.Data
}

// feedTypes returns the types of the store's events appended after the first skip, in order.
func (e *ruleEnv) feedTypes(t testing.TB, skip int) []string {
	t.Helper()
	var out []string
	for _, ev := range e.feed(t)[skip:] {
		out = append(out, string(ev.Type))
	}
	return out
}

// timeline returns a company's timeline, oldest first.
func (e *ruleEnv) timeline(t testing.TB, companyID string) []credit.TimelineEvent {
	t.Helper()
	limit := credit.MaxPageSize
	p, err := e.Service.Timeline.List(e.staff, companyID, credit.ListParams{Limit: &limit})
	if err != nil {
		t.Fatalf("timeline of %s: %v", companyID, err)
	}
	out := slices.Clone(p.Data)
	slices.Reverse(out)
	return out
}

// timelineTypes returns the types of a company's timeline events after the first skip, with
// their actors' labels: "hold_placed by ERP sync".
func (e *ruleEnv) timelineTypes(t testing.TB, companyID string, skip int) []string {
	t.Helper()
	var out []string
	for _, ev := range e.timeline(t, companyID)[skip:] {
		out = append(out, string(ev.Type)+" by "+ev.Actor.Label)
	}
	return out
}

// ledger returns a company's ledger, newest first.
func (e *ruleEnv) ledger(t testing.TB, companyID string) []credit.LedgerEntry {
	t.Helper()
	limit := credit.MaxPageSize
	p, err := e.Service.Ledger.List(e.staff, companyID, credit.LedgerListParams{ListParams: credit.ListParams{Limit: &limit}})
	if err != nil {
		t.Fatalf("ledger of %s: %v", companyID, err)
	}
	return p.Data
}

// invoices returns a company's invoices, oldest first.
func (e *ruleEnv) invoices(t testing.TB, companyID string) []credit.Invoice {
	t.Helper()
	p, err := e.Service.Invoices.List(e.staff, companyID, credit.InvoiceListParams{})
	if err != nil {
		t.Fatalf("invoices of %s: %v", companyID, err)
	}
	return p.Data
}

// orderEntry is an order_placed entry of amount for order n.
func orderEntry(companyID string, n int, amount string) credit.LedgerEntryInput {
	return credit.LedgerEntryInput{CompanyID: companyID, Kind: credit.KindOrderPlaced, Amount: amount, OrderGID: orderGID(n)}
}

// orderGID is the platform GID of order n.
func orderGID(n int) string { return "gid://platform/Order/" + strconv.Itoa(n) }

// sweep runs the overdue sweep and fails the test on error.
func (e *ruleEnv) sweep(t testing.TB) credit.SweepResult {
	t.Helper()
	res, err := e.Service.Maintenance.SweepHolds(context.Background())
	if err != nil {
		t.Fatalf("sweep: %v", err)
	}
	return res
}
