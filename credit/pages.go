package credit

import (
	"context"
	"strings"
)

// Lists (contract §6): keyset pages of at most 250 items with the envelope
// {"data", "has_more", "next_cursor"}. Cursors are signed (cursor.go), so a page can only be
// resumed on the list and filters it came from.

// Page size bounds (contract §6).
const (
	DefaultPageSize = 50
	MaxPageSize     = 250
)

// ListParams are the paging inputs every list takes. Errors about them name them "limit" and
// "cursor", as REST does; GraphQL renames them to "first" and "after" when it reports them.
type ListParams struct {
	// Limit is the page size; nil means the default.
	Limit *int
	// Cursor resumes after the last item of a previous page; empty starts at the beginning.
	Cursor string
}

// Page is one page of a list, with the contract's envelope.
type Page[T any] struct {
	Data       []T     `json:"data"`
	HasMore    bool    `json:"has_more"`
	NextCursor *string `json:"next_cursor"`
	// cursor returns the cursor that resumes the list after Data[i], for GraphQL edges. It is
	// computed on demand: each is a signed JSON payload, and REST needs only NextCursor.
	cursor func(i int) string
}

// Cursor returns the cursor that resumes the list after item i.
func (p Page[T]) Cursor(i int) string { return p.cursor(i) }

// makePage turns up to n+1 rows into a page of n items, with a cursor after each.
func makePage[R any, T any](rows []R, n int, view func(R) T, cursor func(R) string) Page[T] {
	p := Page[T]{Data: make([]T, 0, min(len(rows), n))}
	more := len(rows) > n
	if more {
		rows = rows[:n]
	}
	for _, r := range rows {
		p.Data = append(p.Data, view(r))
	}
	p.cursor = func(i int) string { return cursor(rows[i]) }
	if more {
		p.markHasMore()
	}
	return p
}

// markHasMore records that more items follow the page, which continues after its last item:
// for a page read without the extra row makePage looks for, when the caller knows otherwise.
func (p *Page[T]) markHasMore() {
	if p.HasMore || len(p.Data) == 0 {
		return
	}
	p.HasMore = true
	next := p.cursor(len(p.Data) - 1)
	p.NextCursor = &next
}

// pageSize applies the default and checks the bounds.
//
// Errors: invalid_parameter (param "limit").
func pageSize(limit *int) (int, error) {
	if limit == nil {
		return DefaultPageSize, nil
	}
	if *limit < 1 || *limit > MaxPageSize {
		return 0, ParamErrorf(CodeInvalidParameter, "limit", "limit must be between 1 and %d", MaxPageSize)
	}
	return *limit, nil
}

// CheckListParams checks a list's paging inputs before the list is read, for a transport that
// refuses a whole request before running any of it (GraphQL, contract §14): the page size, and
// that the cursor is one the viewer's store issued for a list of this kind ("companies",
// "applications", "events", "ledger", "timeline"; "" accepts any of the store's lists). Whether
// the cursor belongs to the very filters and company it is then used with is checked by the list
// when it is read.
//
// Errors: invalid_parameter (limit, cursor).
func (s *Service) CheckListParams(ctx context.Context, kind string, p ListParams) error {
	if _, err := pageSize(p.Limit); err != nil {
		return err
	}
	if p.Cursor == "" {
		return nil
	}
	st, err := s.stores.viewerStore(ctx)
	if err != nil {
		return err
	}
	c, err := verifyCursor(st.CursorSecret, p.Cursor)
	if err != nil {
		return err
	}
	if kind != "" && c.List != kind && !strings.HasPrefix(c.List, kind+"|") {
		return errBadCursor()
	}
	return nil
}
