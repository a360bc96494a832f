package credit

import (
	"context"
	"regexp"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/creditd/creditd/ent"
	"github.com/creditd/creditd/ent/invoice"
	"github.com/creditd/creditd/ent/ledgerentry"
	"github.com/creditd/creditd/ids"
)

// Each company's append-only ledger: entries recorded from the platform's side (orders,
// payments, refunds, cancellations, opening balances), adjustments made through the API, and
// the reads, including the batched first pages GraphQL asks for a whole page of companies.

// Ledger entry kinds.
const (
	KindOrderPlaced    = "order_placed"
	KindPayment        = "payment"
	KindRefund         = "refund"
	KindCancellation   = "cancellation"
	KindAdjustment     = "adjustment"
	KindOpeningBalance = "opening_balance"
)

// PlatformLedgerKinds are the kinds of entries that record what happened on the commerce
// platform (orders, payments, refunds, cancellations, opening balances), in the contract's
// order: the staff console records them with Ledger.Record. An adjustment is a decision of
// the store's own, made with CreateAdjustment (the API's write), which also puts it on the
// timeline under its author's name; Ledger.Record still accepts one for the command line.
var PlatformLedgerKinds = []string{KindOrderPlaced, KindPayment, KindRefund, KindCancellation, KindOpeningBalance}

var orderGIDPattern = regexp.MustCompile(`^gid://platform/Order/[0-9]{1,20}$`)

// LedgerEntry is one ledger entry as the API shows it.
type LedgerEntry struct {
	ID string `json:"id"`
	// CompanyID names the company whose ledger holds the entry, so that an event or a webhook
	// about the entry says whose balance moved (contract §11, 2026-11-24).
	CompanyID string `json:"company_id"`
	Kind      string `json:"kind"`
	Amount    Money  `json:"amount"`
	// BalanceAfter is the company's outstanding right after this entry (contract §5,
	// 2026-11-27): the sum of its entries up to this one, stored when it was appended.
	BalanceAfter     Money     `json:"balance_after"`
	PlatformOrderGID *string   `json:"platform_order_gid"`
	Note             *string   `json:"note"`
	OccurredAt       Timestamp `json:"occurred_at"`
}

// ledgerViewColumns are the columns ledgerEntryView and the pages' cursors read: pages
// select only these.
var ledgerViewColumns = []string{
	ledgerentry.FieldID, ledgerentry.FieldCompanyID, ledgerentry.FieldSeq, ledgerentry.FieldKind,
	ledgerentry.FieldAmount, ledgerentry.FieldPlatformOrderGid, ledgerentry.FieldNote, ledgerentry.FieldOccurredAt,
	ledgerentry.FieldBalanceAfter,
}

func ledgerEntryView(e *ent.LedgerEntry, currency string) LedgerEntry {
	return LedgerEntry{
		ID:               e.ID,
		CompanyID:        e.CompanyID,
		Kind:             string(e.Kind),
		Amount:           NewMoney(e.Amount, currency),
		BalanceAfter:     NewMoney(e.BalanceAfter, currency),
		PlatformOrderGID: e.PlatformOrderGid,
		Note:             e.Note,
		OccurredAt:       At(e.OccurredAt),
	}
}

// LedgerListParams are the inputs of Ledger.List.
type LedgerListParams struct {
	ListParams
	// After keeps only entries appended after this entry of the same company. Errors about it
	// name it "after" (GraphQL renames it "afterEntry").
	After string
}

// List lists a company's ledger newest first, in append order.
//
// Errors: insufficient_scope, not_found (company), invalid_parameter (limit, cursor, after).
func (s *Ledger) List(ctx context.Context, companyID string, p LedgerListParams) (Page[LedgerEntry], error) {
	if err := requireScope(ctx, ScopeReadCredit); err != nil {
		return Page[LedgerEntry]{}, err
	}
	n, err := pageSize(p.Limit)
	if err != nil {
		return Page[LedgerEntry]{}, err
	}
	c, err := s.companies.loadCompany(ctx, s.db.Reader(ctx), companyID)
	if err != nil {
		return Page[LedgerEntry]{}, err
	}
	st := c.Edges.Store
	q := s.db.Reader(ctx).LedgerEntry.Query().Where(ledgerentry.CompanyID(c.ID))
	list := "ledger|" + c.ID
	if p.After != "" {
		var after *ent.LedgerEntry
		if ids.HasPrefix(p.After, "le") {
			after, err = s.db.Reader(ctx).LedgerEntry.Query().
				Where(ledgerentry.ID(p.After), ledgerentry.CompanyID(c.ID)).
				Select(ledgerentry.FieldSeq).Only(ctx)
			if err != nil && !ent.IsNotFound(err) {
				return Page[LedgerEntry]{}, err
			}
		}
		if after == nil {
			return Page[LedgerEntry]{}, errLedgerAfter()
		}
		q.Where(ledgerentry.SeqGT(after.Seq))
		list += "|" + p.After
	}
	if p.Cursor != "" {
		cur, err := decodeCursor(st.CursorSecret, list, p.Cursor)
		if err != nil {
			return Page[LedgerEntry]{}, err
		}
		q.Where(ledgerentry.SeqLT(cur.Seq))
	}
	rows, err := s.db.ReadLedgerEntries(ctx, q.Order(ent.Desc(ledgerentry.FieldSeq)).Limit(n+1), ledgerViewColumns)
	if err != nil {
		return Page[LedgerEntry]{}, err
	}
	return makePage(rows, n, func(e *ent.LedgerEntry) LedgerEntry { return ledgerEntryView(e, st.Currency) },
		func(e *ent.LedgerEntry) string {
			return encodeCursor(st.CursorSecret, cursorPayload{List: list, Seq: e.Seq})
		}), nil
}

// CheckLedgerAfter checks the form of a ledger list's after before the list is read (see
// CheckListParams): a ledger entry's ID. Ledger.List checks that it is one of the company's.
//
// Errors: invalid_parameter (after).
func CheckLedgerAfter(after string) error {
	if after == "" || ids.HasPrefix(after, "le") {
		return nil
	}
	return errLedgerAfter()
}

func errLedgerAfter() error {
	return ParamErrorf(CodeInvalidParameter, "after", "after must be the ID of an entry in this company's ledger")
}

// Get returns one ledger entry of the viewer's store, so that GraphQL's node(id:)
// can refetch any object it has shown.
//
// Errors: insufficient_scope, not_found (unknown ID or another store's).
func (s *Ledger) Get(ctx context.Context, id string) (LedgerEntry, error) {
	if err := requireScope(ctx, ScopeReadCredit); err != nil {
		return LedgerEntry{}, err
	}
	if !ids.HasPrefix(id, "le") {
		return LedgerEntry{}, errNotFound("ledger entry")
	}
	e, err := s.db.Reader(ctx).LedgerEntry.Query().Where(ledgerentry.ID(id)).WithStore().Only(ctx)
	if err != nil {
		return LedgerEntry{}, notFoundOr(err, "ledger entry")
	}
	return ledgerEntryView(e, e.Edges.Store.Currency), nil
}

// AdjustmentInput is the body of POST /companies/{id}/adjustments.
type AdjustmentInput struct {
	CompanyID string
	Amount    AmountInput
	// Note is required; nil means the caller left it out.
	Note     *string
	Currency *string
}

// AdjustmentResult is what an adjustment returns.
type AdjustmentResult struct {
	LedgerEntry LedgerEntry `json:"ledger_entry"`
	Company     Company     `json:"company"`
}

// CreateAdjustment appends a signed adjustment to a company's ledger, attributed to the viewer.
// The entry, the new balance and the timeline event commit together.
//
// Errors: insufficient_scope, not_found, validation_failed (note), invalid_amount,
// currency_mismatch.
func (s *Ledger) CreateAdjustment(ctx context.Context, in AdjustmentInput) (AdjustmentResult, error) {
	var out AdjustmentResult
	err := s.companies.writeCompany(ctx, in.CompanyID, func(tx *ent.Tx, c *ent.Company) error {
		cur := c.Edges.Store.Currency
		amount, errs := checkAdjustment(in, cur)
		if len(errs) > 0 {
			return errs[0]
		}
		e, c, err := s.ledger.appendEntry(ctx, tx, c, KindAdjustment, amount, nil, in.Note, s.clock.Now())
		if err != nil {
			return err
		}
		if err := s.events.recordEvent(ctx, tx, c, TimelineAdjustmentCreated, map[string]any{
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

// LedgerEntryInput records an entry from the commerce platform's side (the admin command
// line): orders, payments, refunds, cancellations, adjustments and opening balances.
type LedgerEntryInput struct {
	CompanyID  string
	Kind       string
	Amount     string
	OrderGID   string
	Note       string
	OccurredAt *Timestamp
}

// Record appends an entry to a company of the staff member's store, enforcing the
// sign convention of contract §5, and updates the company's balance in the same transaction.
//
// Errors: insufficient_scope (not staff), not_found (company), validation_failed,
// invalid_amount.
func (s *Ledger) Record(ctx context.Context, in LedgerEntryInput) (LedgerEntry, Company, error) {
	if _, err := requireStaff(ctx); err != nil {
		return LedgerEntry{}, Company{}, err
	}
	var entry LedgerEntry
	var view Company
	err := s.db.InTx(ctx, func(tx *ent.Tx) error {
		c, err := s.companies.lockCompany(ctx, tx, in.CompanyID)
		if err != nil {
			return err
		}
		cur := c.Edges.Store.Currency
		amount, errs := checkLedgerEntry(in, cur)
		if len(errs) > 0 {
			return errs[0]
		}
		var gid, note *string
		if in.OrderGID != "" {
			gid = &in.OrderGID
		}
		if in.Note != "" {
			note = &in.Note
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
		occurred := s.clock.Now()
		if in.OccurredAt != nil {
			occurred = in.OccurredAt.Time
		}
		e, c, err := s.ledger.appendEntry(ctx, tx, c, in.Kind, amount, gid, note, occurred)
		if err != nil {
			return err
		}
		// Contract §5: every adjustment is on the timeline, under its author's name,
		// whichever side made it; so is every other entry a person or a key records.
		typ, data := TimelineLedgerEntryRecorded, map[string]any{
			"ledger_entry_id": e.ID,
			"kind":            in.Kind,
			"amount":          NewMoney(amount, cur),
			"order":           gid,
			"note":            note,
		}
		if in.Kind == KindAdjustment {
			typ, data = TimelineAdjustmentCreated, map[string]any{
				"ledger_entry_id": e.ID,
				"amount":          NewMoney(amount, cur),
				"note":            note,
			}
		}
		if err := s.events.recordEvent(ctx, tx, c, typ, data); err != nil {
			return err
		}
		entry = ledgerEntryView(e, cur)
		view = companyView(c, c.Edges.Store)
		return nil
	})
	return entry, view, err
}

// Recorders returns who recorded each of a company's entries, keyed by entry ID, in one
// statement: for the ledger's "by" column. Entries appended before the actor was kept are
// absent, as are IDs that are not entries of the company.
//
// Errors: insufficient_scope, not_found (company).
func (s *Ledger) Recorders(ctx context.Context, companyID string, entryIDs []string) (map[string]Actor, error) {
	if err := requireScope(ctx, ScopeReadCredit); err != nil {
		return nil, err
	}
	client := s.db.Reader(ctx)
	c, err := s.companies.loadCompany(ctx, client, companyID)
	if err != nil {
		return nil, err
	}
	rows, err := client.LedgerEntry.Query().
		Where(ledgerentry.CompanyID(c.ID), ledgerentry.IDIn(entryIDs...), ledgerentry.RecordedByTypeNotNil()).
		Select(ledgerentry.FieldID, ledgerentry.FieldRecordedByType, ledgerentry.FieldRecordedByLabel).
		All(ctx)
	if err != nil {
		return nil, err
	}
	out := make(map[string]Actor, len(rows))
	for _, r := range rows {
		out[r.ID] = Actor{Type: *r.RecordedByType, Label: derefOr(r.RecordedByLabel, "")}
	}
	return out, nil
}

func derefOr(s *string, def string) string {
	if s == nil {
		return def
	}
	return *s
}

// ReducesOutstanding reports whether entries of kind always lower what is outstanding, and so
// are recorded with a negative amount (contract §5): payments, refunds and cancellations.
func ReducesOutstanding(kind string) bool {
	return ledgerKinds[kind].sign == "-"
}

// ledgerKindRule is contract §5's sign convention for one kind: the sign its amounts have
// ("+", "-", "!0" for any but zero, or "any") and whether it names an order ("required",
// "optional" or "null"). The checks of an entry and ReducesOutstanding read it.
type ledgerKindRule struct{ sign, gid string }

var ledgerKinds = map[string]ledgerKindRule{
	KindOrderPlaced:    {"+", "required"},
	KindPayment:        {"-", "optional"},
	KindRefund:         {"-", "required"},
	KindCancellation:   {"-", "required"},
	KindAdjustment:     {"!0", "null"},
	KindOpeningBalance: {"any", "null"},
}

// SignedByKind turns an amount a person entered as a positive figure (a payment of 2950) into
// the signed amount the ledger records: negated for the kinds that reduce what is outstanding,
// unchanged for the others. The ledger's sign rule is unchanged; this is the one place where a
// form's figure gets its sign.
//
// Errors: invalid_amount (param "amount") when such an amount was entered with a minus sign.
func SignedByKind(kind, amount string) (string, error) {
	amount = strings.TrimSpace(amount)
	if !ReducesOutstanding(kind) || amount == "" {
		return amount, nil
	}
	if strings.HasPrefix(amount, "-") {
		return "", ParamErrorf(CodeInvalidAmount, "amount", "enter the %s as a positive amount: it is recorded as lowering what is outstanding", strings.ReplaceAll(kind, "_", " "))
	}
	return "-" + amount, nil
}

// Contract §5's rules of an entry, a field at a time (checkLedgerEntry checks them in turn):
// the kind is known, the sign of its amount, and when it names an order.

// checkLedgerKind refuses a kind that is not one of the ledger's.
//
// Errors: validation_failed (param "kind").
func checkLedgerKind(kind string) error {
	if _, known := ledgerKinds[kind]; !known {
		return ParamErrorf(CodeValidationFailed, "kind", "kind must be one of order_placed, payment, refund, cancellation, adjustment, opening_balance")
	}
	return nil
}

// checkLedgerAmountSign refuses an amount whose sign the kind does not allow.
//
// Errors: invalid_amount (param "amount").
func checkLedgerAmountSign(kind string, amount decimal.Decimal) error {
	switch sign := ledgerKinds[kind].sign; {
	case sign == "+" && !amount.IsPositive():
		return ParamErrorf(CodeInvalidAmount, "amount", "%s amounts must be greater than zero", kind)
	case sign == "-" && !amount.IsNegative():
		return ParamErrorf(CodeInvalidAmount, "amount", "%s amounts must be below zero: they reduce what is outstanding", kind)
	case sign == "!0" && amount.IsZero():
		return ParamErrorf(CodeInvalidAmount, "amount", "an adjustment must not be zero")
	}
	return nil
}

// checkLedgerOrder refuses an order GID the kind needs and lacks, or has and must not, or
// one that is not an order's GID; an unknown kind's only rule is the GID's form.
//
// Errors: validation_failed (param "order").
func checkLedgerOrder(kind string, gid *string) error {
	switch gidRule := ledgerKinds[kind].gid; {
	case gidRule == "required" && gid == nil:
		return ParamErrorf(CodeValidationFailed, "order", "%s entries need the order's GID", kind)
	case gidRule == "null" && gid != nil:
		return ParamErrorf(CodeValidationFailed, "order", "%s entries do not reference an order", kind)
	case gid != nil && !orderGIDPattern.MatchString(*gid):
		return ParamErrorf(CodeValidationFailed, "order", "order must look like gid://platform/Order/123")
	}
	return nil
}

// appendEntry appends one entry to a locked company's ledger and, in the same transaction,
// moves its balance, sequence number and updated_at, applies the entry to the company's
// invoices, and places or lifts the automatic overdue hold. It returns the entry and the
// updated company (with its store edge). An order's invoice is due after the company's NET
// days.
func (s *ledgerWriter) appendEntry(ctx context.Context, tx *ent.Tx, c *ent.Company, kind string, amount decimal.Decimal, gid, note *string, occurred time.Time) (*ent.LedgerEntry, *ent.Company, error) {
	return s.appendEntryDue(ctx, tx, c, kind, amount, gid, note, occurred, c.PaymentTermsDays, actorOf(ctx))
}

// appendEntryDue is appendEntry with the days after which an order's invoice is due: the
// platform's terms for that order win over the company's (contract §13), and the actor the
// entry is recorded by (the platform's deliveries are the platform's, also when staff retry).
func (s *ledgerWriter) appendEntryDue(ctx context.Context, tx *ent.Tx, c *ent.Company, kind string, amount decimal.Decimal, gid, note *string, occurred time.Time, dueDays int, by Actor) (*ent.LedgerEntry, *ent.Company, error) {
	now := s.clock.Now()
	seq := c.LedgerSeq + 1
	// The company is locked (lockCompany) and its entries are appended one at a time in
	// sequence order, so its outstanding plus this amount is the balance right after it.
	balance := c.Outstanding.Add(amount)
	e, err := tx.LedgerEntry.Create().
		SetStoreID(c.StoreID).
		SetCompanyID(c.ID).
		SetSeq(seq).
		SetKind(ledgerentry.Kind(kind)).
		SetAmount(amount).
		SetBalanceAfter(balance).
		SetNillablePlatformOrderGid(gid).
		SetNillableNote(note).
		SetOccurredAt(occurred.UTC().Truncate(time.Microsecond)).
		SetCreatedAt(now).
		SetRecordedByType(by.Type).
		SetRecordedByLabel(by.Label).
		Save(ctx)
	if err != nil {
		return nil, nil, err
	}
	updated, err := saveCompany(ctx, c, func(u *ent.CompanyUpdateOne) {
		u.SetOutstanding(balance).SetLedgerSeq(seq).SetUpdatedAt(now)
	})
	if err != nil {
		return nil, nil, err
	}
	if err := s.events.emit(ctx, tx, c.StoreID, EventTypeLedgerEntryCreated, ledgerEntryView(e, c.Edges.Store.Currency), nil); err != nil {
		return nil, nil, err
	}
	if updated, err = s.allocate(ctx, tx, updated, e, dueDays); err != nil {
		return nil, nil, err
	}
	if updated, err = s.reconcileOverdue(ctx, tx, updated); err != nil {
		return nil, nil, err
	}
	return e, updated, nil
}
