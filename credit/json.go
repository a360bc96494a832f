package credit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"unicode/utf8"
)

// Hand-written JSON for the views listed in bulk (companies, ledger entries, their pages):
// byte for byte what encoding/json writes for them with HTML escaping off (httpapi.Marshal),
// without its reflection and its allocation per value. A page of 250 companies is about
// 100 KB of JSON. FuzzAppendJSON and TestAppendJSONMatchesEncodingJSON hold the two equal.
//
// Performance code, kept because it was measured (issue 13, commit 80ad8c0 in BENCHMARKS.md:
// the list of companies 2,528 → 2,290 µs of CPU, 17,424 → 16,630 allocations a request).
// Tied to the views' fields and json tags (Company, LedgerEntry and the types they hold): a
// field added, renamed or reordered there must be written here too, in the same place
// (TestAppendJSONMatchesEncodingJSON compares the two over random values; give its generator
// the new field). httpapi.Marshal uses AppendJSON where a view has it, encoding/json elsewhere.

// JSONAppender is a value that appends its own JSON encoding to b.
type JSONAppender interface {
	AppendJSON(b []byte) []byte
}

// AppendJSON appends the company as encoding/json would write it.
func (c Company) AppendJSON(b []byte) []byte {
	b = append(b, `{"id":`...)
	b = appendJSONString(b, c.ID)
	b = append(b, `,"name":`...)
	b = appendJSONString(b, c.Name)
	b = append(b, `,"platform_company_gid":`...)
	b = appendJSONStringPtr(b, c.PlatformCompanyGID)
	b = append(b, `,"status":`...)
	b = appendJSONString(b, c.Status)
	b = append(b, `,"payment_terms":`...)
	b = appendJSONString(b, c.PaymentTerms)
	b = append(b, `,"credit_limit":`...)
	b = c.CreditLimit.AppendJSON(b)
	b = append(b, `,"outstanding":`...)
	b = c.Outstanding.AppendJSON(b)
	b = append(b, `,"available_credit":`...)
	b = c.AvailableCredit.AppendJSON(b)
	b = append(b, `,"hold":`...)
	if c.Hold == nil {
		b = append(b, "null"...)
	} else {
		b = c.Hold.AppendJSON(b)
	}
	b = append(b, `,"updated_at":`...)
	b = c.UpdatedAt.AppendJSON(b)
	return append(b, '}')
}

// AppendJSON appends the hold as encoding/json would write it.
func (h Hold) AppendJSON(b []byte) []byte {
	b = append(b, `{"kind":`...)
	b = appendJSONString(b, h.Kind)
	b = append(b, `,"note":`...)
	b = appendJSONStringPtr(b, h.Note)
	b = append(b, `,"placed_at":`...)
	b = h.PlacedAt.AppendJSON(b)
	b = append(b, `,"placed_by":`...)
	b = appendJSONString(b, h.PlacedBy)
	b = append(b, `,"platform_order_gid":`...)
	b = appendJSONStringPtr(b, h.PlatformOrderGID)
	b = append(b, `,"due_at":`...)
	if h.DueAt == nil {
		b = append(b, "null"...)
	} else {
		b = h.DueAt.AppendJSON(b)
	}
	return append(b, '}')
}

// AppendJSON appends the entry as encoding/json would write it.
func (e LedgerEntry) AppendJSON(b []byte) []byte {
	b = append(b, `{"id":`...)
	b = appendJSONString(b, e.ID)
	b = append(b, `,"company_id":`...)
	b = appendJSONString(b, e.CompanyID)
	b = append(b, `,"kind":`...)
	b = appendJSONString(b, e.Kind)
	b = append(b, `,"amount":`...)
	b = e.Amount.AppendJSON(b)
	b = append(b, `,"balance_after":`...)
	b = e.BalanceAfter.AppendJSON(b)
	b = append(b, `,"platform_order_gid":`...)
	b = appendJSONStringPtr(b, e.PlatformOrderGID)
	b = append(b, `,"note":`...)
	b = appendJSONStringPtr(b, e.Note)
	b = append(b, `,"occurred_at":`...)
	b = e.OccurredAt.AppendJSON(b)
	return append(b, '}')
}

// AppendJSON appends the event as encoding/json would write it. Data is stored compact; it
// is compacted again here as encoding/json would, so that any stored form gives the same bytes.
func (e Event) AppendJSON(b []byte) []byte {
	b = append(b, `{"id":`...)
	b = appendJSONString(b, e.ID)
	b = append(b, `,"type":`...)
	b = appendJSONString(b, string(e.Type))
	b = append(b, `,"occurred_at":`...)
	b = e.OccurredAt.AppendJSON(b)
	b = append(b, `,"data":`...)
	if e.Data == nil {
		b = append(b, "null"...)
	} else {
		buf := bytes.NewBuffer(b)
		if err := json.Compact(buf, e.Data); err != nil {
			// Stored data is JSON the service wrote; encoding/json would fail on it too.
			panic(fmt.Errorf("event %s: data is not JSON: %w", e.ID, err))
		}
		b = buf.Bytes()
	}
	return append(b, '}')
}

// AppendJSON appends the amount as encoding/json would write it.
func (m Money) AppendJSON(b []byte) []byte {
	b = append(b, `{"amount":`...)
	b = appendJSONString(b, m.Amount)
	b = append(b, `,"currency":`...)
	b = appendJSONString(b, m.Currency)
	return append(b, '}')
}

// AppendJSON appends the timestamp as a JSON string, as MarshalJSON does.
func (t Timestamp) AppendJSON(b []byte) []byte {
	b = append(b, '"')
	b = t.UTC().AppendFormat(b, TimestampLayout)
	return append(b, '"')
}

// AppendJSON appends the page as encoding/json would write it. Items that do not append their
// own JSON are encoded by encoding/json.
func (p Page[T]) AppendJSON(b []byte) []byte {
	// A company is about 400 bytes, an entry about 250: grow once rather than by doubling.
	b = slices.Grow(b, 64+len(p.Data)*448)
	b = append(b, `{"data":`...)
	if p.Data == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i := range p.Data {
			if i > 0 {
				b = append(b, ',')
			}
			if a, ok := any(&p.Data[i]).(JSONAppender); ok {
				b = a.AppendJSON(b)
				continue
			}
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false)
			if err := enc.Encode(&p.Data[i]); err != nil {
				// The views are plain data; encoding/json cannot fail on them.
				panic(err)
			}
			b = append(b, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...)
		}
		b = append(b, ']')
	}
	b = append(b, `,"has_more":`...)
	if p.HasMore {
		b = append(b, "true"...)
	} else {
		b = append(b, "false"...)
	}
	b = append(b, `,"next_cursor":`...)
	b = appendJSONStringPtr(b, p.NextCursor)
	return append(b, '}')
}

func appendJSONStringPtr(b []byte, s *string) []byte {
	if s == nil {
		return append(b, "null"...)
	}
	return appendJSONString(b, *s)
}

const hexDigits = "0123456789abcdef"

// appendJSONString is encoding/json's string encoding with HTML escaping off: quotes,
// backslashes and control characters escaped, invalid UTF-8 replaced by U+FFFD, and U+2028
// and U+2029 escaped.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
