package database_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
	"github.com/creditd/creditd/database"
	"github.com/creditd/creditd/ent"
	"github.com/creditd/creditd/ent/company"
	"github.com/creditd/creditd/ent/ledgerentry"
	"github.com/creditd/creditd/tenant"
)

// rowFields is every column field of an ent row (a *ent.Company or *ent.LedgerEntry) in
// comparable form, by column name: decimals as their exact text and exponent, times as
// instants, pointers as their value or <nil>.
func rowFields(row any) string {
	v := reflect.ValueOf(row).Elem()
	var out []string
	for i := range v.NumField() {
		f := v.Type().Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "edges" || name == "" {
			continue
		}
		out = append(out, name+"="+fieldText(v.Field(i)))
	}
	return strings.Join(out, " ")
}

func fieldText(v reflect.Value) string {
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return "<nil>"
		}
		v = v.Elem()
	}
	switch x := v.Interface().(type) {
	case decimal.Decimal:
		return fmt.Sprintf("%s/%d", x.String(), x.Exponent())
	case time.Time:
		return x.UTC().Format(time.RFC3339Nano)
	default:
		return fmt.Sprintf("%q", fmt.Sprint(x))
	}
}

// reversed is columns in the opposite order: packed columns are mapped by name, so any order
// reads the same.
func reversed(columns []string) []string {
	out := slices.Clone(columns)
	slices.Reverse(out)
	return out
}

var (
	allCompanyColumns     = reversed(company.Columns)
	someCompanyColumns    = []string{company.FieldUpdatedAt, company.FieldOutstanding, company.FieldID, company.FieldHoldKind}
	allLedgerEntryColumns = reversed(ledgerentry.Columns)
	unknownCompanyColumns = []string{company.FieldID, "no_such_column"}
)

// TestPackedCompanyRowsMatchEnt reads companies with every column packed and the plain way,
// and wants the same values: exact decimals, nulls, names that JSON must escape, holds with
// every field, and times with their microseconds. A read of some columns sets those and
// leaves the others zero, as ent's Select does. It runs on both databases.
func TestPackedCompanyRowsMatchEnt(t *testing.T) {
	t.Parallel()
	env := credittest.NewService(t)
	st := env.MustStore(t, "Store", "EUR")
	other := env.MustStore(t, "Other", "EUR")
	env.MustCompany(t, other, "Another store's", "1")
	names := []string{`Plain`, `Quote " and \ backslash`, "Tab\tnewline\nunicode é € 🙂", `</script>&`, "\u2028 line separator"}
	limits := []string{"5000.00", "0.01", "123456789012.34", "0", "7"}
	sys := tenant.System(context.Background())
	for i, name := range names {
		c := env.MustCompany(t, st, name, limits[i])
		env.MustRecord(t, credit.LedgerEntryInput{CompanyID: c.ID, Kind: credit.KindAdjustment, Amount: "10.05", Note: "n"})
		if i%2 == 1 {
			note := "held: \"why\""
			if _, err := env.Service.Companies.PlaceHold(tenant.Staff(credittest.Admin(), st, "Olga Ops"), credit.HoldInput{CompanyID: c.ID, Note: &note}); err != nil {
				t.Fatal(err)
			}
		}
		if i == 3 {
			due := time.Date(2026, 3, 4, 5, 6, 7, 123456000, time.UTC)
			if err := env.DB.Client.Company.UpdateOneID(c.ID).ClearPlatformCompanyGid().
				SetHoldKind(company.HoldKindOverdue).SetHoldOrderGid("gid://platform/Order/9").SetHoldDueAt(due).
				SetHoldPlacedAt(due.Add(time.Microsecond)).ClearHoldNote().SetUnappliedCredit(decimal.RequireFromString("-1.500")).Exec(sys); err != nil {
				t.Fatal(err)
			}
		}
	}
	viewer := credittest.Staff(st)
	q := func() *ent.CompanyQuery {
		return env.DB.Client.Company.Query().Order(ent.Asc(company.FieldID))
	}
	for _, columns := range [][]string{allCompanyColumns, someCompanyColumns} {
		packed, err := database.PackedCompanies(viewer, q(), columns)
		if err != nil {
			t.Fatal(err)
		}
		plain, err := q().Select(columns...).All(viewer)
		if err != nil {
			t.Fatal(err)
		}
		if len(packed) != len(names) || len(plain) != len(names) {
			t.Fatalf("%d packed and %d plain rows, want %d (the store's only)", len(packed), len(plain), len(names))
		}
		for i := range plain {
			if got, want := rowFields(packed[i]), rowFields(plain[i]); got != want {
				t.Errorf("packed %s\n   want %s", got, want)
			}
		}
		// ReadCompanies, which falls back on unknown forms, reads the same.
		read, err := env.DB.ReadCompanies(viewer, q(), columns)
		if err != nil || len(read) != len(plain) || rowFields(read[0]) != rowFields(plain[0]) {
			t.Errorf("ReadCompanies: %d rows, %v", len(read), err)
		}
	}
	// The plain read of some columns left the others zero: so did the packed one.
	some, err := database.PackedCompanies(viewer, q(), someCompanyColumns)
	if err != nil || some[0].Name != "" || some[0].ID == "" {
		t.Errorf("a read of some columns: %+v, %v", some, err)
	}
}

// TestPackedReadOfAnUnknownColumnFails: a column the codec does not know is an error of the
// read, not a row in an unknown form, so it never falls back to a plain read that would hide
// it.
func TestPackedReadOfAnUnknownColumnFails(t *testing.T) {
	t.Parallel()
	env := credittest.NewService(t)
	st := env.MustStore(t, "Store", "EUR")
	env.MustCompany(t, st, "Buyer", "10.00")
	rows, err := env.DB.ReadCompanies(credittest.Staff(st), env.DB.Client.Company.Query(), unknownCompanyColumns)
	if err == nil || errors.Is(err, database.ErrRowForm) || !strings.Contains(err.Error(), "no_such_column") {
		t.Errorf("got %v, %v; want an error naming the column", rows, err)
	}
}

// TestPackedReadFallsBackOnlyOnUnknownForms: a row in an unknown form sends the read down the
// plain path; a cancellation or any other error does not cost a second statement.
func TestPackedReadFallsBackOnlyOnUnknownForms(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		err       error
		wantPlain bool
	}{
		{fmt.Errorf("row 3: %w", database.ErrRowForm), true},
		{context.Canceled, false},
		{errors.New("ERROR: current transaction is aborted (SQLSTATE 25P02)"), false},
	} {
		plainCalls := 0
		_, err := database.PackedOrPlain(func() (int, error) { return 0, tc.err },
			func() (int, error) { plainCalls++; return 1, nil })
		if (plainCalls == 1) != tc.wantPlain {
			t.Errorf("%v: plain read %d times", tc.err, plainCalls)
		}
		if tc.wantPlain && err != nil || !tc.wantPlain && err == nil {
			t.Errorf("%v: got %v", tc.err, err)
		}
	}
}

// TestPackedReadFallsBackOnATimeItDoesNotKnow: a timestamp in a form that go-sqlite3 reads and
// the packed parser does not sends the read down the plain path, which returns the company.
func TestPackedReadFallsBackOnATimeItDoesNotKnow(t *testing.T) {
	t.Parallel()
	credittest.RequireSQLite(t)
	env := credittest.NewService(t)
	st := env.MustStore(t, "Store", "EUR")
	c := env.MustCompany(t, st, "Buyer", "10.00")
	if _, err := env.DB.SQL.Exec(`UPDATE companies SET updated_at = '2026-03-02 09:00' WHERE id = ?`, c.ID); err != nil {
		t.Fatal(err)
	}
	viewer := credittest.Staff(st)
	if _, err := database.PackedCompanies(viewer, env.DB.Client.Company.Query(), allCompanyColumns); !errors.Is(err, database.ErrRowForm) {
		t.Fatalf("the packed read alone: %v, want ErrRowForm", err)
	}
	rows, err := env.DB.ReadCompanies(viewer, env.DB.Client.Company.Query(), allCompanyColumns)
	if err != nil || len(rows) != 1 {
		t.Fatalf("%v %v", rows, err)
	}
	if want := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC); !rows[0].UpdatedAt.Equal(want) {
		t.Errorf("updated_at %v, want %v", rows[0].UpdatedAt, want)
	}
}

// TestPackedSQLiteTimes holds parseSQLiteTime's fast path to time.Parse's reading of the same
// text, and leaves to time.Parse what the fast path does not know.
func TestPackedSQLiteTimes(t *testing.T) {
	t.Parallel()
	const layout = "2006-01-02 15:04:05.999999999-07:00"
	for i, s := range []string{
		// The forms go-sqlite3 writes, which the fast path reads.
		"2026-03-02 09:00:00+00:00", "2026-03-02 09:00:00.5+00:00", "2026-03-02 09:00:00.123456+00:00",
		"2026-12-31 23:59:59.999999999+05:30", "2026-01-01 00:00:00.000001-08:00", "2024-02-29 12:00:00+00:00",
		"2026-02-30 12:00:00+00:00", "2026-03-02 09:00:00Z", "2026-03-02T09:00:00+00:00", "2026-03-02 09:00:00.+00:00",
		"2026-03-02 24:00:00+00:00", "2026-3-02 09:00:00+00:00", "2026-03-02 09:00:00+0000", "garbage",
	} {
		want, werr := time.Parse(layout, s)
		got, ok := database.ParseSQLiteTime(s)
		if ok && (werr != nil || !got.Equal(want)) {
			t.Errorf("%q: fast %v, time.Parse %v %v", s, got, want, werr)
		}
		if !ok && i < 6 {
			t.Errorf("%q: left to time.Parse", s)
		}
	}
}

// TestPackedLedgerRowsMatchEnt is TestPackedCompanyRowsMatchEnt for ledger entries.
func TestPackedLedgerRowsMatchEnt(t *testing.T) {
	t.Parallel()
	env := credittest.NewService(t)
	st := env.MustStore(t, "Store", "EUR")
	other := env.MustStore(t, "Other", "EUR")
	env.MustRecord(t, credit.LedgerEntryInput{CompanyID: env.MustCompany(t, other, "Another store's", "1").ID, Kind: credit.KindAdjustment, Amount: "1", Note: "n"})
	at := credit.At(time.Date(2026, 2, 3, 4, 5, 6, 789012000, time.UTC))
	for c := range 2 {
		co := env.MustCompany(t, st, fmt.Sprint("Buyer ", c), "100000")
		for _, in := range []credit.LedgerEntryInput{
			{Kind: credit.KindOrderPlaced, Amount: "1234.56", OrderGID: "gid://platform/Order/1", Note: `order "1" \ é`},
			{Kind: credit.KindPayment, Amount: "-0.01", Note: "tab\there\nline"},
			{Kind: credit.KindAdjustment, Amount: "7", Note: "seven", OccurredAt: &at},
			{Kind: credit.KindRefund, Amount: "-34.50", OrderGID: "gid://platform/Order/1", Note: "r"},
		} {
			in.CompanyID = co.ID
			env.MustRecord(t, in)
		}
	}
	viewer := credittest.Staff(st)
	q := func() *ent.LedgerEntryQuery {
		return env.DB.Client.LedgerEntry.Query().Order(ent.Asc(ledgerentry.FieldID))
	}
	packed, err := database.PackedLedgerEntries(viewer, q(), allLedgerEntryColumns)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := q().All(viewer)
	if err != nil {
		t.Fatal(err)
	}
	if len(packed) != 8 || len(plain) != 8 {
		t.Fatalf("%d packed and %d plain rows, want 8 (the store's only)", len(packed), len(plain))
	}
	for i := range plain {
		if got, want := rowFields(packed[i]), rowFields(plain[i]); got != want {
			t.Errorf("packed %s\n   want %s", got, want)
		}
	}
}
