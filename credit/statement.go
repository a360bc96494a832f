package credit

import (
	"context"
	"time"

	"github.com/shopspring/decimal"

	"github.com/creditd/creditd/ent"
	"github.com/creditd/creditd/ent/ledgerentry"
)

// Statement is a company's statement of account for the UTC days From..To inclusive (issue 38
// item 3, contract §17). It reconciles by construction:
// OpeningBalance + Σ Entries = ClosingBalance, and ClosingBalance is the sum of the Totals
// added to OpeningBalance.
type Statement struct {
	Company        Company         `json:"company"`
	Store          StatementStore  `json:"store"`
	From           string          `json:"from"`
	To             string          `json:"to"`
	OpeningBalance Money           `json:"opening_balance"`
	Entries        []LedgerEntry   `json:"entries"`
	ClosingBalance Money           `json:"closing_balance"`
	Totals         StatementTotals `json:"totals"`
}

// StatementStore is what a statement shows of the store that issues it.
type StatementStore struct {
	Name     string `json:"name"`
	Currency string `json:"currency"`
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

// ParseStatementPeriod checks a statement's from and to (YYYY-MM-DD, UTC days) against now.
//
// Errors: invalid_parameter (from, to).
func ParseStatementPeriod(from, to string, now time.Time) (time.Time, time.Time, error) {
	f, err := time.Parse(time.DateOnly, from)
	if err != nil {
		return f, f, ParamErrorf(CodeInvalidParameter, "from", "from must be a date, YYYY-MM-DD")
	}
	t, err := time.Parse(time.DateOnly, to)
	if err != nil {
		return f, t, ParamErrorf(CodeInvalidParameter, "to", "to must be a date, YYYY-MM-DD")
	}
	switch {
	case f.After(t):
		return f, t, ParamErrorf(CodeInvalidParameter, "from", "from must not be after to")
	case t.After(now.UTC()):
		return f, t, ParamErrorf(CodeInvalidParameter, "to", "to must not be in the future")
	case t.Sub(f) > maxStatementDays*24*time.Hour:
		return f, t, ParamErrorf(CodeInvalidParameter, "to", "the period from from to to must not exceed 5 years")
	}
	return f, t, nil
}

// Statement returns a company's statement of account for the UTC days from..to inclusive.
//
// Errors: insufficient_scope, invalid_parameter (from, to), not_found (company).
func (s *Reports) Statement(ctx context.Context, companyID, from, to string) (Statement, error) {
	if err := requireScope(ctx, ScopeReadCredit); err != nil {
		return Statement{}, err
	}
	f, t, err := ParseStatementPeriod(from, to, s.Now())
	if err != nil {
		return Statement{}, err
	}
	c, err := s.loadCompany(ctx, s.reader(ctx), companyID)
	if err != nil {
		return Statement{}, err
	}
	st := c.Edges.Store
	end := t.Add(24 * time.Hour)
	// The opening balance is the balance_after of the last entry before the period: entries
	// are appended in seq order, which is also the running balance's order.
	opening := decimal.Zero
	before, err := s.db.ReadLedgerEntries(ctx, s.reader(ctx).LedgerEntry.Query().
		Where(ledgerentry.CompanyID(c.ID), ledgerentry.OccurredAtLT(f)).
		Order(ent.Desc(ledgerentry.FieldSeq)).Limit(1), ledgerViewColumns)
	if err != nil {
		return Statement{}, err
	}
	if len(before) == 1 {
		opening = before[0].BalanceAfter
	}
	rows, err := s.db.ReadLedgerEntries(ctx, s.reader(ctx).LedgerEntry.Query().
		Where(ledgerentry.CompanyID(c.ID), ledgerentry.OccurredAtGTE(f), ledgerentry.OccurredAtLT(end)).
		Order(ent.Asc(ledgerentry.FieldSeq)), ledgerViewColumns)
	if err != nil {
		return Statement{}, err
	}
	var inv, paid, cred, adj decimal.Decimal
	closing := opening
	entries := make([]LedgerEntry, 0, len(rows))
	for _, e := range rows {
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
	return Statement{
		Company:        companyView(c, st),
		Store:          StatementStore{Name: st.Name, Currency: cur},
		From:           f.Format(time.DateOnly),
		To:             t.Format(time.DateOnly),
		OpeningBalance: NewMoney(opening, cur),
		Entries:        entries,
		ClosingBalance: NewMoney(closing, cur),
		Totals: StatementTotals{Invoiced: NewMoney(inv, cur), Paid: NewMoney(paid, cur),
			Credited: NewMoney(cred, cur), Adjusted: NewMoney(adj, cur)},
	}, nil
}
