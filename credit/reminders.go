package credit

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/creditd/creditd/ent"
	"github.com/creditd/creditd/ent/invoice"
	"github.com/creditd/creditd/ent/invoicereminder"
	"github.com/creditd/creditd/ent/store"
	"github.com/creditd/creditd/ent/storechange"
	"github.com/creditd/creditd/ids"
)

// Reminders (contract §17): creditd sends no e-mail; it says when a reminder is due, as an
// event (invoice.reminder_due) that the store's mailer or ERP receives through the feed,
// webhooks or subscriptions. The store's staff set a schedule of offsets from an invoice's
// due date; the sweep emits, for every open invoice that is neither disputed nor under a
// promise whose day has not passed, the highest level that has fallen due and was not emitted
// yet, exactly once: the reminder's row and its event commit together, and the unique index on
// (invoice, level) decides which of several concurrent sweeps writes them. The sweep also
// emits invoice.promise_broken, once per promise, the day after a promise's day when the
// invoice is still open; reminders then resume.

// Invoice event types of the sweep.
const (
	// EventTypeInvoiceReminderDue: a level of the store's schedule fell due for the invoice.
	EventTypeInvoiceReminderDue EventType = "invoice.reminder_due"
	// EventTypeInvoicePromiseBroken: the day after promised_for, the invoice is still open.
	EventTypeInvoicePromiseBroken EventType = "invoice.promise_broken"
)

// Timeline event types of the sweep, by the system.
const (
	TimelineReminderDue   TimelineKind = "reminder_due"
	TimelinePromiseBroken TimelineKind = "promise_broken"
)

// The bounds of a reminder schedule (contract §17).
const (
	MaxReminderLevels = 10
	MinReminderOffset = -30
	MaxReminderOffset = 365
)

// settingReminderDays names the reminder schedule on the store's audit trail.
const settingReminderDays = "reminder_days"

// InvoiceReminder is one reminder emitted for an invoice, as the invoice's reminders list it.
type InvoiceReminder struct {
	Level      int       `json:"level"`
	OffsetDays int       `json:"offset_days"`
	DueAt      Timestamp `json:"due_at"`
	EventID    string    `json:"event_id"`
}

// ReminderSchedule is a store's reminder schedule and the trail of its changes, newest first.
type ReminderSchedule struct {
	// Days are the offsets in days from an invoice's due_at; level n is the n-th.
	Days    []int            `json:"days"`
	Changes []ScheduleChange `json:"changes"`
}

// ScheduleChange is one change of the reminder schedule on the store's audit trail.
type ScheduleChange struct {
	Days      []int     `json:"days"`
	Previous  []int     `json:"previous"`
	ChangedBy string    `json:"changed_by"`
	ChangedAt Timestamp `json:"changed_at"`
}

// CheckReminderDays checks a reminder schedule: at most MaxReminderLevels offsets, strictly
// increasing, each from MinReminderOffset to MaxReminderOffset. An empty schedule is allowed
// (no reminders).
//
// Errors: validation_failed (days).
func CheckReminderDays(days []int) error {
	if len(days) > MaxReminderLevels {
		return ParamErrorf(CodeValidationFailed, "days", "days has %d offsets; a schedule has at most %d", len(days), MaxReminderLevels)
	}
	for i, d := range days {
		if d < MinReminderOffset || d > MaxReminderOffset {
			return ParamErrorf(CodeValidationFailed, "days", "days: offset %d is out of range; each must be from %d to %d days from the due date", d, MinReminderOffset, MaxReminderOffset)
		}
		if i > 0 && d <= days[i-1] {
			return ParamErrorf(CodeValidationFailed, "days", "days must be strictly increasing: %d follows %d", d, days[i-1])
		}
	}
	return nil
}

// ParseReminderDays reads a schedule written as comma-separated days ("-3,1,7,14,30"); "" and
// "none" are the empty schedule. It checks it as CheckReminderDays does.
//
// Errors: validation_failed (days).
func ParseReminderDays(s string) ([]int, error) {
	s = strings.TrimSpace(s)
	if s == "" || s == "none" {
		return []int{}, nil
	}
	var days []int
	for _, part := range strings.Split(s, ",") {
		d, err := strconv.Atoi(strings.TrimSpace(part))
		if err != nil {
			return nil, ParamErrorf(CodeValidationFailed, "days", "days must be whole numbers of days separated by commas, such as -3,1,7,14,30; %q is not one", part)
		}
		days = append(days, d)
	}
	return days, CheckReminderDays(days)
}

// SetReminderSchedule replaces the viewer's store's reminder schedule and records the change,
// with the staff member, on the store's audit trail. Staff only (the console's settings and
// creditd reminders set). Setting the schedule it has changes nothing but is on the trail.
//
// Errors: unauthenticated, insufficient_scope (not staff), validation_failed (days).
func (s *Stores) SetReminderSchedule(ctx context.Context, days []int) (ReminderSchedule, error) {
	v, err := requireStaff(ctx)
	if err != nil {
		return ReminderSchedule{}, err
	}
	if err := CheckReminderDays(days); err != nil {
		return ReminderSchedule{}, err
	}
	if days == nil {
		days = []int{}
	}
	err = s.db.InTx(ctx, func(tx *ent.Tx) error {
		if err := s.db.TakeStoreTurn(ctx, tx, v.StoreID); err != nil {
			return err
		}
		st, err := tx.Store.Query().Where(store.ID(v.StoreID)).Select(store.FieldReminderDays).Only(ctx)
		if err != nil {
			return notFoundOr(err, "store")
		}
		previous := st.ReminderDays
		if previous == nil {
			previous = []int{}
		}
		if err := tx.Store.UpdateOneID(v.StoreID).SetReminderDays(days).Exec(ctx); err != nil {
			return err
		}
		value, _ := json.Marshal(days)
		prev, _ := json.Marshal(previous)
		actor := actorOf(ctx)
		return tx.StoreChange.Create().SetStoreID(v.StoreID).SetSetting(settingReminderDays).
			SetValue(string(value)).SetPrevious(string(prev)).SetActorType(actor.Type).SetActorLabel(actor.Label).
			SetOccurredAt(s.clock.Now()).Exec(ctx)
	})
	if err != nil {
		return ReminderSchedule{}, err
	}
	return s.ReminderSchedule(ctx)
}

// ReminderSchedule returns the viewer's store's reminder schedule and its trail, newest
// first. Staff only.
//
// Errors: unauthenticated, insufficient_scope (not staff).
func (s *Stores) ReminderSchedule(ctx context.Context) (ReminderSchedule, error) {
	v, err := requireStaff(ctx)
	if err != nil {
		return ReminderSchedule{}, err
	}
	client := s.db.Reader(ctx)
	st, err := client.Store.Query().Where(store.ID(v.StoreID)).Select(store.FieldReminderDays).Only(ctx)
	if err != nil {
		return ReminderSchedule{}, notFoundOr(err, "store")
	}
	out := ReminderSchedule{Days: st.ReminderDays, Changes: []ScheduleChange{}}
	if out.Days == nil {
		out.Days = []int{}
	}
	rows, err := client.StoreChange.Query().Where(storechange.Setting(settingReminderDays)).
		Order(ent.Desc(storechange.FieldOccurredAt), ent.Desc(storechange.FieldID)).All(ctx)
	if err != nil {
		return ReminderSchedule{}, err
	}
	for _, r := range rows {
		c := ScheduleChange{ChangedBy: r.ActorLabel, ChangedAt: At(r.OccurredAt)}
		if err := json.Unmarshal([]byte(r.Value), &c.Days); err != nil {
			return ReminderSchedule{}, fmt.Errorf("store change %s: %w", r.ID, err)
		}
		if err := json.Unmarshal([]byte(r.Previous), &c.Previous); err != nil {
			return ReminderSchedule{}, fmt.Errorf("store change %s: %w", r.ID, err)
		}
		out.Changes = append(out.Changes, c)
	}
	return out, nil
}

// promiseKept reports whether a promise of day promisedFor still stands at t: until the end
// of that UTC day.
func promiseKept(promisedFor *time.Time, t time.Time) bool {
	return promisedFor != nil && t.Before(promisedFor.Add(24*time.Hour))
}

// dueLevel is the highest level of days whose moment (dueAt + offset) has passed at t, with
// its offset; 0 when none has.
func dueLevel(days []int, dueAt, t time.Time) (int, int) {
	level, offset := 0, 0
	for i, d := range days {
		if t.After(dueAt.Add(time.Duration(d) * 24 * time.Hour)) {
			level, offset = i+1, d
		}
	}
	return level, offset
}

// emittedLevels returns, by invoice ID, the highest level emitted for each of rows.
func emittedLevels(ctx context.Context, client *ent.Client, rows []*ent.Invoice) (map[string]int, error) {
	out := map[string]int{}
	for start := 0; start < len(rows); start += 500 {
		batch := rows[start:min(start+500, len(rows))]
		invoiceIDs := make([]string, len(batch))
		for i, r := range batch {
			invoiceIDs[i] = r.ID
		}
		rems, err := client.InvoiceReminder.Query().Where(invoicereminder.InvoiceIDIn(invoiceIDs...)).
			Select(invoicereminder.FieldInvoiceID, invoicereminder.FieldLevel).All(ctx)
		if err != nil {
			return nil, err
		}
		for _, r := range rems {
			out[r.InvoiceID] = max(out[r.InvoiceID], r.Level)
		}
	}
	return out, nil
}

// remindCompany settles one locked company's broken promises and due reminders in tx, deciding
// as of asOf with days as its store's schedule (nil: none).
func (s *Maintenance) remindCompany(ctx context.Context, tx *ent.Tx, c *ent.Company, days []int, asOf time.Time, res *ReminderSweepResult) error {
	rows, err := tx.Invoice.Query().Where(invoice.CompanyID(c.ID), s.db.InvoicesOpen(true)).
		Order(ent.Asc(invoice.FieldSeq)).All(ctx)
	if err != nil {
		return err
	}
	emitted, err := emittedLevels(ctx, tx.Client(), rows)
	if err != nil {
		return err
	}
	now := s.clock.Now()
	st := c.Edges.Store
	for _, r := range rows {
		brokenDue := r.PromisedFor != nil && r.PromiseBrokenAt == nil && !promiseKept(r.PromisedFor, asOf)
		level, offset := 0, 0
		if r.DisputeReason == nil && !promiseKept(r.PromisedFor, asOf) {
			level, offset = dueLevel(days, r.DueAt, asOf)
		}
		if !brokenDue && level <= emitted[r.ID] {
			continue
		}
		res.Checked++
		if brokenDue {
			// Once per promise: the UPDATE that finds promise_broken_at still empty for this
			// promise's day is the one that emits.
			n, err := tx.Invoice.Update().
				Where(invoice.ID(r.ID), invoice.PromiseBrokenAtIsNil(), invoice.PromisedFor(*r.PromisedFor)).
				SetPromiseBrokenAt(now).Save(ctx)
			if err != nil {
				return err
			}
			if n == 1 {
				r.PromiseBrokenAt = &now
				views, err := s.invoices.invoiceViews(ctx, tx.Client(), st, []*ent.Invoice{r})
				if err != nil {
					return err
				}
				if err := s.events.emit(ctx, tx, c.StoreID, EventTypeInvoicePromiseBroken, views[0], nil); err != nil {
					return err
				}
				if err := s.events.recordEventAs(ctx, tx, c, systemActor, TimelinePromiseBroken, map[string]any{
					"invoice_id": r.ID, "platform_order_gid": r.PlatformOrderGid, "promised_for": r.PromisedFor.UTC().Format(time.DateOnly),
				}); err != nil {
					return err
				}
				res.PromisesBroken++
			}
		}
		if level > emitted[r.ID] {
			ok, err := s.emitReminder(ctx, tx, c, r, level, offset, asOf)
			if err != nil {
				return err
			}
			if ok {
				res.Reminders++
			}
		}
	}
	return nil
}

// reminderEventData is the data of an invoice.reminder_due event: the invoice, and the level
// with what a mailer needs to choose and fill its letter.
type reminderEventData struct {
	Object      Invoice `json:"object"`
	Level       int     `json:"level"`
	OffsetDays  int     `json:"offset_days"`
	DaysOverdue int     `json:"days_overdue"`
	OpenAmount  Money   `json:"open_amount"`
	CompanyID   string  `json:"company_id"`
}

// emitReminder inserts the reminder row of invoice r's level and, when this transaction is the
// one that inserted it (the unique index on invoice and level turned any other away), appends
// its invoice.reminder_due event, whose ID the row names, and a timeline event by the system.
// It reports whether it emitted.
func (s *Maintenance) emitReminder(ctx context.Context, tx *ent.Tx, c *ent.Company, r *ent.Invoice, level, offset int, asOf time.Time) (bool, error) {
	id, eventID := ids.New("rem"), ids.New(eventIDPrefix)
	err := tx.InvoiceReminder.Create().SetID(id).SetStoreID(c.StoreID).SetInvoiceID(r.ID).SetLevel(level).
		SetOffsetDays(offset).SetDueAt(r.DueAt.Add(time.Duration(offset) * 24 * time.Hour)).SetEventID(eventID).
		SetCreatedAt(s.clock.Now()).OnConflict(doNothingOnConflict()).Exec(ctx)
	if err != nil && !s.db.InsertSkipped(err) {
		return false, err
	}
	if n, err := tx.InvoiceReminder.Query().Where(invoicereminder.ID(id)).Count(ctx); err != nil || n == 0 {
		return false, err
	}
	views, err := s.invoices.invoiceViews(ctx, tx.Client(), c.Edges.Store, []*ent.Invoice{r})
	if err != nil {
		return false, err
	}
	v := views[0]
	data := reminderEventData{Object: v, Level: level, OffsetDays: offset, DaysOverdue: daysOverdue(r.DueAt, asOf),
		OpenAmount: v.OpenAmount, CompanyID: c.ID}
	if err := s.events.emitData(ctx, tx, c.StoreID, eventID, EventTypeInvoiceReminderDue, data); err != nil {
		return false, err
	}
	return true, s.events.recordEventAs(ctx, tx, c, systemActor, TimelineReminderDue, map[string]any{
		"invoice_id": r.ID, "platform_order_gid": r.PlatformOrderGid, "level": level, "offset_days": offset, "event_id": eventID,
	})
}

// invoiceReminders reads the reminders emitted for rows, by invoice ID, in level order.
func invoiceReminders(ctx context.Context, client *ent.Client, rows []*ent.Invoice) (map[string][]InvoiceReminder, error) {
	out := map[string][]InvoiceReminder{}
	if len(rows) == 0 {
		return out, nil
	}
	invoiceIDs := make([]string, len(rows))
	for i, r := range rows {
		invoiceIDs[i] = r.ID
	}
	rems, err := client.InvoiceReminder.Query().Where(invoicereminder.InvoiceIDIn(invoiceIDs...)).All(ctx)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(rems, func(a, b *ent.InvoiceReminder) int { return a.Level - b.Level })
	for _, r := range rems {
		out[r.InvoiceID] = append(out[r.InvoiceID], InvoiceReminder{Level: r.Level, OffsetDays: r.OffsetDays, DueAt: At(r.DueAt), EventID: r.EventID})
	}
	return out, nil
}
