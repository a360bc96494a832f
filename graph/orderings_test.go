package graph_test

import (
	"fmt"
	"net/http"
	"slices"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
)

// TestTenLargestBalances: companies(orderBy: {field: OUTSTANDING, direction: DESC}, first: 10)
// and GET /v1/companies?order=-outstanding&limit=10 both return the ten largest balances,
// largest first, with each entry's balanceAfter beside them; a search finds an accented name;
// the arguments' errors name the GraphQL arguments (contract §6, 2026-11-27).
func TestTenLargestBalances(t *testing.T) {
	t.Parallel()
	env := credittest.New(t)
	st := env.MustStore(t, "Dashboard", "EUR")
	key := env.MustKey(t, st, "dash", credit.ScopeReadCredit)
	balances := map[string]decimal.Decimal{}
	for i := range 25 {
		name := fmt.Sprintf("Buyer %02d", i)
		if i == 7 {
			name = "Café Morgenrot"
		}
		c := env.MustCompany(t, st, name, "100000")
		// Balances that sort differently as text ("9" > "10") and as numbers, and one negative.
		amount := decimal.New(int64((i*37)%25)*1000+int64(i), -1)
		if i == 3 {
			amount = decimal.RequireFromString("-500")
		}
		if !amount.IsZero() {
			env.MustRecord(t, credit.LedgerEntryInput{CompanyID: c.ID, Kind: credit.KindOpeningBalance, Amount: amount.String()})
		}
		balances[c.ID] = amount
	}
	var want []string
	for id := range balances {
		want = append(want, id)
	}
	slices.SortFunc(want, func(a, b string) int {
		if c := balances[b].Cmp(balances[a]); c != 0 {
			return c
		}
		return -compareStrings(a, b)
	})
	want = want[:10]

	data := query(t, env, key, `{ companies(orderBy: {field: OUTSTANDING, direction: DESC}, first: 10) {
		edges { node { id outstanding { amount } ledger(first: 1) { edges { node { balanceAfter { amount } } } } } } } }`)
	var got []string
	for _, e := range data["companies"].(map[string]any)["edges"].([]any) {
		node := e.(map[string]any)["node"].(map[string]any)
		got = append(got, node["id"].(string))
		outstanding := node["outstanding"].(map[string]any)["amount"]
		if !balances[node["id"].(string)].Equal(decimal.RequireFromString(outstanding.(string))) {
			t.Errorf("%s outstanding %v", node["id"], outstanding)
		}
		if ledger := node["ledger"].(map[string]any)["edges"].([]any); len(ledger) > 0 {
			after := ledger[0].(map[string]any)["node"].(map[string]any)["balanceAfter"].(map[string]any)["amount"]
			if after != outstanding {
				t.Errorf("%s: newest entry's balanceAfter %v, outstanding %v", node["id"], after, outstanding)
			}
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("GraphQL: %v, want %v", got, want)
	}

	resp := env.Get(t, key, "/v1/companies?order=-outstanding&limit=10")
	var page struct{ Data []credit.Company }
	resp.Decode(t, &page)
	got = nil
	for _, c := range page.Data {
		got = append(got, c.ID)
	}
	if resp.Status != http.StatusOK || !slices.Equal(got, want) {
		t.Errorf("REST: %d %v, want %v", resp.Status, got, want)
	}

	// The search, in both transports.
	data = query(t, env, key, `{ companies(search: "CAFE", orderBy: {field: NAME}) { edges { node { name } } } }`)
	if edges := data["companies"].(map[string]any)["edges"].([]any); len(edges) != 1 || edges[0].(map[string]any)["node"].(map[string]any)["name"] != "Café Morgenrot" {
		t.Errorf("GraphQL search: %v", edges)
	}
	resp = env.Get(t, key, "/v1/companies?q=cafe&order=-utilization")
	resp.Decode(t, &page)
	if resp.Status != http.StatusOK || len(page.Data) != 1 || page.Data[0].Name != "Café Morgenrot" {
		t.Errorf("REST search: %d %s", resp.Status, resp.Body)
	}

	// Errors: REST's params, GraphQL's arguments.
	for path, param := range map[string]string{
		"/v1/companies?order=balance":                                "order",
		"/v1/companies?order=":                                       "order",
		"/v1/companies?q=":                                           "q",
		"/v1/companies?q=" + longSearch:                              "q",
		"/v1/companies?order=name&cursor=" + restCursor(t, env, key): "cursor",
	} {
		resp := env.Get(t, key, path)
		var e struct{ Error struct{ Code, Param string } }
		resp.Decode(t, &e)
		if resp.Status != http.StatusBadRequest || e.Error.Code != "invalid_parameter" || e.Error.Param != param {
			t.Errorf("%s: %d %s", path, resp.Status, resp.Body)
		}
	}
	res := doGQL(t, env, gqlRequest{Key: key, Query: `{ companies(search: "") { edges { node { id } } } }`})
	if res.HTTP.Status != http.StatusBadRequest || len(res.Errors) != 1 || res.Errors[0].Extensions.Param != "search" {
		t.Errorf("empty search: %d %s", res.HTTP.Status, res.HTTP.Body)
	}
	res = doGQL(t, env, gqlRequest{Key: key, Query: `{ companies(orderBy: {field: SIZE}) { edges { node { id } } } }`})
	if res.HTTP.Status != http.StatusBadRequest || len(res.Errors) == 0 {
		t.Errorf("unknown field: %d %s", res.HTTP.Status, res.HTTP.Body)
	}
}

// longSearch is a search of 101 characters.
var longSearch = fmt.Sprintf("%0101d", 0)

// restCursor is the next cursor of the first page of -outstanding.
func restCursor(t *testing.T, env *credittest.Env, key string) string {
	t.Helper()
	resp := env.Get(t, key, "/v1/companies?order=-outstanding&limit=2")
	var page struct {
		NextCursor string `json:"next_cursor"`
	}
	resp.Decode(t, &page)
	return page.NextCursor
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
