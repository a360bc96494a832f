package credit

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/creditd/creditd/ent"
	"github.com/creditd/creditd/ent/platformdelivery"
	"github.com/creditd/creditd/ids"
	"github.com/creditd/creditd/tenant"
)

// The staff's side of the platform inbox (Service.Inbox): retrying a failed delivery, the
// inbox's list, and the backlog the metrics report.

// Retry applies a failed delivery of the staff member's store again, from
// its recorded body: once the company it names exists, say. It returns the row as it now is
// (failed again, with the reason, when the cause remains).
//
// Errors: insufficient_scope (not staff), not_found, validation_failed (not failed).
func (s *Inbox) Retry(ctx context.Context, id string) (InboxDelivery, error) {
	if _, err := requireStaff(ctx); err != nil {
		return InboxDelivery{}, err
	}
	st, err := s.stores.viewerStore(ctx)
	if err != nil {
		return InboxDelivery{}, err
	}
	if !ids.HasPrefix(id, "pd") {
		return InboxDelivery{}, errNotFound("platform delivery")
	}
	var out InboxDelivery
	err = s.db.InTx(ctx, func(tx *ent.Tx) error {
		if err := s.takeTurn(ctx, tx, st.ID); err != nil {
			return err
		}
		row, err := tx.PlatformDelivery.Query().Where(platformdelivery.ID(id)).Only(ctx)
		if err != nil {
			return notFoundOr(err, "platform delivery")
		}
		if row.Status != platformdelivery.StatusFailed {
			return ParamErrorf(CodeValidationFailed, "delivery", "only failed deliveries are retried; %s is %s", row.ID, row.Status)
		}
		if row, err = s.applyPlatformEvent(ctx, tx, st, row, parsePlatformEvent(row.Topic, row.Body, st.Currency)); err != nil {
			return err
		}
		out = inboxView(row)
		return nil
	})
	return out, err
}

// InboxListParams are the inputs of Inbox.List.
type InboxListParams struct {
	ListParams
	// Status keeps one status; "" keeps all.
	Status string
}

// List lists the staff member's store's inbox, newest first.
//
// Errors: insufficient_scope (not staff), not_found (store), invalid_parameter (status,
// limit, cursor).
func (s *Inbox) List(ctx context.Context, p InboxListParams) (Page[InboxDelivery], error) {
	if _, err := requireStaff(ctx); err != nil {
		return Page[InboxDelivery]{}, err
	}
	n, err := pageSize(p.Limit)
	if err != nil {
		return Page[InboxDelivery]{}, err
	}
	st, err := s.stores.viewerStore(ctx)
	if err != nil {
		return Page[InboxDelivery]{}, err
	}
	q := s.db.Reader(ctx).PlatformDelivery.Query()
	list := "inbox|" + p.Status
	if p.Status != "" {
		if err := platformdelivery.StatusValidator(platformdelivery.Status(p.Status)); err != nil {
			return Page[InboxDelivery]{}, ParamErrorf(CodeInvalidParameter, "status", "status must be one of %s", strings.Join(InboxStatuses, ", "))
		}
		q.Where(platformdelivery.StatusEQ(platformdelivery.Status(p.Status)))
	}
	if p.Cursor != "" {
		c, err := decodeCursor(st.CursorSecret, list, p.Cursor)
		if err != nil {
			return Page[InboxDelivery]{}, err
		}
		t := time.UnixMicro(c.Time).UTC()
		q.Where(platformdelivery.Or(platformdelivery.ReceivedAtLT(t),
			platformdelivery.And(platformdelivery.ReceivedAtEQ(t), platformdelivery.IDLT(c.ID))))
	}
	rows, err := q.Order(ent.Desc(platformdelivery.FieldReceivedAt), ent.Desc(platformdelivery.FieldID)).Limit(n + 1).All(ctx)
	if err != nil {
		return Page[InboxDelivery]{}, err
	}
	var gids []string
	for _, r := range rows {
		if g := parsePlatformEvent(r.Topic, r.Body, st.Currency).companyGID; g != "" {
			gids = append(gids, g)
		}
	}
	named, err := companiesByGID(ctx, s.db.Reader(ctx), gids)
	if err != nil {
		return Page[InboxDelivery]{}, err
	}
	view := func(r *ent.PlatformDelivery) InboxDelivery {
		d := inboxDetailView(r, st.Currency)
		if c := named[d.CompanyGID]; c != nil {
			d.CompanyRef, d.CompanyName = c.ID, c.Name
		}
		return d
	}
	return makePage(rows, n, view, func(d *ent.PlatformDelivery) string {
		return encodeCursor(st.CursorSecret, cursorPayload{List: list, Time: d.ReceivedAt.UnixMicro(), ID: d.ID})
	}), nil
}

// Backlog counts the inbox rows of every store that wait for their order and that
// failed: system work, for the metrics.
func (s *Inbox) Backlog(ctx context.Context) (waiting, failed int, err error) {
	ctx = tenant.System(ctx)
	var counts []struct {
		Status string `json:"status"`
		Count  int    `json:"count"`
	}
	err = s.db.Ent().PlatformDelivery.Query().
		Where(platformdelivery.StatusIn(platformdelivery.StatusWaiting, platformdelivery.StatusFailed)).
		GroupBy(platformdelivery.FieldStatus).Aggregate(ent.Count()).Scan(ctx, &counts)
	if err != nil {
		return 0, 0, fmt.Errorf("inbox backlog: %w", err)
	}
	for _, c := range counts {
		switch c.Status {
		case InboxWaiting:
			waiting = c.Count
		case InboxFailed:
			failed = c.Count
		}
	}
	return waiting, failed, nil
}
