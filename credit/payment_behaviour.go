package credit

import (
	"context"
	"encoding/json"
	"time"

	"github.com/shopspring/decimal"

	"github.com/creditd/creditd/ent"
	"github.com/creditd/creditd/ent/invoice"
)

// How companies pay (contract §17): the figures a credit manager judges a company by. For now
// the one that invoices need, average days beyond terms, which gives an open invoice its
// expected_payment_at; the rest of a company's payment behaviour builds on the same reads.

// BehaviourWindowDays is the default trailing window of payment behaviour, in days.
const BehaviourWindowDays = 365

// MaxBehaviourWindowDays is the longest trailing window of payment behaviour: five years.
const MaxBehaviourWindowDays = 1825

// checkWindowDays refuses a window of payment behaviour outside 1 to MaxBehaviourWindowDays,
// the company's and the store's alike.
//
// Errors: invalid_parameter (window_days).
func checkWindowDays(windowDays int) error {
	if windowDays < 1 || windowDays > MaxBehaviourWindowDays {
		return ParamErrorf(CodeInvalidParameter, "window_days", "window_days must be from 1 to %d", MaxBehaviourWindowDays)
	}
	return nil
}

// averageDaysBeyondTerms returns, per company, the average of (paid_at − due_at) in days over
// the invoices paid in the window ending at asOf, weighted by invoice amount and rounded to
// one decimal (negative when paid early). Cancelled invoices never count; a company that paid
// nothing in the window is absent. One statement for all the companies.
func averageDaysBeyondTerms(ctx context.Context, client *ent.Client, conds IndexedConditions, companyIDs []string, asOf time.Time, windowDays int) (map[string]decimal.Decimal, error) {
	out := map[string]decimal.Decimal{}
	if len(companyIDs) == 0 {
		return out, nil
	}
	rows, err := client.Invoice.Query().
		Where(invoice.CompanyIDIn(companyIDs...), conds.InvoicesOpen(false),
			invoice.SettledAtGT(asOf.Add(-time.Duration(windowDays)*24*time.Hour)), invoice.SettledAtLTE(asOf),
			invoice.Cancelled(false)).
		Select(invoice.FieldCompanyID, invoice.FieldAmount, invoice.FieldDueAt, invoice.FieldSettledAt).
		All(ctx)
	if err != nil {
		return nil, err
	}
	weighted, amounts := map[string]decimal.Decimal{}, map[string]decimal.Decimal{}
	for _, r := range rows {
		late := decimal.NewFromInt(r.SettledAt.Sub(r.DueAt).Microseconds())
		weighted[r.CompanyID] = weighted[r.CompanyID].Add(r.Amount.Mul(late))
		amounts[r.CompanyID] = amounts[r.CompanyID].Add(r.Amount)
	}
	perDay := decimal.NewFromInt((24 * time.Hour).Microseconds())
	for id, a := range amounts {
		if a.IsPositive() {
			out[id] = weighted[id].Div(a).Div(perDay).Round(1)
		}
	}
	return out, nil
}

// ExpectedPaymentAt is when an open invoice due at due is expected to be paid by a company
// whose average days beyond terms is avg: due plus avg days when the company pays late, the
// due date when it pays on time or early (contract §17).
func ExpectedPaymentAt(due time.Time, avg decimal.Decimal) time.Time {
	if !avg.IsPositive() {
		return due
	}
	return due.Add(time.Duration(avg.Mul(decimal.NewFromInt(int64(24 * time.Hour))).IntPart()))
}

// PaymentBehaviour is how a company paid over a trailing window and what it leaves open
// (contract §17).
type PaymentBehaviour struct {
	AsOf       Timestamp `json:"as_of"`
	WindowDays int       `json:"window_days"`
	// InvoicesPaid counts the invoices whose paid_at falls in the window; cancelled ones never
	// count.
	InvoicesPaid int `json:"invoices_paid"`
	// AverageDaysToPay is paid_at − issued_at and AverageDaysBeyondTerms paid_at − due_at
	// (negative when early), in days with one decimal, weighted by invoice amount; null when
	// nothing was paid in the window.
	AverageDaysToPay       *decimal.Decimal `json:"average_days_to_pay"`
	AverageDaysBeyondTerms *decimal.Decimal `json:"average_days_beyond_terms"`
	// PaidOnTimeShare is the paid amount settled by its due date over the paid amount, with
	// three decimals ("0.000"–"1.000"); null when nothing was paid in the window.
	PaidOnTimeShare *string     `json:"paid_on_time_share"`
	OpenOverdue     OpenOverdue `json:"open_overdue"`
	// DSODays is the days sales outstanding by the countback method, one decimal; 0 with
	// nothing open.
	DSODays decimal.Decimal `json:"dso_days"`
	// Rating is A, B, C or D (Rating), null when there is too little to judge by.
	Rating *string `json:"rating"`
}

// OpenOverdue is what a company has open past its due dates.
type OpenOverdue struct {
	Count             int   `json:"count"`
	Amount            Money `json:"amount"`
	OldestDaysOverdue int   `json:"oldest_days_overdue"`
}

// Rating grades a company (contract §17): A when its average days beyond terms is ≤ 0, B ≤ 15,
// C ≤ 45, D above that or when an open invoice is more than 90 days overdue. With fewer than 3
// invoices paid in the window there is too little to average: no rating when nothing is
// overdue either, and when something is, the oldest overdue invoice rates the company as if its
// days overdue were the average (B up to 15 days, C up to 45, D above), since the company is at
// least that late on it (our decision, docs/contract.md §17).
func Rating(paid int, avgBeyondTerms *decimal.Decimal, oldestDaysOverdue int) *string {
	grade := func(days decimal.Decimal) *string {
		g := "D"
		switch {
		case oldestDaysOverdue > 90:
		case !days.IsPositive():
			g = "A"
		case days.LessThanOrEqual(decimal.NewFromInt(15)):
			g = "B"
		case days.LessThanOrEqual(decimal.NewFromInt(45)):
			g = "C"
		}
		return &g
	}
	switch {
	case paid >= 3 && avgBeyondTerms != nil:
		return grade(*avgBeyondTerms)
	case oldestDaysOverdue > 0:
		return grade(decimal.NewFromInt(int64(oldestDaysOverdue)))
	}
	return nil
}

// behaviourRow is an invoice as payment behaviour reads it.
type behaviourRow struct {
	company   string
	seq       int64
	amount    decimal.Decimal
	open      decimal.Decimal
	isOpen    bool
	issued    time.Time
	due       time.Time
	settled   *time.Time
	cancelled bool
}

// PaymentBehaviour returns the payment behaviour of each company over the windowDays days
// ending now, keyed by company ID; companies not in the viewer's store are absent. Four
// statements whatever the number of companies and invoices: the companies, the invoices that
// matter (paid in the window, and every invoice issued since each company's oldest open one,
// which the countback of DSO never goes beyond), their issue dates, and their cancellations.
// The amount-weighted averages are computed here in exact decimals: on SQLite amounts are
// TEXT, and the database could only multiply them as floats.
//
// Errors: insufficient_scope, invalid_parameter (window_days).
func (s *Reports) PaymentBehaviour(ctx context.Context, companyIDs []string, windowDays int) (map[string]PaymentBehaviour, error) {
	if err := requireScope(ctx, ScopeReadCredit); err != nil {
		return nil, err
	}
	if err := checkWindowDays(windowDays); err != nil {
		return nil, err
	}
	st, client, known, err := s.stores.viewerCompanies(ctx, companyIDs)
	if err != nil {
		return nil, err
	}
	now := s.clock.Now()
	from := now.Add(-time.Duration(windowDays) * 24 * time.Hour)
	// Planned for its arguments, as viewerCompanies' read: the companies' invoices number
	// from none to hundreds of thousands.
	rows, err := behaviourRows(s.db.PlanForArguments(ctx), s.db, client, known, from, now)
	if err != nil {
		return nil, err
	}
	byCompany := map[string][]behaviourRow{}
	for _, r := range rows {
		byCompany[r.company] = append(byCompany[r.company], r)
	}
	out := make(map[string]PaymentBehaviour, len(known))
	for _, id := range known {
		out[id] = behaviourOf(byCompany[id], st.Currency, windowDays, from, now)
	}
	return out, nil
}

// behaviourRows reads the invoices of companies that payment behaviour needs: those settled in
// (from, now], and every invoice of a company whose seq is at least that of its oldest open
// invoice; each with its issue time (its order entry's) and whether it was cancelled. One
// statement, which selects the invoices by company and finds each one's order entry by its
// key and its cancellation by the order (PaymentFigures.IssueAndCancellation): never a list
// of invoice IDs, since a company may have hundreds of thousands of invoices.
func behaviourRows(ctx context.Context, db PaymentFigures, client *ent.Client, companies []string, from, now time.Time) ([]behaviourRow, error) {
	if len(companies) == 0 {
		return nil, nil
	}
	var rows []struct {
		ent.Invoice
		IssuedAt  *time.Time `json:"occurred_at"`
		Cancelled bool       `json:"cancelled"`
	}
	err := client.Invoice.Query().
		Where(invoice.CompanyIDIn(companies...),
			invoice.Or(invoice.And(invoice.SettledAtGT(from), invoice.SettledAtLTE(now)), db.InvoicesSinceOldestOpen())).
		Select(invoice.FieldCompanyID, invoice.FieldSeq, invoice.FieldAmount, invoice.FieldOpenAmount, invoice.FieldOpen,
			invoice.FieldDueAt, invoice.FieldSettledAt).
		Aggregate(db.IssueAndCancellation()).
		Scan(ctx, &rows)
	if err != nil {
		return nil, err
	}
	out := make([]behaviourRow, len(rows))
	for i, r := range rows {
		out[i] = behaviourRow{company: r.CompanyID, seq: r.Seq, amount: r.Amount, open: r.OpenAmount, isOpen: r.Open,
			due: r.DueAt, settled: r.SettledAt, cancelled: r.Cancelled}
		if r.IssuedAt != nil {
			out[i].issued = *r.IssuedAt
		}
	}
	return out, nil
}

// behaviourOf computes one company's payment behaviour from its rows (behaviourRows).
func behaviourOf(rows []behaviourRow, currency string, windowDays int, from, now time.Time) PaymentBehaviour {
	perDay := decimal.NewFromInt((24 * time.Hour).Microseconds())
	days := func(d time.Duration) decimal.Decimal { return decimal.NewFromInt(d.Microseconds()) }
	b := PaymentBehaviour{AsOf: At(now), WindowDays: windowDays, OpenOverdue: OpenOverdue{Amount: NewMoney(decimal.Zero, currency)}}
	var paid, onTime, toPay, beyond, overdue, open decimal.Decimal
	for _, r := range rows {
		switch {
		case r.isOpen:
			open = open.Add(r.open)
			if d := daysOverdue(r.due, now); d > 0 {
				b.OpenOverdue.Count++
				overdue = overdue.Add(r.open)
				b.OpenOverdue.OldestDaysOverdue = max(b.OpenOverdue.OldestDaysOverdue, d)
			}
		case r.cancelled || r.settled == nil || !r.settled.After(from) || r.settled.After(now):
		default:
			b.InvoicesPaid++
			paid = paid.Add(r.amount)
			toPay = toPay.Add(r.amount.Mul(days(r.settled.Sub(r.issued))))
			beyond = beyond.Add(r.amount.Mul(days(r.settled.Sub(r.due))))
			if !r.settled.After(r.due) {
				onTime = onTime.Add(r.amount)
			}
		}
	}
	b.OpenOverdue.Amount = NewMoney(overdue, currency)
	if paid.IsPositive() {
		a, l := toPay.Div(paid).Div(perDay).Round(1), beyond.Div(paid).Div(perDay).Round(1)
		share := onTime.DivRound(paid, 3).StringFixed(3)
		b.AverageDaysToPay, b.AverageDaysBeyondTerms, b.PaidOnTimeShare = &a, &l, &share
	}
	b.DSODays = countback(rows, open, now)
	b.Rating = Rating(b.InvoicesPaid, b.AverageDaysBeyondTerms, b.OpenOverdue.OldestDaysOverdue)
	return b
}

// countback is the days sales outstanding of an open total by the countback method: going back
// from now a day at a time (day k is [now − k days, now − (k−1) days), day 1 also holding now),
// the number of whole
// days whose invoiced amounts (issued_at in them; cancelled invoices are not sales) add up to
// less than the open total, plus the fraction of the next day's invoiced amount that the rest
// takes; one decimal, 0 with nothing open. rows hold every invoice issued since the oldest open
// one, which suffices: the open total is at most their amounts. (Invoices issued earlier on the
// oldest open one's day are not counted in that day's amount: a known approximation.)
func countback(rows []behaviourRow, open decimal.Decimal, now time.Time) decimal.Decimal {
	if !open.IsPositive() {
		return decimal.Zero
	}
	oldest := int64(-1)
	for _, r := range rows {
		if r.isOpen && (oldest < 0 || r.seq < oldest) {
			oldest = r.seq
		}
	}
	byDay := map[int64]decimal.Decimal{}
	var last int64
	for _, r := range rows {
		// Only the invoices from the oldest open one on: those paid in the window before it
		// are read too, but must not make DSO depend on the window.
		if r.cancelled || r.issued.After(now) || r.seq < oldest {
			continue
		}
		k := max(1, int64((now.Sub(r.issued)+24*time.Hour-1)/(24*time.Hour)))
		byDay[k] = byDay[k].Add(r.amount)
		last = max(last, k)
	}
	return countbackDays(byDay, last, open)
}

// CompanyPaymentBehaviour is PaymentBehaviour for one company, as REST's
// GET /v1/companies/{id}/payment-behaviour answers it.
//
// Errors: insufficient_scope, invalid_parameter (window_days), not_found (company).
func (s *Reports) CompanyPaymentBehaviour(ctx context.Context, companyID string, windowDays int) (PaymentBehaviour, error) {
	all, err := s.PaymentBehaviour(ctx, []string{companyID}, windowDays)
	if err != nil {
		return PaymentBehaviour{}, err
	}
	b, ok := all[companyID]
	if !ok {
		return PaymentBehaviour{}, errNotFound("company")
	}
	return b, nil
}

// MarshalJSON writes the days as JSON numbers with one decimal (null when absent), and the
// share as the string of three decimals (contract §17).
func (b PaymentBehaviour) MarshalJSON() ([]byte, error) {
	num := func(d *decimal.Decimal) json.RawMessage {
		if d == nil {
			return json.RawMessage("null")
		}
		return json.RawMessage(d.StringFixed(1))
	}
	dso := b.DSODays
	return json.Marshal(struct {
		AsOf                   Timestamp       `json:"as_of"`
		WindowDays             int             `json:"window_days"`
		InvoicesPaid           int             `json:"invoices_paid"`
		AverageDaysToPay       json.RawMessage `json:"average_days_to_pay"`
		AverageDaysBeyondTerms json.RawMessage `json:"average_days_beyond_terms"`
		PaidOnTimeShare        *string         `json:"paid_on_time_share"`
		OpenOverdue            OpenOverdue     `json:"open_overdue"`
		DSODays                json.RawMessage `json:"dso_days"`
		Rating                 *string         `json:"rating"`
	}{b.AsOf, b.WindowDays, b.InvoicesPaid, num(b.AverageDaysToPay), num(b.AverageDaysBeyondTerms), b.PaidOnTimeShare,
		b.OpenOverdue, num(&dso), b.Rating})
}
