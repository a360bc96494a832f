package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
	"github.com/creditd/creditd/server"
	"github.com/creditd/creditd/tenant"
)

// readFixture is a running creditd with one EUR store and a key that may read everything.
type readFixture struct {
	env   *credittest.Env
	store string
	key   string // read_credit + read_applications
}

// newReadFixture starts creditd with a rate limit high enough for tests that page a lot
// (the clock stands still, so the per-minute allowance would never refill).
func newReadFixture(t *testing.T) *readFixture {
	t.Helper()
	env := credittest.New(t, credittest.Options{ServerConfig: func(c *server.Config) { c.RateLimit = 1_000_000 }})
	st := env.MustStore(t, "Acme Wholesale", "EUR")
	return &readFixture{env: env, store: st, key: env.MustKey(t, st, "reader", credit.ScopeReadCredit, credit.ScopeReadApplications)}
}

func (f *readFixture) get(t *testing.T, path string, pairs ...string) *credittest.Response {
	t.Helper()
	return f.env.Get(t, f.key, credittest.WithQuery(path, pairs...))
}

// mustJSONEqual compares a JSON body with the expected JSON text, ignoring member order.
func mustJSONEqual(tb testing.TB, got []byte, want string) {
	tb.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		tb.Fatalf("response is not JSON: %v\n%s", err, got)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		tb.Fatalf("expected JSON is broken: %v\n%s", err, want)
	}
	if !reflect.DeepEqual(g, w) {
		tb.Fatalf("JSON differs\n got: %s\nwant: %s", got, want)
	}
}

// mustStaffHold places a manual hold as a staff member.
func mustStaffHold(tb testing.TB, env *credittest.Env, storeID, companyID, note string) {
	tb.Helper()
	if _, err := env.Service.Companies.PlaceHold(tenant.Staff(credittest.Admin(), storeID, "Olga Ops"), credit.HoldInput{CompanyID: companyID, Note: &note}); err != nil {
		tb.Fatalf("place hold: %v", err)
	}
}

// readTS parses an RFC 3339 time for an input's optional timestamp.
func readTS(ts string) *credit.Timestamp {
	t, err := credit.ParseTimestamp(ts)
	if err != nil {
		panic(err)
	}
	return &t
}

func TestGetCompanyShowsEveryField(t *testing.T) {
	t.Parallel()
	f := newReadFixture(t)
	co := f.env.MustCompany(t, f.store, "Alpenblick Hotels AG", "25000.00")
	f.env.Clock.Advance(time.Second)
	f.env.MustRecord(t, credit.LedgerEntryInput{CompanyID: co.ID, Kind: credit.KindOrderPlaced, Amount: "4800.5", OrderGID: "gid://platform/Order/5001"})

	mustJSONEqual(t, f.get(t, "/v1/companies/"+co.ID).WantStatus(t, 200).Body, fmt.Sprintf(`{
		"id": %q, "name": "Alpenblick Hotels AG", "platform_company_gid": "gid://platform/Company/42",
		"status": "approved", "payment_terms": "NET_30",
		"credit_limit": {"amount": "25000.00", "currency": "EUR"},
		"outstanding": {"amount": "4800.50", "currency": "EUR"},
		"available_credit": {"amount": "18949.50", "currency": "EUR"},
		"hold": null,
		"updated_at": "2026-03-02T09:00:01.000000Z"}`, co.ID))

	f.env.Clock.Advance(1500 * time.Microsecond)
	mustStaffHold(t, f.env, f.store, co.ID, "credit review")
	mustJSONEqual(t, f.get(t, "/v1/companies/"+co.ID).WantStatus(t, 200).Body, fmt.Sprintf(`{
		"id": %q, "name": "Alpenblick Hotels AG", "platform_company_gid": "gid://platform/Company/42",
		"status": "on_hold", "payment_terms": "NET_30",
		"credit_limit": {"amount": "25000.00", "currency": "EUR"},
		"outstanding": {"amount": "4800.50", "currency": "EUR"},
		"available_credit": {"amount": "18949.50", "currency": "EUR"},
		"hold": {"kind": "manual", "note": "credit review", "placed_at": "2026-03-02T09:00:01.001500Z",
		         "placed_by": "Olga Ops", "platform_order_gid": null, "due_at": null},
		"updated_at": "2026-03-02T09:00:01.001500Z"}`, co.ID))
}

func TestMoneyFormatsByStoreCurrency(t *testing.T) {
	t.Parallel()
	env := credittest.New(t)
	for _, tc := range []struct {
		currency string
		buffer   int
		limit    string
		entries  []string // adjustments
		// want credit_limit, outstanding, available_credit and the ledger's amounts, newest first
		wantLimit, wantOutstanding, wantAvailable string
		wantLedger                                []string
	}{
		{"EUR", 5, "1000.1", []string{"100", "-0.5"}, "1000.10", "99.50", "850.59", []string{"-0.50", "100.00"}},
		{"JPY", 5, "100010", []string{"30000"}, "100010", "30000", "65009", []string{"30000"}},
		{"KWD", 5, "1000.5", []string{"0.125"}, "1000.500", "0.125", "950.350", []string{"0.125"}},
		{"EUR", 0, "500", []string{"-200"}, "500.00", "-200.00", "700.00", []string{"-200.00"}},
		{"EUR", 50, "500", []string{"300"}, "500.00", "300.00", "0.00", []string{"300.00"}},
		{"USD", 5, "100", []string{"99.99"}, "100.00", "99.99", "0.00", []string{"99.99"}},
	} {
		t.Run(fmt.Sprintf("%s_buffer%d", tc.currency, tc.buffer), func(t *testing.T) {
			st, err := env.Service.Stores.Create(credittest.Admin(), "Store "+tc.currency, tc.currency, tc.buffer)
			if err != nil {
				t.Fatal(err)
			}
			key := env.MustKey(t, st.ID, "reader", credit.ScopeReadCredit)
			co := env.MustCompany(t, st.ID, "Buyer", tc.limit)
			for _, a := range tc.entries {
				env.MustRecord(t, credit.LedgerEntryInput{CompanyID: co.ID, Kind: credit.KindAdjustment, Amount: a, Note: "correction"})
			}
			var got credit.Company
			env.Get(t, key, "/v1/companies/"+co.ID).WantStatus(t, 200).Decode(t, &got)
			want := credit.Company{
				CreditLimit:     credit.Money{Amount: tc.wantLimit, Currency: tc.currency},
				Outstanding:     credit.Money{Amount: tc.wantOutstanding, Currency: tc.currency},
				AvailableCredit: credit.Money{Amount: tc.wantAvailable, Currency: tc.currency},
			}
			if got.CreditLimit != want.CreditLimit || got.Outstanding != want.Outstanding || got.AvailableCredit != want.AvailableCredit {
				t.Errorf("money = %+v %+v %+v, want %+v %+v %+v", got.CreditLimit, got.Outstanding, got.AvailableCredit, want.CreditLimit, want.Outstanding, want.AvailableCredit)
			}
			var list struct{ Data []credit.Company }
			env.Get(t, key, "/v1/companies").WantStatus(t, 200).Decode(t, &list)
			if len(list.Data) != 1 || list.Data[0].AvailableCredit != want.AvailableCredit || list.Data[0].Outstanding != want.Outstanding {
				t.Errorf("list shows %+v, want the same money as the company", list.Data)
			}
			var ledger struct{ Data []credit.LedgerEntry }
			env.Get(t, key, "/v1/companies/"+co.ID+"/ledger").WantStatus(t, 200).Decode(t, &ledger)
			var amounts []string
			for _, e := range ledger.Data {
				if e.Amount.Currency != tc.currency {
					t.Errorf("ledger amount currency %q, want %s", e.Amount.Currency, tc.currency)
				}
				amounts = append(amounts, e.Amount.Amount)
			}
			if !slices.Equal(amounts, tc.wantLedger) {
				t.Errorf("ledger amounts %v, want %v", amounts, tc.wantLedger)
			}
		})
	}
}

func TestListCompaniesEnvelopeAndPageSizes(t *testing.T) {
	t.Parallel()
	f := newReadFixture(t)
	var all []string
	for i := range 251 {
		all = append(all, f.env.MustCompany(t, f.store, fmt.Sprintf("Buyer %03d", i), "100").ID)
	}
	slices.Sort(all) // same updated_at everywhere: ID order

	def := f.get(t, "/v1/companies").ListPage(t)
	if got := def.IDs(t); len(got) != credit.DefaultPageSize || !slices.Equal(got, all[:50]) || !def.HasMore {
		t.Fatalf("default page: %d items, has_more %v; want the first 50 by id and has_more", len(got), def.HasMore)
	}
	one := f.get(t, "/v1/companies", "limit", "1").ListPage(t)
	if got := one.IDs(t); !slices.Equal(got, all[:1]) || !one.HasMore {
		t.Fatalf("limit=1: %v has_more %v", got, one.HasMore)
	}
	most := f.get(t, "/v1/companies", "limit", "250").ListPage(t)
	if got := most.IDs(t); !slices.Equal(got, all[:250]) || !most.HasMore {
		t.Fatalf("limit=250: %d items, has_more %v", len(got), most.HasMore)
	}
	last := f.get(t, "/v1/companies", "limit", "250", "cursor", *most.NextCursor).ListPage(t)
	if got := last.IDs(t); !slices.Equal(got, all[250:]) || last.HasMore || last.NextCursor != nil {
		t.Fatalf("page after 250: %v has_more %v next %v; want the last company and the end", got, last.HasMore, last.NextCursor)
	}
	// A page that ends exactly at the last item says there is no more.
	exact := f.get(t, "/v1/companies", "limit", "1", "cursor", *f.get(t, "/v1/companies", "limit", "250").ListPage(t).NextCursor).ListPage(t)
	if exact.HasMore || len(exact.Data) != 1 {
		t.Fatalf("last page of exactly one: has_more %v, %d items", exact.HasMore, len(exact.Data))
	}
}

// listRoutes are the /v1 lists, for tests of the parameters every list takes.
func listRoutes(t *testing.T, f *readFixture) map[string]string {
	t.Helper()
	co := f.env.MustCompany(t, f.store, "Listed", "1000")
	for i := range 3 {
		f.env.MustRecord(t, credit.LedgerEntryInput{CompanyID: co.ID, Kind: credit.KindAdjustment, Amount: fmt.Sprint(i + 1), Note: "n"})
		f.env.MustApplication(t, f.store, credit.ApplicationInput{BusinessName: fmt.Sprintf("Applicant %d", i)})
	}
	f.env.MustCompany(t, f.store, "Listed too", "1000")
	return map[string]string{
		"companies":    "/v1/companies",
		"ledger":       "/v1/companies/" + co.ID + "/ledger",
		"applications": "/v1/applications",
	}
}

func TestLimitParameter(t *testing.T) {
	t.Parallel()
	f := newReadFixture(t)
	for name, path := range listRoutes(t, f) {
		t.Run(name, func(t *testing.T) {
			for _, bad := range []string{"0", "251", "-1", "abc", "", "1.5", "1e2", " 1", "99999999999999999999"} {
				f.get(t, path, "limit", bad).WantError(t, 400, "invalid_parameter", "limit")
			}
			for _, good := range []string{"1", "2", "250", "01"} {
				p := f.get(t, path, "limit", good).ListPage(t)
				n := len(p.Data)
				if good == "1" && (n != 1 || !p.HasMore) {
					t.Errorf("limit=1 gave %d items, has_more %v", n, p.HasMore)
				}
				if good == "250" && (n < 2 || p.HasMore) {
					t.Errorf("limit=250 gave %d items, has_more %v", n, p.HasMore)
				}
			}
			if got := f.get(t, path, "limit", "1", "limit", "2"); got.Status != 400 || got.APIError().Param != "limit" {
				t.Errorf("repeated limit: %d %s", got.Status, got.Body)
			}
		})
	}
}

func TestCursorParameter(t *testing.T) {
	t.Parallel()
	f := newReadFixture(t)
	routes := listRoutes(t, f)

	// The same lists in another store, whose cursors must not work here.
	other := f.env.MustStore(t, "Other", "EUR")
	otherKey := f.env.MustKey(t, other, "other", credit.ScopeReadCredit, credit.ScopeReadApplications)
	otherCo := f.env.MustCompany(t, other, "Theirs", "1000")
	f.env.MustCompany(t, other, "Theirs too", "1000")
	for i := range 2 {
		f.env.MustRecord(t, credit.LedgerEntryInput{CompanyID: otherCo.ID, Kind: credit.KindAdjustment, Amount: fmt.Sprint(i + 1), Note: "n"})
		f.env.MustApplication(t, other, credit.ApplicationInput{BusinessName: "Theirs"})
	}
	foreign := map[string]string{
		"companies":    "/v1/companies",
		"ledger":       "/v1/companies/" + otherCo.ID + "/ledger",
		"applications": "/v1/applications",
	}
	cursorOf := func(key, path string) string {
		t.Helper()
		p := f.env.Get(t, key, credittest.WithQuery(path, "limit", "1")).ListPage(t)
		if p.NextCursor == nil {
			t.Fatalf("%s has a single page", path)
		}
		return *p.NextCursor
	}
	// A second company's ledger in this store: its cursors belong to another list.
	sibling := f.env.MustCompany(t, f.store, "Sibling", "1000")
	for i := range 2 {
		f.env.MustRecord(t, credit.LedgerEntryInput{CompanyID: sibling.ID, Kind: credit.KindAdjustment, Amount: fmt.Sprint(i + 1), Note: "n"})
	}
	siblingLedger := cursorOf(f.key, "/v1/companies/"+sibling.ID+"/ledger")

	for name, path := range routes {
		t.Run(name, func(t *testing.T) {
			good := cursorOf(f.key, path)
			f.get(t, path, "cursor", good).ListPage(t)

			bad := map[string]string{
				"empty":         "",
				"garbage":       "abc",
				"no signature":  strings.Split(good, ".")[0],
				"tampered body": flipChar(good, 3),
				"tampered mac":  flipChar(good, len(good)-2),
				"too long":      strings.Repeat("A", 2000) + "." + strings.Split(good, ".")[1],
				"foreign store": cursorOf(otherKey, foreign[name]),
			}
			for other, otherPath := range routes {
				if other != name {
					bad["from "+other] = cursorOf(f.key, otherPath)
				}
			}
			if name == "ledger" {
				bad["another company's ledger"] = siblingLedger
			}
			for what, cursor := range bad {
				if r := f.get(t, path, "cursor", cursor); r.Status != 400 || r.APIError().Code != "invalid_parameter" || r.APIError().Param != "cursor" {
					t.Errorf("%s cursor: %d %s; want 400 invalid_parameter cursor", what, r.Status, r.Body)
				}
			}
		})
	}

	// A cursor is bound to the filters of the list it came from.
	f.env.Clock.Advance(time.Second)
	onHold := f.env.MustCompany(t, f.store, "Held", "1000")
	held2 := f.env.MustCompany(t, f.store, "Held too", "1000")
	mustStaffHold(t, f.env, f.store, onHold.ID, "x")
	mustStaffHold(t, f.env, f.store, held2.ID, "x")
	filtered := f.get(t, "/v1/companies", "status", "on_hold", "limit", "1").ListPage(t)
	f.get(t, "/v1/companies", "status", "on_hold", "cursor", *filtered.NextCursor).ListPage(t)
	f.get(t, "/v1/companies", "cursor", *filtered.NextCursor).WantError(t, 400, "invalid_parameter", "cursor")
	f.get(t, "/v1/companies", "status", "approved", "cursor", *filtered.NextCursor).WantError(t, 400, "invalid_parameter", "cursor")
	since := f.get(t, "/v1/companies", "updated_since", "2026-03-02T09:00:00Z", "limit", "1").ListPage(t)
	f.get(t, "/v1/companies", "updated_since", "2026-03-02T09:00:00Z", "cursor", *since.NextCursor).ListPage(t)
	f.get(t, "/v1/companies", "updated_since", "2026-03-02T10:00:00+01:00", "cursor", *since.NextCursor).ListPage(t) // the same instant
	f.get(t, "/v1/companies", "updated_since", "2026-03-02T09:00:00.000001Z", "cursor", *since.NextCursor).WantError(t, 400, "invalid_parameter", "cursor")
	apps := f.get(t, "/v1/applications", "status", "submitted", "limit", "1").ListPage(t)
	f.get(t, "/v1/applications", "status", "in_review", "cursor", *apps.NextCursor).WantError(t, 400, "invalid_parameter", "cursor")
}

// flipChar changes the character at i to another base64url character.
func flipChar(s string, i int) string {
	b := []byte(s)
	if b[i] == 'A' {
		b[i] = 'B'
	} else {
		b[i] = 'A'
	}
	return string(b)
}

func TestCompaniesStatusFilter(t *testing.T) {
	t.Parallel()
	f := newReadFixture(t)
	a := f.env.MustCompany(t, f.store, "Approved", "1000")
	h := f.env.MustCompany(t, f.store, "Held", "1000")
	mustStaffHold(t, f.env, f.store, h.ID, "x")

	for _, tc := range []struct {
		status string
		want   []string
	}{
		{"approved", []string{a.ID}},
		{"on_hold", []string{h.ID}},
	} {
		p := f.get(t, "/v1/companies", "status", tc.status).ListPage(t)
		if got := p.IDs(t); !slices.Equal(got, tc.want) {
			t.Errorf("status=%s: %v, want %v", tc.status, got, tc.want)
		}
		var list struct{ Data []credit.Company }
		f.get(t, "/v1/companies", "status", tc.status).Decode(t, &list)
		for _, c := range list.Data {
			if c.Status != tc.status {
				t.Errorf("status=%s listed a company with status %s", tc.status, c.Status)
			}
		}
	}
	if got := f.get(t, "/v1/companies").ListPage(t).IDs(t); len(got) != 2 {
		t.Errorf("no filter: %v, want both", got)
	}
	for _, bad := range []string{"", "closed", "APPROVED", "Approved", "on-hold", "approved,on_hold", "submitted"} {
		f.get(t, "/v1/companies", "status", bad).WantError(t, 400, "invalid_parameter", "status")
	}
	f.env.Get(t, f.key, "/v1/companies?status=approved&status=on_hold").WantError(t, 400, "invalid_parameter", "status")
}

func TestCompaniesUpdatedSince(t *testing.T) {
	t.Parallel()
	f := newReadFixture(t)
	a := f.env.MustCompany(t, f.store, "A", "1000") // 09:00:00
	f.env.Clock.Advance(time.Second)
	b := f.env.MustCompany(t, f.store, "B", "1000") // 09:00:01
	f.env.Clock.Advance(1500 * time.Millisecond)
	c := f.env.MustCompany(t, f.store, "C", "1000") // 09:00:02.5
	f.env.Clock.Advance(time.Microsecond)
	d := f.env.MustCompany(t, f.store, "D", "1000") // 09:00:02.500001

	for _, tc := range []struct {
		since string
		want  []string
	}{
		{"2026-03-02T09:00:00Z", []string{a.ID, b.ID, c.ID, d.ID}},
		{"2026-03-02T08:00:00Z", []string{a.ID, b.ID, c.ID, d.ID}},
		{"2026-03-02T09:00:00.000001Z", []string{b.ID, c.ID, d.ID}},
		{"2026-03-02T09:00:01Z", []string{b.ID, c.ID, d.ID}}, // inclusive
		{"2026-03-02T09:00:01.000000Z", []string{b.ID, c.ID, d.ID}},
		{"2026-03-02T09:00:02.5Z", []string{c.ID, d.ID}},
		{"2026-03-02T09:00:02.500000Z", []string{c.ID, d.ID}},
		{"2026-03-02T09:00:02.500001Z", []string{d.ID}},
		{"2026-03-02T09:00:02.5000011Z", []string{d.ID}}, // read to the microsecond, like every timestamp
		{"2026-03-02T09:00:02.500002Z", []string{}},
		{"2026-03-02T11:00:01+02:00", []string{b.ID, c.ID, d.ID}},
		{"2026-03-02T04:00:02.5-05:00", []string{c.ID, d.ID}},
		{"2026-03-02T09:00:02.5+00:00", []string{c.ID, d.ID}},
		{"2027-01-01T00:00:00Z", []string{}},
	} {
		p := f.get(t, "/v1/companies", "updated_since", tc.since).ListPage(t)
		if got := p.IDs(t); !slices.Equal(got, tc.want) {
			t.Errorf("updated_since=%s: %v, want %v", tc.since, got, tc.want)
		}
	}
	for _, bad := range []string{"", "2026-03-02", "2026-03-02T09:00:00", "2026-03-02 09:00:00Z", "1772442000", "yesterday", "2026-02-30T09:00:00Z", "2026-03-02T09:00:00 02:00"} {
		f.get(t, "/v1/companies", "updated_since", bad).WantError(t, 400, "invalid_parameter", "updated_since")
	}
	// An unencoded + in the query is a space, so the offset is lost: refused, not misread, and
	// the message says how to send it.
	raw := f.env.Get(t, f.key, "/v1/companies?updated_since=2026-03-02T11:00:00+02:00").WantError(t, 400, "invalid_parameter", "updated_since")
	if want := "updated_since has a space where its offset's + should be: a raw + in a URL means a space, so send it as %2B (2026-01-31T10:30:00%2B01:00)"; raw.Message != want {
		t.Errorf("a raw + in updated_since: %q, want %q", raw.Message, want)
	}
	if got := f.get(t, "/v1/companies", "updated_since", "yesterday").WantError(t, 400, "invalid_parameter", "updated_since").Message; !strings.Contains(got, "RFC 3339") || !strings.Contains(got, "send an offset's + as %2B") {
		t.Errorf("a malformed updated_since: %q does not say what to send", got)
	}

	// Filters combine.
	mustStaffHold(t, f.env, f.store, a.ID, "x") // moves A's updated_at to now
	if got := f.get(t, "/v1/companies", "updated_since", "2026-03-02T09:00:02.5Z", "status", "on_hold").ListPage(t).IDs(t); !slices.Equal(got, []string{a.ID}) {
		t.Errorf("on_hold since 09:00:02.5: %v, want [A]", got)
	}
}

func TestCompaniesOrderedByUpdatedAtThenID(t *testing.T) {
	t.Parallel()
	f := newReadFixture(t)
	var same []string
	for i := range 5 {
		same = append(same, f.env.MustCompany(t, f.store, fmt.Sprint("Same ", i), "1000").ID)
	}
	slices.Sort(same)
	f.env.Clock.Advance(time.Minute)
	later := f.env.MustCompany(t, f.store, "Later", "1000")
	if got := f.get(t, "/v1/companies").ListPage(t).IDs(t); !slices.Equal(got, append(slices.Clone(same), later.ID)) {
		t.Fatalf("order %v, want %v then %s", got, same, later.ID)
	}

	// Every change that shows in the response moves updated_at, and so the company to the end.
	steps := []struct {
		name   string
		id     string
		change func(id string)
	}{
		{"ledger entry", same[0], func(id string) {
			f.env.MustRecord(t, credit.LedgerEntryInput{CompanyID: id, Kind: credit.KindOpeningBalance, Amount: "10"})
		}},
		{"hold placed", same[1], func(id string) { mustStaffHold(t, f.env, f.store, id, "x") }},
		{"ledger entry", same[2], func(id string) {
			f.env.MustRecord(t, credit.LedgerEntryInput{CompanyID: id, Kind: credit.KindAdjustment, Amount: "-1", Note: "n"})
		}},
		{"hold lifted", same[1], func(id string) {
			if _, err := f.env.Service.Companies.LiftHold(tenant.Staff(credittest.Admin(), f.store, "Olga"), id); err != nil {
				t.Fatal(err)
			}
		}},
	}
	want := append(slices.Clone(same), later.ID)
	for _, step := range steps {
		f.env.Clock.Advance(time.Second)
		id := step.id
		step.change(id)
		want = append(slices.DeleteFunc(want, func(s string) bool { return s == id }), id)
		var list struct{ Data []credit.Company }
		r := f.get(t, "/v1/companies")
		r.Decode(t, &list)
		if got := r.ListPage(t).IDs(t); !slices.Equal(got, want) {
			t.Fatalf("after %s: order %v, want %v", step.name, got, want)
		}
		if last := list.Data[len(list.Data)-1]; last.UpdatedAt.String() != f.env.Clock.Now().Format(credit.TimestampLayout) {
			t.Errorf("after %s: updated_at %s, want the time of the change %s", step.name, last.UpdatedAt, f.env.Clock.Now())
		}
	}
}

func TestCompaniesPagesStayStableWhileCompaniesChange(t *testing.T) {
	t.Parallel()
	f := newReadFixture(t)
	var initial []string
	for i := range 7 {
		f.env.Clock.Advance(time.Millisecond)
		initial = append(initial, f.env.MustCompany(t, f.store, fmt.Sprint("Initial ", i), "1000").ID)
	}
	var added []string
	pages := f.env.WalkPages(t, f.key, "/v1/companies?limit=2", func(page int) {
		f.env.Clock.Advance(time.Millisecond)
		added = append(added, f.env.MustCompany(t, f.store, fmt.Sprint("Added ", page), "1000").ID)
		if page == 0 {
			f.env.Clock.Advance(time.Millisecond)
			// The first company, already served, changes: a sync must see it again.
			f.env.MustRecord(t, credit.LedgerEntryInput{CompanyID: initial[0], Kind: credit.KindOpeningBalance, Amount: "5"})
		}
	})
	var seen []string
	for _, p := range pages {
		seen = append(seen, p.IDs(t)...)
	}
	// Initial companies in order, each once, except the changed one, which comes back at its
	// new place among the added ones; the added ones all arrive, in order.
	want := slices.Concat(initial, added[:1], []string{initial[0]}, added[1:])
	if !slices.Equal(seen, want) {
		t.Fatalf("walk served %v\nwant %v", seen, want)
	}
}

func TestLedgerNewestFirstInAppendOrder(t *testing.T) {
	t.Parallel()
	f := newReadFixture(t)
	co := f.env.MustCompany(t, f.store, "Buyer", "10000")
	rec := func(kind, amount, order, occurred string) credit.LedgerEntry {
		in := credit.LedgerEntryInput{CompanyID: co.ID, Kind: kind, Amount: amount, OrderGID: order}
		if occurred != "" {
			in.OccurredAt = readTS(occurred)
		}
		f.env.Clock.Advance(time.Second)
		return f.env.MustRecord(t, in)
	}
	e1 := rec(credit.KindOpeningBalance, "100", "", "")
	e2 := rec(credit.KindOrderPlaced, "250.5", "gid://platform/Order/1", "")
	e3 := rec(credit.KindPayment, "-50", "", "2026-01-15T08:00:00Z") // back-dated: still appended last
	e4 := rec(credit.KindRefund, "-0.5", "gid://platform/Order/1", "")

	r := f.get(t, "/v1/companies/"+co.ID+"/ledger")
	if got := r.ListPage(t).IDs(t); !slices.Equal(got, []string{e4.ID, e3.ID, e2.ID, e1.ID}) {
		t.Fatalf("ledger order %v, want newest appended first", got)
	}
	mustJSONEqual(t, r.Body, fmt.Sprintf(`{"data": [
		{"id": %[1]q, "company_id": %[5]q, "kind": "refund", "amount": {"amount": "-0.50", "currency": "EUR"}, "balance_after": {"amount": "300.00", "currency": "EUR"}, "platform_order_gid": "gid://platform/Order/1", "note": null, "occurred_at": "2026-03-02T09:00:04.000000Z"},
		{"id": %[2]q, "company_id": %[5]q, "kind": "payment", "amount": {"amount": "-50.00", "currency": "EUR"}, "balance_after": {"amount": "300.50", "currency": "EUR"}, "platform_order_gid": null, "note": null, "occurred_at": "2026-01-15T08:00:00.000000Z"},
		{"id": %[3]q, "company_id": %[5]q, "kind": "order_placed", "amount": {"amount": "250.50", "currency": "EUR"}, "balance_after": {"amount": "350.50", "currency": "EUR"}, "platform_order_gid": "gid://platform/Order/1", "note": null, "occurred_at": "2026-03-02T09:00:02.000000Z"},
		{"id": %[4]q, "company_id": %[5]q, "kind": "opening_balance", "amount": {"amount": "100.00", "currency": "EUR"}, "balance_after": {"amount": "100.00", "currency": "EUR"}, "platform_order_gid": null, "note": null, "occurred_at": "2026-03-02T09:00:01.000000Z"}
	], "has_more": false, "next_cursor": null}`, e4.ID, e3.ID, e2.ID, e1.ID, co.ID))
	for _, id := range []string{e1.ID, e2.ID, e3.ID, e4.ID} {
		if !strings.HasPrefix(id, "le_") {
			t.Errorf("ledger entry id %q lacks the le_ prefix", id)
		}
	}

	// after= keeps what was appended after an entry, back-dated or not, newest first.
	for _, tc := range []struct {
		after string
		want  []string
	}{
		{e1.ID, []string{e4.ID, e3.ID, e2.ID}},
		{e2.ID, []string{e4.ID, e3.ID}},
		{e3.ID, []string{e4.ID}},
		{e4.ID, []string{}},
	} {
		if got := f.get(t, "/v1/companies/"+co.ID+"/ledger", "after", tc.after).ListPage(t).IDs(t); !slices.Equal(got, tc.want) {
			t.Errorf("after=%s: %v, want %v", tc.after, got, tc.want)
		}
	}
	// after= pages with the cursor like any list.
	p1 := f.get(t, "/v1/companies/"+co.ID+"/ledger", "after", e1.ID, "limit", "2").ListPage(t)
	p2 := f.get(t, "/v1/companies/"+co.ID+"/ledger", "after", e1.ID, "limit", "2", "cursor", *p1.NextCursor).ListPage(t)
	if got := append(p1.IDs(t), p2.IDs(t)...); !slices.Equal(got, []string{e4.ID, e3.ID, e2.ID}) || p2.HasMore {
		t.Errorf("after= paged: %v has_more %v", got, p2.HasMore)
	}
	f.get(t, "/v1/companies/"+co.ID+"/ledger", "after", e2.ID, "cursor", *p1.NextCursor).WantError(t, 400, "invalid_parameter", "cursor")
	f.get(t, "/v1/companies/"+co.ID+"/ledger", "cursor", *p1.NextCursor).WantError(t, 400, "invalid_parameter", "cursor")

	// after= must name an entry of this company's ledger; every other value is the same 400.
	sibling := f.env.MustCompany(t, f.store, "Sibling", "1000")
	siblingEntry := f.env.MustRecord(t, credit.LedgerEntryInput{CompanyID: sibling.ID, Kind: credit.KindOpeningBalance, Amount: "1"})
	other := f.env.MustStore(t, "Other", "EUR")
	otherCo := f.env.MustCompany(t, other, "Theirs", "1000")
	otherEntry := f.env.MustRecord(t, credit.LedgerEntryInput{CompanyID: otherCo.ID, Kind: credit.KindOpeningBalance, Amount: "1"})
	var first []byte
	for _, bad := range []string{siblingEntry.ID, otherEntry.ID, "le_0000000000000000000000", "le_", co.ID, "garbage", "le_../../x"} {
		r := f.get(t, "/v1/companies/"+co.ID+"/ledger", "after", bad)
		r.WantError(t, 400, "invalid_parameter", "after")
		if first == nil {
			first = r.Body
		} else if string(r.Body) != string(first) {
			t.Errorf("after=%s answers %s, unlike another bad entry %s", bad, r.Body, first)
		}
	}
	f.get(t, "/v1/companies/"+co.ID+"/ledger", "after", "").WantError(t, 400, "invalid_parameter", "after")
}

func TestLedgerPagesStayStableWhileEntriesAreAppended(t *testing.T) {
	t.Parallel()
	f := newReadFixture(t)
	co := f.env.MustCompany(t, f.store, "Buyer", "10000")
	var initial []string
	for i := range 9 {
		initial = append(initial, f.env.MustRecord(t, credit.LedgerEntryInput{CompanyID: co.ID, Kind: credit.KindAdjustment, Amount: fmt.Sprint(i + 1), Note: "n"}).ID)
	}
	slices.Reverse(initial) // newest first
	var appended []string
	path := "/v1/companies/" + co.ID + "/ledger?limit=2"
	pages := f.env.WalkPages(t, f.key, path, func(int) {
		// Back-dated entries appended meanwhile are newer in append order: they belong before
		// the walk's start, not in its middle.
		in := credit.LedgerEntryInput{CompanyID: co.ID, Kind: credit.KindPayment, Amount: "-1", OccurredAt: readTS("2025-01-01T00:00:00Z")}
		appended = append(appended, f.env.MustRecord(t, in).ID)
	})
	var seen []string
	for _, p := range pages {
		seen = append(seen, p.IDs(t)...)
	}
	if !slices.Equal(seen, initial) {
		t.Fatalf("walk served %v\nwant exactly %v", seen, initial)
	}
	// The incremental sync from the newest entry seen picks up every appended entry.
	got := f.get(t, "/v1/companies/"+co.ID+"/ledger", "after", initial[0]).ListPage(t).IDs(t)
	slices.Reverse(appended)
	if !slices.Equal(got, appended) {
		t.Fatalf("after=%s: %v, want the %d appended entries %v", initial[0], got, len(appended), appended)
	}
}

func TestApplications(t *testing.T) {
	t.Parallel()
	f := newReadFixture(t)
	older := f.env.MustApplication(t, f.store, credit.ApplicationInput{BusinessName: "Gasthof Zur Linde", VATNumber: "DE123456789", VATStatus: "valid", VATRegistry: "VIES",
		ContactName: "Maria Huber", ContactEmail: "maria.huber@example.com", SubmittedAt: readTS("2026-02-20T10:00:00.25Z")})
	newer := f.env.MustApplication(t, f.store, credit.ApplicationInput{BusinessName: "Weinkontor Rhein", VATNumber: "GB123456789", VATStatus: "unavailable", VATRegistry: "HMRC",
		ContactName: "Jonas Weber", ContactEmail: "jonas.weber@example.com", SubmittedAt: readTS("2026-02-25T10:00:00Z")})
	unverified := f.env.MustApplication(t, f.store, credit.ApplicationInput{BusinessName: "Bäckerei", ContactEmail: "lena@example.com", SubmittedAt: readTS("2026-02-10T00:00:00Z")})
	move := func(id string, statuses ...string) {
		for _, s := range statuses {
			if _, _, err := f.env.Service.Applications.SetStatus(credittest.Staff(f.store), credit.StatusChange{ApplicationID: id, Status: s}); err != nil {
				t.Fatal(err)
			}
		}
	}
	move(newer.ID, credit.AppInReview)
	move(unverified.ID, credit.AppInReview, credit.AppRejected)

	r := f.get(t, "/v1/applications/"+older.ID)
	mustJSONEqual(t, r.WantStatus(t, 200).Body, fmt.Sprintf(`{"id": %q, "status": "submitted", "business_name": "Gasthof Zur Linde",
		"vat": {"number": "DE123456789", "status": "valid", "registry": "VIES", "checked_at": "2026-03-02T09:00:00.000000Z"},
		"contact": {"name": "Maria Huber", "email": "maria.huber@example.com", "redacted": false},
		"submitted_at": "2026-02-20T10:00:00.250000Z"}`, older.ID))
	mustJSONEqual(t, f.get(t, "/v1/applications/"+unverified.ID).WantStatus(t, 200).Body, fmt.Sprintf(`{"id": %q, "status": "rejected", "business_name": "Bäckerei",
		"vat": {"number": "DE123456789", "status": "unverified", "registry": "VIES", "checked_at": null},
		"contact": {"name": "Ada Buyer", "email": "lena@example.com", "redacted": false},
		"submitted_at": "2026-02-10T00:00:00.000000Z"}`, unverified.ID))

	if got := f.get(t, "/v1/applications").ListPage(t).IDs(t); !slices.Equal(got, []string{newer.ID, older.ID, unverified.ID}) {
		t.Errorf("applications %v, want newest submitted_at first", got)
	}
	for _, tc := range []struct {
		status string
		want   []string
	}{
		{"submitted", []string{older.ID}},
		{"in_review", []string{newer.ID}},
		{"needs_info", []string{}},
		{"approved", []string{}},
		{"rejected", []string{unverified.ID}},
	} {
		if got := f.get(t, "/v1/applications", "status", tc.status).ListPage(t).IDs(t); !slices.Equal(got, tc.want) {
			t.Errorf("status=%s: %v, want %v", tc.status, got, tc.want)
		}
	}
	for _, bad := range []string{"", "SUBMITTED", "on_hold", "pending", "approved,rejected"} {
		f.get(t, "/v1/applications", "status", bad).WantError(t, 400, "invalid_parameter", "status")
	}
}

func TestApplicationsPagesStayStableWhileApplicationsArrive(t *testing.T) {
	t.Parallel()
	f := newReadFixture(t)
	var initial []string
	for i := range 7 {
		// Two share a submitted_at: the ID breaks the tie.
		ts := fmt.Sprintf("2026-02-%02dT12:00:00Z", 10+i/2*2)
		initial = append(initial, f.env.MustApplication(t, f.store, credit.ApplicationInput{BusinessName: fmt.Sprint("Initial ", i), SubmittedAt: readTS(ts)}).ID)
	}
	// Expected order: submitted_at descending, then ID descending.
	want := f.get(t, "/v1/applications", "limit", "250").ListPage(t).IDs(t)
	if len(want) != len(initial) {
		t.Fatalf("got %d applications, want %d", len(want), len(initial))
	}
	var backdated []string
	pages := f.env.WalkPages(t, f.key, "/v1/applications?limit=2", func(page int) {
		if page >= 3 {
			return
		}
		// New applications arrive; one is back-dated before everything and belongs at the end.
		f.env.MustApplication(t, f.store, credit.ApplicationInput{BusinessName: "New"})
		backdated = append(backdated, f.env.MustApplication(t, f.store, credit.ApplicationInput{BusinessName: "Old",
			SubmittedAt: readTS(fmt.Sprintf("2026-01-%02dT00:00:00Z", 20-page))}).ID)
	})
	var seen []string
	for _, p := range pages {
		seen = append(seen, p.IDs(t)...)
	}
	if got := seen[:len(want)]; !slices.Equal(got, want) {
		t.Fatalf("walk served %v\nwant %v first", got, want)
	}
	if got := seen[len(want):]; !slices.Equal(got, backdated) {
		t.Fatalf("walk ended with %v, want the back-dated arrivals %v", got, backdated)
	}
}

func TestUnknownQueryParametersAreRefused(t *testing.T) {
	t.Parallel()
	f := newReadFixture(t)
	co := f.env.MustCompany(t, f.store, "Buyer", "1000")
	app := f.env.MustApplication(t, f.store, credit.ApplicationInput{BusinessName: "Applicant"})
	for _, tc := range []struct{ path, param string }{
		{"/v1/companies?stauts=on_hold", "stauts"},
		{"/v1/companies?updatedSince=2026-01-01T00:00:00Z", "updatedSince"},
		{"/v1/companies?after=x", "after"},
		{"/v1/companies?page=2", "page"},
		{"/v1/companies?Limit=2", "Limit"},
		{"/v1/companies/" + co.ID + "?expand=ledger", "expand"},
		{"/v1/companies/" + co.ID + "/ledger?status=approved", "status"},
		{"/v1/companies/" + co.ID + "/ledger?since=x", "since"},
		{"/v1/applications?updated_since=2026-01-01T00:00:00Z", "updated_since"},
		{"/v1/applications/" + app.ID + "?fields=contact", "fields"},
	} {
		f.env.Get(t, f.key, tc.path).WantError(t, 400, "invalid_parameter", tc.param)
	}
}

// TestMalformedQueryStringsAreRefused: a query string that does not parse must not lose its
// filter silently and answer with everything.
func TestMalformedQueryStringsAreRefused(t *testing.T) {
	t.Parallel()
	f := newReadFixture(t)
	co := f.env.MustCompany(t, f.store, "Approved", "1000")
	app := f.env.MustApplication(t, f.store, credit.ApplicationInput{BusinessName: "Applicant"})
	for _, path := range []string{
		"/v1/companies?status=on_hold;limit=1",
		"/v1/companies?status=%zz",
		"/v1/companies?status=on_hold&%zz",
		"/v1/companies?updated_since=2027-01-01T00:00:00Z;",
		"/v1/companies/" + co.ID + "?%",
		"/v1/companies/" + co.ID + "/ledger?limit=1;after=x",
		"/v1/applications?status=rejected;",
		"/v1/applications/" + app.ID + "?a=%G0",
	} {
		f.env.Get(t, f.key, path).WantError(t, 400, "invalid_parameter", "")
	}
	// Percent-encoded values are read as such.
	if got := f.env.Get(t, f.key, "/v1/companies?status=%61pproved").ListPage(t).IDs(t); !slices.Equal(got, []string{co.ID}) {
		t.Errorf("status=%%61pproved: %v", got)
	}
}

func TestResponsesAreJSON(t *testing.T) {
	t.Parallel()
	f := newReadFixture(t)
	co := f.env.MustCompany(t, f.store, "Buyer", "1000")
	for _, path := range []string{"/v1/companies", "/v1/companies/" + co.ID, "/v1/companies/" + co.ID + "/ledger", "/v1/applications"} {
		r := f.get(t, path)
		if ct := r.Header.Get("Content-Type"); r.Status != http.StatusOK || ct != "application/json; charset=utf-8" {
			t.Errorf("%s: %d %q", path, r.Status, ct)
		}
	}
}
