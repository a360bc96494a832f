package credit

import (
	"context"
	"strings"
	"time"
	"unicode/utf8"

	"entgo.io/ent/dialect"
	"github.com/shopspring/decimal"

	"github.com/creditd/creditd/ent"
	"github.com/creditd/creditd/ent/company"
	"github.com/creditd/creditd/ent/invoice"
	"github.com/creditd/creditd/ent/ledgerentry"
	"github.com/creditd/creditd/ids"
)

// Ledger entry kinds.
const (
	KindOrderPlaced    = "order_placed"
	KindPayment        = "payment"
	KindRefund         = "refund"
	KindCancellation   = "cancellation"
	KindAdjustment     = "adjustment"
	KindOpeningBalance = "opening_balance"
)

// LedgerListParams are the inputs of ListLedger.
type LedgerListParams struct {
	ListParams
	// After keeps only entries appended after this entry of the same company.
	After string
	// AfterName names After in errors ("after" in REST, "afterEntry" in GraphQL).
	AfterName string
}

// ListLedger lists a company's ledger newest first, in append order.
//
// Errors: insufficient_scope, not_found (company), invalid_parameter (limit, cursor, after).
func (s *Service) ListLedger(ctx context.Context, companyID string, p LedgerListParams) (Page[LedgerEntry], error) {
	if err := requireScope(ctx, ScopeReadCredit); err != nil {
		return Page[LedgerEntry]{}, err
	}
	n, err := pageSize(p.Limit, p.limitName())
	if err != nil {
		return Page[LedgerEntry]{}, err
	}
	c, err := s.loadCompany(ctx, s.reader(ctx), companyID)
	if err != nil {
		return Page[LedgerEntry]{}, err
	}
	st := c.Edges.Store
	q := s.reader(ctx).LedgerEntry.Query().Where(ledgerentry.CompanyID(c.ID))
	list := "ledger|" + c.ID
	if p.After != "" {
		afterName := p.AfterName
		if afterName == "" {
			afterName = "after"
		}
		var after *ent.LedgerEntry
		if ids.HasPrefix(p.After, "le") {
			after, err = s.reader(ctx).LedgerEntry.Query().
				Where(ledgerentry.ID(p.After), ledgerentry.CompanyID(c.ID)).
				Select(ledgerentry.FieldSeq).Only(ctx)
			if err != nil && !ent.IsNotFound(err) {
				return Page[LedgerEntry]{}, err
			}
		}
		if after == nil {
			return Page[LedgerEntry]{}, ParamErrorf(CodeInvalidParameter, afterName, "%s must be the ID of an entry in this company's ledger", afterName)
		}
		q.Where(ledgerentry.SeqGT(after.Seq))
		list += "|" + p.After
	}
	if p.Cursor != "" {
		cur, err := decodeCursor(st.CursorSecret, list, p.Cursor)
		if err != nil {
			return Page[LedgerEntry]{}, p.renameCursorErr(err)
		}
		q.Where(ledgerentry.SeqLT(cur.Seq))
	}
	rows, err := q.Order(ent.Desc(ledgerentry.FieldSeq)).Limit(n + 1).All(ctx)
	if err != nil {
		return Page[LedgerEntry]{}, err
	}
	return makePage(rows, n, func(e *ent.LedgerEntry) LedgerEntry { return ledgerEntryView(e, st.Currency) },
		func(e *ent.LedgerEntry) string {
			return encodeCursor(st.CursorSecret, cursorPayload{List: list, Seq: e.Seq})
		}), nil
}

// LedgerEntryInput records an entry from the commerce platform's side (admin command line):
// orders, payments, refunds, cancellations, adjustments and opening balances.
type LedgerEntryInput struct {
	CompanyID  string
	Kind       string
	Amount     string
	OrderGID   string
	Note       string
	OccurredAt *Timestamp
}

// RecordLedgerEntry appends an entry to a company's ledger, enforcing the sign convention of
// contract §5, and updates the company's balance in the same transaction.
//
// Errors: not_found (company), validation_failed, invalid_amount.
func (s *Service) RecordLedgerEntry(ctx context.Context, in LedgerEntryInput) (LedgerEntry, Company, error) {
	var entry LedgerEntry
	var view Company
	err := s.inTx(ctx, func(tx *ent.Tx) error {
		c, err := s.lockCompany(ctx, tx, in.CompanyID)
		if err != nil {
			return err
		}
		cur := c.Edges.Store.Currency
		amount, err := ParseAmount(in.Amount, cur, "amount")
		if err != nil {
			return err
		}
		var gid, note *string
		if in.OrderGID != "" {
			gid = &in.OrderGID
		}
		if in.Note != "" {
			if err := checkText(in.Note, "note"); err != nil {
				return err
			}
			note = &in.Note
		}
		if err := checkLedgerSign(in.Kind, amount, gid); err != nil {
			return err
		}
		if gid != nil {
			exists, err := tx.Invoice.Query().Where(invoice.CompanyID(c.ID), invoice.PlatformOrderGid(*gid)).Exist(ctx)
			if err != nil {
				return err
			}
			switch {
			case in.Kind == KindOrderPlaced && exists:
				return ParamErrorf(CodeValidationFailed, "order", "order %s is already in this company's ledger", *gid)
			case in.Kind != KindOrderPlaced && !exists:
				return ParamErrorf(CodeValidationFailed, "order", "order %s has no order_placed entry in this company's ledger", *gid)
			}
		}
		occurred := s.Now()
		if in.OccurredAt != nil {
			occurred = in.OccurredAt.Time
		}
		e, c, err := s.appendEntry(ctx, tx, c, in.Kind, amount, gid, note, occurred)
		if err != nil {
			return err
		}
		entry = ledgerEntryView(e, cur)
		view = companyView(c, c.Edges.Store)
		return nil
	})
	return entry, view, err
}

// checkLedgerSign enforces contract §5: the sign of each kind and when an order GID is required.
//
// Errors: validation_failed, invalid_amount.
func checkLedgerSign(kind string, amount decimal.Decimal, gid *string) error {
	var sign string // "+", "-", "!0" or "any"
	var gidRule string
	switch kind {
	case KindOrderPlaced:
		sign, gidRule = "+", "required"
	case KindPayment:
		sign, gidRule = "-", "optional"
	case KindRefund, KindCancellation:
		sign, gidRule = "-", "required"
	case KindAdjustment:
		sign, gidRule = "!0", "null"
	case KindOpeningBalance:
		sign, gidRule = "any", "null"
	default:
		return ParamErrorf(CodeValidationFailed, "kind", "kind must be one of order_placed, payment, refund, cancellation, adjustment, opening_balance")
	}
	switch {
	case sign == "+" && !amount.IsPositive():
		return ParamErrorf(CodeInvalidAmount, "amount", "%s amounts must be greater than zero", kind)
	case sign == "-" && !amount.IsNegative():
		return ParamErrorf(CodeInvalidAmount, "amount", "%s amounts must be below zero: they reduce what is outstanding", kind)
	case sign == "!0" && amount.IsZero():
		return ParamErrorf(CodeInvalidAmount, "amount", "an adjustment must not be zero")
	}
	switch {
	case gidRule == "required" && gid == nil:
		return ParamErrorf(CodeValidationFailed, "order", "%s entries need the order's GID", kind)
	case gidRule == "null" && gid != nil:
		return ParamErrorf(CodeValidationFailed, "order", "%s entries do not reference an order", kind)
	case gid != nil && !orderGIDPattern.MatchString(*gid):
		return ParamErrorf(CodeValidationFailed, "order", "order must look like gid://platform/Order/123")
	}
	return nil
}

// maxTextLength bounds notes and reasons (contract §3).
const maxTextLength = 500

// checkText checks a note or a reason: see checkField.
//
// Errors: validation_failed (param).
func checkText(s, param string) error { return checkField(s, param, maxTextLength) }

// checkField checks a free-text input the service stores: not blank, at most max characters,
// valid UTF-8, and no control characters other than tab and line breaks (a NUL byte cannot be
// stored in PostgreSQL text, and no name or note needs one).
//
// Errors: validation_failed (param).
func checkField(s, param string, max int) error {
	if strings.TrimSpace(s) == "" {
		return ParamErrorf(CodeValidationFailed, param, "%s must not be empty", param)
	}
	if utf8.RuneCountInString(s) > max {
		return ParamErrorf(CodeValidationFailed, param, "%s must be at most %d characters", param, max)
	}
	if !utf8.ValidString(s) {
		return ParamErrorf(CodeValidationFailed, param, "%s must be valid UTF-8", param)
	}
	for _, r := range s {
		if (r < 0x20 && r != '\t' && r != '\n' && r != '\r') || r == 0x7f {
			return ParamErrorf(CodeValidationFailed, param, "%s must not contain control characters", param)
		}
	}
	return nil
}

// lockCompany reads a company with its store for update: on PostgreSQL it takes the row lock;
// on SQLite the transaction already holds the database's single write lock (BEGIN IMMEDIATE).
// Appends therefore serialise per company and sequence numbers follow commit order.
//
// Errors: not_found.
func (s *Service) lockCompany(ctx context.Context, tx *ent.Tx, id string) (*ent.Company, error) {
	if !ids.HasPrefix(id, "co") {
		return nil, errNotFound("company")
	}
	q := tx.Company.Query().Where(company.ID(id))
	if s.dialect == dialect.Postgres {
		q.ForUpdate()
	}
	c, err := q.Only(ctx)
	if err != nil {
		return nil, notFoundOr(err, "company")
	}
	if c.Edges.Store, err = s.storeByID(ctx, tx.Client(), c.StoreID); err != nil {
		return nil, err
	}
	return c, nil
}

// appendEntry appends one entry to a locked company's ledger and, in the same transaction,
// moves its balance, sequence number and updated_at, applies the entry to the company's
// invoices, and places or lifts the automatic overdue hold. It returns the entry and the
// updated company (with its store edge).
func (s *Service) appendEntry(ctx context.Context, tx *ent.Tx, c *ent.Company, kind string, amount decimal.Decimal, gid, note *string, occurred time.Time) (*ent.LedgerEntry, *ent.Company, error) {
	now := s.Now()
	seq := c.LedgerSeq + 1
	e, err := tx.LedgerEntry.Create().
		SetStoreID(c.StoreID).
		SetCompanyID(c.ID).
		SetSeq(seq).
		SetKind(ledgerentry.Kind(kind)).
		SetAmount(amount).
		SetNillablePlatformOrderGid(gid).
		SetNillableNote(note).
		SetOccurredAt(occurred.UTC().Truncate(time.Microsecond)).
		SetCreatedAt(now).
		Save(ctx)
	if err != nil {
		return nil, nil, err
	}
	st := c.Edges.Store
	updated, err := tx.Company.UpdateOneID(c.ID).
		SetOutstanding(c.Outstanding.Add(amount)).
		SetLedgerSeq(seq).
		SetUpdatedAt(now).
		Save(ctx)
	if err != nil {
		return nil, nil, err
	}
	updated.Edges.Store = st
	if updated, err = s.allocate(ctx, tx, updated, e); err != nil {
		return nil, nil, err
	}
	if updated, err = s.reconcileOverdue(ctx, tx, updated); err != nil {
		return nil, nil, err
	}
	return e, updated, nil
}
