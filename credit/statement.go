package credit

import (
	"context"
	"time"

	"github.com/shopspring/decimal"

	"github.com/creditd/creditd/ent"
	"github.com/creditd/creditd/ent/invoice"
	"github.com/creditd/creditd/ent/ledgerentry"
)

// Statement is a company's statement of account for the UTC days From..To inclusive (issue 38
// item 3, contract §17). It reconciles by construction:
// OpeningBalance + Σ Entries = ClosingBalance = Aging.Total + NotInvoiced, and ClosingBalance
// is the sum of the Totals added to OpeningBalance.
type Statement struct {
	Company        Company         `json:"company"`
	Store          StatementStore  `json:"store"`
	From           string          `json:"from"`
	To             string          `json:"to"`
	OpeningBalance Money           `json:"opening_balance"`
	Entries        []LedgerEntry   `json:"entries"`
	ClosingBalance Money           `json:"closing_balance"`
	Totals         StatementTotals `json:"totals"`
	// OpenInvoices, Aging and NotInvoiced are as of the end of To (StatementAsOf): the
	// allocation rule replayed over the entries up to then (ReplayAllocation).
	OpenInvoices []StatementInvoice `json:"open_invoices"`
	Aging        Aging              `json:"aging"`
	NotInvoiced  Money              `json:"not_invoiced"`
}

// StatementInvoice is an invoice open at the end of a statement's period, with what was open
// on it and how far past due it was then. It leaves out the live view's fields that the past
// does not have (status, paid_at, expected_payment_at).
type StatementInvoice struct {
	ID               string    `json:"id"`
	PlatformOrderGID string    `json:"platform_order_gid"`
	Amount           Money     `json:"amount"`
	OpenAmount       Money     `json:"open_amount"`
	IssuedAt         Timestamp `json:"issued_at"`
	DueAt            Timestamp `json:"due_at"`
	DaysOverdue      int       `json:"days_overdue"`
}

// StatementStore is what a statement shows of the store that issues it.
type StatementStore struct {
	Name     string `json:"name"`
	Currency string `json:"currency"`
	// Locale is how the store writes amounts for people (FormatLocalAmount): the PDF's, not
	// the JSON's.
	Locale string `json:"-"`
}

// StatementTotals sum the period's signed entry amounts by kind, so that
// opening + invoiced + paid + credited + adjusted = closing: invoiced is order_placed,
// paid is payment, credited is refund and cancellation, adjusted is adjustment and
// opening_balance.
type StatementTotals struct {
	Invoiced Money `json:"invoiced"`
	Paid     Money `json:"paid"`
	Credited Money `json:"credited"`
	Adjusted Money `json:"adjusted"`
}

// maxStatementDays bounds a statement's period (five years) so that one request cannot read a
// ledger without end.
const maxStatementDays = 5*366 + 1

// ParseStatementPeriod checks a statement's from and to (YYYY-MM-DD, UTC days) against now,
// refusing with the first of StatementPeriodErrors.
//
// Errors: invalid_parameter (from, to).
func ParseStatementPeriod(from, to string, now time.Time) (time.Time, time.Time, error) {
	f, t, errs := checkStatementPeriod(from, to, now)
	if len(errs) > 0 {
		return f, t, errs[0]
	}
	return f, t, nil
}

// StatementPeriodErrors checks a statement's period, every refusal at once (the console's
// period picker): from and to each a date, YYYY-MM-DD; then, both read, from not after to,
// to not after today (UTC) and the period at most 5 years.
func StatementPeriodErrors(from, to string, now time.Time) []error {
	_, _, errs := checkStatementPeriod(from, to, now)
	return errs
}

// checkStatementPeriod is StatementPeriodErrors with the days it read.
func checkStatementPeriod(from, to string, now time.Time) (time.Time, time.Time, []error) {
	var errs []error
	f, ferr := time.Parse(time.DateOnly, from)
	if ferr != nil {
		errs = append(errs, ParamErrorf(CodeInvalidParameter, "from", "from must be a date, YYYY-MM-DD"))
	}
	t, terr := time.Parse(time.DateOnly, to)
	if terr != nil {
		errs = append(errs, ParamErrorf(CodeInvalidParameter, "to", "to must be a date, YYYY-MM-DD"))
	}
	if len(errs) > 0 {
		return f, t, errs
	}
	switch {
	case f.After(t):
		errs = append(errs, ParamErrorf(CodeInvalidParameter, "from", "from must not be after to"))
	case t.After(now.UTC()):
		errs = append(errs, ParamErrorf(CodeInvalidParameter, "to", "to must not be in the future"))
	case t.Sub(f) > maxStatementDays*24*time.Hour:
		errs = append(errs, ParamErrorf(CodeInvalidParameter, "to", "the period from from to to must not exceed 5 years"))
	}
	return f, t, errs
}

// StatementAsOf is the moment a statement to the UTC day to shows its open invoices and aging
// at: the last instant (microsecond) of that day, or now when that is earlier (to is today),
// so that a statement to today shows the live figures.
func StatementAsOf(to, now time.Time) time.Time {
	last := to.Add(24*time.Hour - time.Microsecond)
	if now.Before(last) {
		return now
	}
	return last
}

// Statement returns a company's statement of account for the UTC days from..to inclusive,
// reading the company's entries up to the end of to once (the period's, and those before for
// the opening balance and the replayed allocation) and its invoices' due dates.
//
// Errors: insufficient_scope, invalid_parameter (from, to), not_found (company).
func (s *Reports) Statement(ctx context.Context, companyID, from, to string) (Statement, error) {
	if err := requireScope(ctx, ScopeReadCredit); err != nil {
		return Statement{}, err
	}
	now := s.clock.Now()
	f, t, err := ParseStatementPeriod(from, to, now)
	if err != nil {
		return Statement{}, err
	}
	client := s.db.Reader(ctx)
	c, err := s.companies.loadCompany(ctx, client, companyID)
	if err != nil {
		return Statement{}, err
	}
	st := c.Edges.Store
	end := t.Add(24 * time.Hour)
	rows, err := s.db.ReadLedgerEntries(ctx, client.LedgerEntry.Query().
		Where(ledgerentry.CompanyID(c.ID), ledgerentry.OccurredAtLT(end)).
		Order(ent.Asc(ledgerentry.FieldSeq)), ledgerViewColumns)
	if err != nil {
		return Statement{}, err
	}
	// The opening balance is the balance_after of the last entry before the period: entries
	// are appended in seq order, which is also the running balance's order.
	opening := decimal.Zero
	replay := make([]SettlementEntry, 0, len(rows))
	var period []*ent.LedgerEntry
	for _, e := range rows {
		replay = append(replay, SettlementEntry{ID: e.ID, Kind: string(e.Kind), Amount: e.Amount,
			OrderGID: e.PlatformOrderGid, OccurredAt: e.OccurredAt})
		if e.OccurredAt.Before(f) {
			opening = e.BalanceAfter
		} else {
			period = append(period, e)
		}
	}
	var inv, paid, cred, adj decimal.Decimal
	closing := opening
	entries := make([]LedgerEntry, 0, len(period))
	for _, e := range period {
		entries = append(entries, ledgerEntryView(e, st.Currency))
		closing = closing.Add(e.Amount)
		switch string(e.Kind) {
		case KindOrderPlaced:
			inv = inv.Add(e.Amount)
		case KindPayment:
			paid = paid.Add(e.Amount)
		case KindRefund, KindCancellation:
			cred = cred.Add(e.Amount)
		default:
			adj = adj.Add(e.Amount)
		}
	}
	cur := st.Currency
	open, aging, err := statementInvoices(ctx, client, c.ID, replay, StatementAsOf(t, now), cur)
	if err != nil {
		return Statement{}, err
	}
	closingMoney := NewMoney(closing, cur)
	return Statement{
		Company:        companyView(c, st),
		Store:          StatementStore{Name: st.Name, Currency: cur, Locale: st.Locale},
		From:           f.Format(time.DateOnly),
		To:             t.Format(time.DateOnly),
		OpeningBalance: NewMoney(opening, cur),
		Entries:        entries,
		ClosingBalance: closingMoney,
		Totals: StatementTotals{Invoiced: NewMoney(inv, cur), Paid: NewMoney(paid, cur),
			Credited: NewMoney(cred, cur), Adjusted: NewMoney(adj, cur)},
		OpenInvoices: open,
		Aging:        aging,
		NotInvoiced:  NotInvoiced(closingMoney, aging),
	}, nil
}

// statementInvoices replays the allocation over entries (a company's, in sequence order, up to
// a moment) and returns the invoices it leaves open, oldest first, with their aging as of asOf,
// bucketed as agingSums buckets the live ones (agingBounds).
func statementInvoices(ctx context.Context, client *ent.Client, companyID string, entries []SettlementEntry, asOf time.Time, cur string) ([]StatementInvoice, Aging, error) {
	open := map[string]decimal.Decimal{}
	for _, v := range ReplayAllocation(entries).Invoices {
		if v.Open.IsPositive() {
			open[v.EntryID] = v.Open
		}
	}
	issued := make(map[string]time.Time, len(open))
	for _, e := range entries {
		if _, ok := open[e.ID]; ok {
			issued[e.ID] = e.OccurredAt
		}
	}
	out := []StatementInvoice{}
	var sums [5]decimal.Decimal
	if len(open) > 0 {
		// The company's invoices issued up to then: their due dates and order GIDs are fixed
		// when they are issued.
		rows, err := client.Invoice.Query().Where(invoice.CompanyID(companyID)).
			Select(invoice.FieldID, invoice.FieldLedgerEntryID, invoice.FieldSeq, invoice.FieldPlatformOrderGid,
				invoice.FieldAmount, invoice.FieldDueAt).
			Order(ent.Asc(invoice.FieldSeq)).All(ctx)
		if err != nil {
			return nil, Aging{}, err
		}
		bounds := agingBounds(asOf)
		for _, r := range rows {
			amount, ok := open[r.LedgerEntryID]
			if !ok {
				continue
			}
			b := 0
			for b < len(bounds) && r.DueAt.Before(bounds[b]) {
				b++
			}
			sums[b] = sums[b].Add(amount)
			out = append(out, StatementInvoice{
				ID:               r.ID,
				PlatformOrderGID: r.PlatformOrderGid,
				Amount:           NewMoney(r.Amount, cur),
				OpenAmount:       NewMoney(amount, cur),
				IssuedAt:         At(issued[r.LedgerEntryID]),
				DueAt:            At(r.DueAt),
				DaysOverdue:      daysOverdue(r.DueAt, asOf),
			})
		}
	}
	return out, agingOfSums(sums, cur), nil
}
