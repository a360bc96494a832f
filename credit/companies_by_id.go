package credit

import (
	"context"

	"github.com/creditd/creditd/ent"
	"github.com/creditd/creditd/ent/company"
	"github.com/creditd/creditd/ids"
)

// GetMany returns the companies of the viewer's store among ids, by ID, in one query: the
// live companies of a page of events (GraphQL's Event.company). An ID of no company in the
// store, another store's included, is absent from the map; duplicates are read once.
//
// Errors: insufficient_scope.
func (s *Companies) GetMany(ctx context.Context, companyIDs []string) (map[string]Company, error) {
	if err := requireScope(ctx, ScopeReadCredit); err != nil {
		return nil, err
	}
	want := make([]string, 0, len(companyIDs))
	seen := make(map[string]bool, len(companyIDs))
	for _, id := range companyIDs {
		if !seen[id] && ids.HasPrefix(id, "co") {
			seen[id] = true
			want = append(want, id)
		}
	}
	out := make(map[string]Company, len(want))
	if len(want) == 0 {
		return out, nil
	}
	st, err := s.stores.viewerStore(ctx)
	if err != nil {
		return nil, err
	}
	client := s.db.Reader(ctx)
	var rows []*ent.Company
	err = s.auth.confirmedRead(ctx, func(confirm condition) (bool, error) {
		var err error
		rows, err = s.db.ReadCompanies(ctx, client.Company.Query().Where(company.IDIn(want...), confirm), packedCompanyColumns)
		return len(rows) > 0, err
	})
	if err != nil {
		return nil, err
	}
	for _, r := range rows {
		out[r.ID] = companyView(r, st)
	}
	return out, nil
}
