package credit

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"sync"
	"time"

	"entgo.io/ent/dialect"
	"entgo.io/ent/dialect/sql"
	"github.com/shopspring/decimal"

	"github.com/creditd/creditd/ent"
	"github.com/creditd/creditd/ent/company"
	"github.com/creditd/creditd/ent/ledgerentry"
)

// Packed reads. A list of companies read the plain way costs one call into the driver (on
// SQLite, into its C library) per column of every row, and most of a page of 250 went there.
// A packed read selects one column per row instead, a JSON array of the columns (SQLite's
// json_array, PostgreSQL's json_build_array), which the service splits itself. The statement
// is still ent's query, with its interceptors, so the store filter stays in the data layer.
// Decimals travel as JSON strings (their text, never a JSON number), so money stays exact.
// A row in a form the parser does not know (a timestamp written by another driver, say)
// sends the whole read down ent's plain path: packedOrPlain.
//
// Performance code, kept because it was measured (issue 23, "Packed reads" in BENCHMARKS.md:
// the list of 250 companies 1,366–1,462 → 867–913 µs, 10,855 → 4,723 allocations; GET company
// 75–93 → 61–63 µs). Tied by position to two column lists of other files: parsePackedCompany
// reads field i as the i-th of packedCompanyColumns (the store's ID, then companyViewColumns
// of companies.go, then the sort keys), and packedLedgerEntries the i-th of ledgerViewColumns
// (ledger.go). A column added to or moved in those lists must move in the parser too
// (TestPackedCompanyRowsMatchEnt and TestPackedLedgerRowsMatchEnt compare the fields they list
// with ent's plain read: add a new one there as well).

// errRowForm is a packed row in a form the parser does not know.
var errRowForm = errors.New("packed row in an unknown form")

// packedOrPlain returns packed's rows, or plain's when a packed row had an unknown form. Any
// other error (a cancellation, an outage, an aborted transaction) is returned as it is: a
// second statement would not mend it.
func packedOrPlain[T any](packed, plain func() (T, error)) (T, error) {
	v, err := packed()
	if errors.Is(err, errRowForm) {
		return plain()
	}
	return v, err
}

// packedCompanyColumns are companyViewColumns and the store's ID, in the order
// parsePackedCompany reads them.
var packedCompanyColumns = append([]string{company.FieldStoreID}, companyViewColumns...)

// packedKeyedCompanyColumns are packedCompanyColumns and the sort keys, for the orderings
// whose cursors carry a stored key (companyorder.go).
var packedKeyedCompanyColumns = append(append([]string{}, packedCompanyColumns...),
	company.FieldNameKey, company.FieldOutstandingKey, company.FieldCreditLimitKey,
	company.FieldAvailableKey, company.FieldUtilizationKey)

// readCompanies reads q's companies (the columns of companyViewColumns and the store's ID),
// packed.
func readCompanies(ctx context.Context, q *ent.CompanyQuery) ([]*ent.Company, error) {
	return readCompanyColumns(ctx, q, packedCompanyColumns)
}

// readKeyedCompanies is readCompanies with the sort keys too.
func readKeyedCompanies(ctx context.Context, q *ent.CompanyQuery) ([]*ent.Company, error) {
	return readCompanyColumns(ctx, q, packedKeyedCompanyColumns)
}

// readCompanyColumns reads q's companies, packed, with columns packedCompanyColumns or
// packedKeyedCompanyColumns.
func readCompanyColumns(ctx context.Context, q *ent.CompanyQuery, columns []string) ([]*ent.Company, error) {
	return packedOrPlain(func() ([]*ent.Company, error) { return packedCompanies(ctx, q, columns) },
		func() ([]*ent.Company, error) { return q.Clone().Select(columns...).All(ctx) })
}

// packedCompanies is readCompanies's packed read.
//
// Errors: errRowForm, and the query's.
func packedCompanies(ctx context.Context, q *ent.CompanyQuery, columns []string) ([]*ent.Company, error) {
	var rows []string
	if err := q.Clone().Aggregate(func(s *sql.Selector) string { return packColumns(s, columns) }).Scan(ctx, &rows); err != nil {
		return nil, err
	}
	out := make([]*ent.Company, len(rows))
	fields := make([]packedField, len(columns))
	for i, row := range rows {
		c, err := parsePackedCompany(row, fields)
		if err != nil {
			return nil, err
		}
		out[i] = c
	}
	return out, nil
}

// readLedgerEntries reads q's ledger entries (the columns of ledgerViewColumns), packed.
func readLedgerEntries(ctx context.Context, q *ent.LedgerEntryQuery) ([]*ent.LedgerEntry, error) {
	return packedOrPlain(func() ([]*ent.LedgerEntry, error) { return packedLedgerEntries(ctx, q) },
		func() ([]*ent.LedgerEntry, error) { return q.Clone().Select(ledgerViewColumns...).All(ctx) })
}

// packedLedgerEntries is readLedgerEntries's packed read.
//
// Errors: errRowForm, and the query's.
func packedLedgerEntries(ctx context.Context, q *ent.LedgerEntryQuery) ([]*ent.LedgerEntry, error) {
	var rows []string
	if err := q.Clone().Aggregate(func(s *sql.Selector) string { return packColumns(s, ledgerViewColumns) }).Scan(ctx, &rows); err != nil {
		return nil, err
	}
	out := make([]*ent.LedgerEntry, len(rows))
	fields := make([]packedField, len(ledgerViewColumns))
	for i, row := range rows {
		if err := splitPacked(row, fields); err != nil {
			return nil, err
		}
		p := packedParser{f: fields}
		out[i] = &ent.LedgerEntry{
			ID:               p.str(0),
			CompanyID:        p.str(1),
			Seq:              p.int(2),
			Kind:             ledgerentry.Kind(p.str(3)),
			Amount:           p.decimal(4),
			PlatformOrderGid: p.strPtr(5),
			Note:             p.strPtr(6),
			OccurredAt:       p.time(7),
			BalanceAfter:     p.decimal(8),
		}
		if p.err != nil {
			return nil, p.err
		}
	}
	return out, nil
}

// packColumns is the expression of one packed row of s's table's columns. PostgreSQL's
// numerics are passed as text: json_build_array would write them as JSON numbers.
//
// The expression is remembered: quoting every column for every read was a tenth of a GET
// company's CPU. It depends only on the dialect, the table's name or alias in s (seen in
// the first column's qualified name) and the columns, which are package-level slices
// (packedCompanyColumns, ledgerViewColumns), so their address names them and the entries
// stay few.
func packColumns(s *sql.Selector, columns []string) string {
	key := packKey{dialect: s.Dialect(), first: s.C(columns[0]), columns: &columns[0], n: len(columns)}
	if e, ok := packedExprs.Load(key); ok {
		return e.(string)
	}
	e := buildPackColumns(s, columns)
	packedExprs.Store(key, e)
	return e
}

var packedExprs sync.Map // packKey -> string

type packKey struct {
	dialect, first string
	columns        *string
	n              int
}

// buildPackColumns is packColumns's expression, built.
func buildPackColumns(s *sql.Selector, columns []string) string {
	var b strings.Builder
	pg := s.Dialect() == dialect.Postgres
	if pg {
		b.WriteString("json_build_array(")
	} else {
		b.WriteString("json_array(")
	}
	for i, c := range columns {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(s.C(c))
		if pg && packedDecimal[c] {
			b.WriteString("::text")
		}
	}
	b.WriteString(")")
	if pg {
		b.WriteString("::text")
	}
	return b.String()
}

// packedDecimal are the decimal columns of packed reads.
var packedDecimal = map[string]bool{
	company.FieldCreditLimit: true, company.FieldOutstanding: true,
	ledgerentry.FieldAmount: true, ledgerentry.FieldBalanceAfter: true,
}

// parsePackedCompany reads a row packed from packedCompanyColumns or packedKeyedCompanyColumns
// (as many as f has fields), using f as scratch.
//
// Errors: errRowForm.
func parsePackedCompany(row string, f []packedField) (*ent.Company, error) {
	if err := splitPacked(row, f); err != nil {
		return nil, err
	}
	p := packedParser{f: f}
	c := &ent.Company{
		StoreID:            p.str(0),
		ID:                 p.str(1),
		Name:               p.str(2),
		PlatformCompanyGid: p.strPtr(3),
		PaymentTermsDays:   int(p.int(4)),
		CreditLimit:        p.decimal(5),
		Outstanding:        p.decimal(6),
		LedgerSeq:          p.int(7),
		HoldNote:           p.strPtr(9),
		HoldPlacedAt:       p.timePtr(10),
		HoldPlacedBy:       p.strPtr(11),
		HoldOrderGid:       p.strPtr(12),
		HoldDueAt:          p.timePtr(13),
		UpdatedAt:          p.time(14),
	}
	if k := p.strPtr(8); k != nil {
		hk := company.HoldKind(*k)
		c.HoldKind = &hk
	}
	if len(f) == len(packedKeyedCompanyColumns) {
		c.NameKey, c.OutstandingKey, c.CreditLimitKey = p.str(15), p.str(16), p.str(17)
		c.AvailableKey, c.UtilizationKey = p.str(18), p.str(19)
	}
	return c, p.err
}

// packedField is one element of a packed row: a string's content, a number's text, or null.
type packedField struct {
	text   string
	str    bool
	isNull bool
}

// splitPacked splits a JSON array of strings, numbers and nulls, as json_array and
// json_build_array write it, into exactly len(into) fields.
//
// Errors: errRowForm.
func splitPacked(row string, into []packedField) error {
	i := 0
	space := func() {
		for i < len(row) && (row[i] == ' ' || row[i] == '\n' || row[i] == '\t' || row[i] == '\r') {
			i++
		}
	}
	space()
	if i >= len(row) || row[i] != '[' {
		return errRowForm
	}
	i++
	for k := range into {
		space()
		if k > 0 {
			if i >= len(row) || row[i] != ',' {
				return errRowForm
			}
			i++
			space()
		}
		if i >= len(row) {
			return errRowForm
		}
		switch c := row[i]; {
		case c == '"':
			start, escaped := i, false
			for i++; i < len(row) && row[i] != '"'; i++ {
				if row[i] == '\\' {
					escaped = true
					i++
				}
			}
			if i >= len(row) {
				return errRowForm
			}
			i++
			if !escaped {
				into[k] = packedField{text: row[start+1 : i-1], str: true}
				continue
			}
			var s string
			if err := json.Unmarshal([]byte(row[start:i]), &s); err != nil {
				return errRowForm
			}
			into[k] = packedField{text: s, str: true}
		case strings.HasPrefix(row[i:], "null"):
			into[k] = packedField{isNull: true}
			i += 4
		case c == '-' || c >= '0' && c <= '9':
			start := i
			for i < len(row) && (row[i] >= '0' && row[i] <= '9' || row[i] == '-' || row[i] == '+' || row[i] == '.' || row[i] == 'e' || row[i] == 'E') {
				i++
			}
			into[k] = packedField{text: row[start:i]}
		default:
			return errRowForm
		}
	}
	space()
	if i != len(row)-1 || row[i] != ']' {
		return errRowForm
	}
	return nil
}

// packedParser converts fields, remembering the first failure as errRowForm.
type packedParser struct {
	f   []packedField
	err error
}

func (p *packedParser) fail() { p.err = errRowForm }

func (p *packedParser) str(i int) string {
	if !p.f[i].str {
		p.fail()
	}
	return p.f[i].text
}

func (p *packedParser) strPtr(i int) *string {
	if p.f[i].isNull {
		return nil
	}
	s := p.str(i)
	return &s
}

func (p *packedParser) int(i int) int64 {
	if p.f[i].str || p.f[i].isNull {
		p.fail()
		return 0
	}
	n, err := strconv.ParseInt(p.f[i].text, 10, 64)
	if err != nil {
		p.fail()
	}
	return n
}

func (p *packedParser) decimal(i int) decimal.Decimal {
	d, err := decimal.NewFromString(p.str(i))
	if err != nil {
		p.fail()
	}
	return d
}

// packedTimeLayouts are the forms of timestamps in packed rows: SQLite's as go-sqlite3 writes
// them, PostgreSQL's as json_build_array writes timestamptz.
var packedTimeLayouts = []string{"2006-01-02 15:04:05.999999999-07:00", time.RFC3339Nano}

func (p *packedParser) time(i int) time.Time {
	s := p.str(i)
	if t, ok := parseSQLiteTime(s); ok {
		return t
	}
	for _, layout := range packedTimeLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			return t
		}
	}
	p.fail()
	return time.Time{}
}

func (p *packedParser) timePtr(i int) *time.Time {
	if p.f[i].isNull {
		return nil
	}
	t := p.time(i)
	return &t
}

// parseSQLiteTime reads the form go-sqlite3 writes, 2006-01-02 15:04:05[.fraction]±07:00,
// without time.Parse's general machinery: a page of 250 companies has 250 or more of them.
// Anything else is not ok, and is left to time.Parse.
func parseSQLiteTime(s string) (time.Time, bool) {
	if len(s) < 25 || s[4] != '-' || s[7] != '-' || s[10] != ' ' || s[13] != ':' || s[16] != ':' {
		return time.Time{}, false
	}
	num := func(a, b int) (int, bool) {
		n := 0
		for _, c := range []byte(s[a:b]) {
			if c < '0' || c > '9' {
				return 0, false
			}
			n = n*10 + int(c-'0')
		}
		return n, true
	}
	year, ok1 := num(0, 4)
	month, ok2 := num(5, 7)
	day, ok3 := num(8, 10)
	hour, ok4 := num(11, 13)
	minute, ok5 := num(14, 16)
	sec, ok6 := num(17, 19)
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) || month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || sec > 59 {
		return time.Time{}, false
	}
	i, nsec := 19, 0
	if s[i] == '.' {
		digits := 0
		for i++; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
			if digits < 9 {
				nsec = nsec*10 + int(s[i]-'0')
				digits++
			}
		}
		if digits == 0 {
			return time.Time{}, false
		}
		for ; digits < 9; digits++ {
			nsec *= 10
		}
	}
	if len(s)-i != 6 || (s[i] != '+' && s[i] != '-') || s[i+3] != ':' {
		return time.Time{}, false
	}
	oh, ok1 := num(i+1, i+3)
	om, ok2 := num(i+4, i+6)
	if !ok1 || !ok2 {
		return time.Time{}, false
	}
	t := time.Date(year, time.Month(month), day, hour, minute, sec, nsec, time.UTC)
	if t.Day() != day {
		return time.Time{}, false // February 30th and the like
	}
	offset := time.Duration(oh)*time.Hour + time.Duration(om)*time.Minute
	if s[i] == '-' {
		offset = -offset
	}
	return t.Add(-offset), true
}
