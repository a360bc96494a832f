package graph_test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
	"github.com/creditd/creditd/tenant"
)

const dashboardQuery = `query Dashboard($n: Int!) {
  companies(first: $n) {
    edges {
      node {
        id name status paymentTerms updatedAt
        creditLimit { amount currency }
        outstanding { amount currency }
        availableCredit { amount currency }
        hold { kind note placedAt placedBy }
        ledger(first: 5) {
          edges { cursor node { id kind amount { amount currency } platformOrderGid note occurredAt } }
          pageInfo { hasNextPage endCursor }
        }
      }
    }
    pageInfo { hasNextPage endCursor }
  }
}`

// entryCompanyDashboard is the dashboard query with each entry's company, as an ERP that
// follows ledgers across companies asks for it (50 companies at most: at 250 it is above the
// complexity limit).
var entryCompanyDashboard = strings.Replace(dashboardQuery, "node { id kind", "node { id company { id name } kind", 1)

// TestDashboardQueryCount checks that the dashboard query (a page of companies with hold,
// credit figures and the last 5 ledger entries each, with their company) runs the same number of SQL statements
// for 5 companies as for 50: the ledgers are read in one batch, not once per company.
func TestDashboardQueryCount(t *testing.T) {
	log := &sqlLog{}
	env := credittest.New(t, log.Options())
	store := env.MustStore(t, "Dashboards", "EUR")
	key := env.MustKey(t, store, "dashboard", credit.ScopeReadCredit)
	staff := tenant.Staff(credittest.Admin(), store, "Ops")

	var companies []credit.Company
	statements := map[int][]string{}
	for _, n := range []int{5, 50} {
		for len(companies) < n {
			i := len(companies)
			c := env.MustCompany(t, store, fmt.Sprintf("Company %02d", i), "10000.00")
			for j := 0; j < 6; j++ {
				env.MustRecord(t, credit.LedgerEntryInput{CompanyID: c.ID, Kind: credit.KindOrderPlaced, Amount: fmt.Sprintf("%d.50", 10+j), OrderGID: fmt.Sprintf("gid://platform/Order/%d%02d", i, j)})
			}
			if i%10 == 3 {
				if _, err := env.Service.Companies.PlaceHold(staff, credit.HoldInput{CompanyID: c.ID}); err != nil {
					t.Fatal(err)
				}
			}
			companies = append(companies, c)
		}
		query(t, env, key, entryCompanyDashboard, map[string]any{"n": n}) // the key's first use writes last_used_at
		log.Reset()
		data := query(t, env, key, entryCompanyDashboard, map[string]any{"n": n})
		// The key's authentication is cached for 1 s of wall time; on a loaded machine the
		// measured query may come after it expired and authenticate again. That costs the same
		// for any page size and is not the dashboard's work, so it is left out of the count.
		statements[n] = withoutAuthentication(log.Snapshot())

		edges := at(t, data, "companies", "edges").([]any)
		if len(edges) != n {
			t.Fatalf("%d companies, want %d", len(edges), n)
		}
		holds := 0
		for i := range edges {
			node := at(t, edges[i], "node")
			if got := len(at(t, node, "ledger", "edges").([]any)); got != 5 {
				t.Fatalf("company %d: %d ledger entries, want 5", i, got)
			}
			for j := range 5 {
				// Each entry names its company, read from the page it is listed in, not once per entry.
				if got := at(t, node, "ledger", "edges", j, "node", "company", "id"); got != at(t, node, "id") {
					t.Fatalf("company %d, entry %d: company %v, want %v", i, j, got, at(t, node, "id"))
				}
			}
			if at(t, node, "ledger", "pageInfo", "hasNextPage") != true {
				t.Fatalf("company %d: hasNextPage false with 6 entries", i)
			}
			if at(t, node, "hold") != nil {
				holds++
			}
		}
		if want := (n + 6) / 10; holds != want {
			t.Fatalf("%d companies on hold, want %d", holds, want)
		}
	}
	if len(statements[5]) != len(statements[50]) {
		t.Fatalf("dashboard query: %d SQL statements for 5 companies, %d for 50\n5:\n%s\n50:\n%s",
			len(statements[5]), len(statements[50]), strings.Join(statements[5], "\n"), strings.Join(statements[50], "\n"))
	}
	if len(statements[50]) > 3 {
		t.Fatalf("dashboard query: %d SQL statements, want at most 3:\n%s", len(statements[50]), strings.Join(statements[50], "\n"))
	}
	if got := len(touching(statements[50], "ledger_entries")); got != 1 {
		t.Fatalf("%d statements read ledger_entries, want 1:\n%s", got, strings.Join(statements[50], "\n"))
	}
	var summary []string
	for _, s := range statements[50] {
		summary = append(summary, s[:min(len(s), 90)]+"...")
	}
	t.Logf("dashboard query: %d SQL statements for 5 companies and for 50:\n%s", len(statements[50]), strings.Join(summary, "\n"))
}

// TestBatchedLedgerMatchesREST checks that a batched first page is the page REST serves: the
// same entries and a cursor that continues it.
func TestBatchedLedgerMatchesREST(t *testing.T) {
	f := newFixture(t)
	data := query(t, f.env, f.readCredit, `{ companies { edges { node { id ledger(first: 2) { edges { node { id } } pageInfo { hasNextPage endCursor } } } } } }`)
	var node any
	for _, e := range at(t, data, "companies", "edges").([]any) {
		if at(t, e, "node", "id") == f.alpen.ID {
			node = at(t, e, "node")
		}
	}
	if node == nil {
		t.Fatalf("%s not listed: %v", f.alpen.ID, data)
	}
	var rest struct {
		Data       []credit.LedgerEntry `json:"data"`
		HasMore    bool                 `json:"has_more"`
		NextCursor string               `json:"next_cursor"`
	}
	f.env.Get(t, f.readCredit, "/v1/companies/"+f.alpen.ID+"/ledger?limit=2").WantStatus(t, http.StatusOK).Decode(t, &rest)
	for i, e := range rest.Data {
		if got := at(t, node, "ledger", "edges", i, "node", "id"); got != e.ID {
			t.Errorf("entry %d: %v, REST has %s", i, got, e.ID)
		}
	}
	if at(t, node, "ledger", "pageInfo", "endCursor") != rest.NextCursor || !rest.HasMore {
		t.Errorf("endCursor %v, REST next_cursor %q", at(t, node, "ledger", "pageInfo", "endCursor"), rest.NextCursor)
	}
	// The cursor continues the page, in GraphQL and in REST alike.
	next := query(t, f.env, f.readCredit, `query($id: ID!, $after: String) { company(id: $id) { ledger(first: 2, after: $after) { edges { node { id } } pageInfo { hasNextPage } } } }`,
		map[string]any{"id": f.alpen.ID, "after": rest.NextCursor})
	if got := at(t, next, "company", "ledger", "edges", 0, "node", "id"); got != f.entries[0].ID {
		t.Errorf("page 2 starts with %v, want the oldest entry %s", got, f.entries[0].ID)
	}
}

// TestBatchedLedgerPagesAtEveryEdge compares every company's batched first page with REST's
// for page sizes below, at and above its number of entries (3 for one, 0 for the other), so
// that has-more and the end cursor, which the batch derives from the sequence numbers
// instead of reading an extra entry, match at each edge.
func TestBatchedLedgerPagesAtEveryEdge(t *testing.T) {
	f := newFixture(t)
	for first := 1; first <= 4; first++ {
		data := query(t, f.env, f.readCredit, `query($first: Int!) { companies { edges { node { id ledger(first: $first) { edges { node { id } } pageInfo { hasNextPage endCursor } } } } } }`,
			map[string]any{"first": first})
		for _, e := range at(t, data, "companies", "edges").([]any) {
			node := at(t, e, "node")
			id := at(t, node, "id").(string)
			var rest struct {
				Data       []credit.LedgerEntry `json:"data"`
				HasMore    bool                 `json:"has_more"`
				NextCursor *string              `json:"next_cursor"`
			}
			f.env.Get(t, f.readCredit, fmt.Sprintf("/v1/companies/%s/ledger?limit=%d", id, first)).WantStatus(t, http.StatusOK).Decode(t, &rest)
			edges := at(t, node, "ledger", "edges").([]any)
			if len(edges) != len(rest.Data) {
				t.Fatalf("%s, first %d: %d entries, REST %d", id, first, len(edges), len(rest.Data))
			}
			for i, e := range rest.Data {
				if got := at(t, edges[i], "node", "id"); got != e.ID {
					t.Errorf("%s, first %d, entry %d: %v, REST has %s", id, first, i, got, e.ID)
				}
			}
			if got := at(t, node, "ledger", "pageInfo", "hasNextPage"); got != rest.HasMore {
				t.Errorf("%s, first %d: hasNextPage %v, REST has_more %v", id, first, got, rest.HasMore)
			}
			if end := at(t, node, "ledger", "pageInfo", "endCursor"); rest.NextCursor != nil && end != *rest.NextCursor {
				t.Errorf("%s, first %d: endCursor %v, REST next_cursor %s", id, first, end, *rest.NextCursor)
			}
		}
	}
}

// withoutAuthentication drops the statements that authenticate the request's key or record its use.
func withoutAuthentication(statements []string) []string {
	auth := touching(statements, "api_keys", "api_key_secrets", "key_changes")
	var out []string
	for _, s := range statements {
		if !slices.Contains(auth, s) {
			out = append(out, s)
		}
	}
	return out
}
