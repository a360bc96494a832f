package database

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
	"github.com/shopspring/decimal"

	"github.com/creditd/creditd/ent"
	"github.com/creditd/creditd/ent/company"
	"github.com/creditd/creditd/ent/ledgerentry"
)

// Packed reads. A list of companies read the plain way costs one call into the driver (on
// SQLite, into its C library) per column of every row, and most of a page of 250 went there.
// A packed read selects one column per row instead, a JSON array of the columns (SQLite's
// json_array, PostgreSQL's json_build_array), which this file splits itself. The statement is
// still ent's query, with its interceptors, so the store filter stays in the data layer.
// Decimals travel as JSON strings (their text, never a JSON number), so money stays exact. A
// row in a form the parser does not know (a timestamp written by another driver, say) sends
// the whole read down ent's plain path: packedOrPlain.
//
// The domain names the columns it needs (credit's view columns); each column is packed and
// parsed BY NAME through its table's codec (companyCodec, ledgerEntryCodec), which maps every
// column of the table to its form in a packed row and to its field of the ent struct. The SQL
// takes its casts from the same entries, and packed_internal_test.go holds each codec to its
// table's columns in ent's schema: a column added to the schema without an entry, or an entry
// whose form disagrees with the column's type, fails a test. Measured in BENCHMARKS.md
// ("Issue 23, second pass", packed reads): in-process, a list of 250 companies went from
// 1,366–1,462 to 867–913 µs and from 10,855 to 4,723 allocations. Since issue 27 a page's rows
// are one allocation and the query is not cloned: 4,685 → 4,429 allocations for that list.

// errRowForm is a packed row in a form the parser does not know.
var errRowForm = errors.New("packed row in an unknown form")

// ReadCompanies runs q, which the caller hands over, and returns its companies with the given
// columns (any of company.Columns, in any order; the struct's other fields stay zero), in one
// statement that returns one packed column per row. columns should be a package-level slice:
// its address keys the remembered statement text and parse plan.
//
// q is run as it is, not cloned (a clone is five allocations); should a row come in a form
// the parser does not know, the plain read runs q again, whose conditions ent's interceptors
// then extend a second time with the same tenant filter.
//
// Errors: the query's, and an error naming a column the codec does not know (a defect).
func (db *DB) ReadCompanies(ctx context.Context, q *ent.CompanyQuery, columns []string) ([]*ent.Company, error) {
	return packedOrPlain(func() ([]*ent.Company, error) { return packedCompanies(ctx, q, columns) },
		func() ([]*ent.Company, error) { return q.Select(columns...).All(ctx) })
}

// ReadLedgerEntries is ReadCompanies for ledger entries (any of ledgerentry.Columns).
//
// Errors: the query's, and an error naming a column the codec does not know (a defect).
func (db *DB) ReadLedgerEntries(ctx context.Context, q *ent.LedgerEntryQuery, columns []string) ([]*ent.LedgerEntry, error) {
	return packedOrPlain(func() ([]*ent.LedgerEntry, error) { return packedLedgerEntries(ctx, q, columns) },
		func() ([]*ent.LedgerEntry, error) { return q.Select(columns...).All(ctx) })
}

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

// packedCompanies is ReadCompanies's packed read.
//
// Errors: errRowForm, an unknown column's, and the query's.
func packedCompanies(ctx context.Context, q *ent.CompanyQuery, columns []string) ([]*ent.Company, error) {
	sets, err := companyCodec.plan(columns)
	if err != nil {
		return nil, err
	}
	var rows []string
	if err := q.Aggregate(func(s *entsql.Selector) string { return companyCodec.pack(s, columns) }).Scan(ctx, &rows); err != nil {
		return nil, err
	}
	return parsePacked(sets, rows, len(columns))
}

// packedLedgerEntries is ReadLedgerEntries's packed read.
//
// Errors: errRowForm, an unknown column's, and the query's.
func packedLedgerEntries(ctx context.Context, q *ent.LedgerEntryQuery, columns []string) ([]*ent.LedgerEntry, error) {
	sets, err := ledgerEntryCodec.plan(columns)
	if err != nil {
		return nil, err
	}
	var rows []string
	if err := q.Aggregate(func(s *entsql.Selector) string { return ledgerEntryCodec.pack(s, columns) }).Scan(ctx, &rows); err != nil {
		return nil, err
	}
	return parsePacked(sets, rows, len(columns))
}

// parsePacked parses rows, each packed from n columns, into Ts with sets, the columns' setters
// in order (a codec's plan). The Ts are one array, an allocation for the page rather than one
// per row.
//
// Errors: errRowForm.
func parsePacked[T any](sets []func(*packedParser, int, *T), rows []string, n int) ([]*T, error) {
	out := make([]*T, len(rows))
	values := make([]T, len(rows))
	// One parser for every row, and its fields in the same allocation: the setters are
	// called through func values, so a parser per row would escape, an allocation per row.
	scratch := new(packedScratch)
	p := &scratch.p
	p.f = scratch.fields[:min(n, len(scratch.fields))]
	if n > len(scratch.fields) {
		p.f = make([]packedField, n)
	}
	for i, row := range rows {
		if err := splitPacked(row, p.f); err != nil {
			return nil, err
		}
		v := &values[i]
		for k, set := range sets {
			set(p, k, v)
		}
		if p.err != nil {
			return nil, p.err
		}
		out[i] = v
	}
	return out, nil
}

// packedScratch is a packed read's parser and room for the fields of its rows.
type packedScratch struct {
	p      packedParser
	fields [24]packedField
}

// packedForm is how a column travels in a packed row.
type packedForm uint8

const (
	// formText is a JSON string: a text column or an enum.
	formText packedForm = iota
	// formInt is a JSON number without a fraction.
	formInt
	// formDecimal is an exact decimal as a JSON string: SQLite keeps it as TEXT; PostgreSQL's
	// numeric is cast to text, since json_build_array would write it as a JSON number.
	formDecimal
	// formTime is a timestamp as a JSON string, in one of packedTimeLayouts.
	formTime
)

// packedColumn is one column of a codec: its form, whether it may be null, and set, which
// parses field i of p into the column's field of row (p remembers a failure).
type packedColumn[T any] struct {
	form     packedForm
	nullable bool
	set      func(p *packedParser, i int, row *T)
}

// codec maps each column of a table, by name, to its packedColumn.
type codec[T any] struct {
	table   string
	columns map[string]packedColumn[T]
	// plans remembers plan's answers by the column list's address, a key that goes into the
	// map's interface without an allocation.
	plans sync.Map // *string -> *packedPlan[T]
	// exprs remembers pack's expressions (see there).
	exprs sync.Map // packKey -> string
}

// packedPlan is plan's answer for a column list of n columns.
type packedPlan[T any] struct {
	n    int
	sets []func(*packedParser, int, *T)
}

// plan returns, for each of columns in order, the function that sets it.
//
// Errors: a column c does not know.
func (c *codec[T]) plan(columns []string) ([]func(*packedParser, int, *T), error) {
	if len(columns) == 0 {
		return nil, fmt.Errorf("packed read of %s: no columns", c.table)
	}
	if p, ok := c.plans.Load(&columns[0]); ok && p.(*packedPlan[T]).n == len(columns) {
		return p.(*packedPlan[T]).sets, nil
	}
	sets := make([]func(*packedParser, int, *T), len(columns))
	for i, name := range columns {
		col, ok := c.columns[name]
		if !ok {
			return nil, fmt.Errorf("packed read of %s: no packed form for column %q", c.table, name)
		}
		sets[i] = col.set
	}
	// A shorter or longer list over the same array replaces the entry: lists are
	// package-level slices, so that does not happen twice.
	c.plans.Store(&columns[0], &packedPlan[T]{n: len(columns), sets: sets})
	return sets, nil
}

// pack is the expression of one packed row of s's table's columns; plan has accepted them.
//
// The expression is remembered: quoting every column for every read was a tenth of a GET
// company's CPU. It depends only on the dialect, the table's name or alias in s (seen in the
// first column's qualified name) and the columns, which are package-level slices, so their
// address names them and the entries stay few.
func (c *codec[T]) pack(s *entsql.Selector, columns []string) string {
	key := packKey{dialect: s.Dialect(), first: s.C(columns[0]), columns: &columns[0], n: len(columns)}
	if e, ok := c.exprs.Load(key); ok {
		return e.(string)
	}
	e := c.buildPack(s, columns)
	c.exprs.Store(key, e)
	return e
}

type packKey struct {
	dialect, first string
	columns        *string
	n              int
}

// buildPack is pack's expression, built.
func (c *codec[T]) buildPack(s *entsql.Selector, columns []string) string {
	var b strings.Builder
	pg := s.Dialect() == dialect.Postgres
	if pg {
		b.WriteString("json_build_array(")
	} else {
		b.WriteString("json_array(")
	}
	for i, name := range columns {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(s.C(name))
		if pg && c.columns[name].form == formDecimal {
			b.WriteString("::text")
		}
	}
	b.WriteString(")")
	if pg {
		b.WriteString("::text")
	}
	return b.String()
}

// companyCodec is every column of companies.
var companyCodec = &codec[ent.Company]{table: company.Table, columns: map[string]packedColumn[ent.Company]{
	company.FieldID:                 {formText, false, func(p *packedParser, i int, c *ent.Company) { c.ID = p.str(i) }},
	company.FieldStoreID:            {formText, false, func(p *packedParser, i int, c *ent.Company) { c.StoreID = p.str(i) }},
	company.FieldName:               {formText, false, func(p *packedParser, i int, c *ent.Company) { c.Name = p.str(i) }},
	company.FieldNameKey:            {formText, false, func(p *packedParser, i int, c *ent.Company) { c.NameKey = p.str(i) }},
	company.FieldPlatformCompanyGid: {formText, true, func(p *packedParser, i int, c *ent.Company) { c.PlatformCompanyGid = p.strPtr(i) }},
	company.FieldPaymentTermsDays:   {formInt, false, func(p *packedParser, i int, c *ent.Company) { c.PaymentTermsDays = int(p.int(i)) }},
	company.FieldCreditLimit:        {formDecimal, false, func(p *packedParser, i int, c *ent.Company) { c.CreditLimit = p.decimal(i) }},
	company.FieldOutstanding:        {formDecimal, false, func(p *packedParser, i int, c *ent.Company) { c.Outstanding = p.decimal(i) }},
	company.FieldLedgerSeq:          {formInt, false, func(p *packedParser, i int, c *ent.Company) { c.LedgerSeq = p.int(i) }},
	company.FieldUnappliedCredit:    {formDecimal, false, func(p *packedParser, i int, c *ent.Company) { c.UnappliedCredit = p.decimal(i) }},
	company.FieldTimelineSeq:        {formInt, false, func(p *packedParser, i int, c *ent.Company) { c.TimelineSeq = p.int(i) }},
	company.FieldHoldKind: {formText, true, func(p *packedParser, i int, c *ent.Company) {
		if !p.null(i) {
			k := company.HoldKind(p.str(i))
			c.HoldKind = &k
		}
	}},
	company.FieldHoldNote:       {formText, true, func(p *packedParser, i int, c *ent.Company) { c.HoldNote = p.strPtr(i) }},
	company.FieldHoldPlacedAt:   {formTime, true, func(p *packedParser, i int, c *ent.Company) { c.HoldPlacedAt = p.timePtr(i) }},
	company.FieldHoldPlacedBy:   {formText, true, func(p *packedParser, i int, c *ent.Company) { c.HoldPlacedBy = p.strPtr(i) }},
	company.FieldHoldOrderGid:   {formText, true, func(p *packedParser, i int, c *ent.Company) { c.HoldOrderGid = p.strPtr(i) }},
	company.FieldHoldDueAt:      {formTime, true, func(p *packedParser, i int, c *ent.Company) { c.HoldDueAt = p.timePtr(i) }},
	company.FieldCreatedAt:      {formTime, false, func(p *packedParser, i int, c *ent.Company) { c.CreatedAt = p.time(i) }},
	company.FieldUpdatedAt:      {formTime, false, func(p *packedParser, i int, c *ent.Company) { c.UpdatedAt = p.time(i) }},
	company.FieldOutstandingKey: {formText, false, func(p *packedParser, i int, c *ent.Company) { c.OutstandingKey = p.str(i) }},
	company.FieldCreditLimitKey: {formText, false, func(p *packedParser, i int, c *ent.Company) { c.CreditLimitKey = p.str(i) }},
	company.FieldAvailableKey:   {formText, false, func(p *packedParser, i int, c *ent.Company) { c.AvailableKey = p.str(i) }},
	company.FieldUtilizationKey: {formText, false, func(p *packedParser, i int, c *ent.Company) { c.UtilizationKey = p.str(i) }},
}}

// ledgerEntryCodec is every column of ledger_entries.
var ledgerEntryCodec = &codec[ent.LedgerEntry]{table: ledgerentry.Table, columns: map[string]packedColumn[ent.LedgerEntry]{
	ledgerentry.FieldID:        {formText, false, func(p *packedParser, i int, e *ent.LedgerEntry) { e.ID = p.str(i) }},
	ledgerentry.FieldStoreID:   {formText, false, func(p *packedParser, i int, e *ent.LedgerEntry) { e.StoreID = p.str(i) }},
	ledgerentry.FieldCompanyID: {formText, false, func(p *packedParser, i int, e *ent.LedgerEntry) { e.CompanyID = p.str(i) }},
	ledgerentry.FieldSeq:       {formInt, false, func(p *packedParser, i int, e *ent.LedgerEntry) { e.Seq = p.int(i) }},
	ledgerentry.FieldKind: {formText, false, func(p *packedParser, i int, e *ent.LedgerEntry) {
		e.Kind = ledgerentry.Kind(p.str(i))
	}},
	ledgerentry.FieldAmount:           {formDecimal, false, func(p *packedParser, i int, e *ent.LedgerEntry) { e.Amount = p.decimal(i) }},
	ledgerentry.FieldBalanceAfter:     {formDecimal, false, func(p *packedParser, i int, e *ent.LedgerEntry) { e.BalanceAfter = p.decimal(i) }},
	ledgerentry.FieldPlatformOrderGid: {formText, true, func(p *packedParser, i int, e *ent.LedgerEntry) { e.PlatformOrderGid = p.strPtr(i) }},
	ledgerentry.FieldNote:             {formText, true, func(p *packedParser, i int, e *ent.LedgerEntry) { e.Note = p.strPtr(i) }},
	ledgerentry.FieldOccurredAt:       {formTime, false, func(p *packedParser, i int, e *ent.LedgerEntry) { e.OccurredAt = p.time(i) }},
	ledgerentry.FieldCreatedAt:        {formTime, false, func(p *packedParser, i int, e *ent.LedgerEntry) { e.CreatedAt = p.time(i) }},
	ledgerentry.FieldRecordedByType:   {formText, true, func(p *packedParser, i int, e *ent.LedgerEntry) { e.RecordedByType = p.strPtr(i) }},
	ledgerentry.FieldRecordedByLabel:  {formText, true, func(p *packedParser, i int, e *ent.LedgerEntry) { e.RecordedByLabel = p.strPtr(i) }},
}}

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

func (p *packedParser) null(i int) bool { return p.f[i].isNull }

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
