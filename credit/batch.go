package credit

import (
	"context"
	"maps"
	"slices"

	"github.com/creditd/creditd/ent"
	"github.com/creditd/creditd/ent/company"
	"github.com/creditd/creditd/ent/ledgerentry"
	"github.com/creditd/creditd/ent/predicate"
	"github.com/creditd/creditd/ent/timelineevent"
)

// Batched reads for GraphQL, where one query asks for the ledgers or timelines of a whole page
// of companies. Each returns, for every company, exactly the first page ListLedger or
// ListTimeline would return (same entries, same cursors, same has-more), in a fixed number of
// SQL queries whatever the number of companies: the companies, then the entries (or the
// entries alone, for companies the caller was just shown).
//
// They rely on the per-company sequence numbers being gapless and the ledger and timeline
// being append-only (contract §6): a company's newest n+1 entries are then exactly those with
// a sequence number above its last one minus n+1, which one query can ask for every company at
// once without window functions.

// LatestLedgerEntries returns the first page of each company's ledger, newest first, keyed by
// company ID. limit is the page size (nil for the default) and limitName names it in errors.
// Companies that do not exist in the viewer's store are absent from the result, so the caller
// can ask ListLedger for the not_found answer.
//
// Errors: insufficient_scope, invalid_parameter (limit).
func (s *Service) LatestLedgerEntries(ctx context.Context, companyIDs []string, limit *int, limitName string) (map[string]Page[LedgerEntry], error) {
	if err := requireScope(ctx, ScopeReadCredit); err != nil {
		return nil, err
	}
	n, err := pageSize(limit, ListParams{LimitName: limitName}.limitName())
	if err != nil {
		return nil, err
	}
	client := s.reader(ctx)
	companies, err := client.Company.Query().
		Where(company.IDIn(companyIDs...)).
		Select(company.FieldID, company.FieldStoreID, company.FieldLedgerSeq).
		All(ctx)
	if err != nil {
		return nil, err
	}
	// The companies are the viewer's, so of one store; grouping keeps admin callers right.
	byStore := map[string]map[string]int64{}
	for _, c := range companies {
		if byStore[c.StoreID] == nil {
			byStore[c.StoreID] = map[string]int64{}
		}
		byStore[c.StoreID][c.ID] = c.LedgerSeq
	}
	out := make(map[string]Page[LedgerEntry], len(companies))
	for storeID, seqs := range byStore {
		st, err := s.storeByID(ctx, client, storeID)
		if err != nil {
			return nil, err
		}
		pages, err := s.ledgerWindows(ctx, client, st, seqs, n)
		if err != nil {
			return nil, err
		}
		for id, p := range pages {
			out[id] = p
		}
	}
	return out, nil
}

// LatestLedgerEntriesOf is LatestLedgerEntries for companies this service has just shown the
// viewer (a page of ListCompanies, in GraphQL): each view carries the sequence number of the
// company's last entry, so the companies are not read again. On SQLite that read cost more
// than the rest of a dashboard query: without statistics the planner prefers the tenant's
// store_id index (assumed to match 10 rows) to 50 primary-key lookups, and walks every company
// of the store. An entry appended after the view was made is still included (pages start from
// the newest entry; the view only bounds how far back the read goes).
//
// Errors: insufficient_scope, invalid_parameter (limit).
func (s *Service) LatestLedgerEntriesOf(ctx context.Context, companies []*Company, limit *int, limitName string) (map[string]Page[LedgerEntry], error) {
	if err := requireScope(ctx, ScopeReadCredit); err != nil {
		return nil, err
	}
	n, err := pageSize(limit, ListParams{LimitName: limitName}.limitName())
	if err != nil {
		return nil, err
	}
	st, err := s.viewerStore(ctx)
	if err != nil {
		return nil, err
	}
	seqs := make(map[string]int64, len(companies))
	for _, c := range companies {
		seqs[c.ID] = c.ledgerSeq
	}
	return s.ledgerWindows(ctx, s.reader(ctx), st, seqs, n)
}

// ledgerWindows reads, in one statement, the newest n+1 entries of each company whose last
// entry has the given sequence number, and returns each company's first page.
func (s *Service) ledgerWindows(ctx context.Context, client *ent.Client, st *ent.Store, seqs map[string]int64, n int) (map[string]Page[LedgerEntry], error) {
	// In ID order, so the statement's text repeats and its prepared form is reused.
	ids := slices.Sorted(maps.Keys(seqs))
	var window []predicate.LedgerEntry
	for _, id := range ids {
		if seq := seqs[id]; seq > 0 {
			window = append(window, ledgerentry.And(ledgerentry.CompanyID(id), ledgerentry.SeqGT(seq-int64(n)-1)))
		}
	}
	byCompany := map[string][]*ent.LedgerEntry{}
	if len(window) > 0 {
		rows, err := client.LedgerEntry.Query().
			Where(ledgerentry.Or(window...)).
			Order(ent.Asc(ledgerentry.FieldCompanyID), ent.Desc(ledgerentry.FieldSeq)).
			All(ctx)
		if err != nil {
			return nil, err
		}
		for _, e := range rows {
			byCompany[e.CompanyID] = append(byCompany[e.CompanyID], e)
		}
	}
	out := make(map[string]Page[LedgerEntry], len(seqs))
	for id := range seqs {
		list := "ledger|" + id
		out[id] = makePage(byCompany[id], n,
			func(e *ent.LedgerEntry) LedgerEntry { return ledgerEntryView(e, st.Currency) },
			func(e *ent.LedgerEntry) string {
				return encodeCursor(st.CursorSecret, cursorPayload{List: list, Seq: e.Seq})
			})
	}
	return out, nil
}

// LatestTimelineEvents returns the first page of each company's timeline, newest first, keyed
// by company ID, as LatestLedgerEntries does for ledgers.
//
// Errors: insufficient_scope, invalid_parameter (limit).
func (s *Service) LatestTimelineEvents(ctx context.Context, companyIDs []string, limit *int, limitName string) (map[string]Page[TimelineEvent], error) {
	if err := requireScope(ctx, ScopeReadCredit); err != nil {
		return nil, err
	}
	n, err := pageSize(limit, ListParams{LimitName: limitName}.limitName())
	if err != nil {
		return nil, err
	}
	client := s.reader(ctx)
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
