package credit

import (
	"context"
	"time"

	"github.com/shopspring/decimal"

	"github.com/creditd/creditd/ent"
	"github.com/creditd/creditd/ent/invoice"
	"github.com/creditd/creditd/ent/ledgerentry"
	"github.com/creditd/creditd/ent/predicate"
	"github.com/creditd/creditd/ids"
)

// The invoices read by their own IDs and per company (Service.Invoices): lists by status,
// the latest page of many companies at once, and one invoice with its payments.

// Invoice is one invoice as the API shows it.
type Invoice struct {
	ID               string    `json:"id"`
	CompanyID        string    `json:"company_id"`
	PlatformOrderGID string    `json:"platform_order_gid"`
	Amount           Money     `json:"amount"`
	OpenAmount       Money     `json:"open_amount"`
	IssuedAt         Timestamp `json:"issued_at"`
	DueAt            Timestamp `json:"due_at"`
	// Status is open while something is left to pay, cancelled once nothing is and a
	// cancellation entry references the order, else paid.
	Status string `json:"status"`
	// DaysOverdue counts the days since the due date, a started day as a whole one: 0 until
	// the invoice is due, 1 from the first microsecond after, and 0 once it is settled.
	DaysOverdue int `json:"days_overdue"`
	// PaidAt is when a paid invoice's open amount reached zero: the occurred_at of the entry
	// that settled it (contract §17). Null while open and for a cancelled invoice.
	PaidAt *Timestamp `json:"paid_at"`
	// ExpectedPaymentAt is, for an open invoice, due_at plus the company's average days
	// beyond terms over the last 365 days when positive (ExpectedPaymentAt); null when the
	// company paid nothing in that window, and for a settled invoice.
	ExpectedPaymentAt *Timestamp `json:"expected_payment_at"`
	// Promise is the company's promise to pay (Invoices.RecordPromise), null when none.
	Promise *Promise `json:"promise"`
	// Dispute is the open dispute (Invoices.OpenDispute), null when none.
	Dispute *Dispute `json:"dispute"`
	// Reminders are the reminder levels emitted for the invoice (Maintenance.SweepReminders),
	// in level order; empty when none.
	Reminders []InvoiceReminder `json:"reminders"`
}

// InvoiceListParams are the inputs of Invoices.List.
type InvoiceListParams struct {
	ListParams
	// Status is "", "open", "paid" or "cancelled".
	Status string
}

// invoiceStatusWhere is the filter of a status, or an error naming param: a settled invoice is
// cancelled when a cancellation entry references its order (its cancelled column, which the
// transaction appending the cancellation sets), else paid.
//
// Errors: invalid_parameter (param).
func invoiceStatusWhere(conds IndexedConditions, status, param string) ([]predicate.Invoice, error) {
	switch status {
	case "":
		return nil, nil
	case InvoiceOpen:
		return []predicate.Invoice{conds.InvoicesOpen(true)}, nil
	case InvoicePaid:
		return []predicate.Invoice{conds.InvoicesOpen(false), invoice.Cancelled(false)}, nil
	case InvoiceCancelled:
		return []predicate.Invoice{conds.InvoicesOpen(false), invoice.Cancelled(true)}, nil
	}
	return nil, ParamErrorf(CodeInvalidParameter, param, "%s must be open, paid or cancelled", param)
}

// List lists a company's invoices in the order they were issued, oldest first: the
// order in which payments without an order settle them.
//
// Errors: insufficient_scope, not_found (company), invalid_parameter (limit, cursor, status).
func (s *Invoices) List(ctx context.Context, companyID string, p InvoiceListParams) (Page[Invoice], error) {
	if err := requireScope(ctx, ScopeReadCredit); err != nil {
		return Page[Invoice]{}, err
	}
	n, err := pageSize(p.Limit)
	if err != nil {
		return Page[Invoice]{}, err
	}
	where, err := invoiceStatusWhere(s.db, p.Status, "status")
	if err != nil {
		return Page[Invoice]{}, err
	}
	client := s.db.Reader(ctx)
	c, err := s.companies.loadCompany(ctx, client, companyID)
	if err != nil {
		return Page[Invoice]{}, err
	}
	st := c.Edges.Store
	list := invoiceList(c.ID, p.Status)
	q := client.Invoice.Query().Where(invoice.CompanyID(c.ID)).Where(where...)
	if p.Cursor != "" {
		cur, err := decodeCursor(st.CursorSecret, list, p.Cursor)
		if err != nil {
			return Page[Invoice]{}, err
		}
		q.Where(invoice.SeqGT(cur.Seq))
	}
	rows, err := q.Order(ent.Asc(invoice.FieldSeq)).Limit(n + 1).All(ctx)
	if err != nil {
		return Page[Invoice]{}, err
	}
	pages, err := s.invoices.invoicePages(ctx, client, st, []string{c.ID}, p.Status, rows, n)
	if err != nil {
		return Page[Invoice]{}, err
	}
	return pages[c.ID], nil
}

func invoiceList(companyID, status string) string { return "invoices|" + companyID + "|" + status }

// FirstPages returns the first page of each company's invoices, keyed by company ID, in one
// statement for the invoices (a window per company), one for their issue dates and
// cancellations, and, when some are open, one for their companies' average days beyond terms
// (expected_payment_at): GraphQL's batch for a page of companies. Companies not in the viewer's store
// are absent, so the caller can ask Invoices.List for the not_found answer.
//
// Errors: insufficient_scope, invalid_parameter (limit, status).
func (s *Invoices) FirstPages(ctx context.Context, companyIDs []string, status string, limit *int) (map[string]Page[Invoice], error) {
	if err := requireScope(ctx, ScopeReadCredit); err != nil {
		return nil, err
	}
	n, err := pageSize(limit)
	if err != nil {
		return nil, err
	}
	where, err := invoiceStatusWhere(s.db, status, "status")
	if err != nil {
		return nil, err
	}
	st, client, known, err := s.stores.viewerCompanies(ctx, companyIDs)
	if err != nil {
		return nil, err
	}
	var rows []*ent.Invoice
	if len(known) > 0 {
		// The first n+1 invoices of each company by sequence number. The outer query is the
		// tenant's; the window only picks among the named companies' rows.
		var holds predicate.Invoice
		if len(where) > 0 {
			holds = invoice.And(where...)
		}
		rows, err = client.Invoice.Query().Where(s.db.FirstOfEach(invoice.FieldCompanyID, invoice.FieldSeq, known, n+1, holds)).
			Order(ent.Asc(invoice.FieldCompanyID), ent.Asc(invoice.FieldSeq)).All(ctx)
		if err != nil {
			return nil, err
		}
	}
	return s.invoices.invoicePages(ctx, client, st, known, status, rows, n)
}

// invoicePages turns invoice rows (up to n+1 per company, in order) into a page per company,
// reading their issue dates and cancellations in one statement.
func (s *invoiceReader) invoicePages(ctx context.Context, client *ent.Client, st *ent.Store, companyIDs []string, status string, rows []*ent.Invoice, n int) (map[string]Page[Invoice], error) {
	details, err := s.invoiceDetails(ctx, client, rows)
	if err != nil {
		return nil, err
	}
	byCompany := map[string][]*ent.Invoice{}
	for _, r := range rows {
		byCompany[r.CompanyID] = append(byCompany[r.CompanyID], r)
	}
	now := s.clock.Now()
	out := make(map[string]Page[Invoice], len(companyIDs))
	for _, id := range companyIDs {
		list := invoiceList(id, status)
		out[id] = makePage(byCompany[id], n,
			func(r *ent.Invoice) Invoice { return invoiceView(r, details, st.Currency, now) },
			func(r *ent.Invoice) string {
				return encodeCursor(st.CursorSecret, cursorPayload{List: list, Seq: r.Seq})
			})
	}
	return out, nil
}

// invoiceDetail is what an invoice's view needs beyond its row.
type invoiceDetails struct {
	issued map[string]time.Time // by ledger entry ID
	// beyondTerms is each company's average days beyond terms, for the companies with an
	// open invoice among the rows that paid something in the window.
	beyondTerms map[string]decimal.Decimal
	// reminders are the reminders emitted, by invoice ID.
	reminders map[string][]InvoiceReminder
}

// invoiceDetails reads, in one statement, the order entries of the invoices (their issue
// dates); whether a settled invoice was cancelled is its own column.
func (s *invoiceReader) invoiceDetails(ctx context.Context, client *ent.Client, rows []*ent.Invoice) (invoiceDetails, error) {
	d := invoiceDetails{issued: map[string]time.Time{}}
	if len(rows) == 0 {
		return d, nil
	}
	entryIDs := make([]string, 0, len(rows))
	var withOpen []string
	for _, r := range rows {
		entryIDs = append(entryIDs, r.LedgerEntryID)
		if r.Open && (len(withOpen) == 0 || withOpen[len(withOpen)-1] != r.CompanyID) {
			withOpen = append(withOpen, r.CompanyID)
		}
	}
	entries, err := client.LedgerEntry.Query().Where(ledgerentry.IDIn(entryIDs...)).
		Select(ledgerentry.FieldID, ledgerentry.FieldOccurredAt).
		All(ctx)
	if err != nil {
		return d, err
	}
	for _, e := range entries {
		d.issued[e.ID] = e.OccurredAt
	}
	// Rows come grouped by company, so withOpen repeats no company.
	if d.beyondTerms, err = averageDaysBeyondTerms(ctx, client, s.conds, withOpen, s.clock.Now(), BehaviourWindowDays); err != nil {
		return d, err
	}
	d.reminders, err = invoiceReminders(ctx, client, rows)
	return d, err
}

func invoiceView(r *ent.Invoice, d invoiceDetails, currency string, now time.Time) Invoice {
	v := Invoice{
		ID:               r.ID,
		CompanyID:        r.CompanyID,
		PlatformOrderGID: r.PlatformOrderGid,
		Amount:           NewMoney(r.Amount, currency),
		OpenAmount:       NewMoney(decimal.Max(r.OpenAmount, decimal.Zero), currency),
		IssuedAt:         At(d.issued[r.LedgerEntryID]),
		DueAt:            At(r.DueAt),
		Status:           InvoiceOpen,
		Promise:          promiseView(r),
		Dispute:          disputeView(r),
		Reminders:        d.reminders[r.ID],
	}
	if v.Reminders == nil {
		v.Reminders = []InvoiceReminder{}
	}
	switch {
	case r.Open:
		v.DaysOverdue = daysOverdue(r.DueAt, now)
		if avg, ok := d.beyondTerms[r.CompanyID]; ok {
			t := At(ExpectedPaymentAt(r.DueAt, avg))
			v.ExpectedPaymentAt = &t
		}
	case r.Cancelled:
		v.Status = InvoiceCancelled
	default:
		v.Status = InvoicePaid
		if r.SettledAt != nil {
			t := At(*r.SettledAt)
			v.PaidAt = &t
		}
	}
	return v
}

// Get returns one invoice of the viewer's store, for GraphQL's node(id:).
//
// Errors: insufficient_scope, not_found (unknown ID or another store's).
func (s *Invoices) Get(ctx context.Context, id string) (Invoice, error) {
	if err := requireScope(ctx, ScopeReadCredit); err != nil {
		return Invoice{}, err
	}
	if !ids.HasPrefix(id, "inv") {
		return Invoice{}, errNotFound("invoice")
	}
	client := s.db.Reader(ctx)
	r, err := client.Invoice.Query().Where(invoice.ID(id)).WithStore().Only(ctx)
	if err != nil {
		return Invoice{}, notFoundOr(err, "invoice")
	}
	views, err := s.invoices.invoiceViews(ctx, client, r.Edges.Store, []*ent.Invoice{r})
	if err != nil {
		return Invoice{}, err
	}
	return views[0], nil
}

// invoiceViewsByID reads the invoices invoiceIDs of the store st through client (a
// transaction's, for an event written with the change) and returns their views in the order
// of their sequence numbers.
func (s *invoiceReader) invoiceViewsByID(ctx context.Context, client *ent.Client, st *ent.Store, invoiceIDs []string) ([]Invoice, error) {
	rows, err := client.Invoice.Query().Where(invoice.IDIn(invoiceIDs...)).
		Order(ent.Asc(invoice.FieldCompanyID), ent.Asc(invoice.FieldSeq)).All(ctx)
	if err != nil {
		return nil, err
	}
	return s.invoiceViews(ctx, client, st, rows)
}

// invoiceViews returns the views of rows (grouped by company), as GET /v1/invoices/{id}
// shows each.
func (s *invoiceReader) invoiceViews(ctx context.Context, client *ent.Client, st *ent.Store, rows []*ent.Invoice) ([]Invoice, error) {
	d, err := s.invoiceDetails(ctx, client, rows)
	if err != nil {
		return nil, err
	}
	now := s.clock.Now()
	out := make([]Invoice, len(rows))
	for i, r := range rows {
		out[i] = invoiceView(r, d, st.Currency, now)
	}
	return out, nil
}
