package credit_test

import (
	"testing"
	"time"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
)

// TestExpectedPaymentAt seeds a history whose amount-weighted average days beyond terms the
// test knows (100 paid 10 days late, 300 paid 2 days early: +1.0 day), with a cancelled
// invoice and an early payment that has left the 365-day window, neither of which may count,
// and wants an open invoice expected one day after its due date; a company that paid nothing
// gets null, and one that pays early is expected on the due date.
func TestExpectedPaymentAt(t *testing.T) {
	env := credittest.NewService(t)
	st := env.MustStore(t, "Behaviour", "EUR")
	ctx := credittest.Staff(st)
	day := 24 * time.Hour
	t0 := env.Clock.Now()
	late := env.MustCompany(t, st, "Late Payer", "100000").ID
	fresh := env.MustCompany(t, st, "New Buyer", "100000").ID
	early := env.MustCompany(t, st, "Early Payer", "100000").ID
	env.MustOrderEntry(t, late, credit.KindOrderPlaced, "1000", "10")
	env.MustOrderEntry(t, late, credit.KindOrderPlaced, "100", "11")
	env.MustOrderEntry(t, late, credit.KindOrderPlaced, "300", "12")
	env.MustOrderEntry(t, late, credit.KindOrderPlaced, "50", "13")
	env.MustOrderEntry(t, early, credit.KindOrderPlaced, "80", "30")
	env.Clock.Set(t0.Add(day))
	env.MustOrderEntry(t, late, credit.KindPayment, "-1000", "10") // 29 days early, but out of the window below
	env.Clock.Set(t0.Add(28 * day))
	env.MustOrderEntry(t, late, credit.KindPayment, "-300", "12")     // 2 days early
	env.MustOrderEntry(t, late, credit.KindCancellation, "-50", "13") // cancelled: never counts
	env.MustOrderEntry(t, early, credit.KindPayment, "-80", "30")     // 2 days early
	env.Clock.Set(t0.Add(40 * day))
	env.MustOrderEntry(t, late, credit.KindPayment, "-100", "11") // 10 days late
	env.MustOrderEntry(t, late, credit.KindOrderPlaced, "70", "14")
	env.MustOrderEntry(t, fresh, credit.KindOrderPlaced, "70", "20")
	env.MustOrderEntry(t, early, credit.KindOrderPlaced, "70", "31")
	env.Clock.Set(t0.Add(366*day + time.Second)) // order 10's payment is 365 days and a second ago

	openOf := func(co string) credit.Invoice {
		t.Helper()
		page, err := env.Service.Invoices.List(ctx, co, credit.InvoiceListParams{Status: credit.InvoiceOpen})
		if err != nil || len(page.Data) != 1 {
			t.Fatalf("open invoices: %+v %v", page, err)
		}
		again, err := env.Service.Invoices.Get(ctx, page.Data[0].ID)
		if err != nil || (again.ExpectedPaymentAt == nil) != (page.Data[0].ExpectedPaymentAt == nil) ||
			(again.ExpectedPaymentAt != nil && *again.ExpectedPaymentAt != *page.Data[0].ExpectedPaymentAt) {
			t.Errorf("Get and List disagree: %+v %+v %v", again, page.Data[0], err)
		}
		return page.Data[0]
	}
	inv := openOf(late)
	if want := credit.At(inv.DueAt.Add(day)); inv.ExpectedPaymentAt == nil || *inv.ExpectedPaymentAt != want {
		t.Errorf("late payer: expected_payment_at %v, want %s (due %s + 1.0 day)", inv.ExpectedPaymentAt, want, inv.DueAt)
	}
	if inv := openOf(fresh); inv.ExpectedPaymentAt != nil {
		t.Errorf("a company that paid nothing: expected_payment_at %v, want null", inv.ExpectedPaymentAt)
	}
	if inv := openOf(early); inv.ExpectedPaymentAt == nil || *inv.ExpectedPaymentAt != inv.DueAt {
		t.Errorf("early payer: expected_payment_at %v, want the due date %s", inv.ExpectedPaymentAt, inv.DueAt)
	}
	page, err := env.Service.Invoices.List(ctx, late, credit.InvoiceListParams{Status: credit.InvoicePaid})
	if err != nil || len(page.Data) != 3 || page.Data[0].ExpectedPaymentAt != nil {
		t.Errorf("paid invoices carry no expected_payment_at: %+v %v", page.Data, err)
	}
}
