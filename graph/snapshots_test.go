package graph_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/creditd/creditd/credit"
)

// TestOnlyNodesHaveIDs: no object type has an id field unless it implements Node, whose id is
// the current state's. Apollo, urql Graphcache and Relay merge objects by __typename and id, so
// a snapshot (an event's company as it was) with the record's id would overwrite the live
// record in their caches.
func TestOnlyNodesHaveIDs(t *testing.T) {
	f := newFixture(t)
	data := query(t, f.env, f.readCredit, `{ __schema { types { name kind fields { name } interfaces { name } } } }`)
	objects := 0
	for _, typ := range at(t, data, "__schema", "types").([]any) {
		typ := typ.(map[string]any)
		name := typ["name"].(string)
		if typ["kind"] != "OBJECT" || strings.HasPrefix(name, "__") {
			continue
		}
		objects++
		node := false
		for _, i := range typ["interfaces"].([]any) {
			node = node || i.(map[string]any)["name"] == "Node"
		}
		for _, field := range typ["fields"].([]any) {
			if field.(map[string]any)["name"] == "id" && !node {
				t.Errorf("%s has an id but is not a Node: a client cache would merge it with the record of that id", name)
			}
		}
	}
	if objects < 20 {
		t.Fatalf("only %d object types seen", objects)
	}
}

// TestEventCompanyIsLive: Event.object's company is the snapshot of the event (its figures
// then, no id), Event.company the company now; a page of events reads its companies in one
// query, whatever the number of events.
func TestEventCompanyIsLive(t *testing.T) {
	log := &sqlLog{}
	f := newFixture(t, log.Options())
	ctx := viewerOf(f.store)
	if _, err := f.env.Service.Companies.PlaceHold(ctx, credit.HoldInput{CompanyID: f.brau.ID}); err != nil {
		t.Fatal(err)
	}
	limit := "30000.00"
	if _, err := f.env.Service.Companies.SetCreditLimit(ctx, credit.CreditLimitInput{CompanyID: f.alpen.ID, Amount: credit.Amount(limit)}); err != nil {
		t.Fatal(err)
	}
	statements := map[int][]string{}
	for _, n := range []int{2, 20} {
		for i := range n / 2 {
			f.env.MustRecord(t, credit.LedgerEntryInput{CompanyID: f.alpen.ID, Kind: credit.KindAdjustment, Amount: "1.00", Note: fmt.Sprint("a", i)})
			f.env.MustRecord(t, credit.LedgerEntryInput{CompanyID: f.brau.ID, Kind: credit.KindAdjustment, Amount: "1.00", Note: fmt.Sprint("b", i)})
		}
		alpen, err := f.env.Service.Companies.Get(ctx, f.alpen.ID)
		if err != nil {
			t.Fatal(err)
		}
		log.Reset()
		data := query(t, f.env, f.both, `{ events(first: 250) { edges { node { type
			object { __typename ... on CompanySnapshot { companyId creditLimit { amount } status } ... on LedgerEntry { id } }
			company { id creditLimit { amount } outstanding { amount } status }
		} } } }`)
		statements[n] = touching(log.Snapshot(), "companies")
		withCompany := 0
		for _, e := range at(t, data, "events", "edges").([]any) {
			node := e.(map[string]any)["node"].(map[string]any)
			typ := node["type"].(string)
			if !strings.HasPrefix(typ, "company.") && !strings.HasPrefix(typ, "ledger_entry.") {
				if node["company"] != nil {
					t.Errorf("%s: company %v, want null", typ, node["company"])
				}
				continue
			}
			withCompany++
			company := node["company"].(map[string]any)
			obj := node["object"].(map[string]any)
			if obj["__typename"] == "CompanySnapshot" && obj["companyId"] != company["id"] {
				t.Errorf("%s: snapshot of %v, company %v", typ, obj["companyId"], company["id"])
			}
			if company["id"] == f.alpen.ID {
				if got := at(t, company, "creditLimit", "amount"); got != limit {
					t.Errorf("%s: live company's limit %v, want %s", typ, got, limit)
				}
				if got := at(t, company, "outstanding", "amount"); got != alpen.Outstanding.Amount {
					t.Errorf("%s: live company's outstanding %v, want %s", typ, got, alpen.Outstanding.Amount)
				}
				if typ == string(credit.EventTypeCompanyCreated) && at(t, obj, "creditLimit", "amount") != "25000.00" {
					t.Errorf("company.created's snapshot: %v, want the limit then", obj)
				}
			}
			if company["id"] == f.brau.ID && company["status"] != "ON_HOLD" {
				t.Errorf("%s: Brauhaus is %v, want ON_HOLD now", typ, company["status"])
			}
		}
		if withCompany < n {
			t.Fatalf("%d events with a company, want at least %d", withCompany, n)
		}
	}
	if len(statements[2]) != 1 || len(statements[20]) != 1 {
		t.Fatalf("Event.company: %d statements on companies for a few events, %d for many; want 1 each:\n%s",
			len(statements[2]), len(statements[20]), strings.Join(statements[20], "\n"))
	}

	// An event on its own (node) reads its company alone; another store's company is never
	// shown.
	var eventID string
	for _, e := range at(t, query(t, f.env, f.both, `{ events(types: ["company.hold_placed"]) { edges { node { id } } } }`), "events", "edges").([]any) {
		eventID = at(t, e, "node", "id").(string)
	}
	data := query(t, f.env, f.both, `query($id: ID!) { node(id: $id) { ... on Event { company { name status } } } }`, map[string]any{"id": eventID})
	if at(t, data, "node", "company", "name") != f.brau.Name || at(t, data, "node", "company", "status") != "ON_HOLD" {
		t.Fatalf("node's company: %v", data)
	}
	res := doGQL(t, f.env, gqlRequest{Key: f.otherKey, Query: `{ events { edges { node { company { id } } } } }`})
	if res.HTTP.Status != http.StatusOK || len(res.Errors) > 0 {
		t.Fatalf("other store: %d %s", res.HTTP.Status, res.HTTP.Body)
	}
	for _, e := range at(t, res.Data, "events", "edges").([]any) {
		c, _ := at(t, e, "node", "company").(map[string]any)
		if id, _ := c["id"].(string); id != "" && id != f.foreignCompany.ID {
			t.Fatalf("another store's event shows company %s", id)
		}
	}
}
