package rest

import (
	"net/url"
	"strconv"

	"github.com/creditd/creditd/credit"
)

// queryParams parses a raw query string and returns its values, refusing a query string that
// does not parse (a ";" separator or a bad %-escape, which url.Values.Query would silently
// drop together with the filter it held), parameters the endpoint does not take (a misspelt
// filter would otherwise silently return everything) and repeated ones.
//
// Errors: invalid_parameter.
func queryParams(rawQuery string, allowed ...string) (map[string]string, error) {
	q, err := url.ParseQuery(rawQuery)
	if err != nil {
		return nil, credit.Errorf(credit.CodeInvalidParameter, "the query string could not be read (%v): separate parameters with & and percent-encode their values", err)
	}
	out := make(map[string]string, len(q))
	for name, values := range q {
		known := false
		for _, a := range allowed {
			known = known || a == name
		}
		if !known {
			return nil, credit.ParamErrorf(credit.CodeInvalidParameter, name, "unknown query parameter %q", name)
		}
		if len(values) != 1 {
			return nil, credit.ParamErrorf(credit.CodeInvalidParameter, name, "query parameter %q is given more than once", name)
		}
		out[name] = values[0]
	}
	return out, nil
}

// listParams reads limit and cursor.
//
// Errors: invalid_parameter (limit, cursor).
func listParams(q map[string]string) (credit.ListParams, error) {
	var p credit.ListParams
	if v, ok := q["limit"]; ok {
		n, err := strconv.Atoi(v)
		if err != nil {
			return p, credit.ParamErrorf(credit.CodeInvalidParameter, "limit", "limit must be a whole number between 1 and %d", credit.MaxPageSize)
		}
		p.Limit = &n
	}
	if v, ok := q["cursor"]; ok {
		if v == "" {
			return p, credit.ParamErrorf(credit.CodeInvalidParameter, "cursor", "cursor must not be empty; omit it for the first page")
		}
		p.Cursor = v
	}
	return p, nil
}

// nonEmpty checks that a present filter has a value.
//
// Errors: invalid_parameter.
func nonEmpty(q map[string]string, name string) (string, error) {
	v, ok := q[name]
	if ok && v == "" {
		return "", credit.ParamErrorf(credit.CodeInvalidParameter, name, "%s must not be empty; omit it instead", name)
	}
	return v, nil
}
