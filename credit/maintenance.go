package credit

import (
	"context"
	"sort"
	"time"

	"github.com/creditd/creditd/ent"
	"github.com/creditd/creditd/ent/company"
	"github.com/creditd/creditd/ent/event"
	"github.com/creditd/creditd/ent/idempotencyrecord"
	"github.com/creditd/creditd/ent/invoice"
	"github.com/creditd/creditd/ent/store"
	"github.com/creditd/creditd/tenant"
)

// Maintenance is the part of the domain the periodic sweeps use (Service.Maintenance): the
// overdue holds' sweep, the reminders' sweep, and the purges of expired events and
// idempotency records, each system work across all stores that serve (and the command line's
// sweeps) run on a schedule.
//
// Its exported methods are all here. What a sweep does to one company stays beside the data
// it touches: the overdue reconciliation is the ledger writer's (ledgerWriter.reconcileOverdue
// in allocation.go, which every ledger append runs too), and a company's reminders are
// Maintenance.remindCompany and Maintenance.emitReminder in reminders.go, beside the
// reminders' rules and the schedule they read.
type Maintenance struct {
	db        Storage
	clock     clock
	companies *companyStore
	events    *eventWriter
	invoices  *invoiceReader
	ledger    *ledgerWriter
	// eventRetention is how long events are kept before PurgeEvents deletes them.
	eventRetention time.Duration
}

// SweepResult counts what a sweep changed.
type SweepResult struct {
	Checked int `json:"checked"`
	Placed  int `json:"placed"`
	Lifted  int `json:"lifted"`
}

// SweepHolds finds companies whose overdue state changed with the passing of time (an invoice
// fell due, or an overdue hold lost its reason) across all stores and reconciles each in its
// own transaction. Several instances may sweep at once: each company is reconciled under its
// lock, so the outcome is the same.
func (s *Maintenance) SweepHolds(ctx context.Context) (SweepResult, error) {
	ctx = tenant.System(ctx)
	now := s.clock.asOf(ctx)
	var res SweepResult
	dueIDs, err := s.db.Ent().Invoice.Query().Where(s.db.InvoicesOpen(true), invoice.DueAtLT(now)).
		Unique(true).Select(invoice.FieldCompanyID).Strings(ctx)
	if err != nil {
		return res, err
	}
	candidates := map[string]bool{}
	for start := 0; start < len(dueIDs); start += 500 {
		batch := dueIDs[start:min(start+500, len(dueIDs))]
		unheld, err := s.db.Ent().Company.Query().Where(company.IDIn(batch...), company.HoldKindIsNil()).IDs(ctx)
		if err != nil {
			return res, err
		}
		for _, id := range unheld {
			candidates[id] = true
		}
	}
	held, err := s.db.Ent().Company.Query().Where(company.HoldKindEQ(company.HoldKindOverdue)).IDs(ctx)
	if err != nil {
		return res, err
	}
	for _, id := range held {
		candidates[id] = true
	}
	for id := range candidates {
		err := s.db.InTx(ctx, func(tx *ent.Tx) error {
			c, err := s.companies.lockCompany(ctx, tx, id)
			if err != nil {
				return err
			}
			before := c.HoldKind
			c, err = s.ledger.reconcileOverdue(ctx, tx, c)
			if err != nil {
				return err
			}
			res.Checked++
			switch {
			case before == nil && c.HoldKind != nil:
				res.Placed++
			case before != nil && c.HoldKind == nil:
				res.Lifted++
			}
			return nil
		})
		if err != nil && !IsNotFound(err) {
			return res, err
		}
	}
	return res, nil
}

// SweepHoldsAsOf sweeps as SweepHolds does, deciding what is overdue as of t instead of the
// service clock's now (creditd holds sweep --now). What it changes is stamped with the
// service clock's time all the same, never t (contract §11: a hold placed "in the future"
// would give a company an updated_at that the next real change goes back from).
func (s *Maintenance) SweepHoldsAsOf(ctx context.Context, t time.Time) (SweepResult, error) {
	return s.SweepHolds(context.WithValue(ctx, asOfKey{}, t))
}

// ReminderSweepResult counts what a reminder sweep did.
type ReminderSweepResult struct {
	// Checked counts the invoices looked at under their company's lock.
	Checked        int `json:"checked"`
	Reminders      int `json:"reminders"`
	PromisesBroken int `json:"promises_broken"`
}

// SweepReminders emits, across all stores, the reminders that have fallen due and the
// promises that were broken (contract §17; the rules are at the top of reminders.go). It
// reads what is pending without locks, then settles each company's invoices in a transaction
// of its own under the company's lock, reading them again there. Several sweeps may run at once (instances, a command line
// beside serve): each level of each invoice is emitted once, by whichever inserts its row.
func (s *Maintenance) SweepReminders(ctx context.Context) (ReminderSweepResult, error) {
	ctx = tenant.System(ctx)
	asOf := s.clock.asOf(ctx)
	var res ReminderSweepResult
	companies := map[string]bool{}

	// Promises whose day has passed with the invoice still open.
	broken, err := s.db.Ent().Invoice.Query().
		Where(s.db.InvoicesOpen(true), invoice.PromiseBrokenAtIsNil(), invoice.PromisedForLTE(asOf.Add(-24*time.Hour))).
		Unique(true).Select(invoice.FieldCompanyID).Strings(ctx)
	if err != nil {
		return res, err
	}
	for _, id := range broken {
		companies[id] = true
	}

	// Reminders: per store with a schedule, the open undisputed invoices whose first level's
	// moment has passed, less those whose highest due level was emitted already.
	stores, err := s.db.Ent().Store.Query().Where(store.ReminderDaysNotNil()).Select(store.FieldID, store.FieldReminderDays).All(ctx)
	if err != nil {
		return res, err
	}
	schedules := map[string][]int{}
	for _, st := range stores {
		if len(st.ReminderDays) == 0 {
			continue
		}
		schedules[st.ID] = st.ReminderDays
		first := time.Duration(st.ReminderDays[0]) * 24 * time.Hour
		rows, err := s.db.Ent().Invoice.Query().
			Where(invoice.StoreID(st.ID), s.db.InvoicesOpen(true), invoice.DisputeReasonIsNil(), invoice.DueAtLT(asOf.Add(-first))).
			Select(invoice.FieldID, invoice.FieldCompanyID, invoice.FieldDueAt, invoice.FieldPromisedFor).All(ctx)
		if err != nil {
			return res, err
		}
		emitted, err := emittedLevels(ctx, s.db.Ent(), rows)
		if err != nil {
			return res, err
		}
		for _, r := range rows {
			if promiseKept(r.PromisedFor, asOf) {
				continue
			}
			if level, _ := dueLevel(st.ReminderDays, r.DueAt, asOf); level > emitted[r.ID] {
				companies[r.CompanyID] = true
			}
		}
	}

	companyIDs := make([]string, 0, len(companies))
	for id := range companies {
		companyIDs = append(companyIDs, id)
	}
	sort.Strings(companyIDs)
	for _, id := range companyIDs {
		err := s.db.InTx(ctx, func(tx *ent.Tx) error {
			c, err := s.companies.lockCompany(ctx, tx, id)
			if err != nil {
				return err
			}
			return s.remindCompany(ctx, tx, c, schedules[c.StoreID], asOf, &res)
		})
		if err != nil && !IsNotFound(err) {
			return res, err
		}
	}
	return res, nil
}

// SweepRemindersAsOf sweeps as SweepReminders does, deciding what is due as of t instead of
// the service clock's now (creditd reminders sweep --now); what it writes is stamped with the
// service clock's time, as SweepHoldsAsOf's.
func (s *Maintenance) SweepRemindersAsOf(ctx context.Context, t time.Time) (ReminderSweepResult, error) {
	return s.SweepReminders(context.WithValue(ctx, asOfKey{}, t))
}

type asOfKey struct{}

// asOf is the moment the overdue state is decided at: a sweep's --now, else the clock's now.
func (c clock) asOf(ctx context.Context) time.Time {
	if t, ok := ctx.Value(asOfKey{}).(time.Time); ok {
		return t
	}
	return c.Now()
}

// EventRetention is how long this service keeps events.
func (s *Maintenance) EventRetention() time.Duration { return s.eventRetention }

// PurgeEvents deletes the events older than the retention, in all stores, and returns how
// many it deleted: system work of the periodic sweep. Deleting the oldest events keeps the
// rest gapless from the first one kept.
func (s *Maintenance) PurgeEvents(ctx context.Context) (int, error) {
	ctx = tenant.System(ctx)
	var n int
	err := s.db.InTx(ctx, func(tx *ent.Tx) error {
		var err error
		n, err = tx.Event.Delete().Where(event.OccurredAtLT(s.clock.Now().Add(-s.eventRetention))).Exec(ctx)
		return err
	})
	return n, err
}

// PurgeIdempotencyRecords deletes records past their retention, in all stores, and returns
// how many it deleted: system work of the periodic sweep.
func (s *Maintenance) PurgeIdempotencyRecords(ctx context.Context) (int, error) {
	ctx = tenant.System(ctx)
	var n int
	err := s.db.InTx(ctx, func(tx *ent.Tx) error {
		var err error
		n, err = tx.IdempotencyRecord.Delete().Where(idempotencyrecord.ExpiresAtLTE(s.clock.Now())).Exec(ctx)
		return err
	})
	return n, err
}
