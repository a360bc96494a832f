package credit_test

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
	"github.com/creditd/creditd/tenant"
)

// orderings are the orderings of contract §6 (2026-11-27).
var orderings = []string{
	credit.OrderUpdatedAt, credit.OrderName, credit.OrderOutstanding,
	credit.OrderAvailableCredit, credit.OrderCreditLimit, credit.OrderUtilization,
}

// orderingFixture makes a store whose companies test every ordering's edges: ties, negative
// balances, zero limits, amounts of 15 integer digits, utilisations that differ only beyond
// a double's precision, names that differ in case and accents. It returns the key's context
// and the companies' IDs.
func orderingFixture(t *testing.T, env *credittest.ServiceEnv) (context.Context, []string) {
	t.Helper()
	st := env.MustStore(t, "Orderings", "EUR")
	companies := []struct{ name, limit, balance string }{
		{"Café Morgenrot", "300.00", "100.00"},
		{"cafe morgenrot", "3.00", "1.00"},                             // the same utilisation: 1/3
		{"Zeta Huge", "999999999999999.99", "333333333333333.34"},      // a hair above 1/3
		{"Zeta Huge Less", "999999999999999.99", "333333333333333.32"}, // a hair below
		{"Äpfel Bauer", "0", "50.00"},                                  // zero limit
		{"apfel bauer", "0", "0"},                                      // zero limit, nothing owed
		{"Brauhaus Kessler", "8000.00", "-250.00"},                     // a credit balance
		{"Nordlicht", "8000.00", "7999.99"},
		{"Straße Elf", "10.00", "9.99"},
		{"Seeblick", "5000.00", "5000.00"},
		{"Seeblick Zwei", "5000.00", "6000.00"}, // over the limit
		{"Alpenblick", "25000.00", "7150.50"},
		{"Ybbs", "25000.00", "7150.50"}, // ties on every figure with Alpenblick
	}
	var ids []string
	for _, c := range companies {
		co := env.MustCompany(t, st, c.name, c.limit)
		ids = append(ids, co.ID)
		if c.balance != "0" {
			env.MustRecord(t, credit.LedgerEntryInput{CompanyID: co.ID, Kind: credit.KindOpeningBalance, Amount: c.balance})
		}
		env.Clock.Advance(time.Millisecond)
	}
	return tenant.APIKey(context.Background(), st, "key_orderings", "orderings", []string{credit.ScopeReadCredit, credit.ScopeWriteCredit}), ids
}

// compareCompanies is the ordering's order of two companies from their figures as the API
// shows them, in exact arithmetic (the order the stored keys must give), without the ID.
func compareCompanies(field string, a, b credit.Company) int {
	dec := func(m credit.Money) decimal.Decimal { return decimal.RequireFromString(m.Amount) }
	switch field {
	case credit.OrderName:
		return strings.Compare(credit.NameKey(a.Name), credit.NameKey(b.Name))
	case credit.OrderOutstanding:
		return dec(a.Outstanding).Cmp(dec(b.Outstanding))
	case credit.OrderAvailableCredit:
		return dec(a.AvailableCredit).Cmp(dec(b.AvailableCredit))
	case credit.OrderCreditLimit:
		return dec(a.CreditLimit).Cmp(dec(b.CreditLimit))
	case credit.OrderUtilization:
		la, lb := dec(a.CreditLimit), dec(b.CreditLimit)
		switch {
		case la.IsZero() || lb.IsZero():
			return 0 // placed by sortedWant: last in both directions
		}
		// oa/la vs ob/lb, limits positive: oa·lb vs ob·la, exactly.
		return dec(a.Outstanding).Mul(lb).Cmp(dec(b.Outstanding).Mul(la))
	default:
		return a.UpdatedAt.Time.Compare(b.UpdatedAt.Time)
	}
}

// sortedWant is the companies in the ordering, ties by ID in the same direction, and a zero
// limit last under utilisation whatever the direction.
func sortedWant(companies []credit.Company, field string, desc bool) []string {
	s := slices.Clone(companies)
	slices.SortStableFunc(s, func(a, b credit.Company) int {
		if field == credit.OrderUtilization {
			za, zb := a.CreditLimit.Amount == "0.00", b.CreditLimit.Amount == "0.00"
			if za != zb {
				if za {
					return 1
				}
				return -1
			}
		}
		c := cmp.Or(compareCompanies(field, a, b), strings.Compare(a.ID, b.ID))
		if desc {
			return -c
		}
		return c
	})
	var out []string
	for _, c := range s {
		out = append(out, c.ID)
	}
	return out
}

// pageAll pages through the list, calling between each page, and returns the companies in the
// order served.
func pageAll(t *testing.T, env *credittest.ServiceEnv, ctx context.Context, p credit.CompanyListParams, between func()) []credit.Company {
	t.Helper()
	limit := 4
	p.Limit = &limit
	var out []credit.Company
	for range 100 {
		page, err := env.Service.Companies.List(ctx, p)
		if err != nil {
			t.Fatalf("%s: %v", p.Order, err)
		}
		out = append(out, page.Data...)
		if !page.HasMore {
			return out
		}
		p.Cursor = *page.NextCursor
		if between != nil {
			between()
		}
	}
	t.Fatal("more than 100 pages")
	return nil
}

// TestEveryOrderingIsExact pages every ordering in both directions and wants the order that
// exact arithmetic on the figures gives: utilisations that a double cannot tell apart, a
// negative balance, ties broken by ID, a zero limit last in both directions, names ordered
// without case and accents.
func TestEveryOrderingIsExact(t *testing.T) {
	t.Parallel()
	env := credittest.NewService(t)
	ctx, ids := orderingFixture(t, env)
	all := pageAll(t, env, ctx, credit.CompanyListParams{}, nil)
	if len(all) != len(ids) {
		t.Fatalf("%d companies, want %d", len(all), len(ids))
	}
	for _, field := range orderings {
		for _, desc := range []bool{false, true} {
			o := credit.CompanyOrder{Field: field, Desc: desc}
			got := pageAll(t, env, ctx, credit.CompanyListParams{Order: o}, nil)
			var gotIDs []string
			for _, c := range got {
				gotIDs = append(gotIDs, c.ID)
			}
			if want := sortedWant(all, field, desc); !slices.Equal(gotIDs, want) {
				t.Errorf("order=%s:\n got %v\nwant %v", o, names(got, gotIDs), names(all, want))
			}
		}
	}
}

// names are the companies' names in the order of ids, for messages.
func names(companies []credit.Company, ids []string) []string {
	byID := map[string]string{}
	for _, c := range companies {
		byID[c.ID] = c.Name
	}
	var out []string
	for _, id := range ids {
		out = append(out, byID[id])
	}
	return out
}

// TestPagingEveryOrderingWhileWritesHappen pages every ordering in both directions, writing to
// some companies (adjustments and limit changes, which move every figure's key and updated_at)
// between pages: each company that was not written to is served exactly once.
func TestPagingEveryOrderingWhileWritesHappen(t *testing.T) {
	t.Parallel()
	env := credittest.NewService(t)
	ctx, ids := orderingFixture(t, env)
	movers := ids[len(ids)-5:]
	step := 0
	write := func() {
		step++
		mover := movers[step%len(movers)]
		env.Clock.Advance(time.Millisecond)
		note := fmt.Sprintf("move %d", step)
		amount := "-12345.67"
		if step%2 == 0 {
			amount = "23456.78"
		}
		if _, err := env.Service.Ledger.CreateAdjustment(ctx, credit.AdjustmentInput{CompanyID: mover, Amount: credit.Amount(amount), Note: &note}); err != nil {
			t.Fatal(err)
		}
		limit := fmt.Sprintf("%d.00", 100+step*997%20000)
		if _, err := env.Service.Companies.SetCreditLimit(ctx, credit.CreditLimitInput{CompanyID: movers[(step+2)%len(movers)], Amount: credit.Amount(limit)}); err != nil {
			t.Fatal(err)
		}
	}
	moved := map[string]bool{}
	for _, id := range movers {
		moved[id] = true
	}
	for _, field := range orderings {
		for _, desc := range []bool{false, true} {
			o := credit.CompanyOrder{Field: field, Desc: desc}
			served := map[string]int{}
			for _, c := range pageAll(t, env, ctx, credit.CompanyListParams{Order: o}, write) {
				served[c.ID]++
			}
			for _, id := range ids {
				if !moved[id] && served[id] != 1 {
					t.Errorf("order=%s: company %s, never written to, served %d times", o, id, served[id])
				}
			}
		}
	}
	if step < 12 {
		t.Fatalf("only %d writes between pages", step)
	}
}

// TestOrderAndSearchParameters: an unknown ordering, a cursor of another ordering or search,
// and a search of the wrong length are invalid_parameter; the search ignores case and accents
// and combines with the status filter and an ordering.
func TestOrderAndSearchParameters(t *testing.T) {
	t.Parallel()
	env := credittest.NewService(t)
	ctx, ids := orderingFixture(t, env)
	for _, bad := range []string{"", "-", "balance", "outstanding-", "--name", "Name"} {
		if _, err := credit.ParseCompanyOrder(bad); credit.CodeOf(err) != credit.CodeInvalidParameter || paramOf(err) != "order" {
			t.Errorf("order=%q: %v", bad, err)
		}
	}
	limit := 2
	first, err := env.Service.Companies.List(ctx, credit.CompanyListParams{ListParams: credit.ListParams{Limit: &limit}, Order: credit.CompanyOrder{Field: credit.OrderOutstanding, Desc: true}})
	if err != nil || first.NextCursor == nil {
		t.Fatalf("first page: %v", err)
	}
	for _, other := range []credit.CompanyListParams{
		{Order: credit.CompanyOrder{Field: credit.OrderOutstanding}},
		{Order: credit.CompanyOrder{Field: credit.OrderAvailableCredit, Desc: true}},
		{},
		{Order: credit.CompanyOrder{Field: credit.OrderOutstanding, Desc: true}, Search: ptr("e")},
	} {
		other.ListParams = credit.ListParams{Cursor: *first.NextCursor}
		if _, err := env.Service.Companies.List(ctx, other); credit.CodeOf(err) != credit.CodeInvalidParameter || paramOf(err) != "cursor" {
			t.Errorf("cursor of -outstanding used with order=%s search=%v: %v", other.Order, other.Search, err)
		}
	}
	for _, q := range []string{"", strings.Repeat("é", 101)} {
		if _, err := env.Service.Companies.List(ctx, credit.CompanyListParams{Search: &q}); credit.CodeOf(err) != credit.CodeInvalidParameter || paramOf(err) != "q" {
			t.Errorf("q of %d characters: %v", len([]rune(q)), err)
		}
	}
	search := func(q string, p credit.CompanyListParams) []string {
		t.Helper()
		p.Search = &q
		var out []string
		for _, c := range pageAll(t, env, ctx, p, nil) {
			out = append(out, c.Name)
		}
		return out
	}
	for q, want := range map[string][]string{
		"cafe":        {"Café Morgenrot", "cafe morgenrot"},
		"CAFÉ MORG":   {"Café Morgenrot", "cafe morgenrot"},
		"apfel":       {"Äpfel Bauer", "apfel bauer"},
		"strasse":     {"Straße Elf"},
		"STRAẞE":      {"Straße Elf"},
		"zeta huge l": {"Zeta Huge Less"},
		"100%":        nil, // LIKE's wildcards are text
		"_":           nil,
	} {
		got := search(q, credit.CompanyListParams{Order: credit.CompanyOrder{Field: credit.OrderName}})
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("q=%q: %q, want %q", q, got, want)
		}
	}
	// Combined with an ordering and the status filter.
	note := "review"
	if _, err := env.Service.Companies.PlaceHold(ctx, credit.HoldInput{CompanyID: ids[0], Note: &note}); err != nil {
		t.Fatal(err)
	}
	if got := search("MORGENROT", credit.CompanyListParams{Order: credit.CompanyOrder{Field: credit.OrderOutstanding, Desc: true}}); !slices.Equal(got, []string{"Café Morgenrot", "cafe morgenrot"}) {
		t.Errorf("by outstanding, descending: %q", got)
	}
	if got := search("morgenrot", credit.CompanyListParams{Status: credit.StatusApproved}); !slices.Equal(got, []string{"cafe morgenrot"}) {
		t.Errorf("approved only: %q", got)
	}
}

func ptr[T any](v T) *T { return &v }

// paramOf is the param of an *credit.Error in err's chain.
func paramOf(err error) string {
	var e *credit.Error
	if errors.As(err, &e) {
		return e.Param
	}
	return ""
}

// TestOrderKeysOrderExactly checks the sort keys against exact comparison on values a double
// cannot tell apart, negative and positive, and the clamping beyond their range.
func TestOrderKeysOrderExactly(t *testing.T) {
	values := []string{"-1000000000000000000000.001", "-999999999999999.99", "-2", "-1.999", "-0.001", "0", "0.001",
		"0.01", "1", "9", "10", "10.5", "999999999999999.99", "1000000000000000"}
	keys := make([]string, len(values))
	for i, v := range values {
		keys[i] = credit.OrderKeysOf("", decimal.RequireFromString(v), decimal.Zero, 0, "EUR").CreditLimit
		if i > 0 && keys[i-1] >= keys[i] {
			t.Errorf("key of %s (%s) not below key of %s (%s)", values[i-1], keys[i-1], v, keys[i])
		}
	}
	util := func(o, l string) string {
		return credit.OrderKeysOf("", decimal.RequireFromString(l), decimal.RequireFromString(o), 5, "EUR").Utilization
	}
	third, below, above := util("1.00", "3.00"), util("333333333333333.32", "999999999999999.99"), util("333333333333333.34", "999999999999999.99")
	if !(below < third && third < above) || util("333333333333333.33", "999999999999999.99") != third {
		t.Errorf("utilisation keys out of order: %s %s %s", below, third, above)
	}
	if util("-5", "10") >= util("0", "10") || util("5", "0") != "" {
		t.Errorf("negative or zero-limit utilisation keys wrong")
	}
}
