package credit

import (
	"time"

	"github.com/shopspring/decimal"
)

// When each invoice was settled, replayed from a ledger (contract §17's paid_at for invoices
// that existed before the column did): the allocation rule of allocate (invoices.go), without
// the database, so that a migration gives old invoices exactly what the live path writes.

// SettlementEntry is what the replay reads of one ledger entry.
type SettlementEntry struct {
	ID         string
	Kind       string
	Amount     decimal.Decimal
	OrderGID   *string
	OccurredAt time.Time
}

// ReplaySettlements applies one company's entries, in sequence order, to its invoices as
// allocate does, and returns, by the ID of each invoice's order entry, the occurred_at of the
// entry that brought its open amount to zero. Invoices still open are absent.
func ReplaySettlements(entries []SettlementEntry) map[string]time.Time {
	type inv struct {
		entryID string
		open    decimal.Decimal
	}
	var invoices []*inv // in sequence order
	byOrder := map[string]*inv{}
	settled := map[string]time.Time{}
	credit := decimal.Zero
	reduce := func(v *inv, by decimal.Decimal, at time.Time) {
		was := v.open.IsPositive()
		v.open = v.open.Sub(by)
		if was && !v.open.IsPositive() {
			settled[v.entryID] = at
		}
	}
	for _, e := range entries {
		switch e.Kind {
		case KindOrderPlaced:
			if e.OrderGID == nil {
				continue
			}
			applied := decimal.Min(credit, e.Amount)
			v := &inv{entryID: e.ID, open: e.Amount}
			if applied.IsPositive() {
				v.open = v.open.Sub(applied)
				credit = credit.Sub(applied)
			}
			if !v.open.IsPositive() {
				settled[e.ID] = e.OccurredAt
			}
			invoices = append(invoices, v)
			byOrder[*e.OrderGID] = v
		case KindPayment, KindRefund, KindCancellation:
			if e.OrderGID != nil {
				if v := byOrder[*e.OrderGID]; v != nil {
					reduce(v, e.Amount.Neg(), e.OccurredAt)
				}
				continue
			}
			remaining := e.Amount.Neg()
			for _, v := range invoices {
				if !remaining.IsPositive() {
					break
				}
				if !v.open.IsPositive() {
					continue
				}
				applied := decimal.Min(remaining, v.open)
				reduce(v, applied, e.OccurredAt)
				remaining = remaining.Sub(applied)
			}
			if remaining.IsPositive() {
				credit = credit.Add(remaining)
			}
		}
	}
	return settled
}
