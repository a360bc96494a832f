package console_test

import (
	"encoding/json"
	"html"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
)

// figures are a company's or the store's reconciling amounts: aged (open invoices), not
// invoiced, outstanding.
type figures struct{ Aged, NotInvoiced, Outstanding decimal.Decimal }

func (f figures) String() string {
	return f.Aged.StringFixed(2) + " + " + f.NotInvoiced.StringFixed(2) + " = " + f.Outstanding.StringFixed(2)
}

func (f figures) equal(g figures) bool {
	return f.Aged.Equal(g.Aged) && f.NotInvoiced.Equal(g.NotInvoiced) && f.Outstanding.Equal(g.Outstanding)
}

// TestReceivablesReconcile checks amended §15 on a store with opening balances (positive and
// negative), adjustments, partial and unallocated payments and a credit balance: for the store
// and every company, the page, both CSVs and GraphQL show the open invoices, what is not
// invoiced and the outstanding balance that a replay of the ledger gives, and aged + not
// invoiced = outstanding.
func TestReceivablesReconcile(t *testing.T) {
	e := newConsole(t)
	seed := e.SeedReconcile(t)
	e.MustStaff(t, seed.Store, "Rita Receivable", "rita@example.com", password)
	b := e.browser(t)
	b.mustSignIn("rita@example.com", password)
	now := e.Clock.Now()

	// What the ledger says, replayed the long way.
	want := map[string]figures{}
	var store figures
	for _, c := range seed.Companies {
		f := figures{
			Aged:        credittest.AgeInvoices(e.ReplayInvoices(t, c.ID), now).Total,
			NotInvoiced: e.ReplayNotInvoiced(t, c.ID),
			Outstanding: e.LedgerSum(t, c.ID),
		}
		if !f.Aged.Add(f.NotInvoiced).Equal(f.Outstanding) {
			t.Fatalf("the replay of %s does not reconcile: %s", c.Name, f)
		}
		want[c.ID] = f
		store = figures{store.Aged.Add(f.Aged), store.NotInvoiced.Add(f.NotInvoiced), store.Outstanding.Add(f.Outstanding)}
	}
	// The seed has something of each kind on no invoice, both signs.
	if fjord, gale := want[seed.Companies[5].ID], want[seed.Companies[6].ID]; !fjord.NotInvoiced.IsPositive() || !gale.Outstanding.IsNegative() {
		t.Fatalf("the seed lacks an opening balance or a credit balance: Fjord %s, Gale %s", fjord, gale)
	}
	check := func(where, who string, got, want figures) {
		t.Helper()
		if !got.equal(want) {
			t.Errorf("%s, %s: %s; the ledger says %s", where, who, got, want)
		}
		if !got.Aged.Add(got.NotInvoiced).Equal(got.Outstanding) {
			t.Errorf("%s, %s does not reconcile: %s", where, who, got)
		}
	}

	// The page: the store's totals and a line per company.
	page := b.get("/receivables").wantStatus(t, http.StatusOK)
	check("page", "store", figures{
		Aged:        pageAmount(t, page.Body, `id="total-open">`),
		NotInvoiced: pageAmount(t, page.Body, `id="total-not-invoiced">`),
		Outstanding: pageAmount(t, page.Body, `id="total-outstanding">`),
	}, store)
	lines := pageLines(t, page.Body)
	for id, w := range want {
		cells, ok := lines[id]
		if !ok {
			if !w.Outstanding.IsZero() || !w.Aged.IsZero() {
				t.Errorf("page: company %s is missing: %s", id, w)
			}
			continue
		}
		// Current … over 90, overdue, open invoices, not invoiced, outstanding.
		check("page", id, figures{cells[6], cells[7], cells[8]}, w)
	}

	// The CSVs, with , and with ;.
	for _, c := range []struct {
		query string
		sep   rune
	}{{"", ','}, {"&sep=semicolon", ';'}} {
		rows := readCSV(t, b, "/receivables?format=csv"+c.query, c.sep)
		seen := 0
		// With ; the amounts have a decimal comma, as such spreadsheets want (2950,00).
		number := func(s string) decimal.Decimal {
			if c.sep == ';' {
				if strings.Contains(s, ".") {
					t.Errorf("CSV%s amount %q, want a decimal comma", c.query, s)
				}
				s = strings.Replace(s, ",", ".", 1)
			}
			return decimal.RequireFromString(s)
		}
		for _, row := range rows[1:] {
			got := figures{number(row[9]), number(row[10]), number(row[11])}
			if row[12] != credit.At(now).String() {
				t.Errorf("CSV as_of %q, want %s", row[12], credit.At(now))
			}
			if row[0] == "" {
				check("CSV"+c.query, "totals", got, store)
				continue
			}
			seen++
			check("CSV"+c.query, row[1], got, want[row[0]])
		}
		if seen != len(lines) {
			t.Errorf("CSV%s has %d companies, the page %d", c.query, seen, len(lines))
		}
	}

	// GraphQL.
	key := e.MustKey(t, seed.Store, "dash", credit.ScopeReadCredit)
	var out struct {
		Data struct {
			Receivables struct {
				Aging                    struct{ Total credit.Money }
				NotInvoiced, Outstanding credit.Money
			}
			Companies struct {
				Edges []struct {
					Node struct {
						ID                       string
						Aging                    struct{ Total credit.Money }
						NotInvoiced, Outstanding credit.Money
					}
				}
			}
		}
		Errors []any
	}
	res := e.Do(t, credittest.Request{Method: http.MethodPost, Path: "/graphql", Key: key, Body: map[string]any{"query": `{
	  receivables { aging { total { amount } } notInvoiced { amount } outstanding { amount } }
	  companies(first: 50) { edges { node { id aging { total { amount } } notInvoiced { amount } outstanding { amount } } } } }`}})
	if err := json.Unmarshal(res.WantStatus(t, http.StatusOK).Body, &out); err != nil || len(out.Errors) > 0 {
		t.Fatalf("GraphQL: %v %s", err, res.Body)
	}
	m := func(v credit.Money) decimal.Decimal { return decimal.RequireFromString(v.Amount) }
	r := out.Data.Receivables
	check("GraphQL", "receivables", figures{m(r.Aging.Total), m(r.NotInvoiced), m(r.Outstanding)}, store)
	if len(out.Data.Companies.Edges) != len(seed.Companies) {
		t.Fatalf("GraphQL lists %d companies, the seed has %d", len(out.Data.Companies.Edges), len(seed.Companies))
	}
	for _, edge := range out.Data.Companies.Edges {
		n := edge.Node
		check("GraphQL", n.ID, figures{m(n.Aging.Total), m(n.NotInvoiced), m(n.Outstanding)}, want[n.ID])
	}
}

// pageAmount reads the amount that follows marker on a page ("1,234.56 EUR", "−25.05").
func pageAmount(t *testing.T, body, marker string) decimal.Decimal {
	t.Helper()
	i := strings.Index(body, marker)
	if i < 0 {
		t.Fatalf("the page lacks %q", marker)
	}
	rest := body[i+len(marker):]
	return parseShown(t, rest[:strings.Index(rest, "<")])
}

// parseShown reads an amount as the console shows it.
func parseShown(t *testing.T, s string) decimal.Decimal {
	t.Helper()
	s = strings.TrimSpace(html.UnescapeString(s))
	s = strings.TrimSuffix(s, " EUR")
	s = strings.ReplaceAll(strings.ReplaceAll(s, ",", ""), "−", "-")
	d, err := decimal.NewFromString(s)
	if err != nil {
		t.Fatalf("amount %q: %v", s, err)
	}
	return d
}

var (
	lineRow  = regexp.MustCompile(`(?s)<tr data-company="([^"]+)">(.*?)</tr>`)
	lineCell = regexp.MustCompile(`<td class="num">([^<]*)</td>`)
)

// pageLines reads the receivables page's company lines: their amounts by company ID.
func pageLines(t *testing.T, body string) map[string][]decimal.Decimal {
	t.Helper()
	out := map[string][]decimal.Decimal{}
	for _, m := range lineRow.FindAllStringSubmatch(body, -1) {
		for _, c := range lineCell.FindAllStringSubmatch(m[2], -1) {
			out[m[1]] = append(out[m[1]], parseShown(t, c[1]))
		}
		if len(out[m[1]]) != 9 {
			t.Fatalf("line of %s has %d amounts: %s", m[1], len(out[m[1]]), m[2])
		}
	}
	return out
}
