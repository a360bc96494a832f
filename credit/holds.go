package credit

import (
	"context"
	"time"

	"github.com/creditd/creditd/ent"
	"github.com/creditd/creditd/ent/company"
	"github.com/creditd/creditd/tenant"
)

// Holds: a manual hold placed and lifted by an API key or a staff member, and the automatic
// overdue hold (allocation.go), which cannot be lifted while its invoice is unpaid.

// Hold kinds.
const (
	HoldManual  = "manual"
	HoldOverdue = "overdue"
)

// Hold is a company's hold, manual or automatic (overdue).
type Hold struct {
	Kind             string     `json:"kind"`
	Note             *string    `json:"note"`
	PlacedAt         Timestamp  `json:"placed_at"`
	PlacedBy         string     `json:"placed_by"`
	PlatformOrderGID *string    `json:"platform_order_gid"`
	DueAt            *Timestamp `json:"due_at"`
}

func holdView(c *ent.Company) *Hold {
	if c.HoldKind == nil {
		return nil
	}
	return &Hold{
		Kind:             string(*c.HoldKind),
		Note:             c.HoldNote,
		PlacedAt:         At(deref(c.HoldPlacedAt)),
		PlacedBy:         deref(c.HoldPlacedBy),
		PlatformOrderGID: c.HoldOrderGid,
		DueAt:            atPtr(c.HoldDueAt),
	}
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

// PlaceHold places a manual hold on a company, attributed to the viewer (an API key's label or
// a staff member's name).
//
// Errors: insufficient_scope, not_found, validation_failed (note), hold_exists.
func (s *Companies) PlaceHold(ctx context.Context, in HoldInput) (CompanyResult, error) {
	var out CompanyResult
	err := s.companies.writeCompany(ctx, in.CompanyID, func(tx *ent.Tx, c *ent.Company) error {
		if in.Note != nil {
			if err := checkText(*in.Note, "note"); err != nil {
				return err
			}
		}
		if c.HoldKind != nil {
			return Errorf(CodeHoldExists, "company %s already has a %s hold", c.ID, *c.HoldKind)
		}
		v, _ := tenant.FromContext(ctx)
		now := s.clock.Now()
		before := c
		c, err := saveCompany(ctx, c, func(u *ent.CompanyUpdateOne) {
			u.SetHoldKind(company.HoldKindManual).
				SetNillableHoldNote(in.Note).
				SetHoldPlacedAt(now).
				SetHoldPlacedBy(v.Label).
				ClearHoldOrderGid().
				ClearHoldDueAt().
				SetUpdatedAt(now)
		})
		if err != nil {
			return err
		}
		if err := s.events.recordEvent(ctx, tx, c, TimelineHoldPlaced, map[string]any{"kind": HoldManual, "note": in.Note}); err != nil {
			return err
		}
		if err := s.events.emitHoldChange(ctx, tx, EventTypeCompanyHoldPlaced, c, before); err != nil {
			return err
		}
		out = CompanyResult{Company: companyView(c, c.Edges.Store)}
		return nil
	})
	return out, err
}

// LiftHold lifts a company's hold, attributed to the viewer. An automatic overdue hold cannot be
// lifted while its invoice is unpaid. When a manual hold is lifted while an invoice is overdue,
// the overdue hold that waited behind it takes its place at once.
//
// Errors: insufficient_scope, not_found, hold_not_found, hold_not_liftable.
func (s *Companies) LiftHold(ctx context.Context, companyID string) (CompanyResult, error) {
	var out CompanyResult
	err := s.companies.writeCompany(ctx, companyID, func(tx *ent.Tx, c *ent.Company) error {
		if c.HoldKind == nil {
			return Errorf(CodeHoldNotFound, "company %s has no hold", c.ID)
		}
		kind := string(*c.HoldKind)
		if kind == HoldOverdue {
			overdue, err := s.ledger.oldestOverdueInvoice(ctx, tx, c)
			if err != nil {
				return err
			}
			if overdue != nil {
				return Errorf(CodeHoldNotLiftable, "the overdue hold stays until invoice %s (due %s) is paid", overdue.OrderGID, At(overdue.DueAt))
			}
		}
		before := c
		c, err := clearHold(ctx, c, s.clock.Now())
		if err != nil {
			return err
		}
		if err := s.events.recordEvent(ctx, tx, c, TimelineHoldLifted, map[string]any{"kind": kind}); err != nil {
			return err
		}
		if err := s.events.emitHoldChange(ctx, tx, EventTypeCompanyHoldLifted, c, before); err != nil {
			return err
		}
		if c, err = s.ledger.reconcileOverdue(ctx, tx, c); err != nil {
			return err
		}
		out = CompanyResult{Company: companyView(c, c.Edges.Store)}
		return nil
	})
	return out, err
}

// clearHold removes a company's hold, whatever its kind.
func clearHold(ctx context.Context, c *ent.Company, now time.Time) (*ent.Company, error) {
	return saveCompany(ctx, c, func(u *ent.CompanyUpdateOne) {
		u.ClearHoldKind().ClearHoldNote().ClearHoldPlacedAt().ClearHoldPlacedBy().ClearHoldOrderGid().ClearHoldDueAt().
			SetUpdatedAt(now)
	})
}
