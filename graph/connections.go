package graph

import (
	"context"

	"github.com/99designs/gqlgen/graphql"

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

// companyOrder turns companies' orderBy into the domain's ordering: the enums' values are the
// domain's names in capitals (AVAILABLE_CREDIT is available_credit).
func companyOrder(o *model.CompanyOrder) credit.CompanyOrder {
	if o == nil {
		return credit.CompanyOrder{}
	}
	return credit.CompanyOrder{Field: o.Field, Desc: o.Direction == "desc"}
}

func pageInfo[T any](p credit.Page[T]) *model.PageInfo {
	return &model.PageInfo{HasNextPage: p.HasMore, Cursors: p, Len: len(p.Data)}
}

// edges makes an edge of each item of p; their cursors are signed when a query selects them.
// Nodes point into p.Data, so a field resolver of a node receives the very pointer the batch
// loaders registered.
func edges[T, E any](p credit.Page[T], edge func(cursors model.Cursors, i int, node *T) E) []E {
	out := make([]E, len(p.Data))
	var cursors model.Cursors = p // one interface value (and allocation) for the page
	for i := range p.Data {
		out[i] = edge(cursors, i, &p.Data[i])
	}
	return out
}

func companyConnection(p credit.Page[credit.Company]) *model.CompanyConnection {
	return &model.CompanyConnection{PageInfo: pageInfo(p), Edges: edges(p, func(c model.Cursors, i int, n *credit.Company) model.CompanyEdge {
		return model.CompanyEdge{Node: n, Cursors: c, Index: i}
	})}
}

func ledgerConnection(p credit.Page[credit.LedgerEntry]) *model.LedgerEntryConnection {
	return &model.LedgerEntryConnection{PageInfo: pageInfo(p), Edges: edges(p, func(c model.Cursors, i int, n *credit.LedgerEntry) model.LedgerEntryEdge {
		return model.LedgerEntryEdge{Node: n, Cursors: c, Index: i}
	})}
}

func timelineConnection(p credit.Page[credit.TimelineEvent]) *model.TimelineEventConnection {
	return &model.TimelineEventConnection{PageInfo: pageInfo(p), Edges: edges(p, func(c model.Cursors, i int, n *credit.TimelineEvent) model.TimelineEventEdge {
		return model.TimelineEventEdge{Node: n, Cursors: c, Index: i}
	})}
}

func invoiceConnection(p credit.Page[credit.Invoice]) *model.InvoiceConnection {
	return &model.InvoiceConnection{PageInfo: pageInfo(p), Edges: edges(p, func(c model.Cursors, i int, n *credit.Invoice) model.InvoiceEdge {
		return model.InvoiceEdge{Node: n, Cursors: c, Index: i}
	})}
}

func applicationConnection(p credit.Page[credit.Application]) *model.ApplicationConnection {
	return &model.ApplicationConnection{PageInfo: pageInfo(p), Edges: edges(p, func(c model.Cursors, i int, n *credit.Application) model.ApplicationEdge {
		return model.ApplicationEdge{Node: n, Cursors: c, Index: i}
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

func eventConnection(p credit.Page[credit.Event]) *model.EventConnection {
	return &model.EventConnection{PageInfo: pageInfo(p), Edges: edges(p, func(c model.Cursors, i int, n *credit.Event) model.EventEdge {
		return model.EventEdge{Node: n, Cursors: c, Index: i}
	})}
}

// refused reports whether err is insufficient_scope, adding it to the response's errors: a
// top-level connection the key may not read answers an empty page beside the error (its type
// is non-null), so the request's other fields keep their data.
func refused(ctx context.Context, err error) bool {
	if credit.CodeOf(err) != credit.CodeInsufficientScope {
		return false
	}
	graphql.AddError(ctx, err)
	return true
}
