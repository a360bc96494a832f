package server_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
)

// The invoices over REST (contract §17): the transport only. The allocation rule that opens,
// pays and cancels them is tested in credit/.

func TestInvoicesOverREST(t *testing.T) {
	t.Parallel()
	f := newReadFixture(t)
	co := f.env.MustCompany(t, f.store, "Alpenblick Hotels AG", "25000.00")
	record := func(kind, amount, order string) {
		f.env.Clock.Advance(time.Second)
		f.env.MustRecord(t, credit.LedgerEntryInput{CompanyID: co.ID, Kind: kind, Amount: amount, OrderGID: order})
	}
	record(credit.KindOrderPlaced, "100", "gid://platform/Order/5001")
	record(credit.KindOrderPlaced, "40", "gid://platform/Order/5002")
	record(credit.KindOrderPlaced, "10", "gid://platform/Order/5003")
	record(credit.KindPayment, "-100", "gid://platform/Order/5001")
	record(credit.KindCancellation, "-10", "gid://platform/Order/5003")
	f.env.Clock.Set(time.Date(2026, 4, 3, 9, 0, 0, 0, time.UTC)) // 5002 fell due on 1 April at 09:00:02

	var all credit.Page[credit.Invoice]
	f.get(t, "/v1/companies/"+co.ID+"/invoices").WantStatus(t, 200).Decode(t, &all)
	if len(all.Data) != 3 || all.HasMore {
		t.Fatalf("invoices: %+v", all)
	}
	open := all.Data[1]
	mustJSONEqual(t, f.get(t, "/v1/invoices/"+open.ID).WantStatus(t, 200).Body, fmt.Sprintf(`{
		"id": %q, "company_id": %q, "platform_order_gid": "gid://platform/Order/5002",
		"amount": {"amount": "40.00", "currency": "EUR"}, "open_amount": {"amount": "40.00", "currency": "EUR"},
		"issued_at": "2026-03-02T09:00:02.000000Z", "due_at": "2026-04-01T09:00:02.000000Z",
		"status": "open", "days_overdue": 2, "paid_at": null,
		"expected_payment_at": "2026-04-01T09:00:02.000000Z", "promise": null, "dispute": null, "reminders": []}`, open.ID, co.ID))
	// paid_at is the moment of the payment that settled it; a cancelled invoice has none.
	if p, c := all.Data[0], all.Data[2]; p.PaidAt == nil || p.PaidAt.String() != "2026-03-02T09:00:04.000000Z" || c.PaidAt != nil {
		t.Errorf("paid_at: paid %v, cancelled %v", p.PaidAt, c.PaidAt)
	}

	// Oldest first, one status at a time, page by page.
	for status, order := range map[string]string{"open": "5002", "paid": "5001", "cancelled": "5003"} {
		var page credit.Page[credit.Invoice]
		f.get(t, "/v1/companies/"+co.ID+"/invoices", "status", status).WantStatus(t, 200).Decode(t, &page)
		if len(page.Data) != 1 || page.Data[0].PlatformOrderGID != "gid://platform/Order/"+order || page.Data[0].Status != status {
			t.Errorf("status=%s: %+v", status, page.Data)
		}
	}
	var first, second credit.Page[credit.Invoice]
	f.get(t, "/v1/companies/"+co.ID+"/invoices", "limit", "2").WantStatus(t, 200).Decode(t, &first)
	if len(first.Data) != 2 || !first.HasMore || first.NextCursor == nil || first.Data[0].ID != all.Data[0].ID {
		t.Fatalf("first page: %+v", first)
	}
	f.get(t, "/v1/companies/"+co.ID+"/invoices", "limit", "2", "cursor", *first.NextCursor).WantStatus(t, 200).Decode(t, &second)
	if len(second.Data) != 1 || second.HasMore || second.Data[0].ID != all.Data[2].ID {
		t.Fatalf("second page: %+v", second)
	}

	for _, c := range []struct{ path, param string }{
		{credittest.WithQuery("/v1/companies/"+co.ID+"/invoices", "status", "overdue"), "status"},
		{credittest.WithQuery("/v1/companies/"+co.ID+"/invoices", "status", ""), "status"},
		{credittest.WithQuery("/v1/companies/"+co.ID+"/invoices", "limit", "0"), "limit"},
		{credittest.WithQuery("/v1/companies/"+co.ID+"/invoices", "sort", "due_at"), "sort"},
		{credittest.WithQuery("/v1/invoices/"+open.ID, "expand", "company"), "expand"},
	} {
		f.env.Get(t, f.key, c.path).WantError(t, 400, "invalid_parameter", c.param)
	}
	for _, path := range []string{"/v1/invoices/" + co.ID, "/v1/invoices/inv_unknown", "/v1/companies/co_unknown/invoices"} {
		f.get(t, path).WantError(t, 404, "not_found", "")
	}
}
