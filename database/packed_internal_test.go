package database

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"entgo.io/ent/dialect/sql/schema"
	"entgo.io/ent/schema/field"
	"github.com/shopspring/decimal"

	"github.com/creditd/creditd/ent/migrate"
)

// TestPackedCodecsMatchTheirTables holds each packed codec to its table in ent's schema: an
// entry for every column and for no other, each in the form of the column's type (a numeric
// column must be formDecimal, which the SQL casts to text on PostgreSQL), nullable exactly when
// the column is. A column added to ent/schema without its entry fails here.
func TestPackedCodecsMatchTheirTables(t *testing.T) {
	t.Parallel()
	checkCodec(t, companyCodec, migrate.CompaniesTable)
	checkCodec(t, ledgerEntryCodec, migrate.LedgerEntriesTable)
}

func checkCodec[T any](t *testing.T, c *codec[T], table *schema.Table) {
	t.Helper()
	if c.table != table.Name {
		t.Errorf("codec of %s for table %s", c.table, table.Name)
	}
	var names []string
	for _, col := range table.Columns {
		names = append(names, col.Name)
		entry, ok := c.columns[col.Name]
		if !ok {
			t.Errorf("%s.%s has no packed form", table.Name, col.Name)
			continue
		}
		var want packedForm
		switch col.Type {
		case field.TypeString, field.TypeEnum:
			want = formText
		case field.TypeInt, field.TypeInt64:
			want = formInt
		case field.TypeTime:
			want = formTime
		case field.TypeOther:
			if col.SchemaType["postgres"] != "numeric" {
				t.Errorf("%s.%s: a column of type %v the codec cannot carry", table.Name, col.Name, col.SchemaType)
			}
			want = formDecimal
		default:
			t.Errorf("%s.%s: type %v has no packed form; add one to packedForm", table.Name, col.Name, col.Type)
		}
		if entry.form != want || entry.nullable != col.Nullable {
			t.Errorf("%s.%s: form %d nullable %v, want form %d nullable %v", table.Name, col.Name, entry.form, entry.nullable, want, col.Nullable)
		}
	}
	for name := range c.columns {
		if !slices.Contains(names, name) {
			t.Errorf("the codec of %s has an entry for %q, which is no column of the table", table.Name, name)
		}
	}
}

// TestPackedSettersReadTheirColumn probes every entry's setter with a field of its form, and
// wants the value in the struct field of the column's name (ent's json tag) and in no other;
// then with fields of the other forms, and wants each refused (errRowForm, so the read falls
// back to ent's plain path) unless it is a null for a nullable column. So a setter that reads
// a neighbour's field, or a form its entry does not declare (a decimal written as a JSON
// number, say), fails here.
func TestPackedSettersReadTheirColumn(t *testing.T) {
	t.Parallel()
	probeCodec(t, companyCodec)
	probeCodec(t, ledgerEntryCodec)
}

// probeValues are a packed field of each form and the value it carries.
var probeValues = map[packedForm]struct {
	field packedField
	want  string
}{
	formText:    {packedField{text: "probe \"text\"", str: true}, "probe \"text\""},
	formInt:     {packedField{text: "4200"}, "4200"},
	formDecimal: {packedField{text: "-12.340", str: true}, "-12.340"},
	formTime:    {packedField{text: "2026-03-04 05:06:07.123456+02:00", str: true}, "2026-03-04T03:06:07.123456Z"},
}

func probeCodec[T any](t *testing.T, c *codec[T]) {
	t.Helper()
	for name, entry := range c.columns {
		probe := probeValues[entry.form]
		var row T
		p := packedParser{f: []packedField{probe.field}}
		entry.set(&p, 0, &row)
		if p.err != nil {
			t.Errorf("%s.%s refused a field of its form: %v", c.table, name, p.err)
			continue
		}
		v := reflect.ValueOf(row)
		for i := range v.NumField() {
			f := v.Type().Field(i)
			tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if !f.IsExported() || tag == "edges" {
				continue
			}
			got := probeText(v.Field(i))
			if tag == name && got != probe.want {
				t.Errorf("%s.%s set %s to %q, want %q", c.table, name, f.Name, got, probe.want)
			}
			if tag != name && got != "" {
				t.Errorf("%s.%s set another field, %s, to %q", c.table, name, f.Name, got)
			}
		}
		for form, other := range probeValues {
			if form == entry.form || entry.form == formText && other.field.str {
				continue // a decimal's or a time's string is a valid text too
			}
			var row T
			p := packedParser{f: []packedField{other.field}}
			entry.set(&p, 0, &row)
			if p.err == nil {
				t.Errorf("%s.%s (form %d) accepted a field of form %d", c.table, name, entry.form, form)
			}
		}
		var nullRow T
		p = packedParser{f: []packedField{{isNull: true}}}
		entry.set(&p, 0, &nullRow)
		if (p.err == nil) != entry.nullable {
			t.Errorf("%s.%s (nullable %v) read a null with %v", c.table, name, entry.nullable, p.err)
		}
		if entry.nullable && !reflect.ValueOf(nullRow).IsZero() {
			t.Errorf("%s.%s: a null set a field", c.table, name)
		}
	}
}

// probeText is a field's value as text, "" for a zero value or nil.
func probeText(v reflect.Value) string {
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return ""
		}
		v = v.Elem()
	}
	if v.IsZero() {
		return ""
	}
	switch x := v.Interface().(type) {
	case decimal.Decimal:
		return x.StringFixed(-x.Exponent())
	case time.Time:
		return x.UTC().Format(time.RFC3339Nano)
	default:
		return fmt.Sprint(x)
	}
}
