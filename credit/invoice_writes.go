package credit

import (
	"context"
	"fmt"
	"time"

	"github.com/creditd/creditd/ent"
	"github.com/creditd/creditd/ent/invoice"
	"github.com/creditd/creditd/ids"
)

// The writes on one invoice (contract §17): a promise to pay recorded or withdrawn, a dispute
// opened or resolved. Each runs with the invoice's company locked, as the ledger's writes do,
// so that it takes turns with the allocation that may settle the invoice meanwhile; each has
// its feed event and a timeline event attributed to the key's label or the staff member.

// Invoice event types (contract §17). Each one's object is the invoice.
const (
	// EventTypeInvoicePromiseRecorded: a promise to pay was recorded (or replaced one).
	EventTypeInvoicePromiseRecorded EventType = "invoice.promise_recorded"
	// EventTypeInvoicePromiseWithdrawn: the promise was withdrawn (DELETE .../promise).
	EventTypeInvoicePromiseWithdrawn EventType = "invoice.promise_withdrawn"
	// EventTypeInvoiceDisputed: a dispute was opened (or its reason replaced).
	EventTypeInvoiceDisputed EventType = "invoice.disputed"
	// EventTypeInvoiceDisputeResolved: the dispute was resolved (DELETE .../dispute).
	EventTypeInvoiceDisputeResolved EventType = "invoice.dispute_resolved"
)

// Timeline event types of the invoice writes.
const (
	TimelinePromiseRecorded  TimelineKind = "promise_recorded"
	TimelinePromiseWithdrawn TimelineKind = "promise_withdrawn"
	TimelineInvoiceDisputed  TimelineKind = "invoice_disputed"
	TimelineDisputeResolved  TimelineKind = "dispute_resolved"
)

// MaxPromiseDays is how far ahead a promise to pay may be dated: 90 days from today (UTC).
const MaxPromiseDays = 90

// Promise is an invoice's promise to pay.
type Promise struct {
	// PromisedFor is the UTC day the company promised to pay by, as YYYY-MM-DD.
	PromisedFor string    `json:"promised_for"`
	Note        *string   `json:"note"`
	RecordedBy  string    `json:"recorded_by"`
	RecordedAt  Timestamp `json:"recorded_at"`
	// BrokenAt is when the sweep found the invoice still open the day after PromisedFor
	// (invoice.promise_broken); null until then.
	BrokenAt *Timestamp `json:"broken_at"`
}

// Dispute is an invoice's open dispute.
type Dispute struct {
	Reason   string    `json:"reason"`
	OpenedBy string    `json:"opened_by"`
	OpenedAt Timestamp `json:"opened_at"`
}

func promiseView(r *ent.Invoice) *Promise {
	if r.PromisedFor == nil {
		return nil
	}
	return &Promise{
		PromisedFor: r.PromisedFor.UTC().Format(time.DateOnly),
		Note:        r.PromiseNote,
		RecordedBy:  deref(r.PromiseRecordedBy),
		RecordedAt:  At(deref(r.PromiseRecordedAt)),
		BrokenAt:    atPtr(r.PromiseBrokenAt),
	}
}

func disputeView(r *ent.Invoice) *Dispute {
	if r.DisputeReason == nil {
		return nil
	}
	return &Dispute{Reason: *r.DisputeReason, OpenedBy: deref(r.DisputeOpenedBy), OpenedAt: At(deref(r.DisputeOpenedAt))}
}

// PromiseInput is the body of POST /invoices/{id}/promise.
type PromiseInput struct {
	InvoiceID string
	// PromisedFor is a UTC day, YYYY-MM-DD, from today to MaxPromiseDays ahead.
	PromisedFor string
	// Note is optional, 1 to 500 characters when given.
	Note *string
}

// DisputeInput is the body of POST /invoices/{id}/dispute.
type DisputeInput struct {
	InvoiceID string
	// Reason is 1 to 500 characters.
	Reason string
}

// InvoiceResult is what an invoice write returns: the invoice as GET /invoices/{id} then
// shows it.
type InvoiceResult struct {
	Invoice Invoice `json:"invoice"`
}

// checkPromisedFor parses a promise's day and checks it is from today to MaxPromiseDays
// ahead, today being now's UTC day.
//
// Errors: validation_failed (promised_for).
func checkPromisedFor(s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, ParamErrorf(CodeValidationFailed, "promised_for", "promised_for is required: the day the company promised to pay by, as YYYY-MM-DD")
	}
	day, err := time.Parse(time.DateOnly, s)
	if err != nil {
		return time.Time{}, ParamErrorf(CodeValidationFailed, "promised_for", "promised_for must be a date as YYYY-MM-DD, such as %s", now.UTC().Format(time.DateOnly))
	}
	today := now.UTC().Truncate(24 * time.Hour)
	last := today.AddDate(0, 0, MaxPromiseDays)
	if day.Before(today) || day.After(last) {
		return time.Time{}, ParamErrorf(CodeValidationFailed, "promised_for",
			"promised_for must be from today (%s) to %d days ahead (%s), UTC", today.Format(time.DateOnly), MaxPromiseDays, last.Format(time.DateOnly))
	}
	return day, nil
}

// RecordPromise records the company's promise to pay the invoice by a day, replacing any
// promise it had (a new promise can be broken again), attributed to the viewer:
// invoice.promise_recorded (previous.promise the one replaced, when there was one). While its
// day has not passed, the invoice gets no reminder.
//
// Errors: insufficient_scope, validation_failed (promised_for, note), not_found (unknown ID or
// another store's invoice), invoice_not_open (paid or cancelled).
func (s *Invoices) RecordPromise(ctx context.Context, in PromiseInput) (InvoiceResult, error) {
	if err := requireScope(ctx, ScopeWriteCredit); err != nil {
		return InvoiceResult{}, err
	}
	var day time.Time
	check := func() error {
		var errs []error
		if day, errs = checkPromise(in, s.clock.Now()); len(errs) > 0 {
			return errs[0]
		}
		return nil
	}
	return s.writeInvoice(ctx, in.InvoiceID, check, func(tx *ent.Tx, c *ent.Company, r *ent.Invoice, before Invoice) (*ent.Invoice, EventType, map[string]any, error) {
		u := tx.Invoice.UpdateOne(r).SetPromisedFor(day).SetPromiseRecordedBy(actorOf(ctx).Label).
			SetPromiseRecordedAt(s.clock.Now()).ClearPromiseBrokenAt()
		if in.Note != nil {
			u.SetPromiseNote(*in.Note)
		} else {
			u.ClearPromiseNote()
		}
		r, err := u.Save(ctx)
		if err != nil {
			return nil, "", nil, err
		}
		var previous map[string]any
		if before.Promise != nil {
			previous = map[string]any{"promise": before.Promise}
		}
		err = s.events.recordEvent(ctx, tx, c, TimelinePromiseRecorded, map[string]any{
			"invoice_id": r.ID, "platform_order_gid": r.PlatformOrderGid, "promised_for": in.PromisedFor, "note": in.Note,
		})
		return r, EventTypeInvoicePromiseRecorded, previous, err
	})
}

// WithdrawPromise withdraws the invoice's promise to pay, attributed to the viewer:
// invoice.promise_withdrawn with previous.promise. Without a promise nothing changes: no
// event, but the call is on the timeline all the same (contract §11's write that changes
// nothing).
//
// Errors: insufficient_scope, not_found, invoice_not_open.
func (s *Invoices) WithdrawPromise(ctx context.Context, invoiceID string) (InvoiceResult, error) {
	if err := requireScope(ctx, ScopeWriteCredit); err != nil {
		return InvoiceResult{}, err
	}
	return s.writeInvoice(ctx, invoiceID, nil, func(tx *ent.Tx, c *ent.Company, r *ent.Invoice, before Invoice) (*ent.Invoice, EventType, map[string]any, error) {
		data := map[string]any{"invoice_id": r.ID, "platform_order_gid": r.PlatformOrderGid, "had_promise": before.Promise != nil}
		if err := s.events.recordEvent(ctx, tx, c, TimelinePromiseWithdrawn, data); err != nil || before.Promise == nil {
			return r, "", nil, err
		}
		r, err := tx.Invoice.UpdateOne(r).ClearPromisedFor().ClearPromiseNote().ClearPromiseRecordedBy().
			ClearPromiseRecordedAt().ClearPromiseBrokenAt().Save(ctx)
		return r, EventTypeInvoicePromiseWithdrawn, map[string]any{"promise": before.Promise}, err
	})
}

// OpenDispute opens a dispute on the invoice, or replaces the reason of the one open,
// attributed to the viewer: invoice.disputed (previous.dispute when one was replaced). A
// disputed invoice gets no reminder; it stays in the aging, the outstanding and the
// overdue-hold rule.
//
// Errors: insufficient_scope, validation_failed (reason), not_found, invoice_not_open.
func (s *Invoices) OpenDispute(ctx context.Context, in DisputeInput) (InvoiceResult, error) {
	if err := requireScope(ctx, ScopeWriteCredit); err != nil {
		return InvoiceResult{}, err
	}
	check := func() error { return checkText(in.Reason, "reason") }
	return s.writeInvoice(ctx, in.InvoiceID, check, func(tx *ent.Tx, c *ent.Company, r *ent.Invoice, before Invoice) (*ent.Invoice, EventType, map[string]any, error) {
		r, err := tx.Invoice.UpdateOne(r).SetDisputeReason(in.Reason).SetDisputeOpenedBy(actorOf(ctx).Label).
			SetDisputeOpenedAt(s.clock.Now()).Save(ctx)
		if err != nil {
			return nil, "", nil, err
		}
		var previous map[string]any
		if before.Dispute != nil {
			previous = map[string]any{"dispute": before.Dispute}
		}
		err = s.events.recordEvent(ctx, tx, c, TimelineInvoiceDisputed, map[string]any{
			"invoice_id": r.ID, "platform_order_gid": r.PlatformOrderGid, "reason": in.Reason,
		})
		return r, EventTypeInvoiceDisputed, previous, err
	})
}

// ResolveDispute resolves the invoice's dispute, attributed to the viewer:
// invoice.dispute_resolved with previous.dispute; reminders resume. Without a dispute nothing
// changes: no event, on the timeline all the same.
//
// Errors: insufficient_scope, not_found, invoice_not_open.
func (s *Invoices) ResolveDispute(ctx context.Context, invoiceID string) (InvoiceResult, error) {
	if err := requireScope(ctx, ScopeWriteCredit); err != nil {
		return InvoiceResult{}, err
	}
	return s.writeInvoice(ctx, invoiceID, nil, func(tx *ent.Tx, c *ent.Company, r *ent.Invoice, before Invoice) (*ent.Invoice, EventType, map[string]any, error) {
		data := map[string]any{"invoice_id": r.ID, "platform_order_gid": r.PlatformOrderGid, "had_dispute": before.Dispute != nil}
		if err := s.events.recordEvent(ctx, tx, c, TimelineDisputeResolved, data); err != nil || before.Dispute == nil {
			return r, "", nil, err
		}
		r, err := tx.Invoice.UpdateOne(r).ClearDisputeReason().ClearDisputeOpenedBy().ClearDisputeOpenedAt().Save(ctx)
		return r, EventTypeInvoiceDisputeResolved, map[string]any{"dispute": before.Dispute}, err
	})
}

// writeInvoice runs one write on an open invoice of the viewer's store: in one transaction it
// locks the invoice's company (lockCompany), reads the invoice again under that lock, checks
// the input (check, when not nil), refuses a settled invoice, runs fn with the invoice's view
// before, and appends fn's event (none when fn returns no type) with the invoice as it then is.
// The refusals come in the contract's order: not found, then the input, then the invoice's
// state; each rolls the transaction back, so nothing is written.
//
// Errors: not_found, check's, invoice_not_open, and fn's.
func (s *Invoices) writeInvoice(ctx context.Context, invoiceID string, check func() error,
	fn func(tx *ent.Tx, c *ent.Company, r *ent.Invoice, before Invoice) (*ent.Invoice, EventType, map[string]any, error)) (InvoiceResult, error) {
	if !ids.HasPrefix(invoiceID, "inv") {
		return InvoiceResult{}, errNotFound("invoice")
	}
	var out InvoiceResult
	err := s.db.InTx(ctx, func(tx *ent.Tx) error {
		// The company ID never changes, so reading it before the lock is safe; the rest of
		// the invoice is read again once the company is locked.
		companyID, err := tx.Invoice.Query().Where(invoice.ID(invoiceID)).Select(invoice.FieldCompanyID).String(ctx)
		if err != nil {
			return notFoundOr(err, "invoice")
		}
		c, err := s.companies.lockCompany(ctx, tx, companyID)
		if err != nil {
			return err
		}
		r, err := tx.Invoice.Get(ctx, invoiceID)
		if err != nil {
			return notFoundOr(err, "invoice")
		}
		if check != nil {
			if err := check(); err != nil {
				return err
			}
		}
		st := c.Edges.Store
		before, err := s.invoices.invoiceViews(ctx, tx.Client(), st, []*ent.Invoice{r})
		if err != nil {
			return err
		}
		if !r.Open {
			return Errorf(CodeInvoiceNotOpen, "invoice %s is %s: only an open invoice takes a promise or a dispute", r.ID, before[0].Status)
		}
		r, typ, previous, err := fn(tx, c, r, before[0])
		if err != nil {
			return err
		}
		after, err := s.invoices.invoiceViews(ctx, tx.Client(), st, []*ent.Invoice{r})
		if err != nil {
			return err
		}
		out = InvoiceResult{Invoice: after[0]}
		if typ == "" {
			return nil
		}
		if err := s.events.emit(ctx, tx, c.StoreID, typ, out.Invoice, previous); err != nil {
			return fmt.Errorf("%s: %w", typ, err)
		}
		return nil
	})
	return out, err
}
