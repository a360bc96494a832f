package server_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
)

// TestLedgerEventsNameTheirCompany: an adjustment's entry names the company written to, in
// the write's answer, the ledger, the feed (list and single event) and GraphQL (the entry's
// company, from a mutation's payload, a company's ledger and node(id:)).
func TestLedgerEventsNameTheirCompany(t *testing.T) {
	t.Parallel()
	env := credittest.New(t)
	st := env.MustStore(t, "Store", "EUR")
	key := env.MustKey(t, st, "erp", credit.ScopeReadCredit, credit.ScopeWriteCredit)
	other := env.MustCompany(t, st, "Other GmbH", "100.00") // a second company, so that a wrong one shows
	co := env.MustCompany(t, st, "Hotel Adler", "1000.00")
	env.MustRecord(t, credit.LedgerEntryInput{CompanyID: other.ID, Kind: credit.KindOpeningBalance, Amount: "5.00"})

	var adj credit.AdjustmentResult
	env.Do(t, credittest.Request{Method: "POST", Path: "/v1/companies/" + co.ID + "/adjustments", Key: key, Body: map[string]string{"amount": "-12.50", "note": "goodwill"}}).
		WantStatus(t, 201).Decode(t, &adj)
	if adj.LedgerEntry.CompanyID != co.ID {
		t.Errorf("the adjustment's entry names %q, want %s", adj.LedgerEntry.CompanyID, co.ID)
	}
	var ledger struct{ Data []credit.LedgerEntry }
	env.Get(t, key, "/v1/companies/"+co.ID+"/ledger").WantStatus(t, 200).Decode(t, &ledger)
	if len(ledger.Data) != 1 || ledger.Data[0].CompanyID != co.ID {
		t.Errorf("ledger: %+v", ledger.Data)
	}

	events, _ := mustFeed(t, env, key, "?type=ledger_entry.created", 50)
	if len(events) != 2 {
		t.Fatalf("%d ledger events, want 2", len(events))
	}
	var object credit.LedgerEntry
	mustUnmarshal(t, events[1].Data.Object, &object)
	if object.ID != adj.LedgerEntry.ID || object.CompanyID != co.ID {
		t.Errorf("the feed's event names %s of %q, want %s of %s", object.ID, object.CompanyID, adj.LedgerEntry.ID, co.ID)
	}
	mustUnmarshal(t, events[0].Data.Object, &object)
	if object.CompanyID != other.ID {
		t.Errorf("the opening balance's event names %q, want %s", object.CompanyID, other.ID)
	}
	var single feedEvent
	env.Get(t, key, "/v1/events/"+events[1].ID).WantStatus(t, 200).Decode(t, &single)
	mustJSONEqual(t, single.Data.Object, mustMarshal(t, adj.LedgerEntry))

	gql := func(query string, vars map[string]any) map[string]any {
		t.Helper()
		var resp struct {
			Data   map[string]any
			Errors []any
		}
		env.Do(t, credittest.Request{Method: "POST", Path: "/graphql", Key: key, Body: map[string]any{"query": query, "variables": vars}}).
			WantStatus(t, 200).Decode(t, &resp)
		if len(resp.Errors) > 0 {
			t.Fatalf("graphql: %v", resp.Errors)
		}
		return resp.Data
	}
	data := gql(`mutation($id: ID!) { createAdjustment(input: {companyId: $id, amount: "3.00", note: "via graphql"}) {
		ledgerEntry { id company { id name outstanding { amount } } } } }`, map[string]any{"id": co.ID})
	entry := data["createAdjustment"].(map[string]any)["ledgerEntry"].(map[string]any)
	company := entry["company"].(map[string]any)
	// The payload's company is the one after the write.
	if company["id"] != co.ID || company["name"] != "Hotel Adler" || company["outstanding"].(map[string]any)["amount"] != "-9.50" {
		t.Errorf("createAdjustment's entry names %v, want %s after the write", company, co.ID)
	}
	data = gql(`query($id: ID!) { node(id: $id) { ... on LedgerEntry { company { id } } } }`, map[string]any{"id": adj.LedgerEntry.ID})
	if got := data["node"].(map[string]any)["company"].(map[string]any)["id"]; got != co.ID {
		t.Errorf("node(%s).company is %v, want %s", adj.LedgerEntry.ID, got, co.ID)
	}
	data = gql(`{ companies { edges { node { id ledger { edges { node { company { id } } } } } } } }`, nil)
	for _, e := range data["companies"].(map[string]any)["edges"].([]any) {
		n := e.(map[string]any)["node"].(map[string]any)
		for _, le := range n["ledger"].(map[string]any)["edges"].([]any) {
			if got := le.(map[string]any)["node"].(map[string]any)["company"].(map[string]any)["id"]; got != n["id"] {
				t.Errorf("an entry of %v's ledger names %v", n["id"], got)
			}
		}
	}
}

// TestCreditLimitSetToItsValueChangesNothing: setting the limit a company already has (in
// any spelling of the amount) answers 200 as a change would and goes on the timeline, but
// appends no event and leaves updated_at alone; through REST and GraphQL alike.
func TestCreditLimitSetToItsValueChangesNothing(t *testing.T) {
	t.Parallel()
	env := credittest.New(t)
	st := env.MustStore(t, "Store", "EUR")
	key := env.MustKey(t, st, "erp", credit.ScopeReadCredit, credit.ScopeWriteCredit)
	co := env.MustCompany(t, st, "Hotel Adler", "1000.00")
	feedTypes := func() []string {
		events, _ := mustFeed(t, env, key, "", 50)
		return eventTypes(events)
	}
	before := feedTypes()
	timeline := func() []string {
		var resp struct {
			Data struct {
				Company struct {
					Timeline struct {
						Edges []struct{ Node struct{ Type string } }
					}
				}
			}
		}
		env.Do(t, credittest.Request{Method: "POST", Path: "/graphql", Key: key, Body: map[string]any{
			"query": fmt.Sprintf(`{ company(id: %q) { timeline { edges { node { type } } } } }`, co.ID),
		}}).WantStatus(t, 200).Decode(t, &resp)
		var out []string
		for _, e := range resp.Data.Company.Timeline.Edges {
			out = append(out, e.Node.Type)
		}
		return out
	}

	env.Clock.Advance(time.Hour)
	var res credit.CreditLimitResult
	env.Do(t, credittest.Request{Method: "PUT", Path: "/v1/companies/" + co.ID + "/credit-limit", Key: key, Body: map[string]string{"amount": "1000", "reason": "review"}}).
		WantStatus(t, 200).Decode(t, &res)
	if res.Company.UpdatedAt != co.UpdatedAt || res.Company.CreditLimit.Amount != "1000.00" || res.PreviousCreditLimit.Amount != "1000.00" {
		t.Errorf("REST no-op: %+v, want the company unchanged (updated_at %s)", res, co.UpdatedAt)
	}
	env.Clock.Advance(time.Hour)
	var gql struct {
		Data struct {
			SetCreditLimit struct {
				Company             struct{ UpdatedAt string }
				PreviousCreditLimit struct{ Amount string }
			}
		}
		Errors []any
	}
	env.Do(t, credittest.Request{Method: "POST", Path: "/graphql", Key: key, Body: map[string]any{
		"query": fmt.Sprintf(`mutation { setCreditLimit(input: {companyId: %q, amount: "1000.0"}) { company { updatedAt } previousCreditLimit { amount } } }`, co.ID),
	}}).WantStatus(t, 200).Decode(t, &gql)
	if len(gql.Errors) > 0 || gql.Data.SetCreditLimit.Company.UpdatedAt != co.UpdatedAt.String() || gql.Data.SetCreditLimit.PreviousCreditLimit.Amount != "1000.00" {
		t.Errorf("GraphQL no-op: %+v, want updatedAt %s", gql, co.UpdatedAt)
	}
	var got credit.Company
	env.Get(t, key, "/v1/companies/"+co.ID).WantStatus(t, 200).Decode(t, &got)
	if got.UpdatedAt != co.UpdatedAt {
		t.Errorf("updated_at moved from %s to %s", co.UpdatedAt, got.UpdatedAt)
	}
	if after := feedTypes(); !slices.Equal(after, before) {
		t.Errorf("no-op limit changes appended events: %v, before %v", after, before)
	}
	if tl := timeline(); !slices.Equal(tl, []string{string(credit.TimelineCreditLimitChanged), string(credit.TimelineCreditLimitChanged)}) {
		t.Errorf("timeline %v, want both limit changes", tl)
	}

	// A real change still moves updated_at and appends its event.
	env.Do(t, credittest.Request{Method: "PUT", Path: "/v1/companies/" + co.ID + "/credit-limit", Key: key, Body: map[string]string{"amount": "1000.01"}}).
		WantStatus(t, 200).Decode(t, &res)
	if res.Company.UpdatedAt == co.UpdatedAt {
		t.Errorf("a real change kept updated_at %s", co.UpdatedAt)
	}
	if after := feedTypes(); !slices.Equal(after, append(before, string(credit.EventTypeCompanyCreditLimitChanged))) {
		t.Errorf("after a real change the feed is %v", after)
	}
}

func mustUnmarshal(t *testing.T, raw []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
}
