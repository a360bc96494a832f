package credit

import (
	"context"
	"regexp"
	"time"

	"github.com/creditd/creditd/ent"
	"github.com/creditd/creditd/ent/company"
	"github.com/creditd/creditd/ent/invoice"
	"github.com/creditd/creditd/ent/platformdelivery"
	"github.com/creditd/creditd/ids"
	"github.com/creditd/creditd/tenant"
)

// The inbox (contract §13): the mirror of the event outbox (events.go). Each delivery of the
// platform is recorded in the store's inbox by the transaction that applies it, so a delivery
// is applied exactly when its row exists. De-duplication is a conflicting INSERT, never a
// read-then-write: the webhook id is unique per store (a retry of the platform's conflicts and
// changes nothing), and so is the platform object a delivery is about (the same payment under
// another webhook id is recorded as a duplicate naming the first). The status is the only
// column that moves: waiting rows (a payment, refund or cancellation whose order has not
// arrived) are applied, in arrival order, by the transaction that records their order, and
// failed ones by `platform retry`.
//
// All deliveries of a store, and their retries, take turns (RowLocks.TakeStoreTurn on
// PostgreSQL; SQLite has one writer anyway), before anything else: a payment recorded as
// waiting and its order can then not pass each other unseen. A delivery's ledger write locks
// its company as every ledger write does, so it takes turns with the company's other writes.

// Platform topics (X-Platform-Topic) the connector applies; any other is acknowledged and
// ignored.
const (
	TopicOrderCreated   = "orders/create"
	TopicPaymentCreated = "payments/create"
	TopicRefundCreated  = "refunds/create"
	TopicOrderCancelled = "orders/cancelled"
)

// Inbox statuses.
const (
	InboxApplied   = "applied"
	InboxIgnored   = "ignored"
	InboxWaiting   = "waiting"
	InboxFailed    = "failed"
	InboxDuplicate = "duplicate"
)

// InboxStatuses lists the statuses in the order the documentation gives them.
var InboxStatuses = []string{InboxApplied, InboxIgnored, InboxWaiting, InboxFailed, InboxDuplicate}

// Reasons kept with a failed, ignored or duplicate delivery.
const (
	// Failed: staff can see them and retry once the cause is fixed.
	ReasonUnknownCompany        = "unknown_company"
	ReasonCurrencyMismatch      = "currency_mismatch"
	ReasonInvalidAmount         = "invalid_amount"
	ReasonUnparseableBody       = "unparseable_body"
	ReasonOrderOfAnotherCompany = "order_of_another_company"
	// Ignored: nothing to apply.
	ReasonNoCompany        = "no_company"
	ReasonNoPaymentTerms   = "no_payment_terms"
	ReasonUnsupportedTopic = "unsupported_topic"
	ReasonOrderIgnored     = "order_ignored"
	ReasonOrderRecorded    = "order_already_recorded"
	ReasonNothingOpen      = "nothing_open"
	// Waiting and duplicate.
	ReasonOrderNotArrived = "order_not_arrived"
	ReasonDuplicate       = "duplicate"
)

// TimelinePlatformEntryRecorded is the timeline event of an entry the platform's delivery
// recorded, attributed to the actor "platform".
const TimelinePlatformEntryRecorded TimelineKind = "platform_entry_recorded"

// platformActor is the actor of what the platform's deliveries record, also when staff retry
// one: the entry is still the platform's.
var platformActor = Actor{Type: tenant.ActorPlatform, Label: "platform"}

var (
	paymentGIDPattern = regexp.MustCompile(`^gid://platform/Payment/[0-9]{1,20}$`)
	refundGIDPattern  = regexp.MustCompile(`^gid://platform/Refund/[0-9]{1,20}$`)
)

// InboxDelivery is one row of a store's inbox as staff (and the platform's answer) see it.
type InboxDelivery struct {
	ID        string `json:"id"`
	WebhookID string `json:"webhook_id"`
	Topic     string `json:"topic"`
	// Status is applied, ignored, waiting, failed or duplicate.
	Status string  `json:"status"`
	Reason *string `json:"reason"`
	// DuplicateOf is the delivery that recorded the same platform object first.
	DuplicateOf   *string    `json:"duplicate_of"`
	CompanyID     *string    `json:"company_id"`
	OrderGID      *string    `json:"platform_order_gid"`
	LedgerEntryID *string    `json:"ledger_entry_id"`
	TriggeredAt   *Timestamp `json:"triggered_at"`
	ReceivedAt    Timestamp  `json:"received_at"`
	UpdatedAt     Timestamp  `json:"updated_at"`

	// For the console (not part of the JSON): the platform company GID and the amount the
	// body names, and the company of the store with that GID (its ID and name), when there is
	// one.
	CompanyGID  string `json:"-"`
	Amount      *Money `json:"-"`
	CompanyRef  string `json:"-"`
	CompanyName string `json:"-"`
}

func inboxView(d *ent.PlatformDelivery) InboxDelivery {
	return InboxDelivery{
		ID: d.ID, WebhookID: d.WebhookID, Topic: d.Topic, Status: string(d.Status), Reason: d.Reason,
		DuplicateOf: d.DuplicateOf, CompanyID: d.CompanyID, OrderGID: d.OrderGid, LedgerEntryID: d.LedgerEntryID,
		TriggeredAt: atPtr(d.TriggeredAt), ReceivedAt: At(d.ReceivedAt), UpdatedAt: At(d.UpdatedAt),
	}
}

// PlatformDeliveryInput is one delivery as the door received it, its signature already
// checked (Platform.Authenticate).
type PlatformDeliveryInput struct {
	Topic       string
	WebhookID   string
	TriggeredAt string
	Body        []byte
}

// Receive records a delivery of the platform's in the store's inbox and
// applies it, in one transaction, and returns its inbox row: the row recorded by the first
// delivery when this is a retry (nothing changes), a duplicate row naming the first when the
// same platform object arrived before under another webhook id. Deliveries that cannot be
// applied are recorded failed or ignored with their reason; that is not an error.
//
// Errors: unauthenticated (ctx not from Platform.Authenticate), validation_failed (webhook
// id, topic).
func (s *Inbox) Receive(ctx context.Context, in PlatformDeliveryInput) (InboxDelivery, error) {
	st, err := s.stores.requirePlatform(ctx)
	if err != nil {
		return InboxDelivery{}, err
	}
	if err := checkHeaderText(in.WebhookID, "X-Platform-Webhook-Id"); err != nil {
		return InboxDelivery{}, err
	}
	if err := checkHeaderText(in.Topic, "X-Platform-Topic"); err != nil {
		return InboxDelivery{}, err
	}
	var triggered *time.Time
	if at, err := ParseTimestamp(in.TriggeredAt); err == nil {
		triggered = &at.Time
	}
	ev := parsePlatformEvent(in.Topic, in.Body, st.Currency)
	var out InboxDelivery
	err = s.db.InTx(ctx, func(tx *ent.Tx) error {
		if err := s.takeTurn(ctx, tx, st.ID); err != nil {
			return err
		}
		row, fresh, err := s.recordInbox(ctx, tx, st, in, triggered, ev)
		if err != nil {
			return err
		}
		if fresh {
			if row, err = s.applyPlatformEvent(ctx, tx, st, row, ev); err != nil {
				return err
			}
		}
		out = inboxView(row)
		return nil
	})
	return out, err
}

// checkHeaderText requires a header of the platform's to be header text (IsHeaderText).
//
// Errors: validation_failed (param name).
func checkHeaderText(v, name string) error {
	if !IsHeaderText(v) {
		return ParamErrorf(CodeValidationFailed, name, "header %s is required: 1 to %d printable ASCII characters", name, MaxHeaderText)
	}
	return nil
}

// recordInbox inserts the delivery's row; fresh reports that it is new and must be applied.
// The INSERT does nothing when it conflicts: with the webhook id (a retry: the first row is
// returned), or with the platform object (recorded again as a duplicate naming the first).
func (s *Inbox) recordInbox(ctx context.Context, tx *ent.Tx, st *ent.Store, in PlatformDeliveryInput, triggered *time.Time, ev platformEvent) (*ent.PlatformDelivery, bool, error) {
	now := s.clock.Now()
	id := ids.New("pd")
	var key *string
	if ev.objectKey != "" {
		key = &ev.objectKey
	}
	create := func(id string, key, duplicateOf *string, status platformdelivery.Status, reason *string) error {
		return tx.PlatformDelivery.Create().
			SetID(id).SetStoreID(st.ID).SetWebhookID(in.WebhookID).SetTopic(in.Topic).SetNillableTriggeredAt(triggered).
			SetBody(in.Body).SetNillableObjectKey(key).SetNillableOrderGid(ev.orderGID).SetStatus(status).
			SetNillableReason(reason).SetNillableDuplicateOf(duplicateOf).SetReceivedAt(now).SetUpdatedAt(now).
			OnConflict(doNothingOnConflict()).Exec(ctx)
	}
	// Recorded as waiting until applyPlatformEvent settles it in this transaction.
	if err := create(id, key, nil, platformdelivery.StatusWaiting, nil); err != nil && !s.db.InsertSkipped(err) {
		return nil, false, err
	}
	row, err := tx.PlatformDelivery.Query().Where(platformdelivery.ID(id)).Only(ctx)
	if err == nil {
		return row, true, nil
	}
	if !ent.IsNotFound(err) {
		return nil, false, err
	}
	first, err := tx.PlatformDelivery.Query().Where(platformdelivery.WebhookID(in.WebhookID)).Only(ctx)
	if err == nil {
		return first, false, nil
	}
	if !ent.IsNotFound(err) || key == nil {
		return nil, false, err
	}
	if first, err = tx.PlatformDelivery.Query().Where(platformdelivery.ObjectKey(*key)).Only(ctx); err != nil {
		return nil, false, err
	}
	reason := ReasonDuplicate
	if err := create(id, nil, &first.ID, platformdelivery.StatusDuplicate, &reason); err != nil && !s.db.InsertSkipped(err) {
		return nil, false, err
	}
	row, err = tx.PlatformDelivery.Query().Where(platformdelivery.ID(id)).Only(ctx)
	return row, false, err
}

// settlement is what applying a delivery came to.
type settlement struct {
	status, reason string
	companyID      *string
	entryID        *string
}

// applyPlatformEvent applies a recorded delivery and saves its outcome on its row: the one
// write path of the ledger (appendEntryDue), so balances, invoices, events and overdue holds
// move as for any other entry. An order releases the deliveries waiting for it.
func (s *Inbox) applyPlatformEvent(ctx context.Context, tx *ent.Tx, st *ent.Store, row *ent.PlatformDelivery, ev platformEvent) (*ent.PlatformDelivery, error) {
	res, err := s.settle(ctx, tx, ev)
	if err != nil {
		return nil, err
	}
	upd := tx.PlatformDelivery.UpdateOne(row).SetStatus(platformdelivery.Status(res.status)).SetUpdatedAt(s.clock.Now()).
		SetNillableCompanyID(res.companyID).SetNillableLedgerEntryID(res.entryID)
	if res.reason != "" {
		upd.SetReason(res.reason)
	} else {
		upd.ClearReason()
	}
	if row, err = upd.Save(ctx); err != nil {
		return nil, err
	}
	if ev.kind == KindOrderPlaced && ev.orderGID != nil {
		switch res.status {
		case InboxApplied, InboxIgnored:
			if err := s.releaseWaiting(ctx, tx, st, *ev.orderGID, res.status == InboxIgnored && res.reason != ReasonOrderRecorded); err != nil {
				return nil, err
			}
		}
	}
	return row, nil
}

// lockCompanyOfGID locks the company that has platform company GID gid (lockCompany). The GID
// is looked up before the lock and may have moved meanwhile (staff set it on another company,
// which takes no store-wide lock), so it is checked again under the lock, and looked up again
// when it moved: the delivery applies to the company that has the GID when it commits. The
// delivery holds its store's turn, so it may lock a company it then leaves.
//
// Errors: not_found (no company has gid).
func (s *Inbox) lockCompanyOfGID(ctx context.Context, tx *ent.Tx, gid string) (*ent.Company, error) {
	for {
		id, err := tx.Company.Query().Where(company.PlatformCompanyGid(gid)).OnlyID(ctx)
		if err != nil {
			return nil, notFoundOr(err, "company")
		}
		c, err := s.companies.lockCompany(ctx, tx, id)
		if err != nil || (c.PlatformCompanyGid != nil && *c.PlatformCompanyGid == gid) {
			return c, err
		}
	}
}

// settle applies ev to the ledger, or says why not.
func (s *Inbox) settle(ctx context.Context, tx *ent.Tx, ev platformEvent) (settlement, error) {
	if ev.outcome != "" {
		return settlement{status: ev.outcome, reason: ev.reason}, nil
	}
	c, err := s.lockCompanyOfGID(ctx, tx, ev.companyGID)
	if IsNotFound(err) {
		return settlement{status: InboxFailed, reason: ReasonUnknownCompany}, nil
	}
	if err != nil {
		return settlement{}, err
	}
	res := settlement{companyID: &c.ID}
	amount := ev.amount
	if ev.orderGID != nil {
		inv, err := tx.Invoice.Query().Where(invoice.CompanyID(c.ID), invoice.PlatformOrderGid(*ev.orderGID)).Only(ctx)
		switch {
		case err != nil && !ent.IsNotFound(err):
			return settlement{}, err
		case ev.kind == KindOrderPlaced && err == nil:
			res.status, res.reason = InboxIgnored, ReasonOrderRecorded // typed in by hand before
			return res, nil
		case ev.kind != KindOrderPlaced && err != nil:
			res.status, res.reason, err = orderMissing(ctx, tx, *ev.orderGID)
			return res, err
		case ev.kind == KindCancellation:
			if !inv.OpenAmount.IsPositive() {
				res.status, res.reason = InboxIgnored, ReasonNothingOpen
				return res, nil
			}
			amount = inv.OpenAmount.Neg()
		}
	}
	e, c, err := s.ledger.appendEntryDue(ctx, tx, c, ev.kind, amount, ev.orderGID, nil, ev.occurred, ev.dueDays, platformActor)
	if err != nil {
		return settlement{}, err
	}
	if err := s.events.recordEventAs(ctx, tx, c, platformActor, TimelinePlatformEntryRecorded, map[string]any{
		"ledger_entry_id": e.ID, "kind": ev.kind, "amount": NewMoney(amount, c.Edges.Store.Currency), "platform_order_gid": ev.orderGID,
	}); err != nil {
		return settlement{}, err
	}
	res.status, res.entryID = InboxApplied, &e.ID
	return res, nil
}

// orderMissing decides what a payment, refund or cancellation whose order is not in its
// company's ledger comes to: it waits for the order, unless the order was ignored (so is
// this) or recorded for another company (failed).
func orderMissing(ctx context.Context, tx *ent.Tx, orderGID string) (string, string, error) {
	order, err := tx.PlatformDelivery.Query().Where(platformdelivery.ObjectKey("order:" + orderGID)).Only(ctx)
	switch {
	case ent.IsNotFound(err):
		return InboxWaiting, ReasonOrderNotArrived, nil
	case err != nil:
		return "", "", err
	case order.Status == platformdelivery.StatusIgnored:
		return InboxIgnored, ReasonOrderIgnored, nil
	case order.Status == platformdelivery.StatusApplied:
		return InboxFailed, ReasonOrderOfAnotherCompany, nil
	}
	return InboxWaiting, ReasonOrderNotArrived, nil
}

// releaseWaiting applies, in arrival order, the deliveries waiting for an order that has just
// been recorded, or marks them ignored when the order was.
func (s *Inbox) releaseWaiting(ctx context.Context, tx *ent.Tx, st *ent.Store, orderGID string, ignored bool) error {
	rows, err := tx.PlatformDelivery.Query().
		Where(platformdelivery.OrderGid(orderGID), platformdelivery.StatusEQ(platformdelivery.StatusWaiting)).
		Order(ent.Asc(platformdelivery.FieldReceivedAt), ent.Asc(platformdelivery.FieldID)).All(ctx)
	if err != nil {
		return err
	}
	for _, row := range rows {
		ev := parsePlatformEvent(row.Topic, row.Body, st.Currency)
		if ignored {
			ev = ev.settled(InboxIgnored, ReasonOrderIgnored)
		}
		if _, err := s.applyPlatformEvent(ctx, tx, st, row, ev); err != nil {
			return err
		}
	}
	return nil
}
