package console

import (
	"encoding/csv"
	"net/http"
	"slices"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/creditd/creditd/credit"
)

// The receivables page: the store's aging totals and one line per company with open invoices,
// sortable and filterable to the overdue ones, and the same lines as CSV for the accountant.
// The figures are the domain's (credit.Receivables, credit.ReceivablesByCompany), the ones
// GraphQL serves.

// receivablesColumns are the sortable columns: the query's sort value, the heading, and the
// amount a line is sorted by (nil for the name).
var receivablesColumns = []receivablesColumn{
	{"name", "Company", nil},
	{"current", "Current", func(l credit.CompanyReceivables) credit.Money { return l.Aging.Current }},
	{"1-30", "1–30 days", func(l credit.CompanyReceivables) credit.Money { return l.Aging.Days1To30 }},
	{"31-60", "31–60 days", func(l credit.CompanyReceivables) credit.Money { return l.Aging.Days31To60 }},
	{"61-90", "61–90 days", func(l credit.CompanyReceivables) credit.Money { return l.Aging.Days61To90 }},
	{"over-90", "Over 90 days", func(l credit.CompanyReceivables) credit.Money { return l.Aging.Over90 }},
	{"overdue", "Overdue", func(l credit.CompanyReceivables) credit.Money { return l.Overdue }},
	{"total", "Total open", func(l credit.CompanyReceivables) credit.Money { return l.Aging.Total }},
}

// receivablesColumn is a sortable column of the receivables page.
type receivablesColumn struct {
	Key, Title string
	amount     func(l credit.CompanyReceivables) credit.Money
}

// receivablesHeading is a column heading with the link that sorts by it.
type receivablesHeading struct {
	Title, Href string
	// Sorted is "ascending" or "descending" for the current sort column, for aria-sort.
	Sorted string
	Num    bool
}

// receivablesBody is the receivables page.
type receivablesBody struct {
	Totals      credit.Receivables
	Lines       []credit.CompanyReceivables
	Headings    []receivablesHeading
	OverdueOnly bool
	CSV         string
}

// receivables shows the page, or with ?format=csv the lines as CSV.
func (c *Console) receivables(w http.ResponseWriter, r *http.Request, v *visit) {
	q := r.URL.Query()
	overdueOnly := q.Get("overdue") == "1"
	sortKey, desc := q.Get("sort"), q.Get("order") == "desc"
	col := slices.IndexFunc(receivablesColumns, func(c receivablesColumn) bool { return c.Key == sortKey })
	if col < 0 {
		// By default the largest overdue amount first: what to chase first.
		col, sortKey, desc = 6, "overdue", true
	}
	totals, err := c.svc.Receivables(v.ctx)
	if err != nil {
		c.fail(w, r, v, err)
		return
	}
	lines, err := c.svc.ReceivablesByCompany(v.ctx, overdueOnly)
	if err != nil {
		c.fail(w, r, v, err)
		return
	}
	sortLines(lines, receivablesColumns[col].amount, desc)
	if q.Get("format") == "csv" {
		writeReceivablesCSV(w, v.store.Name, lines)
		return
	}
	overdue := ""
	if overdueOnly {
		overdue = "1"
	}
	body := receivablesBody{Totals: totals, Lines: lines, OverdueOnly: overdueOnly,
		CSV: buildQuery("overdue", overdue, "sort", sortKey, "order", map[bool]string{true: "desc", false: "asc"}[desc], "format", "csv")}
	for i, column := range receivablesColumns {
		h := receivablesHeading{Title: column.Title, Num: column.amount != nil}
		order := "asc"
		if column.amount != nil {
			order = "desc" // amounts: the largest first on the first click
		}
		if i == col {
			h.Sorted = "ascending"
			if desc {
				h.Sorted = "descending"
			}
			order = map[bool]string{true: "asc", false: "desc"}[desc]
		}
		h.Href = "/receivables" + buildQuery("overdue", overdue, "sort", column.Key, "order", order)
		body.Headings = append(body.Headings, h)
	}
	p := pageFor(v, "Receivables", "receivables")
	p.Body = body
	c.render(w, r, http.StatusOK, "receivables.html", p)
}

// sortLines orders lines by an amount (by name when amount is nil), then by name.
func sortLines(lines []credit.CompanyReceivables, amount func(credit.CompanyReceivables) credit.Money, desc bool) {
	slices.SortStableFunc(lines, func(a, b credit.CompanyReceivables) int {
		n := strings.Compare(a.CompanyName, b.CompanyName)
		if amount == nil {
			if desc {
				return -n
			}
			return n
		}
		d := decimal.RequireFromString(amount(a).Amount).Cmp(decimal.RequireFromString(amount(b).Amount))
		if desc {
			d = -d
		}
		if d == 0 {
			return n
		}
		return d
	})
}

// writeReceivablesCSV writes the lines as CSV, amounts as plain decimals for a spreadsheet.
func writeReceivablesCSV(w http.ResponseWriter, storeName string, lines []credit.CompanyReceivables) {
	name := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '-'
	}, storeName)
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="receivables-`+name+`.csv"`)
	out := csv.NewWriter(w)
	_ = out.Write([]string{"company_id", "company", "currency", "current", "days_1_to_30", "days_31_to_60", "days_61_to_90", "over_90", "overdue", "total"})
	for _, l := range lines {
		a := l.Aging
		_ = out.Write([]string{l.CompanyID, csvSafe(l.CompanyName), a.Total.Currency, a.Current.Amount, a.Days1To30.Amount,
			a.Days31To60.Amount, a.Days61To90.Amount, a.Over90.Amount, l.Overdue.Amount, a.Total.Amount})
	}
	out.Flush()
}

// csvSafe keeps a spreadsheet from reading a name as a formula (CSV injection).
func csvSafe(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}
