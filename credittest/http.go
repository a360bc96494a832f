package credittest

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"
)

// APIError is the error object of an error response.
type APIError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Param   string `json:"param"`
}

// APIError decodes error of an error response; fields are empty when the body is not one.
func (r *Response) APIError() APIError {
	var e struct {
		Error APIError `json:"error"`
	}
	_ = json.Unmarshal(r.Body, &e)
	return e.Error
}

// WantStatus fails the test unless the response has status; it returns r for chaining.
func (r *Response) WantStatus(tb testing.TB, status int) *Response {
	tb.Helper()
	if r.Status != status {
		tb.Fatalf("status %d, want %d; body: %s", r.Status, status, r.Body)
	}
	return r
}

// WantError fails the test unless the response is an error with this status, code and param
// ("" for none), in the contract's JSON shape.
func (r *Response) WantError(tb testing.TB, status int, code, param string) APIError {
	tb.Helper()
	r.WantStatus(tb, status)
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		tb.Errorf("error Content-Type %q, want application/json", ct)
	}
	var shape struct {
		Error map[string]any `json:"error"`
	}
	if err := json.Unmarshal(r.Body, &shape); err != nil || shape.Error == nil {
		tb.Fatalf("error body is not {\"error\": {...}}: %s", r.Body)
	}
	for k := range shape.Error {
		if k != "code" && k != "message" && k != "param" {
			tb.Errorf("error object has unexpected member %q: %s", k, r.Body)
		}
	}
	e := r.APIError()
	if e.Code != code || e.Param != param {
		tb.Fatalf("error code=%q param=%q, want code=%q param=%q; body: %s", e.Code, e.Param, code, param, r.Body)
	}
	if e.Message == "" {
		tb.Errorf("error without a message: %s", r.Body)
	}
	return e
}

// ListPage is one page of a list in the contract's envelope, its items left raw.
type ListPage struct {
	Data       []json.RawMessage `json:"data"`
	HasMore    bool              `json:"has_more"`
	NextCursor *string           `json:"next_cursor"`
}

// IDs returns the id member of each item.
func (p ListPage) IDs(tb testing.TB) []string {
	tb.Helper()
	out := make([]string, 0, len(p.Data))
	for _, raw := range p.Data {
		var item struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal(raw, &item); err != nil {
			tb.Fatalf("list item is not an object with an id: %s", raw)
		}
		out = append(out, item.ID)
	}
	return out
}

// ListPage decodes a 200 list response, checking the envelope: exactly data, has_more and
// next_cursor, with next_cursor null exactly when has_more is false.
func (r *Response) ListPage(tb testing.TB) ListPage {
	tb.Helper()
	r.WantStatus(tb, 200)
	var members map[string]json.RawMessage
	r.Decode(tb, &members)
	if len(members) != 3 || members["data"] == nil || members["has_more"] == nil || members["next_cursor"] == nil {
		tb.Fatalf("list envelope must be exactly {data, has_more, next_cursor}: %s", r.Body)
	}
	var p ListPage
	r.Decode(tb, &p)
	if p.Data == nil {
		tb.Fatalf("data must be an array, never null: %s", r.Body)
	}
	if p.HasMore != (p.NextCursor != nil) {
		tb.Fatalf("has_more=%v but next_cursor=%v: %s", p.HasMore, p.NextCursor, r.Body)
	}
	return p
}

// WithQuery returns path with the query parameters set, properly encoded (pairs of name and
// value).
func WithQuery(path string, pairs ...string) string {
	q := url.Values{}
	for i := 0; i+1 < len(pairs); i += 2 {
		q.Add(pairs[i], pairs[i+1])
	}
	if len(q) == 0 {
		return path
	}
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	return path + sep + q.Encode()
}

// WalkPages follows next_cursor from path until the last page and returns every page.
// between, when not nil, runs after each page but the last, before the next is fetched: tests
// change data there to check that pages stay stable.
func (e *Env) WalkPages(tb testing.TB, key, path string, between func(page int)) []ListPage {
	tb.Helper()
	var pages []ListPage
	next := path
	for i := 0; ; i++ {
		if i > 10000 {
			tb.Fatalf("more than 10000 pages from %s: the cursor does not advance", path)
		}
		p := e.Get(tb, key, next).ListPage(tb)
		pages = append(pages, p)
		if !p.HasMore {
			return pages
		}
		if between != nil {
			between(i)
		}
		next = WithQuery(path, "cursor", *p.NextCursor)
	}
}
