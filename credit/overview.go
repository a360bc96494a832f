package credit

import (
	"context"
	"sort"
	"time"

	"github.com/shopspring/decimal"

	"github.com/creditd/creditd/ent/application"
	"github.com/creditd/creditd/ent/company"
	"github.com/creditd/creditd/ent/invoice"
	"github.com/creditd/creditd/ent/ledgerentry"
	"github.com/creditd/creditd/ent/platformdelivery"
)

// The store's morning overview (the console's /): what became overdue, who is near the limit
// or on hold, what waits, and the outstanding balance over time. Each figure is the domain's;
// the console only arranges them.

// NearLimitShare is the utilisation (outstanding ÷ credit limit) from which a company is near
// its limit.
var NearLimitShare = decimal.RequireFromString("0.9")

// OverviewDays is how far back the outstanding history goes.
const OverviewDays = 90

// CompanyFigure is a company with one amount and, where it applies, its utilisation.
type CompanyFigure struct {
	ID, Name string
	Amount   Money
	// Utilization is outstanding ÷ credit limit in percent, rounded down (near-limit list).
	Utilization int
}

// DayBalance is the store's outstanding at the end of a day (UTC).
type DayBalance struct {
	Day         time.Time
	Outstanding decimal.Decimal
}

// Overview is the store's morning overview.
type Overview struct {
	AsOf Timestamp
	// NewlyOverdue are the invoices that fell due in the last 24 hours, by company (the open
	// amount of those invoices), largest first.
	NewlyOverdue []CompanyFigure
	// NearLimit are companies at or above NearLimitShare of their credit limit, most used first.
	NearLimit []CompanyFigure
	// OnHold are companies on hold, with their outstanding balance.
	OnHold []CompanyFigure
	// ApplicationsWaiting counts applications submitted, in review or waiting for information.
	ApplicationsWaiting int
	// FailedDeliveries counts the platform's failed deliveries.
	FailedDeliveries int
	// History is the store's outstanding at the end of each of the last OverviewDays days,
	// oldest first, today last (as of now).
	History []DayBalance
}

// Overview returns the viewer's store's overview. A fixed number of statements; the near-limit
// and on-hold lists read the store's companies' balances, and the history the ledger entries of
// the last 90 days (their amounts and times).
//
// Errors: insufficient_scope (not staff).
func (s *Reports) Overview(ctx context.Context) (Overview, error) {
	if _, err := requireStaff(ctx); err != nil {
		return Overview{}, err
	}
	st, err := s.stores.viewerStore(ctx)
	if err != nil {
		return Overview{}, err
	}
	client := s.db.Reader(ctx)
	now := s.clock.Now()
	cur := st.Currency
	out := Overview{AsOf: At(now)}

	// Newly overdue: open invoices due in the last 24 hours.
	due, err := client.Invoice.Query().
		Where(s.db.InvoicesOpen(true), invoice.DueAtLT(now), invoice.DueAtGTE(now.Add(-24*time.Hour))).
		Select(invoice.FieldCompanyID, invoice.FieldOpenAmount).All(ctx)
	if err != nil {
		return Overview{}, err
	}
	newly := map[string]decimal.Decimal{}
	for _, inv := range due {
		newly[inv.CompanyID] = newly[inv.CompanyID].Add(inv.OpenAmount)
	}

	companies, err := client.Company.Query().
		Select(company.FieldID, company.FieldName, company.FieldCreditLimit, company.FieldOutstanding, company.FieldHoldKind).
		All(ctx)
	if err != nil {
		return Overview{}, err
	}
	total := decimal.Zero
	hundred := decimal.NewFromInt(100)
	for _, c := range companies {
		total = total.Add(c.Outstanding)
		if d, ok := newly[c.ID]; ok {
			out.NewlyOverdue = append(out.NewlyOverdue, CompanyFigure{ID: c.ID, Name: c.Name, Amount: NewMoney(d, cur)})
		}
		if c.HoldKind != nil {
			out.OnHold = append(out.OnHold, CompanyFigure{ID: c.ID, Name: c.Name, Amount: NewMoney(c.Outstanding, cur)})
		}
		if c.CreditLimit.IsPositive() && c.Outstanding.GreaterThanOrEqual(c.CreditLimit.Mul(NearLimitShare)) {
			share := c.Outstanding.Mul(hundred).Div(c.CreditLimit).IntPart()
			out.NearLimit = append(out.NearLimit, CompanyFigure{ID: c.ID, Name: c.Name, Amount: NewMoney(c.Outstanding, cur), Utilization: int(share)})
		}
	}
	byAmount := func(list []CompanyFigure) {
		sort.SliceStable(list, func(i, j int) bool {
			a, b := decimal.RequireFromString(list[i].Amount.Amount), decimal.RequireFromString(list[j].Amount.Amount)
			if !a.Equal(b) {
				return a.GreaterThan(b)
			}
			return list[i].Name < list[j].Name
		})
	}
	byAmount(out.NewlyOverdue)
	byAmount(out.OnHold)
	sort.SliceStable(out.NearLimit, func(i, j int) bool {
		if out.NearLimit[i].Utilization != out.NearLimit[j].Utilization {
			return out.NearLimit[i].Utilization > out.NearLimit[j].Utilization
		}
		return out.NearLimit[i].Name < out.NearLimit[j].Name
	})

	if out.ApplicationsWaiting, err = client.Application.Query().
		Where(application.StatusIn(application.StatusSubmitted, application.StatusInReview, application.StatusNeedsInfo)).
		Count(ctx); err != nil {
		return Overview{}, err
	}
	if out.FailedDeliveries, err = client.PlatformDelivery.Query().
		Where(platformdelivery.StatusEQ(platformdelivery.StatusFailed)).Count(ctx); err != nil {
		return Overview{}, err
	}

	// The history: today's total, less the entries that occurred after each day's end. By
	// occurred_at, not created_at: a back-dated entry (a platform's order of last week, a
	// first import of a company's ledger) belongs to the day it happened, or the chart shows a
	// flat line and a spike on the day of the import.
	today := now.UTC().Truncate(24 * time.Hour)
	start := today.Add(-time.Duration(OverviewDays-1) * 24 * time.Hour)
	entries, err := client.LedgerEntry.Query().Where(ledgerentry.OccurredAtGTE(start)).
		Select(ledgerentry.FieldAmount, ledgerentry.FieldOccurredAt).All(ctx)
	if err != nil {
		return Overview{}, err
	}
	perDay := make([]decimal.Decimal, OverviewDays)
	for _, e := range entries {
		i := int(e.OccurredAt.UTC().Sub(start) / (24 * time.Hour))
		if i >= 0 && i < OverviewDays {
			perDay[i] = perDay[i].Add(e.Amount)
		}
	}
	out.History = make([]DayBalance, OverviewDays)
	balance := total
	for i := OverviewDays - 1; i >= 0; i-- {
		out.History[i] = DayBalance{Day: start.Add(time.Duration(i) * 24 * time.Hour), Outstanding: balance}
		balance = balance.Sub(perDay[i])
	}
	return out, nil
}
