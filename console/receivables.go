package console

import (
	"encoding/csv"
	"net/http"
	"strings"

	"github.com/creditd/creditd/credit"
)

// The receivables page: the store's aging totals and one line per company with open invoices,
// sortable and filterable to the overdue ones, and the same lines as CSV for the accountant.
// The figures are the domain's (credit.Receivables, credit.ReceivablesByCompany), the ones
// GraphQL serves.

// receivablesColumns are the sortable columns: the query's sort value, the heading, and the
// amount a line is sorted by (nil for the name).
var receivablesColumns = []sortColumn[credit.CompanyReceivables]{
	{Key: "name", Title: "Company"},
	{Key: "current", Title: "Current", amount: func(l credit.CompanyReceivables) credit.Money { return l.Aging.Current }},
	{Key: "1-30", Title: "1–30 days", amount: func(l credit.CompanyReceivables) credit.Money { return l.Aging.Days1To30 }},
	{Key: "31-60", Title: "31–60 days", amount: func(l credit.CompanyReceivables) credit.Money { return l.Aging.Days31To60 }},
	{Key: "61-90", Title: "61–90 days", amount: func(l credit.CompanyReceivables) credit.Money { return l.Aging.Days61To90 }},
	{Key: "over-90", Title: "Over 90 days", amount: func(l credit.CompanyReceivables) credit.Money { return l.Aging.Over90 }},
	{Key: "overdue", Title: "Overdue", amount: func(l credit.CompanyReceivables) credit.Money { return l.Overdue }},
	{Key: "total", Title: "Open invoices", amount: func(l credit.CompanyReceivables) credit.Money { return l.Aging.Total }},
	{Key: "not-invoiced", Title: "Not invoiced", amount: func(l credit.CompanyReceivables) credit.Money { return l.NotInvoiced }},
	{Key: "outstanding", Title: "Outstanding", amount: func(l credit.CompanyReceivables) credit.Money { return l.Outstanding }},
}

// receivablesBody is the receivables page.
type receivablesBody struct {
	Totals credit.Receivables
	// Behaviour is the store's payment figures over the default window.
	Behaviour   credit.StoreBehaviour
	Lines       []credit.CompanyReceivables
	Headings    []sortHeading
	OverdueOnly bool
	CSV         string
	// CSVSemicolon is the CSV's link with ; as the separator.
	CSVSemicolon string
	AsOf         credit.Timestamp
}

// receivables shows the page, or with ?format=csv the lines as CSV.
func (c *Console) receivables(w http.ResponseWriter, r *http.Request, v *visit) {
	q := r.URL.Query()
	overdueOnly := q.Get("overdue") == "1"
	// By default the largest overdue amount first: what to chase first.
	col, desc := pickSort(receivablesColumns, q.Get("sort"), q.Get("order"), 6, true)
	sortKey := receivablesColumns[col].Key
	totals, err := c.svc.Reports.Receivables(v.ctx)
	if err != nil {
		c.fail(w, r, v, err)
		return
	}
	lines, err := c.svc.Reports.ReceivablesByCompany(v.ctx, overdueOnly)
	if err != nil {
		c.fail(w, r, v, err)
		return
	}
	sortRows(lines, receivablesColumns[col], func(l credit.CompanyReceivables) string { return l.CompanyName }, desc)
	asOf := credit.At(c.svc.Now())
	if q.Get("format") == "csv" {
		sep := ','
		if q.Get("sep") == "semicolon" {
			sep = ';'
		}
		writeReceivablesCSV(w, v.store.Name, asOf, sep, credit.SumReceivables(lines, totals.Outstanding.Currency), lines)
		return
	}
	overdue := ""
	if overdueOnly {
		overdue = "1"
	}
	behaviour, err := c.svc.Reports.StoreBehaviour(v.ctx, credit.BehaviourWindowDays)
	if err != nil {
		c.fail(w, r, v, err)
		return
	}
	body := receivablesBody{Totals: totals, Behaviour: behaviour, Lines: lines, OverdueOnly: overdueOnly, AsOf: asOf,
		CSV:          buildQuery("overdue", overdue, "sort", sortKey, "order", orderName(desc), "format", "csv"),
		CSVSemicolon: buildQuery("overdue", overdue, "sort", sortKey, "order", orderName(desc), "format", "csv", "sep", "semicolon")}
	body.Headings = sortHeadings(receivablesColumns, col, desc, func(key, order string) string {
		return "/receivables" + buildQuery("overdue", overdue, "sort", key, "order", order)
	})
	p := pageFor(v, "Receivables", "receivables")
	p.Body = body
	c.render(w, r, http.StatusOK, "receivables.html", p)
}

// receivablesCSVHeadings are the CSV's column headings, in words a credit manager reads in a
// spreadsheet rather than code names.
var receivablesCSVHeadings = []string{"Company ID", "Company", "Currency", "Current", "1–30 days overdue", "31–60 days overdue",
	"61–90 days overdue", "Over 90 days overdue", "Overdue", "Open invoices", "Not invoiced", "Outstanding", "As of"}

// writeReceivablesCSV writes the lines as CSV for a spreadsheet (amended §15): amounts as
// plain decimals (with a decimal comma when sep is ;), each line's outstanding as its open invoices plus what is on no invoice, a
// totals line (the lines summed: the store's figures when no filter is set), the
// as-of time in every line, a UTF-8 byte order mark so that spreadsheets read names such as
// "Café" right, and a file name with the day, so that exports do not overwrite each other.
func writeReceivablesCSV(w http.ResponseWriter, storeName string, asOf credit.Timestamp, sep rune, total credit.CompanyReceivables, lines []credit.CompanyReceivables) {
	name := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '-'
	}, storeName)
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="receivables-`+name+`-`+asOf.UTC().Format("2006-01-02")+`.csv"`)
	_, _ = w.Write([]byte("\uFEFF"))
	out := csv.NewWriter(w)
	out.Comma = sep
	at := asOf.String()
	_ = out.Write(receivablesCSVHeadings)
	// A spreadsheet that wants ; between fields wants a decimal comma too (German, French,
	// Spanish locales): 2950,00, which it reads as a number, where 2950.00 would be text.
	amount := func(m credit.Money) string { return m.Amount }
	if sep == ';' {
		amount = func(m credit.Money) string { return strings.Replace(m.Amount, ".", ",", 1) }
	}
	row := func(id, company string, a credit.Aging, overdue, notInvoiced, outstanding credit.Money) {
		_ = out.Write([]string{id, company, a.Total.Currency, amount(a.Current), amount(a.Days1To30),
			amount(a.Days31To60), amount(a.Days61To90), amount(a.Over90), amount(overdue), amount(a.Total),
			amount(notInvoiced), amount(outstanding), at})
	}
	for _, l := range lines {
		row(l.CompanyID, csvSafe(l.CompanyName), l.Aging, l.Overdue, l.NotInvoiced, l.Outstanding)
	}
	row("", total.CompanyName, total.Aging, total.Overdue, total.NotInvoiced, total.Outstanding)
	out.Flush()
}

// csvSafe keeps a spreadsheet from reading a name as a formula (CSV injection).
func csvSafe(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}
