package credit

import (
	"context"
	"time"

	"github.com/shopspring/decimal"

	"github.com/creditd/creditd/ent/invoice"
)

// The store's payment figures (contract §17): the company's definitions (payment_behaviour.go)
// over all the store's companies, computed by the database.
//
// Two statements whatever the store's size, neither of which brings invoices into the
// process: the invoices paid in the window summed (their amounts, those settled by their due
// date, and the amounts times the microseconds beyond their due date), and the invoiced and
// open amounts summed by day back from now, from the day of the oldest open invoice on (the
// countback never goes further: the open total is at most what was invoiced since then), a
// row per day. Amounts stay exact decimals: PostgreSQL sums numeric; on SQLite, which keeps
// them as TEXT, database/behaviour.go sums integer pieces of them (PaymentFigures.PaidSums,
// IssuedByDay). Measured in BENCHMARKS.md ("Issue 38, third pass"): 0.65–0.68 s of CPU on
// SQLite for a store with 207,299 invoices paid in the year (0.94 s before the invoices'
// cancelled column, 2.6 s in the first pass), 0.48 s on PostgreSQL; what bounds it is said
// there.

// StoreBehaviour is how the store's companies paid over a trailing window, and the store's DSO.
type StoreBehaviour struct {
	AsOf       Timestamp `json:"as_of"`
	WindowDays int       `json:"window_days"`
	// InvoicesPaid counts the invoices whose paid_at falls in the window, cancelled ones never.
	InvoicesPaid int `json:"invoices_paid"`
	// AverageDaysBeyondTerms is paid_at − due_at over those invoices, weighted by amount, in
	// days with one decimal (negative when early); null when nothing was paid in the window.
	AverageDaysBeyondTerms *decimal.Decimal `json:"average_days_beyond_terms"`
	// PaidOnTimeShare is the paid amount settled by its due date over the paid amount,
	// "0.000"–"1.000"; null when nothing was paid in the window.
	PaidOnTimeShare *string `json:"paid_on_time_share"`
	// DSODays is the store's days sales outstanding by the countback method, one decimal; 0
	// with nothing open. It does not depend on the window.
	DSODays decimal.Decimal `json:"dso_days"`
}

// StoreBehaviour returns the store's payment figures over the windowDays days ending now.
// Two statements, whatever the number of companies and invoices.
//
// Errors: insufficient_scope, invalid_parameter (window_days).
func (s *Reports) StoreBehaviour(ctx context.Context, windowDays int) (StoreBehaviour, error) {
	if err := requireScope(ctx, ScopeReadCredit); err != nil {
		return StoreBehaviour{}, err
	}
	if err := checkWindowDays(windowDays); err != nil {
		return StoreBehaviour{}, err
	}
	st, err := s.stores.viewerStore(ctx)
	if err != nil {
		return StoreBehaviour{}, err
	}
	now := s.clock.Now()
	b := StoreBehaviour{AsOf: At(now), WindowDays: windowDays}
	if err := s.storePaid(ctx, &b, now.Add(-time.Duration(windowDays)*24*time.Hour), now); err != nil {
		return StoreBehaviour{}, err
	}
	if b.DSODays, err = s.storeDSO(ctx, st.ID, now); err != nil {
		return StoreBehaviour{}, err
	}
	return b, nil
}

// StoreDSO is the store's days sales outstanding alone (StoreBehaviour's DSODays), for a page
// or a query that shows no other of its figures: one statement, which reads only the invoices
// issued since the oldest open one, where StoreBehaviour's other statement reads every invoice
// paid in the window.
//
// Errors: insufficient_scope.
func (s *Reports) StoreDSO(ctx context.Context) (decimal.Decimal, error) {
	if err := requireScope(ctx, ScopeReadCredit); err != nil {
		return decimal.Zero, err
	}
	st, err := s.stores.viewerStore(ctx)
	if err != nil {
		return decimal.Zero, err
	}
	return s.storeDSO(ctx, st.ID, s.clock.Now())
}

// storePaid sums, in one statement, the store's invoices paid in (from, now] into b's averages.
func (s *Reports) storePaid(ctx context.Context, b *StoreBehaviour, from, now time.Time) error {
	// ent's bare "NOT open", not InvoicesOpen(false): most of a store's invoices are closed,
	// and SQLite reading them through the index on (open, due_at) took 114 ms against 55 ms
	// for its scan of the table (the large store's 376,662 invoices, issue 40).
	q := s.db.Reader(ctx).Invoice.Query().Where(invoice.Open(false), invoice.SettledAtGT(from), invoice.SettledAtLTE(now))
	n, paid, onTime, beyond, err := s.db.PaidSums(ctx, q)
	if err != nil {
		return err
	}
	b.InvoicesPaid = n
	if paid.IsPositive() {
		perDay := decimal.NewFromInt((24 * time.Hour).Microseconds())
		avg := beyond.Div(paid).Div(perDay).Round(1)
		share := onTime.DivRound(paid, 3).StringFixed(3)
		b.AverageDaysBeyondTerms, b.PaidOnTimeShare = &avg, &share
	}
	return nil
}

// storeDSO is the store's countback DSO from one statement: per day back from now, the
// amounts invoiced (cancelled invoices are not sales) and the amounts still open, over the
// invoices issued since the oldest open one (PaymentFigures.IssuedByDay).
func (s *Reports) storeDSO(ctx context.Context, storeID string, now time.Time) (decimal.Decimal, error) {
	byDay, last, open, err := s.db.IssuedByDay(ctx, s.db.Reader(ctx).Invoice.Query(), storeID, now)
	if err != nil {
		return decimal.Zero, err
	}
	return countbackDays(byDay, last, open), nil
}

// countbackDays is the countback over amounts invoiced by day back from now (day 1 the
// latest, last the earliest with any): the whole days whose amounts add up to less than open,
// plus the fraction of the next day's amount that the rest takes; one decimal, 0 with nothing
// open, last when the days never add up to it.
func countbackDays(byDay map[int64]decimal.Decimal, last int64, open decimal.Decimal) decimal.Decimal {
	if !open.IsPositive() {
		return decimal.Zero
	}
	rest := open
	for k := int64(1); k <= last; k++ {
		day := byDay[k]
		if day.GreaterThanOrEqual(rest) && day.IsPositive() {
			return decimal.NewFromInt(k - 1).Add(rest.Div(day)).Round(1)
		}
		rest = rest.Sub(day)
	}
	return decimal.NewFromInt(last).Round(1)
}
