package credit_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
	"github.com/creditd/creditd/ent"
	"github.com/creditd/creditd/ent/company"
	"github.com/creditd/creditd/ent/ledgerentry"
	"github.com/creditd/creditd/tenant"
)

// companyFields is what a company read must return, in comparable form: decimals as their
// exact text, times as instants.
func companyFields(c *ent.Company) string {
	tm := func(t *time.Time) string {
		if t == nil {
			return "<nil>"
		}
		return t.UTC().Format(time.RFC3339Nano)
	}
	s := func(p *string) string {
		if p == nil {
			return "<nil>"
		}
		return fmt.Sprintf("%q", *p)
	}
	kind := "<nil>"
	if c.HoldKind != nil {
		kind = string(*c.HoldKind)
	}
	return fmt.Sprintf("%s %s %q gid=%s terms=%d limit=%s/%d out=%s/%d seq=%d hold=%s %s %s %s %s %s updated=%s",
		c.ID, c.StoreID, c.Name, s(c.PlatformCompanyGid), c.PaymentTermsDays,
		c.CreditLimit.String(), c.CreditLimit.Exponent(), c.Outstanding.String(), c.Outstanding.Exponent(), c.LedgerSeq,
		kind, s(c.HoldNote), tm(c.HoldPlacedAt), s(c.HoldPlacedBy), s(c.HoldOrderGid), tm(c.HoldDueAt), tm(&c.UpdatedAt))
}

// TestPackedCompanyRowsMatchEnt reads companies with every kind of field packed and the plain
// way, and wants the same values: exact decimals, nulls, names that JSON must escape, holds
// with every field, and times with their microseconds. It runs on both databases.
func TestPackedCompanyRowsMatchEnt(t *testing.T) {
	t.Parallel()
	env := credittest.New(t)
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
				SetHoldPlacedAt(due.Add(time.Microsecond)).ClearHoldNote().Exec(sys); err != nil {
				t.Fatal(err)
			}
		}
	}
	viewer := credittest.Staff(st)
	q := func() *ent.CompanyQuery {
		return env.DB.Client.Company.Query().Order(ent.Asc(company.FieldID))
	}
	packed, err := credit.PackedCompanies(viewer, q())
	if err != nil {
		t.Fatal(err)
	}
	plain, err := q().All(viewer)
	if err != nil {
		t.Fatal(err)
	}
	if len(packed) != len(names) || len(plain) != len(names) {
		t.Fatalf("%d packed and %d plain rows, want %d (the store's only)", len(packed), len(plain), len(names))
	}
	for i := range plain {
		if got, want := companyFields(packed[i]), companyFields(plain[i]); got != want {
			t.Errorf("packed %s\n   want %s", got, want)
		}
	}
	// The read with the sort keys, for the orderings of contract §6.
	keyed, err := credit.PackedKeyedCompanies(viewer, q())
	if err != nil || len(keyed) != len(plain) {
		t.Fatalf("keyed read: %d rows, %v", len(keyed), err)
	}
	for i := range plain {
		got := fmt.Sprintf("%s keys %q %q %q %q %q", companyFields(keyed[i]), keyed[i].NameKey, keyed[i].OutstandingKey,
			keyed[i].CreditLimitKey, keyed[i].AvailableKey, keyed[i].UtilizationKey)
		want := fmt.Sprintf("%s keys %q %q %q %q %q", companyFields(plain[i]), plain[i].NameKey, plain[i].OutstandingKey,
			plain[i].CreditLimitKey, plain[i].AvailableKey, plain[i].UtilizationKey)
		if got != want || plain[i].OutstandingKey == "" {
			t.Errorf("keyed %s\n want %s", got, want)
		}
	}
	// readCompanies's packed read itself, which never falls back.
	if only, err := credit.PackedCompanies(viewer, q()); err != nil || len(only) != len(plain) {
		t.Errorf("the packed read alone: %d rows, %v", len(only), err)
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
		{fmt.Errorf("row 3: %w", credit.ErrRowForm), true},
		{context.Canceled, false},
		{errors.New("ERROR: current transaction is aborted (SQLSTATE 25P02)"), false},
	} {
		plainCalls := 0
		_, err := credit.PackedOrPlain(func() (int, error) { return 0, tc.err },
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
	env := credittest.New(t)
	st := env.MustStore(t, "Store", "EUR")
	c := env.MustCompany(t, st, "Buyer", "10.00")
	if _, err := env.DB.SQL.Exec(`UPDATE companies SET updated_at = '2026-03-02 09:00' WHERE id = ?`, c.ID); err != nil {
		t.Fatal(err)
	}
	rows, err := credit.ReadCompanies(credittest.Staff(st), env.DB.Client.Company.Query())
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
		got, ok := credit.ParseSQLiteTime(s)
		if ok && (werr != nil || !got.Equal(want)) {
			t.Errorf("%q: fast %v, time.Parse %v %v", s, got, want, werr)
		}
		if !ok && i < 6 {
			t.Errorf("%q: left to time.Parse", s)
		}
	}
}

// TestPackedLedgerRowsMatchEnt is TestPackedCompanyRowsMatchEnt for ledger entries, through
// both reads that use it: a company's ledger and the batched pages of several companies.
func TestPackedLedgerRowsMatchEnt(t *testing.T) {
	t.Parallel()
	env := credittest.New(t)
	st := env.MustStore(t, "Store", "EUR")
	other := env.MustStore(t, "Other", "EUR")
	env.MustRecord(t, credit.LedgerEntryInput{CompanyID: env.MustCompany(t, other, "Another store's", "1").ID, Kind: credit.KindAdjustment, Amount: "1", Note: "n"})
	at := credit.At(time.Date(2026, 2, 3, 4, 5, 6, 789012000, time.UTC))
	var companies []string
	for c := range 2 {
		co := env.MustCompany(t, st, fmt.Sprint("Buyer ", c), "100000")
		companies = append(companies, co.ID)
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
	fields := func(e *ent.LedgerEntry) string {
		s := func(p *string) string {
			if p == nil {
				return "<nil>"
			}
			return fmt.Sprintf("%q", *p)
		}
		return fmt.Sprintf("%s %s %d %s %s/%d after=%s/%d %s %s %s", e.ID, e.CompanyID, e.Seq, e.Kind, e.Amount.String(), e.Amount.Exponent(),
			e.BalanceAfter.String(), e.BalanceAfter.Exponent(), s(e.PlatformOrderGid), s(e.Note), e.OccurredAt.UTC().Format(time.RFC3339Nano))
	}
	viewer := credittest.Staff(st)
	q := func() *ent.LedgerEntryQuery {
		return env.DB.Client.LedgerEntry.Query().Order(ent.Asc(ledgerentry.FieldID))
	}
	packed, err := credit.PackedLedger(viewer, q())
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
		if got, want := fields(packed[i]), fields(plain[i]); got != want {
			t.Errorf("packed %s\n   want %s", got, want)
		}
	}
	// The views the API shows, through the batched read and a company's ledger.
	limit := 3
	pages, err := env.Service.Ledger.Latest(viewer, companies, &limit)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range companies {
		list, err := env.Service.Ledger.List(viewer, id, credit.LedgerListParams{ListParams: credit.ListParams{Limit: &limit}})
		if err != nil {
			t.Fatal(err)
		}
		got, _ := json.Marshal(pages[id].Data)
		want, _ := json.Marshal(list.Data)
		if string(got) != string(want) || len(list.Data) != 3 || !pages[id].HasMore {
			t.Errorf("batched page %s, want %s", got, want)
		}
	}
}
