package credit_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
	"github.com/creditd/creditd/tenant"
)

// TestStoreBehaviour checks the store's payment figures against behaviourHistory, whose answers
// are worked out by hand here over all its companies, for windows one of whose edges falls on
// a payment, with another store's late and open invoices beside it that must not count.
func TestStoreBehaviour(t *testing.T) {
	env := credittest.NewService(t)
	ctx, _, _, _, _, _ := behaviourHistory(t, env)
	day := 24 * time.Hour
	now := env.Clock.Now()

	// Another store: 1000 issued 50 days ago and paid now (20 days late), 5000 open and 30 days
	// overdue. Counted, they would move every figure.
	other := env.MustStore(t, "Other", "EUR")
	co := env.MustCompany(t, other, "Elsewhere", "100000").ID
	for _, e := range []struct {
		kind, amount, order string
		ago                 time.Duration
	}{{credit.KindOrderPlaced, "1000", "1", 50 * day}, {credit.KindOrderPlaced, "5000", "2", 60 * day}, {credit.KindPayment, "-1000", "1", 0}} {
		at := credit.At(now.Add(-e.ago))
		env.MustRecord(t, credit.LedgerEntryInput{CompanyID: co, Kind: e.kind, Amount: e.amount,
			OrderGID: "gid://platform/Order/" + e.order, OccurredAt: &at})
	}

	dec := func(s string) *decimal.Decimal { d := decimal.RequireFromString(s); return &d }
	str := func(s string) *string { return &s }
	check := func(window, paid int, beyond *decimal.Decimal, share *string, dso string) {
		t.Helper()
		b, err := env.Service.Reports.StoreBehaviour(ctx, window)
		if err != nil {
			t.Fatalf("window %d: %v", window, err)
		}
		if alone, err := env.Service.Reports.StoreDSO(ctx); err != nil || !alone.Equal(b.DSODays) {
			t.Errorf("StoreDSO %s (%v), StoreBehaviour's %s", alone, err, b.DSODays)
		}
		eqDec := func(a, b *decimal.Decimal) bool { return (a == nil) == (b == nil) && (a == nil || a.Equal(*b)) }
		eqStr := func(a, b *string) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }
		if b.WindowDays != window || !b.AsOf.Equal(now) || b.InvoicesPaid != paid || !eqDec(b.AverageDaysBeyondTerms, beyond) ||
			!eqStr(b.PaidOnTimeShare, share) || !b.DSODays.Equal(decimal.RequireFromString(dso)) {
			t.Errorf("window %d: got paid %d beyond %v share %v dso %s; want paid %d beyond %v share %v dso %s", window,
				b.InvoicesPaid, deref(b.AverageDaysBeyondTerms), derefS(b.PaidOnTimeShare), b.DSODays, paid, deref(beyond), derefS(share), dso)
		}
	}
	// 365 days: payer's o2 200 (−20 days), o1 100 (+10, by the payment with no order), o3 300
	// (+15, partly by it), o5 1000 (−10); the credit balance's 100 (−25); the cancelled o4
	// never. Σ 1700; beyond (−4000 + 1000 + 4500 − 10000 − 2500)/1700 = −6.47…; on time
	// (200 + 1000 + 100)/1700 = 0.7647…
	// DSO: open 300 (o6) + 70 (fresh) + 80 (stale) = 450; day 1 has fresh's 70, days 2–39
	// nothing, day 40 o6's 500: 39 + 380/500 = 39.76.
	check(365, 5, dec("-6.5"), str("0.765"), "39.8")
	// 60 days: from +40d, which leaves out o1 (paid at exactly +40d): o3 300 (+15), o5 1000
	// (−10): (4500 − 10000)/1300 = −4.23…, 1000/1300 on time. DSO does not depend on the window.
	check(60, 2, dec("-4.2"), str("0.769"), "39.8")
	// 10 days: nothing paid since +90d.
	check(10, 0, nil, nil, "39.8")

	for _, w := range []int{0, -1, 1826} {
		if _, err := env.Service.Reports.StoreBehaviour(ctx, w); credit.CodeOf(err) != credit.CodeInvalidParameter || paramOf(err) != "window_days" {
			t.Errorf("window_days %d: %v, want invalid_parameter naming window_days", w, err)
		}
	}
	v, _ := tenant.FromContext(ctx)
	if _, err := env.Service.Reports.StoreBehaviour(apiKey(v.StoreID, credit.ScopeWriteCredit), 365); credit.CodeOf(err) != credit.CodeInsufficientScope {
		t.Errorf("without read_credit: %v, want insufficient_scope", err)
	}

	// The other store alone: 1000 paid 20 days late; 5000 open. DSO: day 50 has the 1000
	// (paid, but sales), day 60 the 5000: 59 + 4000/5000 = 59.8.
	b, err := env.Service.Reports.StoreBehaviour(credittest.Staff(other), 365)
	if err != nil || b.InvoicesPaid != 1 || b.AverageDaysBeyondTerms == nil || !b.AverageDaysBeyondTerms.Equal(decimal.NewFromInt(20)) ||
		derefS(b.PaidOnTimeShare) != "0.000" || !b.DSODays.Equal(decimal.RequireFromString("59.8")) {
		t.Errorf("other store: %+v %v", b, err)
	}

	// Two statements once the store is known, whatever its size; the DSO alone one.
	var n int
	svc := env.Hooked(credittest.SQLHooks{Statement: func(string) error { n++; return nil }})
	if _, err := svc.Reports.StoreBehaviour(ctx, 365); err != nil {
		t.Fatal(err)
	}
	n = 0
	if _, err := svc.Reports.StoreBehaviour(ctx, 365); err != nil || n != 2 {
		t.Errorf("statements: %d, want 2 (%v)", n, err)
	}
	n = 0
	if _, err := svc.Reports.StoreDSO(ctx); err != nil || n != 1 {
		t.Errorf("StoreDSO's statements: %d, want 1 (%v)", n, err)
	}
}

// TestStoreBehaviourExact wants, for a store of one company, the store's average days beyond
// terms, on-time share and DSO equal to the company's, which payment behaviour computes in Go
// decimals from the invoices themselves: amounts with cents and odd fractions, payments at
// odd microseconds, a sum of products that no float holds exactly.
func TestStoreBehaviourExact(t *testing.T) {
	env := credittest.NewService(t)
	st := env.MustStore(t, "Exact", "EUR")
	ctx := credittest.Staff(st)
	co := env.MustCompany(t, st, "Odd Amounts", "100000000000").ID
	t0 := env.Clock.Now()
	amounts := []string{"0.01", "12345678901.23", "999.99", "33.33", "7777777.77", "0.07", "150000.5"}
	for i, a := range amounts {
		env.Clock.Set(t0.Add(time.Duration(i)*7*time.Hour + time.Duration(i*i*1234567)*time.Microsecond))
		env.MustRecord(t, credit.LedgerEntryInput{CompanyID: co, Kind: credit.KindOrderPlaced, Amount: a, OrderGID: fmt.Sprintf("gid://platform/Order/%d", i)})
	}
	for i, a := range amounts[:5] {
		env.Clock.Set(t0.Add(time.Duration(20+i*5)*24*time.Hour + time.Duration(i*987654321)*time.Microsecond))
		env.MustRecord(t, credit.LedgerEntryInput{CompanyID: co, Kind: credit.KindPayment, Amount: "-" + a, OrderGID: fmt.Sprintf("gid://platform/Order/%d", i)})
	}
	env.Clock.Set(t0.Add(50*24*time.Hour + 333*time.Microsecond))
	company, err := env.Service.Reports.CompanyPaymentBehaviour(ctx, co, 365)
	if err != nil {
		t.Fatal(err)
	}
	store, err := env.Service.Reports.StoreBehaviour(ctx, 365)
	if err != nil {
		t.Fatal(err)
	}
	if company.AverageDaysBeyondTerms == nil || store.AverageDaysBeyondTerms == nil || !company.AverageDaysBeyondTerms.Equal(*store.AverageDaysBeyondTerms) ||
		derefS(company.PaidOnTimeShare) != derefS(store.PaidOnTimeShare) || !company.DSODays.Equal(store.DSODays) || company.InvoicesPaid != store.InvoicesPaid {
		t.Errorf("company %s\nstore paid %d beyond %v share %v dso %s", describe(company), store.InvoicesPaid,
			deref(store.AverageDaysBeyondTerms), derefS(store.PaidOnTimeShare), store.DSODays)
	}
}

func deref(d *decimal.Decimal) string {
	if d == nil {
		return "null"
	}
	return d.String()
}

func derefS(s *string) string {
	if s == nil {
		return "null"
	}
	return *s
}
