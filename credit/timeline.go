package credit

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/creditd/creditd/ent"
	"github.com/creditd/creditd/ent/company"
	"github.com/creditd/creditd/ent/predicate"
	"github.com/creditd/creditd/ent/timelineevent"
	"github.com/creditd/creditd/ids"
	"github.com/creditd/creditd/tenant"
)

// A company's timeline (contract §5): every write appends an event attributed to its actor,
// an API key by its label, a staff member by name, or the system. Events are numbered per
// company in the writing transaction, so they keep their order even within one microsecond.

// TimelineKind is the type of an entry of a company's timeline, such as "hold_placed".
type TimelineKind string

// Timeline event types.
const (
	TimelineAdjustmentCreated  TimelineKind = "adjustment_created"
	TimelineCreditLimitChanged TimelineKind = "credit_limit_changed"
	TimelineHoldPlaced         TimelineKind = "hold_placed"
	TimelineHoldLifted         TimelineKind = "hold_lifted"
	TimelineOverdueHoldPlaced  TimelineKind = "overdue_hold_placed"
	TimelineOverdueHoldLifted  TimelineKind = "overdue_hold_lifted"
	// TimelineLedgerEntryRecorded is an entry a person or a key recorded by hand (the console's
	// "Record a platform entry", the command line); adjustments have their own type and the
	// platform's deliveries TimelinePlatformEntryRecorded.
	TimelineLedgerEntryRecorded TimelineKind = "ledger_entry_recorded"
	// TimelineApplicationApproved is on the timeline of the company an approval created.
	TimelineApplicationApproved TimelineKind = "application_approved"
	// TimelinePlatformCompanyGIDChanged is staff setting or correcting the platform company GID.
	TimelinePlatformCompanyGIDChanged TimelineKind = "platform_company_gid_changed"
)

// TimelineEvent is one entry of a company's timeline.
type TimelineEvent struct {
	ID         string         `json:"id"`
	Type       TimelineKind   `json:"type"`
	Actor      Actor          `json:"actor"`
	OccurredAt Timestamp      `json:"occurred_at"`
	Data       map[string]any `json:"data"`
}

// Actor is who made a write: an API key (by label), a staff member, or the system.
type Actor struct {
	Type  string `json:"type"`
	Label string `json:"label"`
}

// systemActor is the actor of what the service does by itself (overdue holds).
var systemActor = Actor{Type: tenant.ActorSystem, Label: "system"}

func timelineEventView(e *ent.TimelineEvent) TimelineEvent {
	data := e.Data
	if data == nil {
		data = map[string]any{}
	}
	return TimelineEvent{
		ID:         e.ID,
		Type:       TimelineKind(e.Type),
		Actor:      Actor{Type: string(e.ActorType), Label: e.ActorLabel},
		OccurredAt: At(e.OccurredAt),
		Data:       data,
	}
}

// recordEvent appends a timeline event for a write, attributed to the viewer.
func (s *eventWriter) recordEvent(ctx context.Context, tx *ent.Tx, c *ent.Company, typ TimelineKind, data map[string]any) error {
	return s.recordEventAs(ctx, tx, c, actorOf(ctx), typ, data)
}

// actorOf is who the viewer is, as the timeline and the ledger name them: the key's label, the
// staff member's name, or the system.
func actorOf(ctx context.Context) Actor {
	v, _ := tenant.FromContext(ctx)
	actor := Actor{Type: v.ActorType, Label: v.Label}
	if v.IsSystem() || actor.Type == "" {
		actor = systemActor
	}
	return actor
}

// recordEventAs appends a timeline event with an explicit actor, numbering it after the
// company's previous event, in one statement where the database allows (see
// database.InsertNumbered).
func (s *eventWriter) recordEventAs(ctx context.Context, tx *ent.Tx, c *ent.Company, actor Actor, typ TimelineKind, data map[string]any) error {
	if err := timelineevent.ActorTypeValidator(timelineevent.ActorType(actor.Type)); err != nil {
		return fmt.Errorf("timeline event: %w", err)
	}
	encoded, err := json.Marshal(data)
	if err != nil {
		return fmt.Errorf("encode %s timeline event: %w", typ, err)
	}
	_, err = s.db.InsertNumbered(ctx, tx, timelineevent.Table,
		[]string{timelineevent.FieldID, timelineevent.FieldStoreID, timelineevent.FieldCompanyID, timelineevent.FieldType,
			timelineevent.FieldActorType, timelineevent.FieldActorLabel, timelineevent.FieldOccurredAt, timelineevent.FieldData},
		[]any{ids.New(eventIDPrefix), c.StoreID, c.ID, string(typ), actor.Type, actor.Label, s.clock.Now(), json.RawMessage(encoded)})
	return err
}

// List lists a company's timeline events, newest first.
//
// Errors: insufficient_scope, not_found, invalid_parameter (limit, cursor).
func (s *Timeline) List(ctx context.Context, companyID string, p ListParams) (Page[TimelineEvent], error) {
	if err := requireScope(ctx, ScopeReadCredit); err != nil {
		return Page[TimelineEvent]{}, err
	}
	n, err := pageSize(p.Limit)
	if err != nil {
		return Page[TimelineEvent]{}, err
	}
	c, err := s.companies.loadCompany(ctx, s.db.Reader(ctx), companyID)
	if err != nil {
		return Page[TimelineEvent]{}, err
	}
	secret := c.Edges.Store.CursorSecret
	list := "timeline|" + c.ID
	q := s.db.Reader(ctx).TimelineEvent.Query().Where(timelineevent.CompanyID(c.ID))
	if p.Cursor != "" {
		cur, err := decodeCursor(secret, list, p.Cursor)
		if err != nil {
			return Page[TimelineEvent]{}, err
		}
		q.Where(timelineevent.SeqLT(cur.Seq))
	}
	rows, err := q.Order(ent.Desc(timelineevent.FieldSeq)).Limit(n + 1).All(ctx)
	if err != nil {
		return Page[TimelineEvent]{}, err
	}
	return makePage(rows, n, timelineEventView, func(e *ent.TimelineEvent) string {
		return encodeCursor(secret, cursorPayload{List: list, Seq: e.Seq})
	}), nil
}

// Get returns one timeline event of the viewer's store, so that GraphQL's
// node(id:) can refetch any object it has shown.
//
// Errors: insufficient_scope, not_found (unknown ID or another store's).
func (s *Timeline) Get(ctx context.Context, id string) (TimelineEvent, error) {
	if err := requireScope(ctx, ScopeReadCredit); err != nil {
		return TimelineEvent{}, err
	}
	if !ids.HasPrefix(id, "ev") {
		return TimelineEvent{}, errNotFound("timeline event")
	}
	e, err := s.db.Reader(ctx).TimelineEvent.Query().Where(timelineevent.ID(id)).Only(ctx)
	if err != nil {
		return TimelineEvent{}, notFoundOr(err, "timeline event")
	}
	return timelineEventView(e), nil
}

// FirstPages returns the first page of each company's timeline, newest first, keyed
// by company ID, in two statements whatever the number of companies, as Ledger.FirstPages
// does for ledgers (see there). Companies that do not exist in the viewer's store are absent.
//
// Errors: insufficient_scope, invalid_parameter (limit).
func (s *Timeline) FirstPages(ctx context.Context, companyIDs []string, limit *int) (map[string]Page[TimelineEvent], error) {
	if err := requireScope(ctx, ScopeReadCredit); err != nil {
		return nil, err
	}
	n, err := pageSize(limit)
	if err != nil {
		return nil, err
	}
	client := s.db.Reader(ctx)
	companies, err := client.Company.Query().
		Where(company.IDIn(companyIDs...)).
		Select(company.FieldID, company.FieldStoreID, company.FieldTimelineSeq).
		WithStore().
		All(ctx)
	if err != nil {
		return nil, err
	}
	var window []predicate.TimelineEvent
	for _, c := range companies {
		if c.TimelineSeq > 0 {
			window = append(window, timelineevent.And(timelineevent.CompanyID(c.ID), timelineevent.SeqGT(c.TimelineSeq-int64(n)-1)))
		}
	}
	byCompany := map[string][]*ent.TimelineEvent{}
	if len(window) > 0 {
		rows, err := client.TimelineEvent.Query().
			Where(timelineevent.Or(window...)).
			Order(ent.Asc(timelineevent.FieldCompanyID), ent.Desc(timelineevent.FieldSeq)).
			All(ctx)
		if err != nil {
			return nil, err
		}
		for _, e := range rows {
			byCompany[e.CompanyID] = append(byCompany[e.CompanyID], e)
		}
	}
	out := make(map[string]Page[TimelineEvent], len(companies))
	for _, c := range companies {
		secret := c.Edges.Store.CursorSecret
		list := "timeline|" + c.ID
		out[c.ID] = makePage(byCompany[c.ID], n, timelineEventView, func(e *ent.TimelineEvent) string {
			return encodeCursor(secret, cursorPayload{List: list, Seq: e.Seq})
		})
	}
	return out, nil
}
