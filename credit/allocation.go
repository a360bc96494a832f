package credit

import (
	"context"
	"time"

	"github.com/shopspring/decimal"

	"github.com/creditd/creditd/ent"
	"github.com/creditd/creditd/ent/company"
	"github.com/creditd/creditd/ent/invoice"
	"github.com/creditd/creditd/ent/ledgerentry"
)

// Allocation and overdue holds (contract §5): what the ledger writer (ledgerWriter) does after
// each append. The invoices' reads are Invoices' (invoice_reads.go), their collection writes
// invoice_writes.go; the sweep that reconciles overdue holds as time passes is
// Maintenance.SweepHolds (maintenance.go).
//
// Each order_placed entry is an invoice due at its occurred_at plus the company's NET days at
// that moment, or, for an order the platform sent, plus that order's own payment terms.
// Entries that reference the order (payments, refunds, cancellations) reduce what is open on
// it; payments without an order are applied to the oldest open invoices first, and what is
// left waits as unapplied credit for the next orders. A company with an open invoice past its
// due date gets an automatic overdue hold; it is lifted automatically when nothing is overdue
// any more. A manual hold is never replaced: the overdue hold waits behind it.

// allocate applies a freshly appended entry to the company's invoices and returns the company
// with its unapplied credit updated. An order's invoice is due dueDays after it was placed.
//
// Each invoice whose open amount the entry brings to zero, and that is thereby paid (not
// cancelled), gets its invoice.paid event in the same transaction, after the entry's
// ledger_entry.created (contract §17).
func (s *ledgerWriter) allocate(ctx context.Context, tx *ent.Tx, c *ent.Company, e *ent.LedgerEntry, dueDays int) (*ent.Company, error) {
	c, settled, err := allocateEntry(ctx, tx, s.conds, c, e, dueDays)
	if err != nil {
		return nil, err
	}
	return c, s.emitInvoicesPaid(ctx, tx, c, settled)
}

// allocateEntry is allocate without the events: it returns the company and the IDs of the
// invoices the entry settled (brought to zero), in the order it settled them.
func allocateEntry(ctx context.Context, tx *ent.Tx, conds IndexedConditions, c *ent.Company, e *ent.LedgerEntry, dueDays int) (*ent.Company, []string, error) {
	var settled []string
	switch string(e.Kind) {
	case KindOrderPlaced:
		open := e.Amount
		credit := c.UnappliedCredit
		applied := decimal.Min(credit, open)
		if applied.IsPositive() {
			open = open.Sub(applied)
			credit = credit.Sub(applied)
		}
		created, err := tx.Invoice.Create().
			SetStoreID(c.StoreID).
			SetCompanyID(c.ID).
			SetLedgerEntryID(e.ID).
			SetSeq(e.Seq).
			SetPlatformOrderGid(*e.PlatformOrderGid).
			SetAmount(e.Amount).
			SetOpenAmount(open).
			SetOpen(open.IsPositive()).
			SetDueAt(e.OccurredAt.Add(time.Duration(dueDays) * 24 * time.Hour)).
			SetNillableSettledAt(settledAt(decimal.Zero, open, e)).
			Save(ctx)
		if err != nil {
			return nil, nil, err
		}
		if !open.IsPositive() {
			settled = append(settled, created.ID)
		}
		if !credit.Equal(c.UnappliedCredit) {
			c, err = setUnappliedCredit(ctx, c, credit)
			return c, settled, err
		}
		return c, settled, nil
	case KindPayment, KindRefund, KindCancellation:
		if e.PlatformOrderGid != nil {
			inv, err := tx.Invoice.Query().Where(invoice.CompanyID(c.ID), invoice.PlatformOrderGid(*e.PlatformOrderGid)).Only(ctx)
			if err != nil {
				return nil, nil, err
			}
			open := inv.OpenAmount.Add(e.Amount)
			at := settledAt(inv.OpenAmount, open, e)
			if at != nil {
				settled = append(settled, inv.ID)
			}
			u := tx.Invoice.UpdateOne(inv).SetOpenAmount(open).SetOpen(open.IsPositive()).SetNillableSettledAt(at)
			if e.Kind == ledgerentry.KindCancellation {
				// The invoice is cancelled from now on, whatever else was or will be paid on it.
				u.SetCancelled(true)
			}
			return c, settled, u.Exec(ctx)
		}
		// A payment without an order: oldest open invoices first.
		remaining := e.Amount.Neg()
		for remaining.IsPositive() {
			batch, err := tx.Invoice.Query().
				Where(invoice.CompanyID(c.ID), conds.InvoicesOpen(true)).
				Order(ent.Asc(invoice.FieldSeq)).Limit(100).All(ctx)
			if err != nil {
				return nil, nil, err
			}
			if len(batch) == 0 {
				break
			}
			for _, inv := range batch {
				applied := decimal.Min(remaining, inv.OpenAmount)
				open := inv.OpenAmount.Sub(applied)
				at := settledAt(inv.OpenAmount, open, e)
				if err := tx.Invoice.UpdateOne(inv).SetOpenAmount(open).SetOpen(open.IsPositive()).
					SetNillableSettledAt(at).Exec(ctx); err != nil {
					return nil, nil, err
				}
				if at != nil {
					settled = append(settled, inv.ID)
				}
				remaining = remaining.Sub(applied)
				if !remaining.IsPositive() {
					break
				}
			}
		}
		if remaining.IsPositive() {
			c, err := setUnappliedCredit(ctx, c, c.UnappliedCredit.Add(remaining))
			return c, settled, err
		}
	}
	return c, settled, nil
}

// emitInvoicesPaid appends invoice.paid for each of the invoices invoiceIDs (just settled by the
// same transaction's entry) that is paid: one that a cancellation settled is cancelled, and
// no invoice.paid is said of it. The object is the invoice as GET /v1/invoices/{id} shows it,
// read in tx.
func (s *ledgerWriter) emitInvoicesPaid(ctx context.Context, tx *ent.Tx, c *ent.Company, invoiceIDs []string) error {
	if len(invoiceIDs) == 0 {
		return nil
	}
	views, err := s.invoices.invoiceViewsByID(ctx, tx.Client(), c.Edges.Store, invoiceIDs)
	if err != nil {
		return err
	}
	for _, v := range views {
		if v.Status != InvoicePaid {
			continue
		}
		if err := s.events.emit(ctx, tx, c.StoreID, EventTypeInvoicePaid, v, nil); err != nil {
			return err
		}
	}
	return nil
}

// settledAt is the moment to record as an invoice's settled_at when entry e moves its open
// amount from before to after: e's occurred_at when this is the entry that brings it to zero
// (an order entry starts from zero, so an order fully covered by credit is settled when
// placed), else nil, which leaves the column as it is. ReplaySettlements is the same rule.
func settledAt(before, after decimal.Decimal, e *ent.LedgerEntry) *time.Time {
	if (before.IsPositive() || e.Kind == ledgerentry.KindOrderPlaced) && !after.IsPositive() {
		t := e.OccurredAt
		return &t
	}
	return nil
}

func setUnappliedCredit(ctx context.Context, c *ent.Company, credit decimal.Decimal) (*ent.Company, error) {
	return saveCompany(ctx, c, func(u *ent.CompanyUpdateOne) { u.SetUnappliedCredit(credit) })
}

// overdueInvoice names the invoice behind an overdue hold.
type overdueInvoice struct {
	OrderGID string
	DueAt    time.Time
}

// oldestOverdueInvoice returns the company's open invoice whose due date passed longest ago,
// or nil when none is overdue.
func (s *ledgerWriter) oldestOverdueInvoice(ctx context.Context, tx *ent.Tx, c *ent.Company) (*overdueInvoice, error) {
	inv, err := tx.Invoice.Query().
		Where(invoice.CompanyID(c.ID), s.conds.InvoicesOpen(true), invoice.DueAtLT(s.clock.asOf(ctx))).
		Order(ent.Asc(invoice.FieldDueAt), ent.Asc(invoice.FieldSeq)).
		First(ctx)
	if ent.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &overdueInvoice{OrderGID: inv.PlatformOrderGid, DueAt: inv.DueAt}, nil
}

// reconcileOverdue places or lifts the company's automatic overdue hold to match its invoices.
// The company must be locked by tx. It returns the company as it now is.
//
// A manual hold is never replaced (contract §5: the overdue hold waits until it is lifted,
// and lifting it reconciles), so under one nothing below can change, whatever the invoices:
// they are not read.
func (s *ledgerWriter) reconcileOverdue(ctx context.Context, tx *ent.Tx, c *ent.Company) (*ent.Company, error) {
	if c.HoldKind != nil && *c.HoldKind == company.HoldKindManual {
		return c, nil
	}
	overdue, err := s.oldestOverdueInvoice(ctx, tx, c)
	if err != nil {
		return nil, err
	}
	now := s.clock.Now()
	isOverdueHold := c.HoldKind != nil && *c.HoldKind == company.HoldKindOverdue
	switch {
	case overdue != nil && c.HoldKind == nil:
		before := c
		c, err = saveCompany(ctx, c, func(u *ent.CompanyUpdateOne) {
			u.SetHoldKind(company.HoldKindOverdue).
				ClearHoldNote().
				SetHoldPlacedAt(now).
				SetHoldPlacedBy(systemActor.Label).
				SetHoldOrderGid(overdue.OrderGID).
				SetHoldDueAt(overdue.DueAt).
				SetUpdatedAt(now)
		})
		if err != nil {
			return nil, err
		}
		if err := s.events.emitHoldChange(ctx, tx, EventTypeCompanyHoldPlaced, c, before); err != nil {
			return nil, err
		}
		return c, s.events.recordEventAs(ctx, tx, c, systemActor, TimelineOverdueHoldPlaced, map[string]any{
			"kind": HoldOverdue, "platform_order_gid": overdue.OrderGID, "due_at": At(overdue.DueAt),
		})
	case overdue != nil && isOverdueHold && (deref(c.HoldOrderGid) != overdue.OrderGID || !deref(c.HoldDueAt).Equal(overdue.DueAt)):
		// Still overdue, but the invoice that triggered the hold was paid while an older or
		// other one is overdue: the hold names the one that keeps it in place. The company's
		// representation changed, so the feed says so (contract §11): company.hold_changed.
		before := c
		if c, err = saveCompany(ctx, c, func(u *ent.CompanyUpdateOne) {
			u.SetHoldOrderGid(overdue.OrderGID).SetHoldDueAt(overdue.DueAt).SetUpdatedAt(now)
		}); err != nil {
			return nil, err
		}
		return c, s.events.emitHoldChange(ctx, tx, EventTypeCompanyHoldChanged, c, before)
	case overdue == nil && isOverdueHold:
		before := c
		if c, err = clearHold(ctx, c, now); err != nil {
			return nil, err
		}
		if err := s.events.emitHoldChange(ctx, tx, EventTypeCompanyHoldLifted, c, before); err != nil {
			return nil, err
		}
		return c, s.events.recordEventAs(ctx, tx, c, systemActor, TimelineOverdueHoldLifted, map[string]any{"kind": HoldOverdue})
	}
	return c, nil
}
