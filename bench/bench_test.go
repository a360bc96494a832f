package bench

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"entgo.io/ent/dialect"
	"github.com/shopspring/decimal"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
	"github.com/creditd/creditd/database"
	"github.com/creditd/creditd/ids"
)

// TestSeedKeepsTheModel checks that the seeded data is what the service itself would have
// written: balances equal ledger sums, gapless sequence numbers, an invoice per order, no
// invoice overdue, and a schema the server accepts.
func TestSeedKeepsTheModel(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "bench.db")
	ds, err := Seed(ctx, path, TinySize)
	if err != nil {
		t.Fatal(err)
	}
	if len(ds.Companies) != TinySize.LargeCompanies || ds.Secret == "" || len(ds.BigAfter) == 0 || len(ds.MediumAfter) == 0 {
		t.Fatalf("dataset = %+v", ds)
	}
	if again, ok := LoadDataset(path, TinySize); !ok || again.Secret != ds.Secret {
		t.Fatal("the dataset saved beside the database does not load back")
	}
	if _, ok := LoadDataset(path, FullSize); ok {
		t.Fatal("a dataset of another size was reused")
	}

	db, err := database.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	checkModel(t, db, TinySize)
}

// TestSeedPostgresKeepsTheModel is TestSeedKeepsTheModel on PostgreSQL, in a schema of its own.
func TestSeedPostgresKeepsTheModel(t *testing.T) {
	ctx := context.Background()
	admin := credittest.PostgresURL(t)
	schema := "creditbench_t_" + strings.ToLower(ids.Random(10))
	t.Cleanup(func() { dropSchema(t, admin, schema) })
	ds, err := SeedPostgres(ctx, admin, schema, TinySize)
	if err != nil {
		t.Fatal(err)
	}
	if len(ds.Companies) != TinySize.LargeCompanies || ds.Secret == "" || len(ds.BigAfter) == 0 || len(ds.MediumAfter) == 0 {
		t.Fatalf("dataset = %+v", ds)
	}
	if again, ok, err := LoadPostgresDataset(ctx, admin, schema, TinySize); err != nil || !ok || again.Secret != ds.Secret {
		t.Fatalf("the dataset kept in the schema's comment does not load back: %v", err)
	}
	if _, ok, _ := LoadPostgresDataset(ctx, admin, schema, FullSize); ok {
		t.Fatal("a dataset of another size was reused")
	}
	dsn, err := SchemaURL(admin, schema, "")
	if err != nil {
		t.Fatal(err)
	}
	db, err := database.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	checkModel(t, db, TinySize)

	// A schema the harness did not make is never dropped.
	foreign := schema + "_x"
	t.Cleanup(func() { dropSchema(t, admin, foreign) })
	if _, err := db.SQL.ExecContext(ctx, "CREATE SCHEMA "+foreign); err != nil {
		t.Fatal(err)
	}
	if _, err := SeedPostgres(ctx, admin, foreign, TinySize); err == nil || !strings.Contains(err.Error(), "not made by creditbench") {
		t.Fatalf("seeding over a foreign schema: %v", err)
	}
}

func dropSchema(tb testing.TB, adminURL, schema string) {
	tb.Helper()
	db, err := sql.Open("pgx", adminURL)
	if err != nil {
		tb.Error(err)
		return
	}
	defer db.Close()
	if _, err := db.Exec("DROP SCHEMA IF EXISTS " + schema + " CASCADE"); err != nil {
		tb.Errorf("drop schema %s: %v", schema, err)
	}
}

// checkModel checks the invariants the service keeps on a seeded database of size, and that
// serve would accept its schema.
func checkModel(t *testing.T, db *database.DB, size Size) {
	t.Helper()
	ctx := context.Background()
	if err := db.Prepare(ctx); err != nil {
		t.Fatalf("serve would refuse the seeded database: %v", err)
	}
	type ledger struct {
		sum  decimal.Decimal
		seqs []int64
	}
	// Each entry's balance_after is the running sum, and each company's sort keys are the
	// service's (the orderings of contract §6 rely on them).
	ledgers := map[string]*ledger{}
	rows, err := db.SQL.QueryContext(ctx, "SELECT company_id, seq, amount, balance_after FROM ledger_entries ORDER BY company_id, seq")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id, amount, after string
		var seq int64
		if err := rows.Scan(&id, &seq, &amount, &after); err != nil {
			t.Fatal(err)
		}
		l := ledgers[id]
		if l == nil {
			l = &ledger{}
			ledgers[id] = l
		}
		l.sum = l.sum.Add(decimal.RequireFromString(amount))
		l.seqs = append(l.seqs, seq)
		if !l.sum.Equal(decimal.RequireFromString(after)) {
			t.Fatalf("company %s: entry %d has balance_after %s, the sum up to it is %s", id, seq, after, l.sum)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows.Close()
	companies, err := db.SQL.QueryContext(ctx, "SELECT id, name, credit_limit, outstanding, ledger_seq, outstanding_key, available_key, utilization_key, name_key FROM companies")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for companies.Next() {
		var id, name, limit, outstanding, outstandingKey, availableKey, utilizationKey, nameKey string
		var seq int64
		if err := companies.Scan(&id, &name, &limit, &outstanding, &seq, &outstandingKey, &availableKey, &utilizationKey, &nameKey); err != nil {
			t.Fatal(err)
		}
		k := credit.OrderKeysOf(name, decimal.RequireFromString(limit), decimal.RequireFromString(outstanding), credit.DefaultBufferPercent, "EUR")
		if k.Outstanding != outstandingKey || k.Available != availableKey || k.Utilization != utilizationKey || k.Name != nameKey {
			t.Errorf("company %s: stored keys differ from the service's", id)
		}
		n++
		l := ledgers[id]
		if l == nil {
			l = &ledger{}
		}
		if !l.sum.Equal(decimal.RequireFromString(outstanding)) {
			t.Errorf("company %s: outstanding %s, ledger sums to %s", id, outstanding, l.sum)
		}
		if int64(len(l.seqs)) != seq {
			t.Errorf("company %s: ledger_seq %d, %d entries", id, seq, len(l.seqs))
		}
		for i, s := range l.seqs {
			if s != int64(i+1) {
				t.Fatalf("company %s: entry %d has seq %d", id, i+1, s)
			}
		}
	}
	companies.Close()
	wantCompanies := size.LargeCompanies + (size.Stores-1)*size.SmallCompanies
	if n != wantCompanies {
		t.Errorf("%d companies, want %d", n, wantCompanies)
	}
	var orders, invoices, overdue int
	mustScan(t, db.SQL, "SELECT count(*) FROM ledger_entries WHERE kind = 'order_placed'", &orders)
	mustScan(t, db.SQL, "SELECT count(*) FROM invoices i JOIN ledger_entries e ON e.id = i.ledger_entry_id AND e.platform_order_gid = i.platform_order_gid AND e.seq = i.seq", &invoices)
	overdueQuery := "SELECT count(*) FROM invoices WHERE open AND due_at < ?"
	if db.Dialect == dialect.Postgres {
		overdueQuery = strings.Replace(overdueQuery, "?", "$1", 1)
	}
	mustScan(t, db.SQL, overdueQuery, &overdue, time.Now())
	if orders == 0 || invoices != orders || overdue != 0 {
		t.Errorf("%d orders, %d matching invoices, %d overdue", orders, invoices, overdue)
	}
}

func mustScan(tb testing.TB, db *sql.DB, q string, dst any, args ...any) {
	tb.Helper()
	if err := db.QueryRow(q, args...).Scan(dst); err != nil {
		tb.Fatalf("%s: %v", q, err)
	}
}

func TestBaselineServesTheSavedBytes(t *testing.T) {
	dir := t.TempDir()
	if err := writeBaselineResponse(dir, "adjustments", http.StatusCreated, []byte(`{"ok":true}`)); err != nil {
		t.Fatal(err)
	}
	h, err := BaselineHandler(dir)
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/adjustments", strings.NewReader(`{"amount":"1.00"}`)))
	if rec.Code != http.StatusCreated || rec.Body.String() != `{"ok":true}` {
		t.Fatalf("got %d %q", rec.Code, rec.Body.String())
	}
}

// TestRunSmoke runs the whole harness on a tiny dataset with very short loads: it builds
// creditd and this harness, and checks that every scenario answers without errors.
func TestRunSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("builds creditd and runs it under load")
	}
	dir := t.TempDir()
	bin := mustBuild(t)
	runSmoke(t, Config{
		Creditd: filepath.Join(bin, "creditd"), Self: filepath.Join(bin, "creditbench"),
		DB: filepath.Join(dir, "bench.db"), Size: TinySize, WorkDir: dir,
		Warmup: 100 * time.Millisecond, Duration: 300 * time.Millisecond, Concurrency: 2,
	})
}

// TestRunSmokePostgres is TestRunSmoke on PostgreSQL, in a schema of its own. PostGraphile is
// left out: it needs npm and Node from the registry, which the harness, not the test suite,
// installs.
func TestRunSmokePostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("builds creditd and runs it under load")
	}
	admin := credittest.PostgresURL(t)
	dir := t.TempDir()
	bin := mustBuild(t)
	schema := "creditbench_t_" + strings.ToLower(ids.Random(10))
	t.Cleanup(func() { dropSchema(t, admin, schema) })
	rep := runSmoke(t, Config{
		Creditd: filepath.Join(bin, "creditd"), Self: filepath.Join(bin, "creditbench"),
		DB: admin, Schema: schema, Size: TinySize, WorkDir: dir,
		Warmup: 100 * time.Millisecond, Duration: 300 * time.Millisecond, Concurrency: 2,
	})
	if !rep.Postgres {
		t.Error("the report does not say PostgreSQL")
	}
	// PostgreSQL on this machine: its backends must have been found and read.
	if u, err := url.Parse(admin); err == nil && (u.Hostname() == "127.0.0.1" || u.Hostname() == "localhost") && !rep.BackendCPU {
		t.Errorf("PostgreSQL is local, but its backends' CPU was not measured: %s", rep.BackendCPUMissing)
	}
}

func runSmoke(t *testing.T, cfg Config) *Report {
	t.Helper()
	var progress bytes.Buffer
	cfg.Progress = &progress
	rep, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatalf("%v\n%s", err, progress.String())
	}
	if len(rep.Results) != len(Scenarios(rep.Dataset, "")) {
		t.Fatalf("%d results", len(rep.Results))
	}
	for _, res := range rep.Results {
		if res.Skipped != "" {
			t.Errorf("%s skipped: %s", res.Name, res.Skipped)
			continue
		}
		if res.Saturated.Requests == 0 || res.Saturated.Errors > 0 || res.Baseline.Requests == 0 || res.PeakRSS == 0 {
			t.Errorf("%s: %+v", res.Name, res)
		}
	}
	var md bytes.Buffer
	rep.WriteMarkdown(&md)
	if !strings.Contains(md.String(), "peak RSS") {
		t.Errorf("report:\n%s", md.String())
	}
	if os.Getenv("CREDITBENCH_VERBOSE") != "" {
		t.Log(md.String())
	}
	return rep
}

var (
	buildOnce sync.Once
	buildDir  string
	buildErr  error
)

// mustBuild builds creditd and creditbench once for the package's tests and returns their
// directory, which TestMain removes.
func mustBuild(tb testing.TB) string {
	tb.Helper()
	buildOnce.Do(func() {
		root, err := filepath.Abs("..")
		if err != nil {
			buildErr = err
			return
		}
		if buildDir, buildErr = os.MkdirTemp("", "creditbench-test-"); buildErr != nil {
			return
		}
		for _, pkg := range []string{"creditd", "creditbench"} {
			cmd := exec.Command("go", "build", "-o", filepath.Join(buildDir, pkg), "./cmd/"+pkg)
			cmd.Dir = root
			if out, err := cmd.CombinedOutput(); err != nil {
				buildErr = fmt.Errorf("build %s: %v\n%s", pkg, err, out)
				return
			}
		}
	})
	if buildErr != nil {
		tb.Fatal(buildErr)
	}
	return buildDir
}

func TestMain(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}
