package console

import (
	"slices"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/creditd/creditd/credit"
)

// Sortable tables (the receivables and the companies): a column heading is a link that sorts
// by it, the same link again reverses the order, and rows that tie are ordered by name. The
// figures are the domain's; only their order is the page's.

// sortColumn is a sortable column of rows of type T.
type sortColumn[T any] struct {
	Key, Title string
	// amount is the figure a row is sorted by; text, for a column of words. Both nil: the
	// name column.
	amount func(T) credit.Money
	text   func(T) string
}

// sortHeading is a column heading with the link that sorts by it.
type sortHeading struct {
	Title, Href string
	// Sorted is "ascending" or "descending" for the current sort column, for aria-sort.
	Sorted string
	Num    bool
}

// pickSort finds the column the query's sort names, or returns def (with its default order)
// when it names none.
func pickSort[T any](columns []sortColumn[T], key, order string, def int, defDesc bool) (int, bool) {
	col := slices.IndexFunc(columns, func(c sortColumn[T]) bool { return c.Key == key })
	if col < 0 {
		return def, defDesc
	}
	return col, order == "desc"
}

// sortRows orders rows by the column (then by name), descending when desc.
func sortRows[T any](rows []T, column sortColumn[T], name func(T) string, desc bool) {
	slices.SortStableFunc(rows, func(a, b T) int {
		n := strings.Compare(name(a), name(b))
		d := 0
		switch {
		case column.amount != nil:
			d = decimal.RequireFromString(column.amount(a).Amount).Cmp(decimal.RequireFromString(column.amount(b).Amount))
		case column.text != nil:
			d = strings.Compare(column.text(a), column.text(b))
		default:
			d = n
		}
		if desc {
			d = -d
		}
		if d == 0 {
			return n
		}
		return d
	})
}

// sortHeadings are the columns' headings; href makes the link that sorts by a column in an
// order. An amount's first click shows the largest first.
func sortHeadings[T any](columns []sortColumn[T], current int, desc bool, href func(key, order string) string) []sortHeading {
	out := make([]sortHeading, 0, len(columns))
	for i, column := range columns {
		h := sortHeading{Title: column.Title, Num: column.amount != nil}
		order := "asc"
		if column.amount != nil {
			order = "desc"
		}
		if i == current {
			h.Sorted, order = "ascending", "desc"
			if desc {
				h.Sorted, order = "descending", "asc"
			}
		}
		h.Href = href(column.Key, order)
		out = append(out, h)
	}
	return out
}

// orderName is the query's order value for desc.
func orderName(desc bool) string {
	if desc {
		return "desc"
	}
	return "asc"
}
