package credit

import (
	"context"

	"github.com/creditd/creditd/ent/ledgerentry"
	"github.com/creditd/creditd/ent/timelineevent"
	"github.com/creditd/creditd/ids"
)

// Single-record reads by ID for the records that REST only lists, so that GraphQL's
// node(id:) can refetch any object it has shown.

// GetLedgerEntry returns one ledger entry of the viewer's store.
//
// Errors: insufficient_scope, not_found (unknown ID or another store's).
func (s *Service) GetLedgerEntry(ctx context.Context, id string) (LedgerEntry, error) {
	if err := requireScope(ctx, ScopeReadCredit); err != nil {
		return LedgerEntry{}, err
	}
	if !ids.HasPrefix(id, "le") {
		return LedgerEntry{}, errNotFound("ledger entry")
	}
	e, err := s.reader(ctx).LedgerEntry.Query().Where(ledgerentry.ID(id)).WithStore().Only(ctx)
	if err != nil {
		return LedgerEntry{}, notFoundOr(err, "ledger entry")
	}
	return ledgerEntryView(e, e.Edges.Store.Currency), nil
}

// GetTimelineEvent returns one timeline event of the viewer's store.
//
// Errors: insufficient_scope, not_found (unknown ID or another store's).
func (s *Service) GetTimelineEvent(ctx context.Context, id string) (TimelineEvent, error) {
	if err := requireScope(ctx, ScopeReadCredit); err != nil {
		return TimelineEvent{}, err
	}
	if !ids.HasPrefix(id, "ev") {
		return TimelineEvent{}, errNotFound("timeline event")
	}
	e, err := s.reader(ctx).TimelineEvent.Query().Where(timelineevent.ID(id)).Only(ctx)
	if err != nil {
		return TimelineEvent{}, notFoundOr(err, "timeline event")
	}
	return timelineEventView(e), nil
}
