package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
	"github.com/creditd/creditd/database"
	"github.com/creditd/creditd/tenant"
)

// cliStart is the clock of the command-line tests.
var cliStart = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

// cliRun is what one run of creditd left behind.
type cliRun struct {
	args           []string
	code           int
	stdout, stderr string
}

// runCreditd runs one creditd command line in-process, as main does, at cliStart.
func runCreditd(tb testing.TB, args ...string) cliRun {
	tb.Helper()
	return runCreditdAt(tb, cliStart, args...)
}

// runCreditdAt runs one creditd command line in-process at the time now.
func runCreditdAt(tb testing.TB, now time.Time, args ...string) cliRun {
	tb.Helper()
	var out, errOut bytes.Buffer
	m := NewMain(strings.NewReader(""), &out, &errOut)
	m.Now = func() time.Time { return now }
	code := m.Run(context.Background(), args)
	if err := m.Close(); err != nil {
		tb.Fatalf("close: %v", err)
	}
	return cliRun{args: args, code: code, stdout: out.String(), stderr: errOut.String()}
}

// mustSucceed fails unless the run exited 0 with nothing on stderr.
func (r cliRun) mustSucceed(tb testing.TB) cliRun {
	tb.Helper()
	if r.code != 0 || r.stderr != "" {
		tb.Fatalf("creditd %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(r.args, " "), r.code, r.stdout, r.stderr)
	}
	return r
}

// object decodes stdout as exactly one JSON object on one line.
func (r cliRun) object(tb testing.TB) map[string]any {
	tb.Helper()
	if strings.Count(r.stdout, "\n") != 1 || !strings.HasSuffix(r.stdout, "\n") {
		tb.Fatalf("creditd %s: --json must print one line, printed %q", strings.Join(r.args, " "), r.stdout)
	}
	var v map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &v); err != nil {
		tb.Fatalf("creditd %s: stdout is not a JSON object: %v\n%s", strings.Join(r.args, " "), err, r.stdout)
	}
	return v
}

// mustKeys fails unless obj has exactly these members.
func mustKeys(tb testing.TB, what string, obj map[string]any, keys ...string) {
	tb.Helper()
	var got []string
	for k := range obj {
		got = append(got, k)
	}
	sort.Strings(got)
	sort.Strings(keys)
	if !slices.Equal(got, keys) {
		tb.Errorf("%s has members %v, want %v", what, got, keys)
	}
}

// cliDB is a database file for command-line tests with a store created through creditd.
type cliDB struct {
	path  string
	store string
}

func newCLIDB(t *testing.T) *cliDB {
	t.Helper()
	d := &cliDB{path: filepath.Join(t.TempDir(), "creditd.db")}
	d.store = d.json(t, "store", "create", "--name", "Acme", "--currency", "EUR")["id"].(string)
	return d
}

// run runs a command against the database.
func (d *cliDB) run(t *testing.T, args ...string) cliRun {
	t.Helper()
	return runCreditd(t, append(args, "--db", d.path)...)
}

// json runs a command with --json and returns its object.
func (d *cliDB) json(t *testing.T, args ...string) map[string]any {
	t.Helper()
	return d.run(t, append(args, "--json")...).mustSucceed(t).object(t)
}

// service opens the database for setting up and inspecting data the domain way.
func (d *cliDB) service(t *testing.T) *credit.Service {
	t.Helper()
	db, err := database.Open(context.Background(), d.path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return credit.New(db, credit.Options{Now: func() time.Time { return cliStart }})
}

// dump returns every row of every table, to tell that a refused command wrote nothing.
func (d *cliDB) dump(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	db, err := database.Open(ctx, d.path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.SQL.QueryContext(ctx, "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, name)
	}
	rows.Close()
	var b strings.Builder
	for _, table := range tables {
		rows, err := db.SQL.QueryContext(ctx, fmt.Sprintf("SELECT * FROM %q", table))
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		fmt.Fprintf(&b, "%s %v\n", table, cols)
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			for i, v := range vals {
				if raw, ok := v.([]byte); ok {
					vals[i] = string(raw)
				}
			}
			fmt.Fprintf(&b, "  %v\n", vals)
		}
		rows.Close()
	}
	return b.String()
}

func TestCLIPrintsOneJSONObjectPerCommand(t *testing.T) {
	t.Parallel()
	d := &cliDB{path: filepath.Join(t.TempDir(), "creditd.db")}

	if got := d.json(t, "migrate"); got["status"] != "up to date" || got["version"] == "" || len(got) != 2 {
		t.Errorf("migrate --json: %v", got)
	}

	st := d.json(t, "store", "create", "--name", "Acme Wholesale", "--currency", "KWD", "--buffer-percent", "10")
	mustKeys(t, "store create", st, "id", "name", "currency", "buffer_percent", "locale", "created_at")
	if id, _ := st["id"].(string); !strings.HasPrefix(id, "st_") || st["name"] != "Acme Wholesale" || st["currency"] != "KWD" || st["buffer_percent"] != float64(10) || st["created_at"] != "2026-03-02T09:00:00.000000Z" {
		t.Errorf("store create: %v", st)
	}
	d.store = st["id"].(string)
	if got := d.json(t, "store", "create", "--name", "Default buffer", "--currency", "EUR"); got["buffer_percent"] != float64(credit.DefaultBufferPercent) {
		t.Errorf("store create without --buffer-percent: %v", got)
	}

	key := d.json(t, "key", "create", "--store", d.store, "--label", "ERP", "--scopes", "read_credit, write_credit,read_credit")
	mustKeys(t, "key create", key, "id", "secret")
	keyID, secret := key["id"].(string), key["secret"].(string)
	if !strings.HasPrefix(keyID, "key_") || !strings.HasPrefix(secret, "ck_") {
		t.Errorf("key create: %v", key)
	}
	rotated := d.json(t, "key", "rotate", keyID)
	mustKeys(t, "key rotate", rotated, "id", "secret")
	if rotated["id"] != keyID || rotated["secret"] == secret || !strings.HasPrefix(rotated["secret"].(string), "ck_") {
		t.Errorf("key rotate: %v", rotated)
	}
	list := d.json(t, "key", "list", "--store", d.store)
	mustKeys(t, "key list", list, "data")
	keys, _ := list["data"].([]any)
	if len(keys) != 1 {
		t.Fatalf("key list: %v", list)
	}
	k := keys[0].(map[string]any)
	for _, member := range []string{"id", "label", "scopes", "created_at", "last_used_at", "cleanup_suggested", "revoked_at"} {
		if _, ok := k[member]; !ok {
			t.Errorf("key list entry lacks %s: %v", member, k)
		}
	}
	if _, ok := k["secret"]; ok {
		t.Errorf("key list shows a secret: %v", k)
	}
	if k["id"] != keyID || k["label"] != "ERP" || fmt.Sprint(k["scopes"]) != "[read_credit write_credit]" || k["last_used_at"] != nil || k["cleanup_suggested"] != false || k["revoked_at"] != nil {
		t.Errorf("key list entry: %v", k)
	}
	if got := d.json(t, "key", "revoke", keyID); got["id"] != keyID || got["revoked"] != true || len(got) != 2 {
		t.Errorf("key revoke: %v", got)
	}

	co := d.json(t, "company", "create", "--store", d.store, "--name", "Buyer", "--platform-company-gid", "gid://platform/Company/9",
		"--payment-terms", "NET_14", "--credit-limit", "100.5")
	mustKeys(t, "company create", co, "id", "name", "platform_company_gid", "status", "payment_terms", "credit_limit", "outstanding", "available_credit", "hold", "updated_at")
	if id, _ := co["id"].(string); !strings.HasPrefix(id, "co_") || co["payment_terms"] != "NET_14" || co["status"] != "approved" || co["hold"] != nil ||
		fmt.Sprint(co["credit_limit"]) != "map[amount:100.500 currency:KWD]" || fmt.Sprint(co["available_credit"]) != "map[amount:90.450 currency:KWD]" {
		t.Errorf("company create: %v", co)
	}
	coID := co["id"].(string)

	rec := d.json(t, "ledger", "record", "--company", coID, "--kind", "order_placed", "--amount", "40.125",
		"--order", "gid://platform/Order/7", "--note", "first order", "--occurred-at", "2026-03-01T10:00:00+01:00")
	mustKeys(t, "ledger record", rec, "ledger_entry", "company")
	entry := rec["ledger_entry"].(map[string]any)
	mustKeys(t, "ledger record's entry", entry, "id", "company_id", "kind", "amount", "balance_after", "platform_order_gid", "note", "occurred_at")
	if id, _ := entry["id"].(string); !strings.HasPrefix(id, "le_") || entry["company_id"] != coID || entry["kind"] != "order_placed" || fmt.Sprint(entry["amount"]) != "map[amount:40.125 currency:KWD]" ||
		entry["platform_order_gid"] != "gid://platform/Order/7" || entry["note"] != "first order" || entry["occurred_at"] != "2026-03-01T09:00:00.000000Z" {
		t.Errorf("ledger record entry: %v", entry)
	}
	if c := rec["company"].(map[string]any); fmt.Sprint(c["outstanding"]) != "map[amount:40.125 currency:KWD]" || c["id"] != coID {
		t.Errorf("ledger record company: %v", c)
	}

	app := d.json(t, "application", "create", "--store", d.store, "--business-name", "Gasthof", "--vat-number", "DE123456789",
		"--vat-status", "valid", "--vat-registry", "VIES", "--contact-name", "Maria Huber", "--contact-email", "maria@example.com",
		"--submitted-at", "2026-02-28T12:00:00Z")
	mustKeys(t, "application create", app, "id", "status", "business_name", "vat", "contact", "submitted_at")
	if id, _ := app["id"].(string); !strings.HasPrefix(id, "app_") || app["status"] != "submitted" || app["submitted_at"] != "2026-02-28T12:00:00.000000Z" ||
		fmt.Sprint(app["contact"]) != "map[email:maria@example.com name:Maria Huber redacted:false]" ||
		fmt.Sprint(app["vat"]) != "map[checked_at:2026-03-02T09:00:00.000000Z number:DE123456789 registry:VIES status:valid]" {
		t.Errorf("application create: %v", app)
	}
	appID := app["id"].(string)
	if got := d.json(t, "application", "create", "--store", d.store, "--business-name", "B", "--vat-number", "X1", "--contact-name", "N", "--contact-email", "n@example.com"); fmt.Sprint(got["vat"]) != "map[checked_at:<nil> number:X1 registry:VIES status:unverified]" || got["submitted_at"] != "2026-03-02T09:00:00.000000Z" {
		t.Errorf("application create defaults: %v", got)
	}

	moved := d.json(t, "application", "set-status", appID, "--status", "in_review")
	mustKeys(t, "application set-status", moved, "application")
	if a := moved["application"].(map[string]any); a["status"] != "in_review" || a["id"] != appID {
		t.Errorf("set-status: %v", moved)
	}
	approved := d.json(t, "application", "set-status", appID, "--status", "approved", "--credit-limit", "2000", "--payment-terms", "NET_30")
	mustKeys(t, "application set-status approved", approved, "application", "company")
	if c := approved["company"].(map[string]any); c["name"] != "Gasthof" || fmt.Sprint(c["credit_limit"]) != "map[amount:2000.000 currency:KWD]" || c["payment_terms"] != "NET_30" || c["platform_company_gid"] != nil {
		t.Errorf("approval's company: %v", c)
	}

	erased := d.json(t, "person", "erase", "--store", d.store, "--email", "maria@example.com")
	if erased["applications_redacted"] != float64(1) || len(erased) != 1 {
		t.Errorf("person erase: %v", erased)
	}
	if got := d.json(t, "person", "erase", "--store", d.store, "--email", "maria@example.com"); got["applications_redacted"] != float64(0) {
		t.Errorf("person erase again: %v", got)
	}
}

func TestCLIPrintsPlainTextWithoutJSON(t *testing.T) {
	t.Parallel()
	d := newCLIDB(t)
	r := d.run(t, "store", "create", "--name", "Second", "--currency", "EUR").mustSucceed(t)
	if !strings.HasPrefix(r.stdout, "st_") || strings.Count(r.stdout, "\n") != 1 {
		t.Errorf("store create prints the ID alone: %q", r.stdout)
	}
	r = d.run(t, "key", "create", "--store", d.store, "--label", "ERP", "--scopes", "read_credit").mustSucceed(t)
	if lines := strings.Split(strings.TrimSpace(r.stdout), "\n"); len(lines) != 3 || !strings.HasPrefix(lines[0], "key_") || !strings.HasPrefix(lines[1], "ck_") || !strings.Contains(lines[2], "not shown again") {
		t.Errorf("key create: %q", r.stdout)
	}
	r = d.run(t, "key", "list", "--store", d.store).mustSucceed(t)
	if lines := strings.Split(strings.TrimSpace(r.stdout), "\n"); len(lines) != 2 || !strings.Contains(lines[1], "ERP") || !strings.Contains(lines[1], "never") || strings.Contains(r.stdout, "ck_") {
		t.Errorf("key list: %q", r.stdout)
	}
}

func TestCLIFlagsBeforeAndAfterArguments(t *testing.T) {
	t.Parallel()
	d := newCLIDB(t)
	key := d.json(t, "key", "create", "--store", d.store, "--label", "ERP", "--scopes", "read_credit")["id"].(string)
	for _, args := range [][]string{
		{"key", "rotate", key, "--grace", "1h", "--json", "--db", d.path},
		{"key", "rotate", "--grace", "1h", "--json", "--db", d.path, key},
		{"key", "rotate", "--json", key, "--grace=1h", "--db=" + d.path},
		{"--json", "key", "rotate", key, "--db", d.path}, // flags before the command are refused, not misread
	} {
		r := runCreditd(t, args...)
		if args[0] == "--json" {
			if r.code != 2 || strings.Count(r.stderr, "\n") != 1 {
				t.Errorf("creditd %v: exit %d, stderr %q; want exit 2 and one line", args, r.code, r.stderr)
			}
			continue
		}
		if got := r.mustSucceed(t).object(t); got["id"] != key {
			t.Errorf("creditd %v printed %v", args, got)
		}
	}
	app := d.json(t, "application", "create", "--store", d.store, "--business-name", "B", "--vat-number", "X", "--contact-name", "N", "--contact-email", "n@example.com")["id"].(string)
	if got := d.json(t, "application", "set-status", "--status", "in_review", app)["application"].(map[string]any)["status"]; got != "in_review" {
		t.Errorf("set-status with the flag first: %v", got)
	}
	if got := d.json(t, "application", "set-status", app, "--status", "needs_info")["application"].(map[string]any)["status"]; got != "needs_info" {
		t.Errorf("set-status with the flag last: %v", got)
	}
}

func TestCLIDatabaseFromEnvironment(t *testing.T) {
	// Not parallel: it sets CREDITD_DB for the process.
	path := filepath.Join(t.TempDir(), "from-env.db")
	t.Setenv("CREDITD_DB", path)
	st := runCreditd(t, "store", "create", "--name", "Env", "--currency", "EUR", "--json").mustSucceed(t).object(t)["id"].(string)
	d := &cliDB{path: path}
	if got := d.json(t, "key", "create", "--store", st, "--label", "L", "--scopes", "read_credit"); got["id"] == nil {
		t.Errorf("the store created through CREDITD_DB is not in %s", path)
	}
	// --db wins over the environment.
	other := filepath.Join(t.TempDir(), "flag.db")
	runCreditd(t, "migrate", "--db", other).mustSucceed(t)
	if r := runCreditd(t, "key", "create", "--store", st, "--label", "L", "--scopes", "read_credit", "--db", other); r.code != 2 || !strings.Contains(r.stderr, "no such store") {
		t.Errorf("--db did not override CREDITD_DB: exit %d %q", r.code, r.stderr)
	}
}

func TestCLIRefusesBadInputWritingNothing(t *testing.T) {
	t.Parallel()
	d := newCLIDB(t)
	svc := d.service(t)
	ctx := tenant.Staff(context.Background(), d.store, "test staff")
	key, err := svc.Keys.Create(ctx, "revoked", []string{credit.ScopeReadCredit})
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Keys.Revoke(ctx, key.ID); err != nil {
		t.Fatal(err)
	}
	live, err := svc.Keys.Create(ctx, "live", []string{credit.ScopeReadCredit})
	if err != nil {
		t.Fatal(err)
	}
	co, err := svc.Companies.Create(ctx, credit.CompanyInput{Name: "Buyer", PlatformCompanyGID: "gid://platform/Company/1", PaymentTerms: "NET_30", CreditLimit: "100"})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := svc.Ledger.Record(ctx, credit.LedgerEntryInput{CompanyID: co.ID, Kind: credit.KindOrderPlaced, Amount: "10", OrderGID: "gid://platform/Order/1"}); err != nil {
		t.Fatal(err)
	}
	app, err := svc.Applications.Create(ctx, credit.ApplicationInput{BusinessName: "B", VATNumber: "X", ContactName: "N", ContactEmail: "n@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	inReview, err := svc.Applications.Create(ctx, credit.ApplicationInput{BusinessName: "C", VATNumber: "X", ContactName: "N", ContactEmail: "n@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := svc.Applications.SetStatus(ctx, credit.StatusChange{ApplicationID: inReview.ID, Status: credit.AppInReview}); err != nil {
		t.Fatal(err)
	}

	long := strings.Repeat("x", 501)
	company := func(extra ...string) []string {
		args := map[string]string{"--store": d.store, "--name": "New", "--platform-company-gid": "gid://platform/Company/2", "--payment-terms": "NET_30", "--credit-limit": "100"}
		for i := 0; i+1 < len(extra); i += 2 {
			args[extra[i]] = extra[i+1]
		}
		out := []string{"company", "create"}
		for k, v := range args {
			if v != "<omit>" {
				out = append(out, k, v)
			}
		}
		return out
	}
	entry := func(extra ...string) []string {
		return append([]string{"ledger", "record", "--company", co.ID}, extra...)
	}
	application := func(extra ...string) []string {
		args := map[string]string{"--store": d.store, "--business-name": "New", "--vat-number": "DE1", "--contact-name": "Ann", "--contact-email": "ann@example.com"}
		for i := 0; i+1 < len(extra); i += 2 {
			args[extra[i]] = extra[i+1]
		}
		out := []string{"application", "create"}
		for k, v := range args {
			if v != "<omit>" {
				out = append(out, k, v)
			}
		}
		return out
	}

	before := d.dump(t)
	for _, tc := range []struct {
		name string
		args []string
		says string // a word the one-line message must contain
	}{
		{"no command", nil, "help"},
		{"unknown command", []string{"frobnicate"}, `unknown command "frobnicate";`},
		{"flag before the command", []string{"--json", "store", "create", "--name", "A", "--currency", "EUR"}, "after the command name"},
		{"unknown subcommand", []string{"store", "delete"}, `unknown command "store delete"`},
		{"unknown flag", []string{"store", "create", "--name", "A", "--currency", "EUR", "--colour", "red"}, "colour"},
		{"migrate with an argument", []string{"migrate", "now"}, "argument"},

		{"store without name", []string{"store", "create", "--currency", "EUR"}, "--name"},
		{"store without currency", []string{"store", "create", "--name", "A"}, "--currency"},
		{"store with unknown currency", []string{"store", "create", "--name", "A", "--currency", "XYZ"}, "currency"},
		{"store with lower-case currency", []string{"store", "create", "--name", "A", "--currency", "eur"}, "currency"},
		{"store buffer above 50", []string{"store", "create", "--name", "A", "--currency", "EUR", "--buffer-percent", "51"}, "buffer"},
		{"store buffer below 0", []string{"store", "create", "--name", "A", "--currency", "EUR", "--buffer-percent", "-1"}, "buffer"},
		{"store buffer not a number", []string{"store", "create", "--name", "A", "--currency", "EUR", "--buffer-percent", "five"}, "buffer-percent"},
		{"store with an argument", []string{"store", "create", "extra", "--name", "A", "--currency", "EUR"}, "argument"},

		{"key for unknown store", []string{"key", "create", "--store", "st_0000000000000000000000", "--label", "L", "--scopes", "read_credit"}, "store"},
		{"key with unknown scope", []string{"key", "create", "--store", d.store, "--label", "L", "--scopes", "read_credit,read_everything"}, "scope"},
		{"key with no scope", []string{"key", "create", "--store", d.store, "--label", "L", "--scopes", " , "}, "scope"},
		{"key without label", []string{"key", "create", "--store", d.store, "--scopes", "read_credit"}, "--label"},
		{"key with long label", []string{"key", "create", "--store", d.store, "--label", strings.Repeat("l", 101), "--scopes", "read_credit"}, "label"},
		{"rotate unknown key", []string{"key", "rotate", "key_0000000000000000000000"}, "key"},
		{"rotate revoked key", []string{"key", "rotate", key.ID}, "revoked"},
		{"rotate without key", []string{"key", "rotate"}, "KEY"},
		{"rotate two keys", []string{"key", "rotate", live.ID, key.ID}, "KEY"},
		{"rotate with negative grace", []string{"key", "rotate", live.ID, "--grace", "-1h"}, "grace"},
		{"rotate with bad grace", []string{"key", "rotate", live.ID, "--grace", "a day"}, "grace"},
		{"revoke revoked key", []string{"key", "revoke", key.ID}, "revoked"},
		{"revoke unknown key", []string{"key", "revoke", "nonsense"}, "key"},
		{"revoke a secret", []string{"key", "revoke", "ck_Xq4bT0f1Yc2Vd3We4Rf5Tg6Yh7Uj8Ik9Ol0Pabcdef"}, "takes the key's ID (key_...), not its secret (ck_...): run creditd key list"},
		{"rotate a secret", []string{"key", "rotate", "ck_Xq4bT0f1Yc2Vd3We4Rf5Tg6Yh7Uj8Ik9Ol0Pabcdef"}, "run creditd key list"},
		{"list without store", []string{"key", "list"}, "--store"},
		{"list unknown store", []string{"key", "list", "--store", "st_0000000000000000000000"}, "store"},

		{"company without limit", company("--credit-limit", "<omit>"), "--credit-limit"},
		{"company with negative limit", company("--credit-limit", "-1"), "zero or greater"},
		{"company with a word for a limit", company("--credit-limit", "lots"), "amount"},
		{"company with too many decimals", company("--credit-limit", "1.001"), "decimal places"},
		{"company with NET_0", company("--payment-terms", "NET_0"), "payment_terms"},
		{"company with NET_366", company("--payment-terms", "NET_366"), "payment_terms"},
		{"company with bare days", company("--payment-terms", "30"), "payment_terms"},
		{"company with a bad GID", company("--platform-company-gid", "gid://platform/Order/1"), "gid"},
		{"company with a blank name", company("--name", "   "), "--name"},
		{"company in unknown store", company("--store", "st_0000000000000000000000"), "store"},

		{"entry of unknown kind", entry("--kind", "gift", "--amount", "1"), "kind"},
		{"payment above zero", entry("--kind", "payment", "--amount", "5"), "below zero"},
		{"order below zero", entry("--kind", "order_placed", "--amount", "-5", "--order", "gid://platform/Order/2"), "greater than zero"},
		{"order without GID", entry("--kind", "order_placed", "--amount", "5"), "order"},
		{"order placed twice", entry("--kind", "order_placed", "--amount", "5", "--order", "gid://platform/Order/1"), "already"},
		{"refund of unknown order", entry("--kind", "refund", "--amount", "-5", "--order", "gid://platform/Order/99"), "order"},
		{"adjustment of zero", entry("--kind", "adjustment", "--amount", "0.00"), "zero"},
		{"adjustment with an order", entry("--kind", "adjustment", "--amount", "1", "--order", "gid://platform/Order/1"), "order"},
		{"entry with bad time", entry("--kind", "adjustment", "--amount", "1", "--occurred-at", "yesterday"), "occurred-at"},
		{"entry with long note", entry("--kind", "adjustment", "--amount", "1", "--note", long), "note"},
		{"entry with too many decimals", entry("--kind", "adjustment", "--amount", "1.001"), "decimal places"},
		{"entry of unknown company", []string{"ledger", "record", "--company", "co_0000000000000000000000", "--kind", "adjustment", "--amount", "1"}, "company"},

		{"application with bad email", application("--contact-email", "not an email"), "email"},
		{"application with named email", application("--contact-email", "Ann <ann@example.com>"), "email"},
		{"application without contact", application("--contact-name", "<omit>"), "--contact-name"},
		{"application with bad VAT status", application("--vat-status", "maybe"), "VAT status"},
		{"application with bad time", application("--submitted-at", "2026-02-30T00:00:00Z"), "submitted-at"},
		{"application in unknown store", application("--store", "st_0000000000000000000000"), "store"},

		{"status of unknown application", []string{"application", "set-status", "app_0000000000000000000000", "--status", "in_review"}, "application"},
		{"unknown status", []string{"application", "set-status", app.ID, "--status", "pending"}, "status"},
		{"skipping review", []string{"application", "set-status", app.ID, "--status", "approved", "--credit-limit", "10", "--payment-terms", "NET_30"}, "cannot go from submitted to approved: from submitted it can go to in_review"},
		{"approval without terms", []string{"application", "set-status", inReview.ID, "--status", "approved", "--credit-limit", "10"}, "payment terms"},
		{"approval with bad limit", []string{"application", "set-status", inReview.ID, "--status", "approved", "--credit-limit", "-10", "--payment-terms", "NET_30"}, "zero or greater"},
		{"terms without approval", []string{"application", "set-status", inReview.ID, "--status", "rejected", "--credit-limit", "10"}, "only when approving"},
		{"status without application", []string{"application", "set-status", "--status", "in_review"}, "APP"},

		{"serve keeping events under 30 days", []string{"serve", "--addr", "127.0.0.1:0", "--event-retention", "719h"}, "--event-retention must be at least 720h"},
		{"serve with an unreadable retention", []string{"serve", "--addr", "127.0.0.1:0", "--event-retention", "30d"}, "event-retention"},
		{"erase without email", []string{"person", "erase", "--store", d.store}, "--email"},
		{"erase in unknown store", []string{"person", "erase", "--store", "st_0000000000000000000000", "--email", "n@example.com"}, "store"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, asJSON := range []bool{false, true} {
				args := append(slices.Clone(tc.args), "--db", d.path)
				if tc.args == nil {
					args = nil
				}
				if asJSON && tc.args != nil {
					args = append(args, "--json")
				}
				r := runCreditd(t, args...)
				if r.code != 2 {
					t.Fatalf("creditd %v: exit %d, want 2\nstdout: %s\nstderr: %s", args, r.code, r.stdout, r.stderr)
				}
				if r.stdout != "" {
					t.Errorf("creditd %v printed to stdout: %q", args, r.stdout)
				}
				if strings.Count(r.stderr, "\n") != 1 || !strings.HasSuffix(r.stderr, "\n") || !strings.HasPrefix(r.stderr, "creditd") {
					t.Errorf("creditd %v: stderr must be one line starting with creditd, got %q", args, r.stderr)
				}
				if !strings.Contains(r.stderr, tc.says) {
					t.Errorf("creditd %v: %q does not mention %q", args, r.stderr, tc.says)
				}
				if tc.args == nil {
					break
				}
			}
		})
	}
	if after := d.dump(t); after != before {
		t.Errorf("refused commands changed the database:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}

func TestCLIHelp(t *testing.T) {
	t.Parallel()
	r := runCreditd(t, "help")
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("help: exit %d %q", r.code, r.stderr)
	}
	for _, cmd := range []string{"serve", "migrate", "store create", "store list", "key create", "key rotate", "key revoke", "key list", "company create", "ledger record", "application create", "application set-status", "person erase", "version"} {
		if !strings.Contains(r.stdout, "  "+cmd+" ") {
			t.Errorf("help does not list %q:\n%s", cmd, r.stdout)
		}
	}
	// Every command's help spells its flags as the README does: --credit-limit, not the flag
	// package's -credit-limit.
	singleDash := regexp.MustCompile(`(?m)^\s*-[a-z]`)
	for name := range commands() {
		r := runCreditd(t, append(strings.Fields(name), "-h")...)
		if r.code != 0 || r.stderr != "" || singleDash.MatchString(r.stdout) || !strings.Contains(r.stdout, "  --db string") || !strings.Contains(r.stdout, "  --json\n") {
			t.Errorf("%s -h: exit %d, stderr %q; want help with --flags:\n%s", name, r.code, r.stderr, r.stdout)
		}
	}
	r = runCreditd(t, "company", "create", "-h")
	if !strings.Contains(r.stdout, "  --credit-limit string\n") {
		t.Errorf("company create -h does not list --credit-limit:\n%s", r.stdout)
	}
	// The usage line names the positional argument a command takes.
	for name, want := range map[string]string{"application set-status": "usage: creditd application set-status APP [flags]", "key revoke": "usage: creditd key revoke KEY [flags]", "hold lift": "usage: creditd hold lift CO [flags]"} {
		if r := runCreditd(t, append(strings.Fields(name), "-h")...); !strings.Contains(r.stdout, want) {
			t.Errorf("%s -h does not say %q:\n%s", name, want, r.stdout)
		}
	}
	r = runCreditd(t, "serve", "--help")
	if !strings.Contains(r.stdout, "  --addr string\n") || !strings.Contains(r.stdout, `(default ":8080")`) || !strings.Contains(r.stdout, "  --rate-limit int\n") {
		t.Errorf("serve --help does not list --addr with its default and --rate-limit:\n%s", r.stdout)
	}
}

// TestApplicationTransitions tries every status change from every status through the command
// line: only the contract's submitted → in_review → needs_info ↔ in_review → approved |
// rejected are allowed.
func TestApplicationTransitions(t *testing.T) {
	t.Parallel()
	d := newCLIDB(t)
	svc := d.service(t)
	ctx := tenant.Staff(context.Background(), d.store, "test staff")
	paths := map[string][]string{
		credit.AppSubmitted: nil,
		credit.AppInReview:  {credit.AppInReview},
		credit.AppNeedsInfo: {credit.AppInReview, credit.AppNeedsInfo},
		credit.AppApproved:  {credit.AppInReview, credit.AppApproved},
		credit.AppRejected:  {credit.AppInReview, credit.AppRejected},
	}
	allowed := map[[2]string]bool{
		{credit.AppSubmitted, credit.AppInReview}: true,
		{credit.AppInReview, credit.AppNeedsInfo}: true,
		{credit.AppInReview, credit.AppApproved}:  true,
		{credit.AppInReview, credit.AppRejected}:  true,
		{credit.AppNeedsInfo, credit.AppInReview}: true,
	}
	statuses := []string{credit.AppSubmitted, credit.AppInReview, credit.AppNeedsInfo, credit.AppApproved, credit.AppRejected}
	for _, from := range statuses {
		for _, to := range statuses {
			a, err := svc.Applications.Create(ctx, credit.ApplicationInput{BusinessName: from + " to " + to, VATNumber: "X", ContactName: "N", ContactEmail: "n@example.com"})
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range paths[from] {
				in := credit.StatusChange{ApplicationID: a.ID, Status: s}
				if s == credit.AppApproved {
					in.CreditLimit, in.PaymentTerms = "10", "NET_30"
				}
				if _, _, err := svc.Applications.SetStatus(ctx, in); err != nil {
					t.Fatal(err)
				}
			}
			args := []string{"application", "set-status", a.ID, "--status", to}
			if to == credit.AppApproved {
				args = append(args, "--credit-limit", "10", "--payment-terms", "NET_30")
			}
			r := d.run(t, append(args, "--json")...)
			after, err := svc.Applications.Get(ctx, a.ID)
			if err != nil {
				t.Fatal(err)
			}
			if allowed[[2]string{from, to}] {
				got := r.mustSucceed(t).object(t)
				if after.Status != to || got["application"].(map[string]any)["status"] != to {
					t.Errorf("%s → %s: now %s, printed %v", from, to, after.Status, got)
				}
				if _, created := got["company"]; created != (to == credit.AppApproved) {
					t.Errorf("%s → %s: printed a company: %v", from, to, created)
				}
				continue
			}
			if r.code != 2 || strings.Count(r.stderr, "\n") != 1 || r.stdout != "" {
				t.Errorf("%s → %s: exit %d, stdout %q, stderr %q; want refused with exit 2", from, to, r.code, r.stdout, r.stderr)
			}
			if after.Status != from {
				t.Errorf("%s → %s refused, but the status is now %s", from, to, after.Status)
			}
		}
	}
	// Each approval created exactly one company: the one approved above and the one approved here.
	page, err := svc.Companies.List(tenant.APIKey(context.Background(), d.store, "key_test", "test", credit.AllScopes), credit.CompanyListParams{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range page.Data {
		names = append(names, c.Name)
	}
	sort.Strings(names)
	want := []string{"approved to approved", "approved to in_review", "approved to needs_info", "approved to rejected", "approved to submitted", "in_review to approved"}
	if !slices.Equal(names, want) {
		t.Errorf("companies %v, want one per approval %v", names, want)
	}
}

// TestPersonEraseRemovesEveryTrace erases a person through the command line while the server
// runs on the same database: the API shows the contact redacted at once, and the erased values
// are gone from the database file and its write-ahead log.
func TestPersonEraseRemovesEveryTrace(t *testing.T) {
	t.Parallel()
	credittest.RequireSQLite(t)
	env := credittest.New(t)
	st := env.MustStore(t, "Store", "EUR")
	key := env.MustKey(t, st, "dashboard", credit.ScopeReadCredit, credit.ScopeReadApplications)
	// A long name makes the erased row much shorter, so without secure_delete the old bytes
	// would stay behind as free space in the page.
	const email, name = "Maria.Huber@Example.com", "Maria Quetzalcoatl Huber von und zu Hohenlinde-Sonnenbergstein, Freifrau, geschäftsführende Gesellschafterin der Gasthof Zur Linde Betriebsgesellschaft mbH und Co. KG, Prokuristin"
	first := env.MustApplication(t, st, credit.ApplicationInput{BusinessName: "Gasthof Zur Linde", ContactName: name, ContactEmail: email})
	second := env.MustApplication(t, st, credit.ApplicationInput{BusinessName: "Linde Catering", ContactName: name, ContactEmail: "maria.huber@example.com"})
	bystander := env.MustApplication(t, st, credit.ApplicationInput{BusinessName: "Weinkontor", ContactName: "Jonas Weber", ContactEmail: "jonas@example.com"})

	traces := func() []string {
		t.Helper()
		var found []string
		for _, file := range []string{env.DBPath, env.DBPath + "-wal"} {
			raw, err := readFileIfExists(file)
			if err != nil {
				t.Fatal(err)
			}
			lower := bytes.ToLower(raw)
			for _, s := range []string{"maria.huber@example.com", "quetzalcoatl"} {
				if bytes.Contains(lower, []byte(s)) {
					found = append(found, filepath.Base(file)+": "+s)
				}
			}
		}
		return found
	}
	// Move the rows into the main file first, so the erasure has to clean both files.
	if _, err := env.DB.SQL.Exec("PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		t.Fatal(err)
	}
	env.MustApplication(t, st, credit.ApplicationInput{BusinessName: "Third", ContactName: name, ContactEmail: email})
	if found := strings.Join(traces(), ","); !strings.Contains(found, "creditd.db: maria.huber@example.com") || !strings.Contains(found, "creditd.db-wal: maria.huber@example.com") {
		t.Fatalf("before the erasure the person should be in both files, found %q: the scan would prove nothing", found)
	}
	if r := env.Get(t, key, "/v1/applications/"+first.ID); !strings.Contains(string(r.Body), name) {
		t.Fatalf("before erasure: %s", r.Body)
	}

	r := runCreditd(t, "person", "erase", "--store", st, "--email", "MARIA.HUBER@example.com", "--db", env.DBPath, "--json").mustSucceed(t)
	if got := r.object(t); got["applications_redacted"] != float64(3) {
		t.Fatalf("person erase: %v", got)
	}
	for _, id := range []string{first.ID, second.ID} {
		var got struct {
			Contact map[string]any `json:"contact"`
		}
		env.Get(t, key, "/v1/applications/"+id).WantStatus(t, 200).Decode(t, &got)
		if len(got.Contact) != 3 || got.Contact["name"] != nil || got.Contact["email"] != nil || got.Contact["redacted"] != true {
			t.Errorf("erased contact of %s: %v, want {name: null, email: null, redacted: true}", id, got.Contact)
		}
	}
	list := env.Get(t, key, "/v1/applications").WantStatus(t, 200).Body
	if strings.Contains(strings.ToLower(string(list)), "maria") || strings.Contains(string(list), "Quetzalcoatl") {
		t.Errorf("the list still shows the person: %s", list)
	}
	var other credit.Application
	env.Get(t, key, "/v1/applications/"+bystander.ID).WantStatus(t, 200).Decode(t, &other)
	if other.Contact.Redacted || other.Contact.Email == nil || *other.Contact.Email != "jonas@example.com" {
		t.Errorf("another person was touched: %+v", other.Contact)
	}
	if found := traces(); len(found) != 0 {
		t.Errorf("erased values are still in the database files: %v", found)
	}
}

func TestPersonEraseStaysInItsStore(t *testing.T) {
	t.Parallel()
	d := newCLIDB(t)
	svc := d.service(t)
	ctx := tenant.System(context.Background())
	other, err := svc.Stores.Create(ctx, "Other", "EUR", 5)
	if err != nil {
		t.Fatal(err)
	}
	theirs, err := svc.Applications.Create(tenant.Staff(ctx, other.ID, "test staff"), credit.ApplicationInput{BusinessName: "B", VATNumber: "X", ContactName: "Ann", ContactEmail: "ann@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	if got := d.json(t, "person", "erase", "--store", d.store, "--email", "ann@example.com"); got["applications_redacted"] != float64(0) {
		t.Errorf("erased in another store: %v", got)
	}
	a, err := svc.Applications.Get(ctx, theirs.ID)
	if err != nil {
		t.Fatal(err)
	}
	if a.Contact.Redacted || a.Contact.Email == nil {
		t.Errorf("the other store's application was redacted: %+v", a.Contact)
	}
}

// readFileIfExists reads a file, returning nothing for a file that does not exist (a WAL
// that was checkpointed away and deleted).
func readFileIfExists(path string) ([]byte, error) {
	raw, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return raw, err
}

// TestCLIChangesAreSeenByARunningServer writes through the command line while the server runs
// on the same SQLite file: the next request sees each change.
func TestCLIChangesAreSeenByARunningServer(t *testing.T) {
	t.Parallel()
	credittest.RequireSQLite(t)
	env := credittest.New(t)
	st := env.MustStore(t, "Store", "EUR")
	key := env.MustKey(t, st, "dashboard", credit.ScopeReadCredit, credit.ScopeReadApplications)
	d := &cliDB{path: env.DBPath, store: st}

	co := d.json(t, "company", "create", "--store", st, "--name", "Buyer", "--platform-company-gid", "gid://platform/Company/5",
		"--payment-terms", "NET_30", "--credit-limit", "1000")["id"].(string)
	env.Get(t, key, "/v1/companies/"+co).WantStatus(t, 200)
	entry := d.json(t, "ledger", "record", "--company", co, "--kind", "order_placed", "--amount", "250", "--order", "gid://platform/Order/1")["ledger_entry"].(map[string]any)["id"].(string)
	var ledger struct{ Data []credit.LedgerEntry }
	env.Get(t, key, "/v1/companies/"+co+"/ledger").WantStatus(t, 200).Decode(t, &ledger)
	if len(ledger.Data) != 1 || ledger.Data[0].ID != entry {
		t.Errorf("the server's ledger %+v lacks the entry %s", ledger.Data, entry)
	}
	var company credit.Company
	env.Get(t, key, "/v1/companies/"+co).WantStatus(t, 200).Decode(t, &company)
	if company.Outstanding.Amount != "250.00" || company.AvailableCredit.Amount != "700.00" {
		t.Errorf("the server shows %+v after the entry", company)
	}
	app := d.json(t, "application", "create", "--store", st, "--business-name", "B", "--vat-number", "X", "--contact-name", "N", "--contact-email", "n@example.com")["id"].(string)
	d.json(t, "application", "set-status", app, "--status", "in_review")
	var a credit.Application
	env.Get(t, key, "/v1/applications/"+app).WantStatus(t, 200).Decode(t, &a)
	if a.Status != credit.AppInReview {
		t.Errorf("the server shows the application %s", a.Status)
	}
	other := d.json(t, "key", "create", "--store", st, "--label", "new", "--scopes", "read_credit")
	env.Get(t, other["secret"].(string), "/v1/companies").WantStatus(t, 200)
	// A revocation made by another process is refused on the very next request (contract §2).
	d.json(t, "key", "revoke", other["id"].(string))
	env.Get(t, other["secret"].(string), "/v1/companies").WantError(t, 401, "unauthenticated", "")
}

// TestCLIOutageIsNotBadInput injects a database fault (the database closes once the command has
// opened it): an outage is not the operator's mistake, so the command exits 1, after which the
// same command may succeed, never 2, which says "nothing was written, fix your input"; and it
// says the database is unavailable. Bad input with the database up still exits 2.
func TestCLIOutageIsNotBadInput(t *testing.T) {
	t.Parallel()
	d := newCLIDB(t)
	for _, args := range [][]string{
		{"key", "list", "--store", d.store},
		{"store", "create", "--name", "Second", "--currency", "EUR"},
		{"holds", "sweep"},
	} {
		var out, errOut bytes.Buffer
		m := NewMain(strings.NewReader(""), &out, &errOut)
		m.afterOpen = func(db *database.DB) { _ = db.SQL.Close() }
		code := m.Run(context.Background(), append(args, "--db", d.path))
		_ = m.Close()
		if code != exitFailure || !strings.Contains(errOut.String(), "database is unavailable") {
			t.Errorf("creditd %s with the database down: exit %d, stderr %q; want exit 1 saying the database is unavailable", strings.Join(args, " "), code, errOut.String())
		}
	}
	if r := d.run(t, "key", "list", "--store", "st_nosuchstore"); r.code != exitBadInput {
		t.Errorf("an unknown store with the database up: exit %d, want 2: %s", r.code, r.stderr)
	}
}
