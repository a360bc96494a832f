package credit

import (
	"context"
	"encoding/json"
	"fmt"
	"math/bits"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/creditd/creditd/ent"
	"github.com/creditd/creditd/ent/event"
	"github.com/creditd/creditd/ids"
	"github.com/creditd/creditd/tenant"
)

// The store's event feed (contract §11): a transactional outbox. Every write appends its
// events in its own transaction, so an event exists exactly when its change committed, and
// GET /v1/events and the webhook deliveries read the same rows.
//
// Events are numbered per store without gaps by stores.event_seq, incremented in the writing
// transaction and locked until commit. On PostgreSQL the row lock makes a writer wait for the
// previous one to commit before it takes the next number, and a transaction is visible to new
// snapshots before its locks are released; so a reader that sees event n+1 sees event n, and
// reading "seq > n" in seq order never skips an event that commits late. There a transaction's
// events are inserted just before its commit (database.InsertNumberedAtCommit), so the store's
// writers take turns for that statement and the commit only, and the counter is the last lock
// of every writer (see lockCompany for the rest of the order). SQLite has one writer at a
// time, which gives the same.

// EventType is the type of an event of the feed (contract §11), such as "company.hold_placed":
// what happened, named by the resource of its data.object.
type EventType string

// Event types (contract §11). Each names the resource of its data.object.
const (
	EventTypeLedgerEntryCreated        EventType = "ledger_entry.created"
	EventTypeCompanyCreated            EventType = "company.created"
	EventTypeCompanyCreditLimitChanged EventType = "company.credit_limit_changed"
	EventTypeCompanyHoldPlaced         EventType = "company.hold_placed"
	EventTypeCompanyHoldLifted         EventType = "company.hold_lifted"
	EventTypeCompanyHoldChanged        EventType = "company.hold_changed"
	// EventTypeCompanyPlatformGIDChanged: staff set or corrected the company's platform
	// company GID (contract §11: every change of a company's representation has its event).
	EventTypeCompanyPlatformGIDChanged EventType = "company.platform_company_gid_changed"
	// EventTypeInvoicePaid: an invoice's open amount reached zero by a payment, a refund or
	// credit (contract §17); an invoice a cancellation settles is cancelled and has none.
	EventTypeInvoicePaid              EventType = "invoice.paid"
	EventTypeApplicationCreated       EventType = "application.created"
	EventTypeApplicationStatusChanged EventType = "application.status_changed"
	EventTypeKeyCreated               EventType = "key.created"
	EventTypeKeyRotated               EventType = "key.rotated"
	EventTypeKeyRevoked               EventType = "key.revoked"
)

// EventTypes lists every event type in the order they are documented: what a type= filter
// or a webhook endpoint's subscription may name.
var EventTypes = []EventType{
	EventTypeLedgerEntryCreated,
	EventTypeCompanyCreated,
	EventTypeCompanyCreditLimitChanged,
	EventTypeCompanyHoldPlaced,
	EventTypeCompanyHoldLifted,
	EventTypeCompanyHoldChanged,
	EventTypeCompanyPlatformGIDChanged,
	EventTypeInvoicePaid,
	EventTypeInvoicePromiseRecorded,
	EventTypeInvoicePromiseWithdrawn,
	EventTypeInvoiceDisputed,
	EventTypeInvoiceDisputeResolved,
	EventTypeInvoicePromiseBroken,
	EventTypeInvoiceReminderDue,
	EventTypeApplicationCreated,
	EventTypeApplicationStatusChanged,
	EventTypeKeyCreated,
	EventTypeKeyRotated,
	EventTypeKeyRevoked,
}

// EventTypeScope returns the scope an API key needs to read events of type t:
// read_applications for application events, read_credit for the others. It returns "" for
// an unknown type.
func EventTypeScope(t EventType) string {
	switch {
	case !slices.Contains(EventTypes, t):
		return ""
	case strings.HasPrefix(string(t), "application."):
		return ScopeReadApplications
	default:
		return ScopeReadCredit
	}
}

// Event is one event as GET /v1/events and webhook deliveries show it.
type Event struct {
	ID         string    `json:"id"`
	Type       EventType `json:"type"`
	OccurredAt Timestamp `json:"occurred_at"`
	// Data is {"object": {...}, "previous": {...}}: the resource as the REST API shows it
	// (applications without contact) and, where something changed, the values before.
	Data json.RawMessage `json:"data"`
	// Seq is the event's gapless number in its store's feed; not part of the JSON.
	Seq int64 `json:"-"`
}

// EventOf is the view of a stored event, for the feed and the webhook deliveries.
func EventOf(e *ent.Event) Event {
	return Event{ID: e.ID, Type: EventType(e.Type), OccurredAt: At(e.OccurredAt), Data: json.RawMessage(e.Data), Seq: e.Seq}
}

// eventData is the stored "data" member of an event.
type eventData struct {
	Object   any            `json:"object"`
	Previous map[string]any `json:"previous,omitempty"`
}

// emit appends one event to the feed of the store storeID in tx: object is the resource's
// REST view (never personal data), previous the changed values before the write (nil when
// nothing was replaced). Its number and its row are one statement where the database allows,
// run just before tx commits where writers run concurrently (see
// database.InsertNumberedAtCommit): it locks the store's row until commit (see above), and
// nothing in tx reads the event.
func (s *eventWriter) emit(ctx context.Context, tx *ent.Tx, storeID string, typ EventType, object any, previous map[string]any) error {
	return s.emitData(ctx, tx, storeID, ids.New(eventIDPrefix), typ, eventData{Object: object, Previous: previous})
}

// emitData is emit with the event's ID chosen by the caller (a row written with the event names
// it) and its whole data member, for events whose data has members beside object (an
// invoice.reminder_due's level).
func (s *eventWriter) emitData(ctx context.Context, tx *ent.Tx, storeID, id string, typ EventType, data any) error {
	encoded, err := json.Marshal(data)
	if err != nil {
		return fmt.Errorf("encode %s event: %w", typ, err)
	}
	return s.db.InsertNumberedAtCommit(ctx, tx, event.Table,
		[]string{event.FieldID, event.FieldStoreID, event.FieldType, event.FieldOccurredAt, event.FieldData},
		[]any{id, storeID, string(typ), s.clock.Now(), string(encoded)})
}

// readableEventTypes returns the event types the viewer may read: all for staff and the
// system, for an API key those its scopes allow. Viewers who may read the same types share one
// slice (a live subscription keeps it: issue 40's memory per subscription); callers only read
// it.
func readableEventTypes(ctx context.Context) ([]string, error) {
	v, ok := tenant.FromContext(ctx)
	if !ok {
		return nil, errNoViewer
	}
	var set uint64 // bit i: EventTypes[i] is readable
	for i, t := range EventTypes {
		if v.HasScope(EventTypeScope(t)) {
			set |= 1 << i
		}
	}
	if set == 0 {
		return nil, Errorf(CodeInsufficientScope, "this call needs scope %s or %s", ScopeReadCredit, ScopeReadApplications)
	}
	if out, ok := readableSets.Load(set); ok {
		return out.([]string), nil
	}
	out := make([]string, 0, bits.OnesCount64(set))
	for i, t := range EventTypes {
		if set&(1<<i) != 0 {
			out = append(out, string(t))
		}
	}
	shared, _ := readableSets.LoadOrStore(set, out)
	return shared.([]string), nil
}

// The bit set has room for every event type.
func init() {
	if len(EventTypes) > 64 {
		panic("credit: readableEventTypes's bit set holds 64 event types")
	}
}

// readableSets holds the readable types of each set of them met so far (a few: one per
// combination of the scopes that decide them), keyed by readableEventTypes's bit set.
var readableSets sync.Map

// knownEventTypes checks that each of types is one of EventTypes and returns them without
// repeats, in the order given. code and param name the input in the error: invalid_parameter
// for a query parameter (GET /v1/events' type), validation_failed for a write's input (a
// webhook endpoint's events).
//
// Errors: code (param) for an unknown type.
func knownEventTypes(types []string, code Code, param string) ([]string, error) {
	out := make([]string, 0, len(types))
	for _, t := range types {
		if !slices.Contains(EventTypes, EventType(t)) {
			return nil, ParamErrorf(code, param, "unknown event type %q; the types are %s", t, strings.Join(EventTypeNames(), ", "))
		}
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out, nil
}

// EventTypeNames is EventTypes as strings, for forms and messages that list them.
func EventTypeNames() []string {
	names := make([]string, len(EventTypes))
	for i, t := range EventTypes {
		names[i] = string(t)
	}
	return names
}

// DefaultEventRetention is how long events are kept by default, and the least that may be
// configured: 30 days.
const DefaultEventRetention = 30 * 24 * time.Hour

// eventIDPrefix is the prefix of event IDs. Timeline events share it (they were there first);
// the two are told apart by the table they are found in.
const eventIDPrefix = "ev"

// EventListParams are the inputs of Events.List.
type EventListParams struct {
	ListParams
	// After keeps only events appended after this event of the store. Errors about it name it
	// "after" (GraphQL renames it "afterEvent").
	After string
	// Types keeps only events of these types; empty means every type the viewer may read.
	// Errors about it name it "type" (GraphQL renames it "types").
	Types []string
}

// eventFilter checks a type filter against the known types and the viewer's scopes and
// returns the types to read, in documented order, and whether that is every type.
//
// Errors: unauthenticated, insufficient_scope (no read scope, or only types the viewer may
// not read), invalid_parameter (type).
func eventFilter(ctx context.Context, types []string) ([]string, bool, error) {
	readable, err := readableEventTypes(ctx)
	if err != nil {
		return nil, false, err
	}
	if len(types) == 0 {
		return readable, len(readable) == len(EventTypes), nil
	}
	types, err = knownEventTypes(types, CodeInvalidParameter, "type")
	if err != nil {
		return nil, false, err
	}
	var out []string
	var missing string
	for _, t := range types {
		if !slices.Contains(readable, t) {
			missing = EventTypeScope(EventType(t))
			continue
		}
		out = append(out, t)
	}
	if len(out) == 0 {
		return nil, false, Errorf(CodeInsufficientScope, "this call needs scope %s", missing)
	}
	slices.SortFunc(out, func(a, b string) int {
		return slices.Index(EventTypes, EventType(a)) - slices.Index(EventTypes, EventType(b))
	})
	return out, len(out) == len(EventTypes), nil
}

// List lists the viewer's store's events in append order, oldest first, keeping only
// the types the viewer's scopes allow (contract §11). With After, only events appended after
// that one: resuming from the last event seen never skips an event nor returns one twice,
// however late it committed, on SQLite or on PostgreSQL with several instances.
//
// Errors: unauthenticated, insufficient_scope, invalid_parameter (limit, cursor, after, type).
func (s *Events) List(ctx context.Context, p EventListParams) (Page[Event], error) {
	types, all, err := eventFilter(ctx, p.Types)
	if err != nil {
		return Page[Event]{}, err
	}
	n, err := pageSize(p.Limit)
	if err != nil {
		return Page[Event]{}, err
	}
	st, err := s.stores.viewerStore(ctx)
	if err != nil {
		return Page[Event]{}, err
	}
	client := s.db.Reader(ctx)
	q := client.Event.Query()
	if !all {
		q.Where(event.TypeIn(types...))
	}
	list := "events|" + strings.Join(types, ",")
	if p.After != "" {
		// after is a position: any event the viewer may read, whatever the type filter.
		readable, err := readableEventTypes(ctx)
		if err != nil {
			return Page[Event]{}, err
		}
		var after *ent.Event
		if ids.HasPrefix(p.After, eventIDPrefix) {
			after, err = client.Event.Query().
				Where(event.ID(p.After), event.TypeIn(readable...)).
				Select(event.FieldSeq).Only(ctx)
			if err != nil && !ent.IsNotFound(err) {
				return Page[Event]{}, err
			}
		}
		if after == nil {
			return Page[Event]{}, s.errEventAfter()
		}
		q.Where(event.SeqGT(after.Seq))
		list += "|" + p.After
	}
	if p.Cursor != "" {
		cur, err := decodeCursor(st.CursorSecret, list, p.Cursor)
		if err != nil {
			return Page[Event]{}, err
		}
		q.Where(event.SeqGT(cur.Seq))
	}
	rows, err := q.Order(ent.Asc(event.FieldSeq)).Limit(n + 1).All(ctx)
	if err != nil {
		return Page[Event]{}, err
	}
	return makePage(rows, n, EventOf, func(e *ent.Event) string {
		return encodeCursor(st.CursorSecret, cursorPayload{List: list, Seq: e.Seq})
	}), nil
}

// CheckListParams checks the inputs of Events.List that need nothing read, before the
// list is read (see CheckListParams): the form of after (an event's ID) and the type names.
// Events.List checks that after names an event the viewer may read.
//
// Errors: invalid_parameter (after, type).
func (s *Events) CheckListParams(p EventListParams) error {
	if p.After != "" && !ids.HasPrefix(p.After, eventIDPrefix) {
		return s.errEventAfter()
	}
	_, err := knownEventTypes(p.Types, CodeInvalidParameter, "type")
	return err
}

func (s *Events) errEventAfter() error {
	return ParamErrorf(CodeInvalidParameter, "after",
		"after must be the ID of an event of this store you may read, not older than the retention (%s)", retentionText(s.eventRetention))
}

// Get returns one event of the viewer's store that the viewer's scopes allow reading.
//
// Errors: unauthenticated, insufficient_scope (no read scope), not_found (unknown ID, another
// store's, a type the viewer may not read, or purged).
func (s *Events) Get(ctx context.Context, id string) (Event, error) {
	types, _, err := eventFilter(ctx, nil)
	if err != nil {
		return Event{}, err
	}
	if !ids.HasPrefix(id, eventIDPrefix) {
		return Event{}, errNotFound("event")
	}
	e, err := s.db.Reader(ctx).Event.Query().Where(event.ID(id), event.TypeIn(types...)).Only(ctx)
	if err != nil {
		return Event{}, notFoundOr(err, "event")
	}
	return EventOf(e), nil
}

// retentionText writes a retention in days where it is whole days.
func retentionText(d time.Duration) string {
	if d%(24*time.Hour) == 0 {
		return fmt.Sprintf("%d days", d/(24*time.Hour))
	}
	return d.String()
}

// emitHoldChange appends a company.hold_placed, company.hold_lifted or company.hold_changed
// event: the company as it now is (c), and its status and hold as they were (before, with the
// lifted or changed hold's kind).
func (s *eventWriter) emitHoldChange(ctx context.Context, tx *ent.Tx, typ EventType, c, before *ent.Company) error {
	prev := companyView(before, c.Edges.Store)
	err := s.emit(ctx, tx, c.StoreID, typ, companyView(c, c.Edges.Store), map[string]any{"status": prev.Status, "hold": prev.Hold})
	return err
}

// Object decodes the event's data.object into the view of the resource its type names, as it
// was when the event was recorded: a LedgerEntry (ledger_entry.*), a CompanySnapshot
// (company.*), an InvoiceSnapshot (invoice.*), an ApplicationEventObject (application.*) or a
// KeyEventObject (key.*). GraphQL's
// typed Event.object shows it.
//
// Errors: an internal error when the stored data does not decode or the type names no resource
// (a defect: every type's object is written by emit).
func (e Event) Object() (any, error) {
	var data struct {
		Object json.RawMessage `json:"object"`
	}
	if err := json.Unmarshal(e.Data, &data); err != nil {
		return nil, fmt.Errorf("event %s data: %w", e.ID, err)
	}
	resource, _, _ := strings.Cut(string(e.Type), ".")
	var obj any
	switch resource {
	case "ledger_entry":
		obj = &LedgerEntry{}
	case "company":
		obj = &CompanySnapshot{}
	case "invoice":
		obj = &InvoiceSnapshot{}
	case "application":
		obj = &ApplicationEventObject{}
	case "key":
		obj = &KeyEventObject{}
	default:
		return nil, fmt.Errorf("event %s: type %q names no resource", e.ID, e.Type)
	}
	if err := json.Unmarshal(data.Object, obj); err != nil {
		return nil, fmt.Errorf("event %s object: %w", e.ID, err)
	}
	return obj, nil
}

// CompanyID is the ID of the company the event concerns: the company of a company.* event, the
// company whose ledger holds a ledger_entry.* event's entry or owes an invoice.* event's
// invoice; "" for other events.
//
// Errors: an internal error when a company or ledger event's data does not decode (a defect).
func (e Event) CompanyID() (string, error) {
	resource, _, _ := strings.Cut(string(e.Type), ".")
	if resource != "company" && resource != "ledger_entry" && resource != "invoice" {
		return "", nil
	}
	var data struct {
		Object struct {
			ID        string `json:"id"`
			CompanyID string `json:"company_id"`
		} `json:"object"`
	}
	if err := json.Unmarshal(e.Data, &data); err != nil {
		return "", fmt.Errorf("event %s data: %w", e.ID, err)
	}
	if resource == "company" {
		return data.Object.ID, nil
	}
	return data.Object.CompanyID, nil
}

// CompanySnapshot is a company as an event recorded it: the company's view, with its values as
// of the event. A type of its own, not Company, because it is not the company's current state:
// GraphQL shows it without the company's id (a client cache would take it for the live company
// and overwrite it with old figures) and without the fields that are read now (ledger, aging).
type CompanySnapshot Company

// InvoiceSnapshot is an invoice as an event recorded it: its view then. A type of its own, not
// Invoice, for CompanySnapshot's reason: GraphQL shows it without the invoice's id, so a client
// cache does not take it for the live invoice.
type InvoiceSnapshot Invoice

// ApplicationEventObject is an application as events show it: its REST view without the
// contact person, since events never carry personal data (they are kept for weeks and sent
// to webhook endpoints, out of reach of an erasure).
type ApplicationEventObject struct {
	ID           string    `json:"id"`
	Status       string    `json:"status"`
	BusinessName string    `json:"business_name"`
	VAT          VAT       `json:"vat"`
	SubmittedAt  Timestamp `json:"submitted_at"`
}

func applicationEventView(a *ent.Application) ApplicationEventObject {
	v := applicationView(a)
	return ApplicationEventObject{ID: v.ID, Status: v.Status, BusinessName: v.BusinessName, VAT: v.VAT, SubmittedAt: v.SubmittedAt}
}

// KeyEventObject is an API key as events show it: its public listing, never a secret or a
// secret's hash.
type KeyEventObject struct {
	ID        string     `json:"id"`
	Label     string     `json:"label"`
	Scopes    []string   `json:"scopes"`
	CreatedAt Timestamp  `json:"created_at"`
	RevokedAt *Timestamp `json:"revoked_at"`
}

func keyEventView(k *ent.APIKey) KeyEventObject {
	scopes := k.Scopes
	if scopes == nil {
		scopes = []string{}
	}
	return KeyEventObject{ID: k.ID, Label: k.Label, Scopes: scopes, CreatedAt: At(k.CreatedAt), RevokedAt: atPtr(k.RevokedAt)}
}
