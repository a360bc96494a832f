package model

import "github.com/creditd/creditd/credit"

// Edges and page info whose cursors are signed only when a query selects them (gqlgen calls
// a bound method only for a selected field). Each cursor is an HMAC-signed payload; a
// dashboard listing 50 companies with 5 entries each would otherwise sign 400 cursors it
// never shows.

// Cursors gives the cursor after each item of a page: a credit.Page.
type Cursors interface{ Cursor(i int) string }

// CompanyEdge is a company in a page, with the cursor that resumes after it.
type CompanyEdge struct {
	Node    *credit.Company
	Cursors Cursors
	Index   int
}

// Cursor is the cursor that resumes after this edge.
func (e CompanyEdge) Cursor() string { return e.Cursors.Cursor(e.Index) }

// LedgerEntryEdge is a ledger entry in a page, with the cursor that resumes after it.
type LedgerEntryEdge struct {
	Node    *credit.LedgerEntry
	Cursors Cursors
	Index   int
}

// Cursor is the cursor that resumes after this edge.
func (e LedgerEntryEdge) Cursor() string { return e.Cursors.Cursor(e.Index) }

// TimelineEventEdge is a timeline event in a page, with the cursor that resumes after it.
type TimelineEventEdge struct {
	Node    *credit.TimelineEvent
	Cursors Cursors
	Index   int
}

// Cursor is the cursor that resumes after this edge.
func (e TimelineEventEdge) Cursor() string { return e.Cursors.Cursor(e.Index) }

// ApplicationEdge is an application in a page, with the cursor that resumes after it.
type ApplicationEdge struct {
	Node    *credit.Application
	Cursors Cursors
	Index   int
}

// Cursor is the cursor that resumes after this edge.
func (e ApplicationEdge) Cursor() string { return e.Cursors.Cursor(e.Index) }

// InvoiceEdge is an invoice in a page, with the cursor that resumes after it.
type InvoiceEdge struct {
	Node    *credit.Invoice
	Cursors Cursors
	Index   int
}

// Cursor is the cursor that resumes after this edge.
func (e InvoiceEdge) Cursor() string { return e.Cursors.Cursor(e.Index) }

// EventEdge is a feed event in a page, with the cursor that resumes after it.
type EventEdge struct {
	Node    *credit.Event
	Cursors Cursors
	Index   int
}

// Cursor is the cursor that resumes after this edge.
func (e EventEdge) Cursor() string { return e.Cursors.Cursor(e.Index) }

// PageInfo is where a page of a connection ends. Pages go forward only.
type PageInfo struct {
	// HasNextPage is whether another page follows this one.
	HasNextPage bool
	// HasPreviousPage is always false.
	HasPreviousPage bool
	// Cursors and Len are the page's cursors and number of items.
	Cursors Cursors
	Len     int
}

// StartCursor is the cursor of the first edge, or nil on an empty page.
func (p *PageInfo) StartCursor() *string { return p.cursor(0) }

// EndCursor is the cursor of the last edge, or nil on an empty page.
func (p *PageInfo) EndCursor() *string { return p.cursor(p.Len - 1) }

func (p *PageInfo) cursor(i int) *string {
	if p.Len == 0 || p.Cursors == nil {
		return nil
	}
	c := p.Cursors.Cursor(i)
	return &c
}
