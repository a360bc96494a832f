package console_test

import (
	"encoding/csv"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/creditd/creditd/console"
	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
)

// TestReceivablesPage checks the receivables page and its CSV against a replay of the ledger on
// a seeded store (every bucket, partly paid, refunded and cancelled invoices), its sorting and
// overdue filter, and that a payment entered as a positive amount on a company's page moves
// the aging.
func TestReceivablesPage(t *testing.T) {
	e := newConsole(t)
	seed := e.SeedReceivables(t)
	e.MustStaff(t, seed.Store, "Rita Receivable", "rita@example.com", password)
	b := e.browser(t)
	b.mustSignIn("rita@example.com", password)
	now := e.Clock.Now()

	want := map[string]credittest.RecomputedAging{}
	var store credittest.RecomputedAging
	for _, c := range seed.Companies {
		a := credittest.AgeInvoices(e.ReplayInvoices(t, c.ID), now)
		want[c.Name] = a
		for i := range a.Buckets {
			store.Buckets[i] = store.Buckets[i].Add(a.Buckets[i])
		}
		store.Total, store.Overdue = store.Total.Add(a.Total), store.Overdue.Add(a.Overdue)
	}
	money := func(d decimal.Decimal) string {
		return console.FormatMoney(credit.NewMoney(d, "EUR"))
	}
	amount := func(d decimal.Decimal) string {
		return strings.TrimSuffix(money(d), " EUR")
	}
	cells := func(a credittest.RecomputedAging) string {
		var out []string
		for _, d := range a.Buckets {
			out = append(out, `<td class="num">`+amount(d)+`</td>`)
		}
		return strings.Join(append(out, `<td class="num">`+amount(a.Total)+`</td>`), "")
	}
	page := b.get("/receivables").wantStatus(t, http.StatusOK)
	page.wantText(t, "<tbody><tr>"+cells(store)+"</tr></tbody>", "Overdue</dt><dd class=\"strong\">"+money(store.Overdue))

	// The CSV: one line per company that owes or is owed something, the replay's figures.
	rows := readCSV(t, b, "/receivables?format=csv", ',')
	seen := 0
	for _, row := range rows[1 : len(rows)-1] {
		a, ok := want[row[1]]
		if !ok {
			t.Fatalf("CSV line of an unknown company: %v", row)
		}
		seen++
		got := append(slices.Clone(row[3:8]), row[9])
		if !slices.Equal(got, a.Strings()) || row[8] != a.Overdue.StringFixed(2) {
			t.Errorf("CSV line %v, replay says %v overdue %s", row, a.Strings(), a.Overdue.StringFixed(2))
		}
	}
	owing := 0
	for _, c := range seed.Companies {
		if !e.LedgerSum(t, c.ID).IsZero() || want[c.Name].Total.IsPositive() {
			owing++
		}
	}
	if seen != owing {
		t.Errorf("CSV has %d companies, %d owe or are owed something", seen, owing)
	}

	// Sorting and the overdue filter.
	byName := b.get("/receivables?sort=name&order=asc").Body
	if strings.Index(byName, ">Acme<") > strings.Index(byName, ">Bolt<") {
		t.Error("sort by name ascending puts Bolt before Acme")
	}
	byName = b.get("/receivables?sort=name&order=desc").Body
	if strings.Index(byName, ">Acme<") < strings.Index(byName, ">Bolt<") {
		t.Error("sort by name descending puts Acme before Bolt")
	}
	b.get("/receivables?overdue=1").wantText(t, ">Acme<", ">Bolt<").wantNoText(t, ">Echo<")

	// A payment entered as a positive amount moves the aging.
	bolt := seed.Companies[1]
	openInvoices := func(body string) string {
		start := strings.Index(body, `id="invoices-title"`)
		return body[start : start+strings.Index(body[start:], "</section>")]
	}
	if !strings.Contains(openInvoices(b.get("/companies/"+bolt.ID).Body), "<code>gid://platform/Order/7010</code>") {
		t.Fatal("Bolt's open invoices lack order 7010")
	}
	paid := b.follow(b.post("/companies/"+bolt.ID+"/ledger", url.Values{"kind": {credit.KindPayment}, "amount": {"300.25"}, "order": {"gid://platform/Order/7010"}}))
	paid.wantText(t, "Payment of 300.25 EUR recorded")
	if strings.Contains(openInvoices(paid.Body), "gid://platform/Order/7010") {
		t.Error("the paid invoice is still among the open ones")
	}
	after := credittest.AgeInvoices(e.ReplayInvoices(t, bolt.ID), now)
	if after.Total.Equal(want["Bolt"].Total) {
		t.Fatal("the payment did not change Bolt's open amount")
	}
	b.get("/companies/"+bolt.ID).wantText(t, `<table class="data aging" id="company-aging">`, cells(after))
}

// csvHeader is the receivables CSV's first line.
var csvHeader = []string{"Company ID", "Company", "Currency", "Current", "1–30 days overdue", "31–60 days overdue",
	"61–90 days overdue", "Over 90 days overdue", "Overdue", "Open invoices", "Not invoiced", "Outstanding", "As of"}

// readCSV downloads the receivables CSV at path and checks what makes it open right in a
// spreadsheet: its type, the UTF-8 byte order mark, a dated file name, the header and the
// totals line last.
func readCSV(t *testing.T, b *browser, path string, sep rune) [][]string {
	t.Helper()
	p := b.get(path).wantStatus(t, http.StatusOK)
	if ct := p.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/csv") {
		t.Fatalf("CSV content type %q", ct)
	}
	if want := `attachment; filename="receivables-Receivables-2026-03-02.csv"`; p.Header.Get("Content-Disposition") != want {
		t.Errorf("Content-Disposition %q, want %q", p.Header.Get("Content-Disposition"), want)
	}
	body, bom := strings.CutPrefix(p.Body, "\uFEFF")
	if !bom {
		t.Errorf("the CSV does not start with a UTF-8 byte order mark: %q", p.Body[:min(20, len(p.Body))])
	}
	r := csv.NewReader(strings.NewReader(body))
	r.Comma = sep
	rows, err := r.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(rows[0], csvHeader) {
		t.Fatalf("CSV header %v", rows[0])
	}
	if last := rows[len(rows)-1]; last[0] != "" || last[1] != "Total" {
		t.Fatalf("the CSV's last line is not the totals: %v", last)
	}
	return rows
}
