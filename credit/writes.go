package credit

import (
	"context"
	"time"

	"github.com/shopspring/decimal"

	"github.com/creditd/creditd/ent"
	"github.com/creditd/creditd/ent/company"
	"github.com/creditd/creditd/ent/timelineevent"
	"github.com/creditd/creditd/tenant"
)

// Timeline event types.
const (
	EventAdjustmentCreated  = "adjustment_created"
	EventCreditLimitChanged = "credit_limit_changed"
	EventHoldPlaced         = "hold_placed"
	EventHoldLifted         = "hold_lifted"
	EventOverdueHoldPlaced  = "overdue_hold_placed"
	EventOverdueHoldLifted  = "overdue_hold_lifted"
)

// AdjustmentInput is the body of POST /companies/{id}/adjustments. Nil pointers are fields the
// caller left out.
type AdjustmentInput struct {
	CompanyID string
	Amount    *string
	// AmountNotString is set when the caller sent the amount as a JSON number: refused with
	// invalid_amount, in the same place as every other amount check.
	AmountNotString bool
	Note            *string
	Currency        *string
}

// AdjustmentResult is what an adjustment returns.
type AdjustmentResult struct {
	LedgerEntry LedgerEntry `json:"ledger_entry"`
	Company     Company     `json:"company"`
}

// CreditLimitInput is the body of PUT /companies/{id}/credit-limit.
type CreditLimitInput struct {
	CompanyID       string
	Amount          *string
	AmountNotString bool
	Reason          *string
	Currency        *string
}

// CreditLimitResult is what a limit change returns.
type CreditLimitResult struct {
	Company             Company `json:"company"`
	PreviousCreditLimit Money   `json:"previous_credit_limit"`
}

// HoldInput is the body of POST /companies/{id}/hold.
type HoldInput struct {
	CompanyID string
	Note      *string
}

// CompanyResult is what placing or lifting a hold returns.
type CompanyResult struct {
	Company Company `json:"company"`
}

// CreateAdjustment appends a signed adjustment to a company's ledger, attributed to the viewer.
// The entry, the new balance and the timeline event commit together.
//
// Errors: insufficient_scope, not_found, validation_failed (note), invalid_amount,
// currency_mismatch.
func (s *Service) CreateAdjustment(ctx context.Context, in AdjustmentInput) (AdjustmentResult, error) {
	if err := requireScope(ctx, ScopeWriteCredit); err != nil {
		return AdjustmentResult{}, err
	}
	var out AdjustmentResult
	err := s.inTx(ctx, func(tx *ent.Tx) error {
		c, err := s.lockCompany(ctx, tx, in.CompanyID)
		if err != nil {
			return err
		}
		cur := c.Edges.Store.Currency
		amount, err := requiredAmount(in.Amount, in.AmountNotString, in.Currency, cur)
		if err != nil {
			return err
		}
		if amount.IsZero() {
			return ParamErrorf(CodeInvalidAmount, "amount", "an adjustment must not be zero")
		}
		if in.Note == nil {
			return ParamErrorf(CodeValidationFailed, "note", "note is required")
		}
		if err := checkText(*in.Note, "note"); err != nil {
			return err
		}
		e, c, err := s.appendEntry(ctx, tx, c, KindAdjustment, amount, nil, in.Note, s.Now())
		if err != nil {
			return err
		}
		if err := s.recordEvent(ctx, tx, c, EventAdjustmentCreated, map[string]any{
			"ledger_entry_id": e.ID,
			"amount":          NewMoney(amount, cur),
			"note":            *in.Note,
		}); err != nil {
			return err
		}
		out = AdjustmentResult{LedgerEntry: ledgerEntryView(e, cur), Company: companyView(c, c.Edges.Store)}
		return nil
	})
	return out, err
}

// SetCreditLimit replaces a company's credit limit, attributed to the viewer.
//
// Errors: insufficient_scope, not_found, validation_failed (reason), invalid_amount,
// currency_mismatch, limit_below_zero.
func (s *Service) SetCreditLimit(ctx context.Context, in CreditLimitInput) (CreditLimitResult, error) {
	if err := requireScope(ctx, ScopeWriteCredit); err != nil {
		return CreditLimitResult{}, err
	}
	var out CreditLimitResult
	err := s.inTx(ctx, func(tx *ent.Tx) error {
		c, err := s.lockCompany(ctx, tx, in.CompanyID)
		if err != nil {
			return err
		}
		cur := c.Edges.Store.Currency
		amount, err := requiredAmount(in.Amount, in.AmountNotString, in.Currency, cur)
		if err != nil {
			return err
		}
		if amount.IsNegative() {
			return ParamErrorf(CodeLimitBelowZero, "amount", "credit limit must be zero or greater")
		}
		if in.Reason != nil {
			if err := checkText(*in.Reason, "reason"); err != nil {
				return err
			}
		}
		previous := c.CreditLimit
		st := c.Edges.Store
		c, err = tx.Company.UpdateOneID(c.ID).SetCreditLimit(amount).SetUpdatedAt(s.Now()).Save(ctx)
		if err != nil {
			return err
		}
		c.Edges.Store = st
		if err := s.recordEvent(ctx, tx, c, EventCreditLimitChanged, map[string]any{
			"previous_credit_limit": NewMoney(previous, cur),
			"credit_limit":          NewMoney(amount, cur),
			"reason":                in.Reason,
		}); err != nil {
			return err
		}
		out = CreditLimitResult{Company: companyView(c, st), PreviousCreditLimit: NewMoney(previous, cur)}
		return nil
	})
	return out, err
}

// PlaceHold places a manual hold on a company, attributed to the viewer (an API key's label or
// a staff member's name).
//
// Errors: insufficient_scope, not_found, validation_failed (note), hold_exists.
func (s *Service) PlaceHold(ctx context.Context, in HoldInput) (CompanyResult, error) {
	if err := requireScope(ctx, ScopeWriteCredit); err != nil {
		return CompanyResult{}, err
	}
	var out CompanyResult
	err := s.inTx(ctx, func(tx *ent.Tx) error {
		c, err := s.lockCompany(ctx, tx, in.CompanyID)
		if err != nil {
			return err
		}
		if in.Note != nil {
			if err := checkText(*in.Note, "note"); err != nil {
				return err
			}
		}
		if c.HoldKind != nil {
			return Errorf(CodeHoldExists, "company %s already has a %s hold", c.ID, *c.HoldKind)
		}
		v, _ := tenant.FromContext(ctx)
		now := s.Now()
		st := c.Edges.Store
		c, err = tx.Company.UpdateOneID(c.ID).
			SetHoldKind(company.HoldKindManual).
			SetNillableHoldNote(in.Note).
			SetHoldPlacedAt(now).
			SetHoldPlacedBy(v.Label).
			ClearHoldOrderGid().
			ClearHoldDueAt().
			SetUpdatedAt(now).
			Save(ctx)
		if err != nil {
			return err
		}
		c.Edges.Store = st
		if err := s.recordEvent(ctx, tx, c, EventHoldPlaced, map[string]any{"kind": "manual", "note": in.Note}); err != nil {
			return err
		}
		out = CompanyResult{Company: companyView(c, st)}
		return nil
	})
	return out, err
}

// LiftHold lifts a company's hold, attributed to the viewer. An automatic overdue hold cannot be
// lifted while its invoice is unpaid. When a manual hold is lifted while an invoice is overdue,
// the overdue hold that waited behind it takes its place at once.
//
// Errors: insufficient_scope, not_found, hold_not_found, hold_not_liftable.
func (s *Service) LiftHold(ctx context.Context, companyID string) (CompanyResult, error) {
	if err := requireScope(ctx, ScopeWriteCredit); err != nil {
		return CompanyResult{}, err
	}
	var out CompanyResult
	err := s.inTx(ctx, func(tx *ent.Tx) error {
		c, err := s.lockCompany(ctx, tx, companyID)
		if err != nil {
			return err
		}
		if c.HoldKind == nil {
			return Errorf(CodeHoldNotFound, "company %s has no hold", c.ID)
		}
		kind := string(*c.HoldKind)
		if kind == "overdue" {
			overdue, err := s.oldestOverdueInvoice(ctx, tx, c)
			if err != nil {
				return err
			}
			if overdue != nil {
				return Errorf(CodeHoldNotLiftable, "the overdue hold stays until invoice %s (due %s) is paid", overdue.OrderGID, At(overdue.DueAt))
			}
		}
		st := c.Edges.Store
		c, err = clearHold(ctx, tx, c, s.Now())
		if err != nil {
			return err
		}
		c.Edges.Store = st
		if err := s.recordEvent(ctx, tx, c, EventHoldLifted, map[string]any{"kind": kind}); err != nil {
			return err
		}
		if c, err = s.reconcileOverdue(ctx, tx, c); err != nil {
			return err
		}
		out = CompanyResult{Company: companyView(c, c.Edges.Store)}
		return nil
	})
	return out, err
}

func clearHold(ctx context.Context, tx *ent.Tx, c *ent.Company, now time.Time) (*ent.Company, error) {
	return tx.Company.UpdateOneID(c.ID).
		ClearHoldKind().ClearHoldNote().ClearHoldPlacedAt().ClearHoldPlacedBy().ClearHoldOrderGid().ClearHoldDueAt().
		SetUpdatedAt(now).
		Save(ctx)
}

// ErrAmountNotString is the answer to an amount sent as a JSON number: amounts are decimal
// strings, so that no client ever rounds them through a float.
func ErrAmountNotString(param string) error {
	return ParamErrorf(CodeInvalidAmount, param, "%s must be a decimal string such as \"1500.00\", not a JSON number", param)
}

// requiredAmount parses a write body's amount in the company's currency, checking the
// optional currency first.
//
// Errors: validation_failed (missing), currency_mismatch, invalid_amount.
func requiredAmount(amount *string, notString bool, currency *string, companyCurrency string) (decimal.Decimal, error) {
	if notString {
		return decimal.Decimal{}, ErrAmountNotString("amount")
	}
	if amount == nil {
		return decimal.Decimal{}, ParamErrorf(CodeValidationFailed, "amount", "amount is required")
	}
	if currency != nil && *currency != companyCurrency {
		return decimal.Decimal{}, ParamErrorf(CodeCurrencyMismatch, "currency", "this company's amounts are in %s, not %q", companyCurrency, *currency)
	}
	return ParseAmount(*amount, companyCurrency, "amount")
}

// recordEvent appends a timeline event for a write, attributed to the viewer.
func (s *Service) recordEvent(ctx context.Context, tx *ent.Tx, c *ent.Company, typ string, data map[string]any) error {
	v, _ := tenant.FromContext(ctx)
	actor := Actor{Type: v.ActorType, Label: v.Label}
	if v.IsSystem() || actor.Type == "" {
		actor = Actor{Type: "system", Label: "system"}
	}
	return s.recordEventAs(ctx, tx, c, actor, typ, data)
}

// recordEventAs appends a timeline event with an explicit actor, numbering it after the
// company's previous event.
func (s *Service) recordEventAs(ctx context.Context, tx *ent.Tx, c *ent.Company, actor Actor, typ string, data map[string]any) error {
	seq, err := tx.Company.UpdateOneID(c.ID).AddTimelineSeq(1).Save(ctx)
	if err != nil {
		return err
	}
	return tx.TimelineEvent.Create().
		SetStoreID(c.StoreID).
		SetCompanyID(c.ID).
		SetSeq(seq.TimelineSeq).
		SetType(typ).
		SetActorType(timelineevent.ActorType(actor.Type)).
		SetActorLabel(actor.Label).
		SetOccurredAt(s.Now()).
		SetData(data).
		Exec(ctx)
}
