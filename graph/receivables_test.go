package graph_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
	"github.com/creditd/creditd/ent"
	"github.com/creditd/creditd/ids"
)

const receivablesQuery = `{ receivables {
  aging { current { amount currency } days1To30 { amount } days31To60 { amount } days61To90 { amount } over90 { amount } total { amount } }
  outstanding { amount currency } overdue { amount } companiesOverdue } }`

const companyReceivablesQuery = `query($n: Int!) { companies(first: $n) { edges { node { id name
  aging { current { amount } days1To30 { amount } days31To60 { amount } days61To90 { amount } over90 { amount } total { amount } }
  invoices(first: 3, status: OPEN) {
    edges { cursor node { id platformOrderGid amount { amount } openAmount { amount currency } issuedAt dueAt status daysOverdue paidAt } }
    pageInfo { hasNextPage endCursor }
  } } } } }`

// agingOf reads an Aging object of a response as the strings credittest.AgingStrings gives.
func agingOf(tb testing.TB, v any) []string {
	tb.Helper()
	var out []string
	for _, f := range []string{"current", "days1To30", "days31To60", "days61To90", "over90", "total"} {
		out = append(out, at(tb, v, f, "amount").(string))
	}
	return out
}

// TestReceivablesMatchLedger checks Query.receivables, Company.aging and Company.invoices on a
// seeded store (every bucket, partly paid, refunded and cancelled invoices) against a replay of
// the ledger, and node(id:) on an invoice.
func TestReceivablesMatchLedger(t *testing.T) {
	env := credittest.New(t)
	seed := env.SeedReceivables(t)
	env.Clock.Advance(3 * 24 * time.Hour)
	now := env.Clock.Now()
	key := env.MustKey(t, seed.Store, "dash", credit.ScopeReadCredit)

	var store credittest.RecomputedAging
	overdue := 0
	replays := map[string][]credittest.RecomputedInvoice{}
	for _, c := range seed.Companies {
		replays[c.ID] = env.ReplayInvoices(t, c.ID)
		a := credittest.AgeInvoices(replays[c.ID], now)
		for i := range a.Buckets {
			store.Buckets[i] = store.Buckets[i].Add(a.Buckets[i])
		}
		store.Total, store.Overdue = store.Total.Add(a.Total), store.Overdue.Add(a.Overdue)
		if a.Overdue.IsPositive() {
			overdue++
		}
	}
	data := query(t, env, key, receivablesQuery)
	r := at(t, data, "receivables")
	if got := agingOf(t, at(t, r, "aging")); !slices.Equal(got, store.Strings()) {
		t.Errorf("receivables aging = %v, replay says %v", got, store.Strings())
	}
	if got := at(t, r, "overdue", "amount"); got != store.Overdue.StringFixed(2) {
		t.Errorf("overdue = %v, want %s", got, store.Overdue.StringFixed(2))
	}
	if got := at(t, r, "companiesOverdue"); got != float64(overdue) {
		t.Errorf("companiesOverdue = %v, want %d", got, overdue)
	}

	data = query(t, env, key, companyReceivablesQuery, map[string]any{"n": 50})
	for _, e := range at(t, data, "companies", "edges").([]any) {
		node := at(t, e, "node")
		id := at(t, node, "id").(string)
		want := credittest.AgeInvoices(replays[id], now)
		if got := agingOf(t, at(t, node, "aging")); !slices.Equal(got, want.Strings()) {
			t.Errorf("%s aging = %v, replay says %v", at(t, node, "name"), got, want.Strings())
		}
		var open []credittest.RecomputedInvoice
		for _, inv := range replays[id] {
			if inv.Open.IsPositive() {
				open = append(open, inv)
			}
		}
		edges := at(t, node, "invoices", "edges").([]any)
		if len(edges) != min(3, len(open)) || at(t, node, "invoices", "pageInfo", "hasNextPage") != (len(open) > 3) {
			t.Fatalf("%s: %d open invoices on the first page, replay has %d", at(t, node, "name"), len(edges), len(open))
		}
		for i, e := range edges {
			inv := at(t, e, "node")
			if at(t, inv, "platformOrderGid") != open[i].OrderGID || at(t, inv, "openAmount", "amount") != open[i].Open.StringFixed(2) ||
				at(t, inv, "status") != "OPEN" || at(t, inv, "dueAt") != credit.At(open[i].Due).String() {
				t.Errorf("invoice %v, replay says %+v", inv, open[i])
			}
			again := query(t, env, key, `query($id: ID!) { node(id: $id) { ... on Invoice { id openAmount { amount } } } }`, map[string]any{"id": at(t, inv, "id")})
			if at(t, again, "node", "openAmount", "amount") != at(t, inv, "openAmount", "amount") {
				t.Errorf("node(%v) = %v", at(t, inv, "id"), again)
			}
		}
	}

	// The cancelled invoice, and its status filter.
	data = query(t, env, key, `query($id: ID!) { company(id: $id) { invoices(status: CANCELLED) { edges { node { platformOrderGid status openAmount { amount } } } } } }`,
		map[string]any{"id": seed.CancelledCompany})
	edges := at(t, data, "company", "invoices", "edges").([]any)
	if len(edges) != 1 || at(t, edges[0], "node", "platformOrderGid") != seed.CancelledOrder || at(t, edges[0], "node", "status") != "CANCELLED" {
		t.Errorf("cancelled invoices = %v", edges)
	}

	// Without read_credit: an error, no figures.
	other := env.MustKey(t, seed.Store, "apps", credit.ScopeReadApplications)
	res := doGQL(t, env, gqlRequest{Key: other, Query: receivablesQuery})
	res.wantCodes(t, "insufficient_scope")
}

// TestReceivablesQueryCount checks that Query.receivables runs the same SQL statements for a
// store of 5 companies as for 5,000, and that a page of companies with their aging and open
// invoices runs as many for 5 companies as for 50.
func TestReceivablesQueryCount(t *testing.T) {
	log := &sqlLog{}
	env := credittest.New(t, log.Options())
	store := env.MustStore(t, "Receivables", "EUR")
	key := env.MustKey(t, store, "dash", credit.ScopeReadCredit)
	statements := map[int][]string{}
	created := 0
	total := decimal.Zero
	for _, n := range []int{5, 5000} {
		total = total.Add(bulkCompanies(t, env, store, created, n))
		created = n
		query(t, env, key, receivablesQuery)
		log.Reset()
		data := query(t, env, key, receivablesQuery)
		statements[n] = withoutAuthentication(log.Snapshot())
		if got := at(t, data, "receivables", "aging", "total", "amount"); got != total.StringFixed(2) {
			t.Fatalf("%d companies: total %v, want %s", n, got, total.StringFixed(2))
		}
	}
	if len(statements[5]) != len(statements[5000]) || len(statements[5000]) > 2 {
		t.Fatalf("receivables: %d SQL statements for 5 companies, %d for 5,000 (want the same, at most 2)\n5:\n%s\n5000:\n%s",
			len(statements[5]), len(statements[5000]), strings.Join(statements[5], "\n"), strings.Join(statements[5000], "\n"))
	}

	pages := map[int][]string{}
	for _, n := range []int{5, 50} {
		query(t, env, key, companyReceivablesQuery, map[string]any{"n": n})
		log.Reset()
		data := query(t, env, key, companyReceivablesQuery, map[string]any{"n": n})
		pages[n] = withoutAuthentication(log.Snapshot())
		edges := at(t, data, "companies", "edges").([]any)
		if len(edges) != n || len(at(t, edges[n-1], "node", "invoices", "edges").([]any)) != 3 {
			t.Fatalf("%d companies: %d edges, or not 3 open invoices", n, len(edges))
		}
	}
	if len(pages[5]) != len(pages[50]) {
		t.Fatalf("companies with aging and invoices: %d SQL statements for 5 companies, %d for 50\n5:\n%s\n50:\n%s",
			len(pages[5]), len(pages[50]), strings.Join(pages[5], "\n"), strings.Join(pages[50], "\n"))
	}
	t.Logf("receivables: %d statements for 5 and 5,000 companies; a page with aging and invoices: %d for 5 and 50", len(statements[5000]), len(pages[50]))
}

// bulkCompanies adds companies from..to-1 to store, each with 4 open invoices (one due in 10
// days, three overdue), written in bulk behind the API's back: creating 5,000 companies through
// the domain would take most of the test's time. It returns the open amount added.
func bulkCompanies(tb testing.TB, env *credittest.Env, store string, from, to int) decimal.Decimal {
	tb.Helper()
	ctx := viewerOf(store)
	client := env.DB.Ent()
	now := env.Clock.Now()
	total := decimal.Zero
	for start := from; start < to; start += 250 {
		end := min(start+250, to)
		var companies []*ent.CompanyCreate
		var invoices []*ent.InvoiceCreate
		for i := start; i < end; i++ {
			id := ids.New("co")
			outstanding := decimal.Zero
			for j := 0; j < 4; j++ {
				amount := decimal.New(int64(1000+i*7+j), -2)
				outstanding = outstanding.Add(amount)
				invoices = append(invoices, client.Invoice.Create().SetStoreID(store).SetCompanyID(id).
					SetLedgerEntryID(ids.New("le")).SetSeq(int64(j+1)).
					SetPlatformOrderGid(fmt.Sprintf("gid://platform/Order/%d", i*10+j)).
					SetAmount(amount).SetOpenAmount(amount).SetOpen(true).
					SetDueAt(now.Add(time.Duration(10-35*j)*24*time.Hour)))
			}
			total = total.Add(outstanding)
			companies = append(companies, client.Company.Create().SetID(id).SetStoreID(store).
				SetName(fmt.Sprintf("Bulk %05d", i)).SetPaymentTermsDays(30).SetCreditLimit(decimal.NewFromInt(100000)).
				SetOutstanding(outstanding).SetUnappliedCredit(decimal.Zero).SetLedgerSeq(4).
				SetCreatedAt(now).SetUpdatedAt(now))
		}
		if err := client.Company.CreateBulk(companies...).Exec(ctx); err != nil {
			tb.Fatal(err)
		}
		if err := client.Invoice.CreateBulk(invoices...).Exec(ctx); err != nil {
			tb.Fatal(err)
		}
	}
	return total
}
