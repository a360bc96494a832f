package credit

import (
	"context"
	"maps"
	"slices"

	"github.com/creditd/creditd/ent"
	"github.com/creditd/creditd/ent/company"
	"github.com/creditd/creditd/ent/ledgerentry"
	"github.com/creditd/creditd/ent/predicate"
)

// Batched first pages, for GraphQL, where one query asks for the ledgers of a whole page of
// companies. Each returns, for every company, exactly the first page Ledger.List would return
// (same entries, same cursors, same has-more), in a fixed number of statements whatever the
// number of companies. They rely on the per-company sequence numbers being gapless and the
// ledger being append-only (contract §6): a company's newest n entries are then exactly those
// with a sequence number above its last one minus n, which one query can ask for every
// company at once without window functions (see ledgerWindows).

// FirstPages returns the first page of each company's ledger, newest first, keyed by
// company ID. limit is the page size (nil for the default). Companies that do not exist in the
// viewer's store are absent from the result, so the caller can ask Ledger.List for the
// not_found answer.
//
// Errors: insufficient_scope, invalid_parameter (limit).
func (s *Ledger) FirstPages(ctx context.Context, companyIDs []string, limit *int) (map[string]Page[LedgerEntry], error) {
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
		st, err := s.stores.storeByID(ctx, client, storeID)
		if err != nil {
			return nil, err
		}
		pages, err := s.ledgerWindows(ctx, client, st, seqs, n)
		if err != nil {
			return nil, err
		}
		maps.Copy(out, pages)
	}
	return out, nil
}

// FirstPagesOf is Ledger.FirstPages for companies this service has just shown the
// viewer (a page of Companies.List, in GraphQL): each view carries the sequence number of the
// company's last entry, so the companies are not read again. On SQLite that read cost more
// than the rest of a dashboard query: without statistics the planner prefers the tenant's
// store_id index (assumed to match 10 rows) to 50 primary-key lookups, and walks every company
// of the store. An entry appended after the view was made is still included (pages start from
// the newest entry; the view only bounds how far back the read goes).
//
// Errors: insufficient_scope, invalid_parameter (limit).
func (s *Ledger) FirstPagesOf(ctx context.Context, companies []*Company, limit *int) (map[string]Page[LedgerEntry], error) {
	if err := requireScope(ctx, ScopeReadCredit); err != nil {
		return nil, err
	}
	n, err := pageSize(limit)
	if err != nil {
		return nil, err
	}
	st, err := s.stores.viewerStore(ctx)
	if err != nil {
		return nil, err
	}
	seqs := make(map[string]int64, len(companies))
	for _, c := range companies {
		seqs[c.ID] = c.ledgerSeq
	}
	return s.ledgerWindows(ctx, s.db.Reader(ctx), st, seqs, n)
}

// ledgerWindows reads, in one statement, the newest n entries of each company whose last
// entry has the given sequence number, and returns each company's first page. Sequence
// numbers start at 1 without gaps, so older entries exist exactly when the page's last one
// is numbered above 1: no extra entry is read to find out (a sixth of the rows for pages of
// 5). An entry appended since seqs were read makes the read return more than n, and the
// page is then the newest n, as Ledger.List's.
func (s *Ledger) ledgerWindows(ctx context.Context, client *ent.Client, st *ent.Store, seqs map[string]int64, n int) (map[string]Page[LedgerEntry], error) {
	// In ID order, so the statement's text repeats and its prepared form is reused.
	ids := slices.Sorted(maps.Keys(seqs))
	var companies []string
	var after []int64
	for _, id := range ids {
		if seq := seqs[id]; seq > 0 {
			companies = append(companies, id)
			after = append(after, seq-int64(n))
		}
	}
	byCompany := map[string][]*ent.LedgerEntry{}
	if len(companies) > 0 {
		rows, err := s.db.ReadLedgerEntries(ctx, client.LedgerEntry.Query().
			Where(ledgerWindow(s.db, companies, after)).
			Order(ent.Asc(ledgerentry.FieldCompanyID), ent.Desc(ledgerentry.FieldSeq)), ledgerViewColumns)
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
		rows := byCompany[id]
		page := makePage(rows, n,
			func(e *ent.LedgerEntry) LedgerEntry { return ledgerEntryView(e, st.Currency) },
			func(e *ent.LedgerEntry) string {
				return encodeCursor(st.CursorSecret, cursorPayload{List: list, Seq: e.Seq})
			})
		// Entries older than the page's last exist exactly when its sequence number is above 1.
		if last := min(len(rows), n) - 1; last >= 0 && rows[last].Seq > 1 {
			page.markHasMore()
		}
		out[id] = page
	}
	return out, nil
}

// ledgerWindow selects the entries of companies[i] with a sequence number above after[i]: in
// one statement whose text is the same whatever the number of companies, so one prepared
// statement serves every page size, and which the planner runs as one range scan of the
// (company_id, seq) index per company (SeqRanges).
func ledgerWindow(ranges SeqRanges, companies []string, after []int64) predicate.LedgerEntry {
	return ranges.SeqAbove(ledgerentry.FieldCompanyID, ledgerentry.FieldSeq, companies, after)
}
