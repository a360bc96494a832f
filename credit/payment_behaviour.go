package credit

import (
	"context"
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

// averageDaysBeyondTerms returns, per company, the average of (paid_at − due_at) in days over
// the invoices paid in the window ending at asOf, weighted by invoice amount and rounded to
// one decimal (negative when paid early). Cancelled invoices never count; a company that paid
// nothing in the window is absent. One statement for all the companies.
func averageDaysBeyondTerms(ctx context.Context, client *ent.Client, companyIDs []string, asOf time.Time, windowDays int) (map[string]decimal.Decimal, error) {
	out := map[string]decimal.Decimal{}
	if len(companyIDs) == 0 {
		return out, nil
	}
	rows, err := client.Invoice.Query().
		Where(invoice.CompanyIDIn(companyIDs...), invoice.Open(false),
			invoice.SettledAtGT(asOf.Add(-time.Duration(windowDays)*24*time.Hour)), invoice.SettledAtLTE(asOf),
			invoice.Not(cancelledInvoice())).
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
