package credit

import (
	"time"

	"github.com/shopspring/decimal"
)

// The allocation replayed from a ledger: the rule of allocate (allocation.go), without the
// database. Contract §17 needs it twice: paid_at for invoices that existed before the column
// did (a migration gives old invoices exactly what the live path writes), and a statement's
// open invoices and aging as of the end of a past day (the entries up to then, replayed).

// SettlementEntry is what the replay reads of one ledger entry.
type SettlementEntry struct {
	ID         string
	Kind       string
	Amount     decimal.Decimal
	OrderGID   *string
	OccurredAt time.Time
}

// ReplayedInvoice is one invoice as the replay leaves it.
type ReplayedInvoice struct {
	// EntryID is the ID of the invoice's order_placed entry.
	EntryID string
	// Open is what is left to pay on it: below or at zero once settled (an order-referenced
	// payment larger than the invoice leaves it negative, as the live path does).
	Open decimal.Decimal
}

// Allocation is the state the allocation rule leaves after a company's entries: what the live
// path holds in its invoices' open_amount and settled_at and the company's unapplied_credit.
type Allocation struct {
	// Invoices are every invoice, in sequence order.
	Invoices []ReplayedInvoice
	// Settled is, by the ID of each settled invoice's order entry, the occurred_at of the
	// entry that brought its open amount to zero.
	Settled map[string]time.Time
	// UnappliedCredit is what payments without an order left over, waiting for the next
	// orders.
	UnappliedCredit decimal.Decimal
}

// ReplayAllocation applies one company's entries, in sequence order, to its invoices as
// allocate does. Given the entries up to a moment, it returns the invoices' open amounts as of
// that moment (Reports.Statement).
func ReplayAllocation(entries []SettlementEntry) Allocation {
	var invoices []*ReplayedInvoice // in sequence order
	byOrder := map[string]*ReplayedInvoice{}
	settled := map[string]time.Time{}
	credit := decimal.Zero
	reduce := func(v *ReplayedInvoice, by decimal.Decimal, at time.Time) {
		was := v.Open.IsPositive()
		v.Open = v.Open.Sub(by)
		if was && !v.Open.IsPositive() {
			settled[v.EntryID] = at
		}
	}
	// open is the invoices not yet settled, oldest first, from first on: payments without an
	// order walk them from the oldest open one, which only moves forward while no invoice
	// reopens (an order-referenced entry only reduces).
	first := 0
	for _, e := range entries {
		switch e.Kind {
		case KindOrderPlaced:
			if e.OrderGID == nil {
				continue
			}
			applied := decimal.Min(credit, e.Amount)
			v := &ReplayedInvoice{EntryID: e.ID, Open: e.Amount}
			if applied.IsPositive() {
				v.Open = v.Open.Sub(applied)
				credit = credit.Sub(applied)
			}
			if !v.Open.IsPositive() {
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
			for first < len(invoices) && !invoices[first].Open.IsPositive() {
				first++
			}
			for _, v := range invoices[first:] {
				if !remaining.IsPositive() {
					break
				}
				if !v.Open.IsPositive() {
					continue
				}
				applied := decimal.Min(remaining, v.Open)
				reduce(v, applied, e.OccurredAt)
				remaining = remaining.Sub(applied)
			}
			if remaining.IsPositive() {
				credit = credit.Add(remaining)
			}
		}
	}
	out := Allocation{Invoices: make([]ReplayedInvoice, len(invoices)), Settled: settled, UnappliedCredit: credit}
	for i, v := range invoices {
		out.Invoices[i] = *v
	}
	return out
}

// ReplaySettlements is ReplayAllocation's settlements: by the ID of each invoice's order
// entry, the occurred_at of the entry that brought its open amount to zero. Invoices still
// open are absent.
func ReplaySettlements(entries []SettlementEntry) map[string]time.Time {
	return ReplayAllocation(entries).Settled
}
