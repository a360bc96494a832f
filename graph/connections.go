package graph

import (
	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/graph/model"
	"github.com/creditd/creditd/graph/scalar"
	"github.com/creditd/creditd/httpapi"
)

// Relay connections over the domain's pages. A page already carries a cursor after each item,
// so an edge is an item with its cursor, and endCursor is the cursor after the last edge.

// listParams turns Relay's paging arguments into the domain's; errors about them are renamed
// to first and after by the presenter.
func listParams(first *int, after *string) credit.ListParams {
	return credit.ListParams{Limit: first, Cursor: deref(after)}
}

func pageInfo[T any](p credit.Page[T]) *model.PageInfo {
	info := &model.PageInfo{HasNextPage: p.HasMore}
	if n := len(p.Data); n > 0 {
		start, end := p.Cursor(0), p.Cursor(n-1)
		info.StartCursor, info.EndCursor = &start, &end
	}
	return info
}

// edges pairs each item of p with its cursor. Nodes point into p.Data, so a field resolver of
// a node receives the very pointer the batch loaders registered.
func edges[T, E any](p credit.Page[T], edge func(cursor string, node *T) E) []E {
	out := make([]E, len(p.Data))
	for i := range p.Data {
		out[i] = edge(p.Cursor(i), &p.Data[i])
	}
	return out
}

func companyConnection(p credit.Page[credit.Company]) *model.CompanyConnection {
	return &model.CompanyConnection{PageInfo: pageInfo(p), Edges: edges(p, func(c string, n *credit.Company) model.CompanyEdge {
		return model.CompanyEdge{Cursor: c, Node: n}
	})}
}

func ledgerConnection(p credit.Page[credit.LedgerEntry]) *model.LedgerEntryConnection {
	return &model.LedgerEntryConnection{PageInfo: pageInfo(p), Edges: edges(p, func(c string, n *credit.LedgerEntry) model.LedgerEntryEdge {
		return model.LedgerEntryEdge{Cursor: c, Node: n}
	})}
}

func timelineConnection(p credit.Page[credit.TimelineEvent]) *model.TimelineEventConnection {
	return &model.TimelineEventConnection{PageInfo: pageInfo(p), Edges: edges(p, func(c string, n *credit.TimelineEvent) model.TimelineEventEdge {
		return model.TimelineEventEdge{Cursor: c, Node: n}
	})}
}

func applicationConnection(p credit.Page[credit.Application]) *model.ApplicationConnection {
	return &model.ApplicationConnection{PageInfo: pageInfo(p), Edges: edges(p, func(c string, n *credit.Application) model.ApplicationEdge {
		return model.ApplicationEdge{Cursor: c, Node: n}
	})}
}

// amount is a Decimal input for the domain: its text, or, when a number was sent instead, the
// error the domain answers in its own order of checks, as for a REST body.
func amount(d scalar.DecimalInput) credit.AmountInput {
	if d.Number {
		return credit.AmountInput{Err: httpapi.ErrAmountNotString("amount")}
	}
	return credit.Amount(d.Value)
}

// found returns a domain read's view as the pointer gqlgen expects, nil on error.
func found[T any](v T, err error) (*T, error) {
	if err != nil {
		return nil, err
	}
	return &v, nil
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
