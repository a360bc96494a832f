package credit

import (
	"context"
	"time"

	"github.com/shopspring/decimal"

	"github.com/creditd/creditd/ent"
	"github.com/creditd/creditd/ent/company"
	"github.com/creditd/creditd/ids"
)

// How a company is written: locked in the store's order, updated by a function over the row,
// saved with only its changed fields and updated_at never moving back, and the row as the
// update left it without reading it again.

// lockCompany reads a company with its store for update, so that writes to one company take
// turns: its ledger sequence numbers then follow commit order.
//
// Writes to different companies of a store do not wait for each other here: they take turns
// only on the store's event counter, for their events' numbers, just before they commit
// (emit). A transaction that locks several companies (GraphQL mutations under one
// Idempotency-Key, a platform delivery) takes its store's turn before the first
// (RowLocks.TakeStoreTurn), so no two transactions wait for each other's companies; the data
// layer refuses a second company without it (RowLocks.BeforeCompanyLock).
//
// Errors: not_found.
func (s *companyStore) lockCompany(ctx context.Context, tx *ent.Tx, id string) (*ent.Company, error) {
	if !ids.HasPrefix(id, "co") {
		return nil, errNotFound("company")
	}
	if err := s.db.BeforeCompanyLock(tx, id); err != nil {
		return nil, err
	}
	// Every column but the sort keys, which a write never reads (lockedCompanyColumns).
	c, err := tx.Company.Query().Select(lockedCompanyColumns...).
		Where(company.ID(id), s.db.ForUpdate).Only(ctx)
	if err != nil {
		return nil, notFoundOr(err, "company")
	}
	if c.Edges.Store, err = s.stores.storeByID(ctx, tx.Client(), c.StoreID); err != nil {
		return nil, err
	}
	return c, nil
}

// writeCompany runs one of the API's writes to a company (adjustment, limit change, hold
// placed or lifted): it checks write_credit, then runs fn in one transaction with the company
// locked and read with its store, so that the write, the company's new figures and its
// timeline event commit together and writes to one company take turns.
//
// Errors: insufficient_scope, not_found, and fn's.
func (s *companyStore) writeCompany(ctx context.Context, companyID string, fn func(tx *ent.Tx, c *ent.Company) error) error {
	if err := requireScope(ctx, ScopeWriteCredit); err != nil {
		return err
	}
	return s.db.InTx(ctx, func(tx *ent.Tx) error {
		c, err := s.lockCompany(ctx, tx, companyID)
		if err != nil {
			return err
		}
		return fn(tx, c)
	})
}

// saveCompany runs an update of a company read with its store and returns the updated row
// with the same store: an update loads no edges, and every view of a company needs its
// store's currency and buffer.
//
// c is the company as read under its lock (lockCompany) and as returned by earlier updates
// of the same transaction, so the updated row is c with the update's values: it is made here
// and the update runs as one UPDATE statement, where ent's UpdateOne would read the row back
// with a second. An update of a field appliedCompany does not know is read back.
func saveCompany(ctx context.Context, c *ent.Company, update func(u *ent.CompanyUpdateOne)) (*ent.Company, error) {
	st := c.Edges.Store
	u := c.Update()
	update(u)
	keepUpdatedAtMonotonic(c, u.Mutation())
	m := u.Mutation()
	// The sort keys follow the figures in the same statement (orderkeys.go).
	limit, limitSet := m.CreditLimit()
	outstanding, outstandingSet := m.Outstanding()
	if limitSet || outstandingSet {
		if !limitSet {
			limit = c.CreditLimit
		}
		if !outstandingSet {
			outstanding = c.Outstanding
		}
		setFigureKeys(u, c, limit, outstanding)
	}
	next, ok := appliedCompany(c, m)
	if !ok {
		updated, err := u.Save(ctx)
		if err != nil {
			return nil, err
		}
		updated.Edges.Store = st
		return updated, nil
	}
	// The same mutation, hooks (the tenant's store) included, as an update by ID.
	m.SetOp(ent.OpUpdate)
	m.Where(company.ID(c.ID))
	v, err := m.Client().Mutate(ctx, m)
	if err != nil {
		return nil, err
	}
	if n, _ := v.(int); n != 1 {
		return nil, errNotFound("company")
	}
	return next, nil
}

// keepUpdatedAtMonotonic keeps a company's updated_at from decreasing (contract §11),
// whatever the clock of the process writing (instances' clocks differ by a little; a sweep as
// of another moment does not stamp it): a sync that keeps the later copy keeps the last one.
func keepUpdatedAtMonotonic(c *ent.Company, m *ent.CompanyMutation) {
	if t, ok := m.UpdatedAt(); ok && t.Before(c.UpdatedAt) {
		m.SetUpdatedAt(c.UpdatedAt)
	}
}

// appliedCompany returns c with the values m sets and clears, and false when m does anything
// else (adds to a number, sets a field not listed in setCompanyField).
func appliedCompany(c *ent.Company, m *ent.CompanyMutation) (*ent.Company, bool) {
	if len(m.AddedFields()) > 0 {
		return nil, false
	}
	next := *c
	for _, name := range m.ClearedFields() {
		if !setCompanyField(&next, name, nil) {
			return nil, false
		}
	}
	for _, name := range m.Fields() {
		v, _ := m.Field(name)
		if !setCompanyField(&next, name, v) {
			return nil, false
		}
	}
	return &next, true
}

// setCompanyField sets one field of c as an update writes it (nil clears a nullable field),
// and reports whether it knows the field and the value's type.
func setCompanyField(c *ent.Company, name string, v ent.Value) bool {
	ok := true
	switch name {
	case company.FieldCreditLimit:
		c.CreditLimit, ok = v.(decimal.Decimal)
	case company.FieldOutstanding:
		c.Outstanding, ok = v.(decimal.Decimal)
	case company.FieldUnappliedCredit:
		c.UnappliedCredit, ok = v.(decimal.Decimal)
	case company.FieldOutstandingKey:
		c.OutstandingKey, ok = v.(string)
	case company.FieldCreditLimitKey:
		c.CreditLimitKey, ok = v.(string)
	case company.FieldAvailableKey:
		c.AvailableKey, ok = v.(string)
	case company.FieldUtilizationKey:
		c.UtilizationKey, ok = v.(string)
	case company.FieldLedgerSeq:
		c.LedgerSeq, ok = v.(int64)
	case company.FieldUpdatedAt:
		c.UpdatedAt, ok = v.(time.Time)
	case company.FieldHoldKind:
		c.HoldKind, ok = nullable[company.HoldKind](v)
	case company.FieldHoldNote:
		c.HoldNote, ok = nullable[string](v)
	case company.FieldHoldPlacedBy:
		c.HoldPlacedBy, ok = nullable[string](v)
	case company.FieldHoldOrderGid:
		c.HoldOrderGid, ok = nullable[string](v)
	case company.FieldHoldPlacedAt:
		c.HoldPlacedAt, ok = nullable[time.Time](v)
	case company.FieldHoldDueAt:
		c.HoldDueAt, ok = nullable[time.Time](v)
	default:
		return false
	}
	return ok
}

// nullable is a nullable field's value: nil for a cleared one.
func nullable[T any](v ent.Value) (*T, bool) {
	if v == nil {
		return nil, true
	}
	t, ok := v.(T)
	return &t, ok
}
