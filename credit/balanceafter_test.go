package credit_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
	"github.com/creditd/creditd/tenant"
)

// TestBalanceAfterIsTheRunningSum records entries of every kind, from the platform's side and
// through the API, and wants each entry's balance_after, in ledger pages, in the adjustment's
// write response and in its ledger_entry.created event, to be the sum of the company's
// entries up to it, the newest one's equal to the company's outstanding (contract §5,
// 2026-11-27).
func TestBalanceAfterIsTheRunningSum(t *testing.T) {
	t.Parallel()
	env := credittest.NewService(t)
	st := env.MustStore(t, "Balances", "EUR")
	key := ctxKey(st)
	var companies []credit.Company
	for _, name := range []string{"Alpenblick", "Brauhaus", "Seeblick"} {
		companies = append(companies, env.MustCompany(t, st, name, "10000"))
	}
	writes := map[string]credit.LedgerEntry{}
	for i, c := range companies {
		env.MustRecord(t, credit.LedgerEntryInput{CompanyID: c.ID, Kind: credit.KindOpeningBalance, Amount: "-12.34"})
		env.MustRecord(t, credit.LedgerEntryInput{CompanyID: c.ID, Kind: credit.KindOrderPlaced, Amount: "4800.00", OrderGID: "gid://platform/Order/1"})
		env.MustRecord(t, credit.LedgerEntryInput{CompanyID: c.ID, Kind: credit.KindPayment, Amount: "-1200.01"})
		for j := range i + 2 {
			note := "goodwill"
			res, err := env.Service.Ledger.CreateAdjustment(key, credit.AdjustmentInput{CompanyID: c.ID, Amount: credit.Amount([]string{"0.01", "-99.99", "1234567890123.45"}[j%3]), Note: &note})
			if err != nil {
				t.Fatal(err)
			}
			if res.LedgerEntry.BalanceAfter != res.Company.Outstanding {
				t.Errorf("write response: balance_after %v, company outstanding %v", res.LedgerEntry.BalanceAfter, res.Company.Outstanding)
			}
			writes[res.LedgerEntry.ID] = res.LedgerEntry
		}
		env.MustRecord(t, credit.LedgerEntryInput{CompanyID: c.ID, Kind: credit.KindRefund, Amount: "-0.99", OrderGID: "gid://platform/Order/1"})
	}
	// The events' objects, by entry ID.
	events := map[string]credit.LedgerEntry{}
	page, err := env.Service.Events.List(key, credit.EventListParams{Types: []string{"ledger_entry.created"}, ListParams: credit.ListParams{Limit: ptr(250)}})
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range page.Data {
		var data struct{ Object credit.LedgerEntry }
		if err := json.Unmarshal(ev.Data, &data); err != nil {
			t.Fatal(err)
		}
		events[data.Object.ID] = data.Object
	}
	checked := 0
	for _, c := range companies {
		limit := 2
		var entries []credit.LedgerEntry
		p := credit.LedgerListParams{ListParams: credit.ListParams{Limit: &limit}}
		for {
			page, err := env.Service.Ledger.List(key, c.ID, p)
			if err != nil {
				t.Fatal(err)
			}
			entries = append(entries, page.Data...)
			if !page.HasMore {
				break
			}
			p.Cursor = *page.NextCursor
		}
		slices.Reverse(entries)
		sum := decimal.Zero
		for _, e := range entries {
			sum = sum.Add(decimal.RequireFromString(e.Amount.Amount))
			if want := credit.NewMoney(sum, "EUR"); e.BalanceAfter != want {
				t.Errorf("%s %s: balance_after %v, want %v", c.Name, e.ID, e.BalanceAfter, want)
			}
			if ev, ok := events[e.ID]; !ok || asJSON(ev) != asJSON(e) {
				t.Errorf("%s %s: event object %s, ledger %s", c.Name, e.ID, asJSON(ev), asJSON(e))
			}
			if w, ok := writes[e.ID]; ok && asJSON(w) != asJSON(e) {
				t.Errorf("%s %s: write response %s, ledger %s", c.Name, e.ID, asJSON(w), asJSON(e))
			}
			checked++
		}
		now, err := env.Service.Companies.Get(key, c.ID)
		if err != nil {
			t.Fatal(err)
		}
		if last := entries[len(entries)-1]; last.BalanceAfter != now.Outstanding {
			t.Errorf("%s: newest balance_after %v, outstanding %v", c.Name, last.BalanceAfter, now.Outstanding)
		}
	}
	if checked != len(events) || checked < 20 {
		t.Fatalf("%d entries checked, %d events", checked, len(events))
	}
}

// ctxKey is an API key of st with every scope.
func ctxKey(st string) context.Context {
	return tenant.APIKey(context.Background(), st, "key_test", "erp", credit.AllScopes)
}

func asJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
