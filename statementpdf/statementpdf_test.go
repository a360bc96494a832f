package statementpdf_test

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
	"github.com/creditd/creditd/statementpdf"
)

// synthetic is a statement of n entries (orders and payments by turns) with the open
// invoices an unpaid quarter leaves, for layout tests and the benchmark: the PDF depends on
// the statement only.
func synthetic(n int) credit.Statement {
	gid := "gid://platform/Company/1001"
	m := func(d decimal.Decimal) credit.Money { return credit.NewMoney(d, "EUR") }
	start := time.Date(2025, 1, 1, 8, 0, 0, 0, time.UTC)
	s := credit.Statement{
		Company: credit.Company{ID: "co_3hQh5mRkS3M4cB1DnOZ2tX", Name: "Alpenblick Hotels AG", PlatformCompanyGID: &gid, PaymentTerms: "NET_30"},
		Store:   credit.StatementStore{Name: "Acme Wholesale", Currency: "EUR", Locale: "de"},
		From:    "2025-01-01", To: "2026-03-01",
		OpeningBalance: m(decimal.RequireFromString("1500.00")),
	}
	balance := decimal.RequireFromString("1500.00")
	var invoiced, paid decimal.Decimal
	note := "bank transfer, reference 2025/ACME/with a rather long text that does not fit its column"
	for i := 0; i < n; i++ {
		at := start.Add(time.Duration(i) * 2 * time.Hour)
		e := credit.LedgerEntry{ID: fmt.Sprintf("le_%022d", i), CompanyID: s.Company.ID, OccurredAt: credit.At(at)}
		if i%2 == 0 {
			a := decimal.New(int64(100000+i*13), -2)
			order := fmt.Sprintf("gid://platform/Order/%d", 100000+i)
			e.Kind, e.Amount, e.PlatformOrderGID = credit.KindOrderPlaced, m(a), &order
			invoiced = invoiced.Add(a)
			balance = balance.Add(a)
			if i > n*3/4 {
				s.OpenInvoices = append(s.OpenInvoices, credit.StatementInvoice{ID: fmt.Sprintf("inv_%019d", i), PlatformOrderGID: order,
					Amount: m(a), OpenAmount: m(a), IssuedAt: credit.At(at), DueAt: credit.At(at.Add(30 * 24 * time.Hour)), DaysOverdue: i % 40})
			}
		} else {
			a := decimal.New(int64(-90000-i*11), -2)
			e.Kind, e.Amount, e.Note = credit.KindPayment, m(a), &note
			paid = paid.Add(a)
			balance = balance.Add(a)
		}
		e.BalanceAfter = m(balance)
		s.Entries = append(s.Entries, e)
	}
	s.ClosingBalance = m(balance)
	s.Totals = credit.StatementTotals{Invoiced: m(invoiced), Paid: m(paid), Credited: m(decimal.Zero), Adjusted: m(decimal.Zero)}
	var open decimal.Decimal
	for _, inv := range s.OpenInvoices {
		open = open.Add(decimal.RequireFromString(inv.OpenAmount.Amount))
	}
	zero := m(decimal.Zero)
	s.Aging = credit.Aging{Current: m(open), Days1To30: zero, Days31To60: zero, Days61To90: zero, Over90: zero, Total: m(open)}
	s.NotInvoiced = m(balance.Sub(open))
	return s
}

// TestWriteIsTheSameEverywhere: the same statement gives the same bytes (no clock, no
// machine font), and its text carries its figures, the last entry's balance on the last page,
// and "Page N of M" on every page.
func TestWriteIsTheSameEverywhere(t *testing.T) {
	s := synthetic(300)
	var a, b bytes.Buffer
	if err := statementpdf.Write(&a, s); err != nil {
		t.Fatal(err)
	}
	if err := statementpdf.Write(&b, s); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Fatal("two writes of one statement differ")
	}
	if path := os.Getenv("STATEMENTPDF_OUT"); path != "" {
		_ = os.WriteFile(path, a.Bytes(), 0o600)
	}
	text := credittest.PDFText(t, a.Bytes())
	pages := strings.Split(strings.TrimSuffix(text, "\f"), "\f")
	if len(pages) < 5 {
		t.Fatalf("%d pages for 300 entries", len(pages))
	}
	for i, p := range pages {
		if !strings.Contains(p, fmt.Sprintf("Page %d of %d", i+1, len(pages))) || !strings.Contains(p, "Alpenblick Hotels AG") || !strings.Contains(p, "Statement of account") {
			t.Errorf("page %d lacks its header or \"Page %d of %d\":\n%s", i+1, i+1, len(pages), p)
		}
	}
	for _, m := range []credit.Money{s.OpeningBalance, s.ClosingBalance, s.Totals.Invoiced, s.Totals.Paid, s.Aging.Total, s.NotInvoiced, s.Entries[299].BalanceAfter} {
		if f := credit.FormatLocalAmount(m, "de"); !strings.Contains(text, f) {
			t.Errorf("the text lacks %s", f)
		}
	}
	if !strings.Contains(text, "bank transfer, r") || strings.Contains(text, "does not fit its column") {
		t.Error("a long note should be cut to its column")
	}
}

// BenchmarkWrite5000 writes a 5,000-entry statement (goal: under 1 s and 50 MB).
func BenchmarkWrite5000(b *testing.B) {
	s := synthetic(5000)
	b.ReportAllocs()
	var size int
	cpu := cpuTime()
	for b.Loop() {
		var buf countingWriter
		if err := statementpdf.Write(&buf, s); err != nil {
			b.Fatal(err)
		}
		size = buf.n
	}
	b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(size), "pdf-bytes")
}

type countingWriter struct{ n int }

func (w *countingWriter) Write(p []byte) (int, error) { w.n += len(p); return len(p), nil }

var _ io.Writer = (*countingWriter)(nil)

// BenchmarkStatementPDF5000 is the whole request's work for a 5,000-entry period: the
// statement read from the database (entries, replayed allocation, invoices) and its PDF.
func BenchmarkStatementPDF5000(b *testing.B) {
	env := credittest.New(b)
	st := env.MustStore(b, "Bench", "EUR")
	c := env.MustCompany(b, st, "Alpenblick Hotels AG", "100000000", "NET_30")
	from := env.Clock.Now().UTC().Format(time.DateOnly)
	for i := 0; i < 5000; i++ {
		env.Clock.Advance(time.Minute)
		in := credit.LedgerEntryInput{CompanyID: c.ID, Kind: credit.KindOrderPlaced, Amount: fmt.Sprintf("%d.25", 1000+i), OrderGID: fmt.Sprintf("gid://platform/Order/%d", i+1)}
		if i%2 == 1 {
			in = credit.LedgerEntryInput{CompanyID: c.ID, Kind: credit.KindPayment, Amount: fmt.Sprintf("-%d.10", 900+i), Note: "bank transfer"}
		}
		env.MustRecord(b, in)
	}
	to := env.Clock.Now().UTC().Format(time.DateOnly)
	ctx := credittest.Staff(st)
	b.ReportAllocs()
	b.ResetTimer()
	cpu := cpuTime()
	for b.Loop() {
		s, err := env.Service.Reports.Statement(ctx, c.ID, from, to)
		if err != nil {
			b.Fatal(err)
		}
		if len(s.Entries) != 5000 {
			b.Fatalf("%d entries", len(s.Entries))
		}
		if err := statementpdf.Write(io.Discard, s); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N), "cpu-ns/op")
}
