package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"testing"
	"time"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
	"github.com/creditd/creditd/tenant"
)

// TestWriteAnswersMatchReads checks that the company a write answers with is the company as
// read afterwards, for every kind of change a write makes to a company: the write path builds
// the updated company from the locked row and the update's values instead of reading it back.
func TestWriteAnswersMatchReads(t *testing.T) {
	f := newWriteFixture(t)
	env := f.env
	base := "/v1/companies/" + f.company.ID
	now := func() map[string]any {
		t.Helper()
		r := env.Get(t, f.full, base)
		if r.Status != http.StatusOK {
			t.Fatalf("company: %d %s", r.Status, r.Body)
		}
		return r.JSON(t)
	}
	same := func(what string, answered map[string]any) {
		t.Helper()
		if read := now(); !reflect.DeepEqual(answered, read) {
			t.Fatalf("%s answered\n%v\nread afterwards\n%v", what, answered, read)
		}
	}
	rest := func(method, path, body string) {
		t.Helper()
		env.Clock.Advance(1500 * time.Microsecond)
		r := env.Do(t, credittest.Request{Method: method, Path: base + path, Key: f.full, Body: body})
		if r.Status/100 != 2 {
			t.Fatalf("%s %s: %d %s", method, path, r.Status, r.Body)
		}
		company, _ := r.JSON(t)["company"].(map[string]any)
		same(method+" "+path, company)
	}
	staff := tenant.Staff(context.Background(), f.storeID, "Ops")
	record := func(in credit.LedgerEntryInput) {
		t.Helper()
		env.Clock.Advance(1500 * time.Microsecond)
		in.CompanyID = f.company.ID
		_, c, err := env.Service.Ledger.Record(staff, in)
		if err != nil {
			t.Fatalf("%+v: %v", in, err)
		}
		b, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		var answered map[string]any
		if err := json.Unmarshal(b, &answered); err != nil {
			t.Fatal(err)
		}
		same(in.Kind+" "+in.Amount, answered)
	}

	rest("POST", "/adjustments", `{"amount":"-12.50","note":"goodwill"}`)
	rest("PUT", "/credit-limit", `{"amount":"2500","reason":"review"}`)
	rest("POST", "/hold", `{"note":"dispute"}`)
	rest("DELETE", "/hold", ``)
	// Two back-dated orders: the first places an overdue hold naming it.
	older := credit.At(env.Clock.Now().Add(-50 * day))
	old := credit.At(env.Clock.Now().Add(-40 * day))
	record(credit.LedgerEntryInput{Kind: credit.KindOrderPlaced, Amount: "90.00", OrderGID: "gid://platform/Order/7", OccurredAt: &older})
	record(credit.LedgerEntryInput{Kind: credit.KindOrderPlaced, Amount: "60.00", OrderGID: "gid://platform/Order/8", OccurredAt: &old})
	// Paying the first moves the hold to the second (its order and due date change).
	record(credit.LedgerEntryInput{Kind: credit.KindPayment, Amount: "-90.00", OrderGID: "gid://platform/Order/7"})
	// Refunding the second lifts the hold; a payment above what is owed leaves unapplied credit.
	record(credit.LedgerEntryInput{Kind: credit.KindRefund, Amount: "-60.00", OrderGID: "gid://platform/Order/8"})
	record(credit.LedgerEntryInput{Kind: credit.KindPayment, Amount: "-500.00"})
	rest("POST", "/adjustments", `{"amount":"5.00","note":"fee"}`)
	// A manual hold with a note, then an overdue order: lifting the manual hold places the
	// overdue one in the same write, without the note.
	rest("POST", "/hold", `{"note":"dispute"}`)
	oldest := credit.At(env.Clock.Now().Add(-60 * day))
	record(credit.LedgerEntryInput{Kind: credit.KindOrderPlaced, Amount: "700.00", OrderGID: "gid://platform/Order/9", OccurredAt: &oldest})
	rest("DELETE", "/hold", ``)
	if c := f.companyNow(t); c.Hold == nil || c.Hold.Kind != "overdue" || c.Hold.Note != nil {
		t.Fatalf("after lifting the manual hold: %+v", c.Hold)
	}
}
