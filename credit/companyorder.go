package credit

import (
	"strings"
	"time"
	"unicode/utf8"

	"github.com/creditd/creditd/ent"
	"github.com/creditd/creditd/ent/company"
	"github.com/creditd/creditd/ent/predicate"
)

// The orderings of the company list and its search (contract §6, 2026-11-27). Every ordering
// is a keyset: the list is read along (key, ID) from the last item's, the key being updated_at
// or one of the stored keys of orderkeys.go, so a page is one indexed range read and an item
// whose key did not change is never served twice nor skipped, whatever is written meanwhile.

// Company orderings, as REST's order parameter names them (GraphQL's CompanyOrderField in
// capitals).
const (
	OrderUpdatedAt       = "updated_at"
	OrderName            = "name"
	OrderOutstanding     = "outstanding"
	OrderAvailableCredit = "available_credit"
	OrderCreditLimit     = "credit_limit"
	OrderUtilization     = "utilization"
)

// companyOrderColumns are the stored key of each ordering but updated_at's.
var companyOrderColumns = map[string]string{
	OrderName:            company.FieldNameKey,
	OrderOutstanding:     company.FieldOutstandingKey,
	OrderAvailableCredit: company.FieldAvailableKey,
	OrderCreditLimit:     company.FieldCreditLimitKey,
	OrderUtilization:     company.FieldUtilizationKey,
}

// CompanyOrder is an ordering of the company list: a field and a direction. The zero value is
// the default, updated_at ascending (the sync order).
type CompanyOrder struct {
	// Field is one of the Order* constants; "" is OrderUpdatedAt.
	Field string
	// Desc orders descending; ties then go by ID descending too.
	Desc bool
}

// ParseCompanyOrder reads REST's order parameter: a field, descending with a leading "-".
//
// Errors: invalid_parameter (param "order").
func ParseCompanyOrder(s string) (CompanyOrder, error) {
	o := CompanyOrder{Field: strings.TrimPrefix(s, "-"), Desc: strings.HasPrefix(s, "-")}
	if o.Field == "" {
		o.Field = "?" // an empty order is not the default's name
	}
	if err := o.check(); err != nil {
		return CompanyOrder{}, err
	}
	return o, nil
}

// check refuses an unknown field.
//
// Errors: invalid_parameter (param "order").
func (o CompanyOrder) check() error {
	if o.Field == "" || o.Field == OrderUpdatedAt || companyOrderColumns[o.Field] != "" {
		return nil
	}
	return ParamErrorf(CodeInvalidParameter, "order",
		"order must be one of updated_at, name, outstanding, available_credit, credit_limit, utilization, each with a leading - for descending")
}

// String is the ordering as REST's order parameter writes it.
func (o CompanyOrder) String() string {
	f := o.Field
	if f == "" {
		f = OrderUpdatedAt
	}
	if o.Desc {
		return "-" + f
	}
	return f
}

// isDefault reports whether o is the sync order, whose cursors name no ordering (they are the
// cursors issued before there were others).
func (o CompanyOrder) isDefault() bool { return o.String() == OrderUpdatedAt }

// maxCompanySearch bounds the API's search (contract §6).
const maxCompanySearch = 100

// CheckCompanySearch checks a search's length, before any list is read (GraphQL refuses the
// request for it).
//
// Errors: invalid_parameter (param "q").
func CheckCompanySearch(q *string) error {
	if q == nil {
		return nil
	}
	if n := utf8.RuneCountInString(*q); n < 1 || n > maxCompanySearch {
		return ParamErrorf(CodeInvalidParameter, "q", "q must be 1 to %d characters", maxCompanySearch)
	}
	return nil
}

// companyKeyset orders q by o and, for a cursor, keeps the companies after its position. It
// returns the position of a company as a cursor's payload.
func companyKeyset(keysets Keysets, q *ent.CompanyQuery, o CompanyOrder, list string, c *cursorPayload) func(*ent.Company) cursorPayload {
	dir := ent.Asc
	if o.Desc {
		dir = ent.Desc
	}
	column := companyOrderColumns[o.Field]
	if column == "" {
		if c != nil {
			t := time.UnixMicro(c.Time).UTC()
			if o.Desc {
				q.Where(company.Or(company.UpdatedAtLT(t), company.And(company.UpdatedAtEQ(t), company.IDLT(c.ID))))
			} else {
				q.Where(company.Or(company.UpdatedAtGT(t), company.And(company.UpdatedAtEQ(t), company.IDGT(c.ID))))
			}
		}
		q.Order(dir(company.FieldUpdatedAt, company.FieldID))
		return func(e *ent.Company) cursorPayload {
			return cursorPayload{List: list, Time: e.UpdatedAt.UnixMicro(), ID: e.ID}
		}
	}
	// A zero credit limit has the empty utilisation key, below every other: last when
	// descending as it is, and put last first when ascending.
	emptyLast := o.Field == OrderUtilization && !o.Desc
	if c != nil {
		q.Where(keysets.AfterKey(column, c.Key, company.FieldID, c.ID, o.Desc, emptyLast))
	}
	if emptyLast {
		q.Order(keysets.EmptyLast(column))
	}
	q.Order(dir(column, company.FieldID))
	return func(e *ent.Company) cursorPayload {
		return cursorPayload{List: list, Key: companyKey(e, column), ID: e.ID}
	}
}

// companyKey is the stored key of column that a keyed read (readKeyedCompanies) returned.
func companyKey(c *ent.Company, column string) string {
	switch column {
	case company.FieldNameKey:
		return c.NameKey
	case company.FieldOutstandingKey:
		return c.OutstandingKey
	case company.FieldCreditLimitKey:
		return c.CreditLimitKey
	case company.FieldAvailableKey:
		return c.AvailableKey
	default:
		return c.UtilizationKey
	}
}

// nameSearch keeps the companies whose normalised name contains key (NameKey of the search),
// read through an index on both databases (Search.Contains): the store's ID, which every
// company the viewer sees has, chooses the range of the (store_id, name_key, id) index where
// the database reads it that way. The data layer's own store filter stays.
func nameSearch(search Search, storeID, key string) predicate.Company {
	return search.Contains(company.FieldNameKey, key, company.FieldStoreID, storeID)
}
