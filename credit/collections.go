package credit

import (
	"context"
	"slices"
	"time"

	"github.com/creditd/creditd/ent"
	"github.com/creditd/creditd/ent/company"
	"github.com/creditd/creditd/ent/invoice"
	"github.com/creditd/creditd/ent/invoicereminder"
)

// The day's collection work of a store (contract §17), for the staff console's collections
// page: the reminders the sweep emitted today, the promises to pay that are due or broken,
// and the open disputes.

// MaxCollectionRows is how many rows each list of Collections holds at most; a list cut
// there says so (its More is true).
const MaxCollectionRows = 200

// Collections is the day's collection work of the viewer's store as of AsOf.
type Collections struct {
	AsOf Timestamp `json:"as_of"`
	// Day is AsOf's UTC day, YYYY-MM-DD.
	Day string `json:"day"`
	// Reminders are the reminders the sweep emitted on Day (UTC) for invoices still open, by
	// level, then in the order they were emitted.
	Reminders CollectionList[CollectionReminder] `json:"reminders"`
	// PromisesDue are the open invoices under a promise whose day is Day or has passed and
	// that the sweep has not yet found broken, the earliest day first.
	PromisesDue CollectionList[CollectionInvoice] `json:"promises_due"`
	// PromisesBroken are the open invoices whose promise the sweep found broken
	// (invoice.promise_broken) and that have no new promise, the earliest day first.
	PromisesBroken CollectionList[CollectionInvoice] `json:"promises_broken"`
	// Disputes are the open invoices with an open dispute, the oldest dispute first.
	Disputes CollectionList[CollectionInvoice] `json:"disputes"`
}

// CollectionList is one list of Collections: at most MaxCollectionRows rows, More when
// there were more.
type CollectionList[T any] struct {
	Data []T  `json:"data"`
	More bool `json:"more"`
}

// CollectionInvoice is an open invoice of a collections list with its company's name.
type CollectionInvoice struct {
	Invoice     Invoice `json:"invoice"`
	CompanyName string  `json:"company_name"`
}

// CollectionReminder is a reminder emitted today, with its invoice and company's name.
type CollectionReminder struct {
	Reminder    InvoiceReminder `json:"reminder"`
	Invoice     Invoice         `json:"invoice"`
	CompanyName string          `json:"company_name"`
}

// Collections returns the day's collection work of the viewer's store, as of now: each list
// read in one statement, their invoices and companies in one more each.
//
// Errors: insufficient_scope.
func (s *Reports) Collections(ctx context.Context) (Collections, error) {
	if err := requireScope(ctx, ScopeReadCredit); err != nil {
		return Collections{}, err
	}
	st, err := s.stores.viewerStore(ctx)
	if err != nil {
		return Collections{}, err
	}
	client := s.db.Reader(ctx)
	now := s.clock.Now().UTC()
	day := now.Truncate(24 * time.Hour)
	out := Collections{AsOf: At(now), Day: day.Format(time.DateOnly)}

	rems, err := client.InvoiceReminder.Query().
		Where(invoicereminder.StoreID(st.ID), invoicereminder.CreatedAtGTE(day), invoicereminder.CreatedAtLT(day.Add(24*time.Hour)),
			// Of invoices still open: one settled since needs no more work.
			s.db.RemindersOfOpenInvoices(st.ID)).
		Order(ent.Asc(invoicereminder.FieldLevel), ent.Asc(invoicereminder.FieldCreatedAt), ent.Asc(invoicereminder.FieldID)).
		Limit(MaxCollectionRows + 1).All(ctx)
	if err != nil {
		return Collections{}, err
	}
	due, err := client.Invoice.Query().
		Where(invoice.StoreID(st.ID), s.db.InvoicesOpen(true), invoice.PromiseBrokenAtIsNil(), invoice.PromisedForLTE(day)).
		Order(ent.Asc(invoice.FieldPromisedFor), ent.Asc(invoice.FieldSeq)).Limit(MaxCollectionRows + 1).All(ctx)
	if err != nil {
		return Collections{}, err
	}
	broken, err := client.Invoice.Query().
		Where(invoice.StoreID(st.ID), s.db.InvoicesOpen(true), invoice.PromiseBrokenAtNotNil()).
		Order(ent.Asc(invoice.FieldPromisedFor), ent.Asc(invoice.FieldSeq)).Limit(MaxCollectionRows + 1).All(ctx)
	if err != nil {
		return Collections{}, err
	}
	disputed, err := client.Invoice.Query().
		Where(invoice.StoreID(st.ID), s.db.InvoicesOpen(true), invoice.DisputeReasonNotNil()).
		Order(ent.Asc(invoice.FieldDisputeOpenedAt), ent.Asc(invoice.FieldSeq)).Limit(MaxCollectionRows + 1).All(ctx)
	if err != nil {
		return Collections{}, err
	}

	// The reminded invoices still open; the lists' invoices, once each.
	remIDs := make([]string, 0, len(rems))
	for _, r := range rems[:min(len(rems), MaxCollectionRows)] {
		remIDs = append(remIDs, r.InvoiceID)
	}
	reminded, err := client.Invoice.Query().Where(invoice.StoreID(st.ID), invoice.IDIn(remIDs...)).All(ctx)
	if err != nil {
		return Collections{}, err
	}
	var rows []*ent.Invoice
	seen := map[string]bool{}
	for _, list := range [][]*ent.Invoice{reminded, trim(due), trim(broken), trim(disputed)} {
		for _, r := range list {
			if !seen[r.ID] {
				seen[r.ID] = true
				rows = append(rows, r)
			}
		}
	}
	views, err := s.invoices.invoiceViews(ctx, client, st, rows)
	if err != nil {
		return Collections{}, err
	}
	byID := make(map[string]Invoice, len(views))
	companyIDs := []string{}
	for _, v := range views {
		byID[v.ID] = v
		if !slices.Contains(companyIDs, v.CompanyID) {
			companyIDs = append(companyIDs, v.CompanyID)
		}
	}
	cos, err := client.Company.Query().Where(company.IDIn(companyIDs...)).Select(company.FieldID, company.FieldName).All(ctx)
	if err != nil {
		return Collections{}, err
	}
	names := make(map[string]string, len(cos))
	for _, c := range cos {
		names[c.ID] = c.Name
	}

	out.Reminders = CollectionList[CollectionReminder]{Data: []CollectionReminder{}, More: len(rems) > MaxCollectionRows}
	for _, r := range rems[:min(len(rems), MaxCollectionRows)] {
		v := byID[r.InvoiceID]
		out.Reminders.Data = append(out.Reminders.Data, CollectionReminder{
			Reminder:    InvoiceReminder{Level: r.Level, OffsetDays: r.OffsetDays, DueAt: At(r.DueAt), EventID: r.EventID},
			Invoice:     v,
			CompanyName: names[v.CompanyID],
		})
	}
	list := func(rows []*ent.Invoice) CollectionList[CollectionInvoice] {
		l := CollectionList[CollectionInvoice]{Data: []CollectionInvoice{}, More: len(rows) > MaxCollectionRows}
		for _, r := range trim(rows) {
			v := byID[r.ID]
			l.Data = append(l.Data, CollectionInvoice{Invoice: v, CompanyName: names[v.CompanyID]})
		}
		return l
	}
	out.PromisesDue, out.PromisesBroken, out.Disputes = list(due), list(broken), list(disputed)
	return out, nil
}

// trim cuts a list read with one row more than MaxCollectionRows to its rows.
func trim(rows []*ent.Invoice) []*ent.Invoice { return rows[:min(len(rows), MaxCollectionRows)] }
