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
	cells := func(a credittest.RecomputedAging) string {
		var out []string
		for _, d := range a.Buckets {
			out = append(out, `<td class="num">`+money(d)+`</td>`)
		}
		return strings.Join(append(out, `<td class="num">`+money(a.Total)+`</td>`), "")
	}
	page := b.get("/receivables").wantStatus(t, http.StatusOK)
	page.wantText(t, "<tbody><tr>"+cells(store)+"</tr></tbody>", "Overdue</dt><dd class=\"strong\">"+money(store.Overdue))

	// The CSV: one line per company with open invoices, the replay's figures.
	csvPage := b.get("/receivables?format=csv").wantStatus(t, http.StatusOK)
	if ct := csvPage.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/csv") {
		t.Fatalf("CSV content type %q", ct)
	}
	rows, err := csv.NewReader(strings.NewReader(csvPage.Body)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(rows[0], []string{"company_id", "company", "currency", "current", "days_1_to_30", "days_31_to_60", "days_61_to_90", "over_90", "overdue", "total"}) {
		t.Fatalf("CSV header %v", rows[0])
	}
	seen := 0
	for _, row := range rows[1:] {
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
	withOpen := 0
	for _, a := range want {
		if a.Total.IsPositive() {
			withOpen++
		}
	}
	if seen != withOpen {
		t.Errorf("CSV has %d companies, %d have open invoices", seen, withOpen)
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
	paid.wantText(t, "Payment of −300.25 EUR recorded")
	if strings.Contains(openInvoices(paid.Body), "gid://platform/Order/7010") {
		t.Error("the paid invoice is still among the open ones")
	}
	after := credittest.AgeInvoices(e.ReplayInvoices(t, bolt.ID), now)
	if after.Total.Equal(want["Bolt"].Total) {
		t.Fatal("the payment did not change Bolt's open amount")
	}
	b.get("/companies/"+bolt.ID).wantText(t, `<table class="data aging" id="company-aging">`, cells(after))
}
