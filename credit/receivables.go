package credit

import (
	"context"
	"maps"
	"slices"
	"time"

	"github.com/shopspring/decimal"

	"github.com/creditd/creditd/ent"
	"github.com/creditd/creditd/ent/company"
	"github.com/creditd/creditd/ent/invoice"
	"github.com/creditd/creditd/ent/predicate"
)

// Receivables (contract §15): each order_placed entry is an invoice (allocation.go keeps what is
// open on it), and the aging of the open amounts by days past due, for a company and for the
// store. Sums are computed by the database, one statement for any number of invoices or
// companies, in exact decimals (MoneySums).

// Invoice statuses.
const (
	InvoiceOpen      = "open"
	InvoicePaid      = "paid"
	InvoiceCancelled = "cancelled"
)

// Aging splits open amounts by how far past due they are. An amount is in Current until its
// due date, then in the bucket of its invoice's DaysOverdue.
type Aging struct {
	Current    Money `json:"current"`
	Days1To30  Money `json:"days_1_to_30"`
	Days31To60 Money `json:"days_31_to_60"`
	Days61To90 Money `json:"days_61_to_90"`
	Over90     Money `json:"over_90"`
	Total      Money `json:"total"`

	// overdue is the sum of the buckets past due, kept exact for the totals.
	overdue Money
}

// Overdue is what is past due: every bucket but Current.
func (a Aging) Overdue() Money { return a.overdue }

// Receivables are the store's totals. They reconcile by construction (amended §15):
// Outstanding = Aging.Total + NotInvoiced.
type Receivables struct {
	Aging Aging `json:"aging"`
	// Outstanding is the sum of the companies' balances: the open invoices less the credit
	// balances and unapplied payments.
	Outstanding Money `json:"outstanding"`
	// NotInvoiced is the part of Outstanding on no open invoice (see NotInvoiced).
	NotInvoiced Money `json:"not_invoiced"`
	// Overdue is the open amount past due (the aging's buckets but current).
	Overdue Money `json:"overdue"`
	// CompaniesOverdue counts the companies with an open invoice past due.
	CompaniesOverdue int `json:"companies_overdue"`
}

// CompanyReceivables is one company's line of the store's receivables:
// Outstanding = Aging.Total + NotInvoiced, as for the store.
type CompanyReceivables struct {
	CompanyID   string `json:"company_id"`
	CompanyName string `json:"company_name"`
	Aging       Aging  `json:"aging"`
	Overdue     Money  `json:"overdue"`
	Outstanding Money  `json:"outstanding"`
	NotInvoiced Money  `json:"not_invoiced"`
}

// NotInvoiced is the part of a balance that is on no open invoice (amended §15): opening
// balances, adjustments, and payments or credits not allocated to an open invoice (a credit
// balance makes it negative). It is what the aging leaves of outstanding, so that for a company
// and for the store outstanding = aging.Total + NotInvoiced holds by construction; every
// transport takes it from here.
func NotInvoiced(outstanding Money, aging Aging) Money {
	o := decimal.RequireFromString(outstanding.Amount)
	t := decimal.RequireFromString(aging.Total.Amount)
	return NewMoney(o.Sub(t), outstanding.Currency)
}

// daysOverdue is DaysOverdue for an invoice due at due, as of now.
func daysOverdue(due, now time.Time) int {
	if !due.Before(now) {
		return 0
	}
	return int((now.Sub(due) + 24*time.Hour - 1) / (24 * time.Hour))
}

// agingBounds are the due dates that separate the buckets as of now: an invoice due at or after
// bounds[0] is current, before it and at or after bounds[1] is 1–30 days past due, and so on;
// one due before bounds[3] is over 90.
func agingBounds(now time.Time) [4]time.Time {
	day := 24 * time.Hour
	return [4]time.Time{now, now.Add(-30 * day), now.Add(-60 * day), now.Add(-90 * day)}
}

// agingRow is what agingSums scans: the group's key and the sums of each bucket as SumMoney's
// text.
type agingRow struct {
	Key     string `json:"k"`
	B0      string `json:"b0"`
	B1      string `json:"b1"`
	B2      string `json:"b2"`
	B3      string `json:"b3"`
	B4      string `json:"b4"`
	Overdue int    `json:"n"`
}

// agingSums reads, in one statement, the aging of the open invoices matched by where, grouped by
// the invoice column groupBy (company_id, or store_id for the store's totals). It also counts,
// per group, the companies with an overdue invoice and finds the oldest due date.
func (s *Reports) agingSums(ctx context.Context, client *ent.Client, groupBy string, now time.Time, where ...predicate.Invoice) (map[string]agingRow, error) {
	var rows []agingRow
	err := client.Invoice.Query().Where(append(where, s.db.InvoicesOpen(true))...).
		GroupBy(groupBy).
		Aggregate(s.db.AgingSums(groupBy, agingBounds(now))).
		Scan(ctx, &rows)
	if err != nil {
		return nil, err
	}
	out := make(map[string]agingRow, len(rows))
	for _, r := range rows {
		out[r.Key] = r
	}
	return out, nil
}

// aging turns a row of agingSums into an Aging in currency; the zero row is all zeros.
func (r agingRow) aging(currency string, money MoneySums) (Aging, error) {
	var sums [5]decimal.Decimal
	for i, text := range []string{r.B0, r.B1, r.B2, r.B3, r.B4} {
		d, err := money.ParseMoneySum(text)
		if err != nil {
			return Aging{}, err
		}
		sums[i] = d
	}
	return agingOfSums(sums, currency), nil
}

// agingOfSums is the Aging of the open amounts summed by bucket (current, 1–30, 31–60, 61–90,
// over 90 days past due, as agingBounds separates them), live or replayed (a statement's).
func agingOfSums(sums [5]decimal.Decimal, currency string) Aging {
	overdue := sums[1].Add(sums[2]).Add(sums[3]).Add(sums[4])
	return Aging{
		Current:    NewMoney(sums[0], currency),
		Days1To30:  NewMoney(sums[1], currency),
		Days31To60: NewMoney(sums[2], currency),
		Days61To90: NewMoney(sums[3], currency),
		Over90:     NewMoney(sums[4], currency),
		Total:      NewMoney(sums[0].Add(overdue), currency),
		overdue:    NewMoney(overdue, currency),
	}
}

// Receivables returns the store's totals: the aging of every open invoice, the companies'
// outstanding balances summed, what is overdue and how many companies are. Two statements,
// whatever the number of companies and invoices.
//
// Errors: insufficient_scope.
func (s *Reports) Receivables(ctx context.Context) (Receivables, error) {
	if err := requireScope(ctx, ScopeReadCredit); err != nil {
		return Receivables{}, err
	}
	st, err := s.stores.viewerStore(ctx)
	if err != nil {
		return Receivables{}, err
	}
	client := s.db.Reader(ctx)
	sums, err := s.agingSums(ctx, client, invoice.FieldStoreID, s.clock.Now())
	if err != nil {
		return Receivables{}, err
	}
	row := sums[st.ID]
	aging, err := row.aging(st.Currency, s.db)
	if err != nil {
		return Receivables{}, err
	}
	var balances []struct {
		Key string `json:"k"`
		Sum string `json:"s"`
	}
	err = client.Company.Query().GroupBy(company.FieldStoreID).
		Aggregate(s.db.OutstandingSums()).Scan(ctx, &balances)
	if err != nil {
		return Receivables{}, err
	}
	outstanding := decimal.Zero
	for _, b := range balances {
		if b.Key == st.ID {
			if outstanding, err = s.db.ParseMoneySum(b.Sum); err != nil {
				return Receivables{}, err
			}
		}
	}
	total := NewMoney(outstanding, st.Currency)
	return Receivables{
		Aging:            aging,
		Outstanding:      total,
		NotInvoiced:      NotInvoiced(total, aging),
		Overdue:          aging.overdue,
		CompaniesOverdue: row.Overdue,
	}, nil
}

// CompanyAging returns the aging of each company's open invoices, keyed by company ID, in one
// statement. Companies not in the viewer's store are absent; a company without open invoices
// has an aging of zeros.
//
// Errors: insufficient_scope.
func (s *Reports) CompanyAging(ctx context.Context, companyIDs []string) (map[string]Aging, error) {
	if err := requireScope(ctx, ScopeReadCredit); err != nil {
		return nil, err
	}
	st, client, known, err := s.stores.viewerCompanies(ctx, companyIDs)
	if err != nil {
		return nil, err
	}
	sums, err := s.agingSums(ctx, client, invoice.FieldCompanyID, s.clock.Now(), invoice.CompanyIDIn(companyIDs...))
	if err != nil {
		return nil, err
	}
	out := make(map[string]Aging, len(known))
	for _, id := range known {
		if out[id], err = sums[id].aging(st.Currency, s.db); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// ReceivablesByCompany returns one line per company of the store with open invoices or a
// balance that is not zero (so that the lines add up to the store's totals), in name order;
// overdueOnly keeps those with an amount past due. Two statements for any number of companies:
// the sums, then the names and balances.
//
// Errors: insufficient_scope.
func (s *Reports) ReceivablesByCompany(ctx context.Context, overdueOnly bool) ([]CompanyReceivables, error) {
	if err := requireScope(ctx, ScopeReadCredit); err != nil {
		return nil, err
	}
	st, err := s.stores.viewerStore(ctx)
	if err != nil {
		return nil, err
	}
	client := s.db.Reader(ctx)
	now := s.clock.Now()
	var where []predicate.Invoice
	if overdueOnly {
		// A company with any overdue invoice; its line still shows its current amounts.
		where = append(where, s.db.InvoicesOfOverdueCompanies(now))
	}
	sums, err := s.agingSums(ctx, client, invoice.FieldCompanyID, now, where...)
	if err != nil {
		return nil, err
	}
	q := client.Company.Query().
		Select(company.FieldID, company.FieldName, company.FieldOutstanding).
		Order(ent.Asc(company.FieldName), ent.Asc(company.FieldID))
	if overdueOnly {
		if len(sums) == 0 {
			return []CompanyReceivables{}, nil
		}
		q.Where(company.IDIn(slices.Sorted(maps.Keys(sums))...))
	} else {
		// A balance that is not zero, or an open invoice (whose balance can still be zero when
		// a credit balance meets it).
		q.Where(s.db.ReceivableCompanies())
	}
	companies, err := q.All(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]CompanyReceivables, 0, len(companies))
	for _, c := range companies {
		row, open := sums[c.ID]
		if !open && c.Outstanding.IsZero() {
			continue
		}
		a, err := row.aging(st.Currency, s.db)
		if err != nil {
			return nil, err
		}
		balance := NewMoney(c.Outstanding, st.Currency)
		out = append(out, CompanyReceivables{CompanyID: c.ID, CompanyName: c.Name, Aging: a, Overdue: a.overdue,
			Outstanding: balance, NotInvoiced: NotInvoiced(balance, a)})
	}
	return out, nil
}

// SumReceivables adds lines up into one, named "Total": the totals line of an export. For the
// lines of every company it equals the store's Receivables; for a filtered list, the lines shown.
func SumReceivables(lines []CompanyReceivables, currency string) CompanyReceivables {
	var sums [9]decimal.Decimal
	for _, l := range lines {
		for i, m := range []Money{l.Aging.Current, l.Aging.Days1To30, l.Aging.Days31To60, l.Aging.Days61To90, l.Aging.Over90,
			l.Aging.Total, l.Overdue, l.NotInvoiced, l.Outstanding} {
			sums[i] = sums[i].Add(decimal.RequireFromString(m.Amount))
		}
	}
	m := func(i int) Money { return NewMoney(sums[i], currency) }
	a := Aging{Current: m(0), Days1To30: m(1), Days31To60: m(2), Days61To90: m(3), Over90: m(4), Total: m(5), overdue: m(6)}
	return CompanyReceivables{CompanyName: "Total", Aging: a, Overdue: m(6), NotInvoiced: m(7), Outstanding: m(8)}
}
