package credit_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
)

// behaviourHistory seeds, on NET 30 from t0, the history of TestPaymentBehaviour:
//
//	payer:  t0 orders o1 100, o2 200, o3 300, o4 50; +10d pays o2 (by order), cancels o4;
//	        +40d pays 300 with no order (o1 in full, 200 of o3); +45d pays o3's last 100;
//	        +50d order o5 1000; +60d order o6 500; +70d pays 1200 with no order (o5, 200 of o6)
//	credit: t0 order 100; +5d pays 150 (a credit balance of 50)
//	fresh:  +99.5d order 70 (open, not yet due)
//	stale:  order 80 backdated 100 days before t0 (open, 170 days overdue at +100d)
//
// and sets the clock to t0 + 100 days.
func behaviourHistory(t *testing.T, env *credittest.ServiceEnv) (ctx context.Context, payer, credited, fresh, stale string, t0 time.Time) {
	t.Helper()
	st := env.MustStore(t, "Behaviour", "EUR")
	ctx = credittest.Staff(st)
	day := 24 * time.Hour
	t0 = env.Clock.Now()
	payer = env.MustCompany(t, st, "Payer", "100000").ID
	credited = env.MustCompany(t, st, "Credit Balance", "100000").ID
	fresh = env.MustCompany(t, st, "Fresh", "100000").ID
	stale = env.MustCompany(t, st, "Stale", "100000").ID
	at := func(d time.Duration) { env.Clock.Set(t0.Add(d)) }
	back := credit.At(t0.Add(-100 * day))
	env.MustRecord(t, credit.LedgerEntryInput{CompanyID: stale, Kind: credit.KindOrderPlaced, Amount: "80",
		OrderGID: "gid://platform/Order/90", OccurredAt: &back})
	env.MustOrderEntry(t, payer, credit.KindOrderPlaced, "100", "1")
	env.MustOrderEntry(t, payer, credit.KindOrderPlaced, "200", "2")
	env.MustOrderEntry(t, payer, credit.KindOrderPlaced, "300", "3")
	env.MustOrderEntry(t, payer, credit.KindOrderPlaced, "50", "4")
	env.MustOrderEntry(t, credited, credit.KindOrderPlaced, "100", "20")
	at(5 * day)
	env.MustOrderEntry(t, credited, credit.KindPayment, "-150", "")
	at(10 * day)
	env.MustOrderEntry(t, payer, credit.KindPayment, "-200", "2")
	env.MustOrderEntry(t, payer, credit.KindCancellation, "-50", "4")
	at(40 * day)
	env.MustOrderEntry(t, payer, credit.KindPayment, "-300", "")
	at(45 * day)
	env.MustOrderEntry(t, payer, credit.KindPayment, "-100", "3")
	at(50 * day)
	env.MustOrderEntry(t, payer, credit.KindOrderPlaced, "1000", "5")
	at(60 * day)
	env.MustOrderEntry(t, payer, credit.KindOrderPlaced, "500", "6")
	at(70 * day)
	env.MustOrderEntry(t, payer, credit.KindPayment, "-1200", "")
	at(99*day + 12*time.Hour)
	env.MustOrderEntry(t, fresh, credit.KindOrderPlaced, "70", "30")
	at(100 * day)
	return ctx, payer, credited, fresh, stale, t0
}

// TestPaymentBehaviour checks every figure of payment behaviour against a history whose answers
// are worked out by hand here (amounts × days, summed, over the amounts), for several windows,
// one of whose edges falls exactly on a payment.
func TestPaymentBehaviour(t *testing.T) {
	env := credittest.NewService(t)
	ctx, payer, credited, fresh, stale, _ := behaviourHistory(t, env)
	dec := func(s string) *decimal.Decimal { d := decimal.RequireFromString(s); return &d }
	str := func(s string) *string { return &s }
	type want struct {
		paid          int
		toPay, beyond *decimal.Decimal
		share         *string
		count         int
		amount        string
		oldest        int
		dso           string
		rating        *string
	}
	check := func(window int, co string, w want) {
		t.Helper()
		got, err := env.Service.Reports.PaymentBehaviour(ctx, []string{co, "cmp_unknown"}, window)
		if err != nil {
			t.Fatalf("window %d: %v", window, err)
		}
		if _, ok := got["cmp_unknown"]; ok || len(got) != 1 {
			t.Errorf("an unknown company must be absent: %v", got)
		}
		b := got[co]
		eqDec := func(a, b *decimal.Decimal) bool { return (a == nil) == (b == nil) && (a == nil || a.Equal(*b)) }
		eqStr := func(a, b *string) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }
		if b.WindowDays != window || !b.AsOf.Equal(env.Clock.Now()) || b.InvoicesPaid != w.paid ||
			!eqDec(b.AverageDaysToPay, w.toPay) || !eqDec(b.AverageDaysBeyondTerms, w.beyond) || !eqStr(b.PaidOnTimeShare, w.share) ||
			b.OpenOverdue.Count != w.count || !decimal.RequireFromString(b.OpenOverdue.Amount.Amount).Equal(decimal.RequireFromString(w.amount)) ||
			b.OpenOverdue.Amount.Currency != "EUR" || b.OpenOverdue.OldestDaysOverdue != w.oldest ||
			!b.DSODays.Equal(decimal.RequireFromString(w.dso)) || !eqStr(b.Rating, w.rating) {
			js := func(v any) string { return fmt.Sprintf("%+v", v) }
			t.Errorf("window %d, %s:\n got %s\nwant %s", window, co, js(describe(b)), js(w))
		}
	}
	// Payer, 365 days: o2 200 (to pay 10, beyond −20), o1 100 (40, +10), o3 300 (45, +15),
	// o5 1000 (20, −10); the cancelled o4 never counts. Σ amount 1600; to pay
	// (2000+4000+13500+20000)/1600 = 24.6875; beyond (−4000+1000+4500−10000)/1600 = −5.3125;
	// on time (o2, o5) 1200/1600. Open: o6's 300, due at +90d, 10 days overdue. DSO: 300 open,
	// nothing issued in the last 39 days, o6's 500 exactly 40 days ago (day 40): 39 + 300/500.
	check(365, payer, want{4, dec("24.7"), dec("-5.3"), str("0.750"), 1, "300", 10, "39.6", str("A")})
	// 60 days: from +40d, which excludes o1 (paid at exactly +40d): o3 300 and o5 1000;
	// to pay (13500+20000)/1300 = 25.769…; beyond (4500−10000)/1300 = −4.230…; 1000/1300 on time.
	// Fewer than 3 paid and something overdue (10 days): rated by it, B.
	check(60, payer, want{2, dec("25.8"), dec("-4.2"), str("0.769"), 1, "300", 10, "39.6", str("B")})
	// 10 days: nothing paid since +90d.
	check(10, payer, want{0, nil, nil, nil, 1, "300", 10, "39.6", str("B")})
	// The credit balance: one invoice paid 25 days early, nothing open, no rating.
	check(365, credited, want{1, dec("5"), dec("-25"), str("1.000"), 0, "0", 0, "0", nil})
	// Fresh: nothing paid, 70 open issued half a day ago, not due: one day's sales.
	check(365, fresh, want{0, nil, nil, nil, 0, "0", 0, "1", nil})
	// Stale: open 170 days overdue, issued 200 days ago: D whatever was paid.
	check(365, stale, want{0, nil, nil, nil, 1, "80", 170, "200", str("D")})

	for _, w := range []int{0, -1, 1826} {
		if _, err := env.Service.Reports.PaymentBehaviour(ctx, []string{payer}, w); credit.CodeOf(err) != credit.CodeInvalidParameter || paramOf(err) != "window_days" {
			t.Errorf("window_days %d: %v, want invalid_parameter naming window_days", w, err)
		}
	}
	if _, err := env.Service.Reports.PaymentBehaviour(ctx, []string{payer}, 1825); err != nil {
		t.Errorf("window_days 1825: %v", err)
	}
}

func describe(b credit.PaymentBehaviour) string {
	s := func(d *decimal.Decimal) string {
		if d == nil {
			return "null"
		}
		return d.String()
	}
	p := func(v *string) string {
		if v == nil {
			return "null"
		}
		return *v
	}
	return fmt.Sprintf("paid %d to_pay %s beyond %s share %s overdue %+v dso %s rating %s",
		b.InvoicesPaid, s(b.AverageDaysToPay), s(b.AverageDaysBeyondTerms), p(b.PaidOnTimeShare), b.OpenOverdue, b.DSODays, p(b.Rating))
}

// TestPaymentBehaviourStatements wants the same number of statements for 1 company and for a
// page of 50, each with a history.
func TestPaymentBehaviourStatements(t *testing.T) {
	env := credittest.NewService(t)
	st := env.MustStore(t, "Many", "EUR")
	ctx := credittest.Staff(st)
	var companies []string
	for i := range 50 {
		co := env.MustCompany(t, st, fmt.Sprintf("Company %02d", i), "100000").ID
		companies = append(companies, co)
		for j, amount := range []string{"100", "200", "300"} {
			env.MustRecord(t, credit.LedgerEntryInput{CompanyID: co, Kind: credit.KindOrderPlaced, Amount: amount,
				OrderGID: fmt.Sprintf("gid://platform/Order/%d", j)})
		}
		env.MustRecord(t, credit.LedgerEntryInput{CompanyID: co, Kind: credit.KindPayment, Amount: "-250"})
	}
	env.Clock.Set(env.Clock.Now().Add(45 * 24 * time.Hour))
	var n int
	svc := env.Hooked(credittest.SQLHooks{Statement: func(string) error { n++; return nil }})
	count := func(ids []string) int {
		t.Helper()
		n = 0
		got, err := svc.Reports.PaymentBehaviour(ctx, ids, 365)
		if err != nil || len(got) != len(ids) {
			t.Fatalf("%d companies: %d answers, %v", len(ids), len(got), err)
		}
		for _, id := range ids {
			if b := got[id]; b.InvoicesPaid != 1 || b.OpenOverdue.Count != 2 {
				t.Fatalf("%s: %s", id, describe(b))
			}
		}
		return n
	}
	count(companies[:1]) // the first read of the store is cached
	one, fifty := count(companies[:1]), count(companies)
	if one != fifty || fifty > 6 {
		t.Errorf("statements: %d for 1 company, %d for 50 (want the same, at most 6)", one, fifty)
	}
	t.Logf("payment behaviour: %d statements for 1 company and for 50", fifty)
}
