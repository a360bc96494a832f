package database_test

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
	"github.com/creditd/creditd/database"
	"github.com/creditd/creditd/ent"
	"github.com/creditd/creditd/ent/ledgerentry"
	"github.com/creditd/creditd/ids"
	"github.com/creditd/creditd/tenant"
)

// openBoth opens an empty SQLite file and, when CREDITD_TEST_POSTGRES is set, an empty
// PostgreSQL schema.
func openBoth(t *testing.T) map[string]*database.DB {
	t.Helper()
	ctx := context.Background()
	out := map[string]*database.DB{}
	sq, err := database.Open(ctx, filepath.Join(t.TempDir(), "m.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sq.Close() })
	out["sqlite"] = sq
	var dropSchema func()
	t.Run("postgres available", func(t *testing.T) {
		dsn, drop, err := database.ScratchSchema(ctx, credittest.PostgresURL(t), "m_"+strings.ToLower(ids.Random(10)))
		if err != nil {
			t.Fatal(err)
		}
		pg, err := database.Open(ctx, dsn)
		if err != nil {
			drop()
			t.Fatal(err)
		}
		out["postgres"] = pg
		dropSchema = drop
	})
	if pg := out["postgres"]; pg != nil {
		t.Cleanup(func() {
			pg.Close()
			dropSchema()
		})
	}
	return out
}

// TestMigrationsMatchEntSchema applies the migration files to empty databases and asks ent
// what it would still change: nothing, or ent/schema changed without a new migration file
// (write one with `go run ./database/newmigration NAME`).
func TestMigrationsMatchEntSchema(t *testing.T) {
	ctx := context.Background()
	for name, db := range openBoth(t) {
		t.Run(name, func(t *testing.T) {
			st, err := db.State(ctx)
			if err != nil || !st.Fresh || len(st.Pending) < 2 {
				t.Fatalf("fresh state: %+v %v", st, err)
			}
			if err := db.Prepare(ctx); err != nil {
				t.Fatalf("prepare a fresh database: %v", err)
			}
			var plan bytes.Buffer
			if err := db.Client.Schema.WriteTo(ctx, &plan); err != nil {
				t.Fatal(err)
			}
			if strings.TrimSpace(plan.String()) != "" {
				t.Fatalf("ent/schema differs from the migrations; add one with go run ./database/newmigration NAME:\n%s", plan.String())
			}
			if err := db.Migrate(ctx); err != nil {
				t.Fatalf("migrate twice: %v", err)
			}
			st, _ = db.State(ctx)
			if st.Fresh || len(st.Pending) != 0 || len(st.Unknown) != 0 {
				t.Fatalf("after migrate: %+v", st)
			}
			// Behind: forget the newest migration.
			last := st.Applied[len(st.Applied)-1]
			if _, err := db.SQL.ExecContext(ctx, rebind(name, "DELETE FROM schema_migrations WHERE version = ?"), last); err != nil {
				t.Fatal(err)
			}
			if err := db.Prepare(ctx); err == nil || !strings.Contains(err.Error(), "creditd migrate") {
				t.Fatalf("behind: %v", err)
			}
			if _, err := db.SQL.ExecContext(ctx, rebind(name, "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, 'x', 'now'), ('9999', 'future', 'now')"), last); err != nil {
				t.Fatal(err)
			}
			if err := db.Prepare(ctx); err == nil || !strings.Contains(err.Error(), "newer") {
				t.Fatalf("ahead: %v", err)
			}
		})
	}
}

// TestLedgerIsAppendOnlyInTheDatabase shows the triggers refuse UPDATE and DELETE of ledger
// rows even from a client that bypasses the service.
func TestLedgerIsAppendOnlyInTheDatabase(t *testing.T) {
	env := credittest.New(t)
	st := env.MustStore(t, "s", "EUR")
	co := env.MustCompany(t, st, "c", "10")
	env.MustRecord(t, orderInput(co.ID))
	for _, stmt := range []string{
		"UPDATE ledger_entries SET amount = '0'",
		"DELETE FROM ledger_entries",
	} {
		_, err := env.DB.SQL.ExecContext(context.Background(), stmt)
		if err == nil || !strings.Contains(err.Error(), "append-only") {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	if credittest.Backend() == "postgres" {
		if _, err := env.DB.SQL.ExecContext(context.Background(), "TRUNCATE ledger_entries CASCADE"); err == nil {
			t.Fatal("TRUNCATE allowed")
		}
	}
	n, err := env.DB.Client.LedgerEntry.Query().Count(credittest.Admin())
	if err != nil || n != 1 {
		t.Fatalf("entries %d %v", n, err)
	}
}

func rebind(dialect, q string) string {
	if dialect != "postgres" {
		return q
	}
	var b strings.Builder
	n := 0
	for _, r := range q {
		if r == '?' {
			n++
			b.WriteString("$" + string(rune('0'+n)))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// TestStoredResponsesSurviveMigration0003 builds a database as binaries before migration 0003
// left it, with an Idempotency-Key's response stored in two columns, and checks that the
// migration carries it into the one opaque response the HTTP layer replays ("<status>
// <body>"): a retry arriving across the upgrade must still be replayed, never applied again.
func TestStoredResponsesSurviveMigration0003(t *testing.T) {
	ctx := tenant.System(context.Background())
	for name, db := range openBoth(t) {
		t.Run(name, func(t *testing.T) {
			if err := db.MigrateTo(ctx, "0002"); err != nil {
				t.Fatal(err)
			}
			exec := func(q string, args ...any) {
				t.Helper()
				if db.Dialect == "postgres" {
					for i := 1; strings.Contains(q, "?"); i++ {
						q = strings.Replace(q, "?", fmt.Sprintf("$%d", i), 1)
					}
				}
				if _, err := db.SQL.ExecContext(ctx, q, args...); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			now := time.Now().UTC()
			exec("INSERT INTO stores (id, name, currency, buffer_percent, cursor_secret, created_at) VALUES (?, ?, ?, ?, ?, ?)",
				"st_old", "old", "EUR", 5, []byte("0123456789abcdef0123456789abcdef"), now)
			body := `{"ledger_entry":{"id":"le_x","note":"Zürich <&>"}}`
			exec("INSERT INTO idempotency_records (id, store_id, key, fingerprint, completed, locked_until, claim, response_status, response_body, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
				"idem_done", "st_old", "k1", "f1", true, now, "c1", 201, []byte(body), now, now.Add(time.Hour))
			exec("INSERT INTO idempotency_records (id, store_id, key, fingerprint, completed, locked_until, claim, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
				"idem_running", "st_old", "k2", "f2", false, now, "c2", now, now.Add(time.Hour))
			if err := db.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			done, err := db.Client.IdempotencyRecord.Get(ctx, "idem_done")
			if err != nil {
				t.Fatal(err)
			}
			if got, want := string(done.Response), "201 "+body; got != want {
				t.Errorf("completed record's response %q, want %q", got, want)
			}
			running, err := db.Client.IdempotencyRecord.Get(ctx, "idem_running")
			if err != nil {
				t.Fatal(err)
			}
			if running.Response != nil {
				t.Errorf("unfinished record got a response: %q", running.Response)
			}
		})
	}
}

// TestMigrations0009And0010FillOldRows builds a database as binaries before migration 0009 left
// it (companies with ledgers, no balance_after, no sort keys), migrates it, and wants every
// entry's balance_after to be the exact sum of its company's entries up to it (amounts of 15
// integer digits, negative ones, three decimals: beyond a double's precision) and every
// company's keys to be those the service writes.
func TestMigrations0009And0010FillOldRows(t *testing.T) {
	ctx := tenant.System(context.Background())
	for name, db := range openBoth(t) {
		t.Run(name, func(t *testing.T) {
			if err := db.MigrateTo(ctx, "0008"); err != nil {
				t.Fatal(err)
			}
			exec := func(q string, args ...any) {
				t.Helper()
				if _, err := db.SQL.ExecContext(ctx, rebindAll(name, q), args...); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			now := time.Now().UTC()
			exec("INSERT INTO stores (id, name, currency, buffer_percent, cursor_secret, created_at) VALUES (?, ?, ?, ?, ?, ?)",
				"st_old", "old", "KWD", 5, []byte("0123456789abcdef0123456789abcdef"), now)
			ledgers := map[string][]string{
				"co_a": {"999999999999999.999", "-0.001", "123456789012345.678", "-999999999999999.999", "0.5"},
				"co_b": {"-250", "100.25", "149.75"},
				"co_c": {},
			}
			companies := []struct{ id, name, limit string }{
				{"co_a", "Café Morgenrot", "1000"},
				{"co_b", "Straße Elf", "0"},
				{"co_c", "ÄPFEL", "3.333"},
			}
			want := map[string][]decimal.Decimal{}
			for _, c := range companies {
				sum := decimal.Zero
				for _, a := range ledgers[c.id] {
					sum = sum.Add(decimal.RequireFromString(a))
					want[c.id] = append(want[c.id], sum)
				}
				exec("INSERT INTO companies (id, store_id, name, payment_terms_days, credit_limit, outstanding, unapplied_credit, ledger_seq, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
					c.id, "st_old", c.name, 30, c.limit, sum.String(), "0", len(ledgers[c.id]), now, now)
				for i, a := range ledgers[c.id] {
					exec("INSERT INTO ledger_entries (id, store_id, company_id, seq, kind, amount, occurred_at, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
						fmt.Sprintf("le_%s%d", c.id[3:], i), "st_old", c.id, i+1, "opening_balance", a, now, now)
				}
			}
			if err := db.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			for _, c := range companies {
				entries, err := db.Client.LedgerEntry.Query().Where(ledgerentry.CompanyID(c.id)).Order(ent.Asc(ledgerentry.FieldSeq)).All(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if len(entries) != len(want[c.id]) {
					t.Fatalf("%s: %d entries", c.id, len(entries))
				}
				for i, e := range entries {
					if !e.BalanceAfter.Equal(want[c.id][i]) {
						t.Errorf("%s entry %d: balance_after %s, want %s", c.id, e.Seq, e.BalanceAfter, want[c.id][i])
					}
				}
				co, err := db.Client.Company.Get(ctx, c.id)
				if err != nil {
					t.Fatal(err)
				}
				k := credit.OrderKeysOf(co.Name, co.CreditLimit, co.Outstanding, 5, "KWD")
				got := credit.CompanyOrderKeys{Name: co.NameKey, Outstanding: co.OutstandingKey, CreditLimit: co.CreditLimitKey, Available: co.AvailableKey, Utilization: co.UtilizationKey}
				if got != k || k.Outstanding == "" {
					t.Errorf("%s keys %+v, want %+v", c.id, got, k)
				}
			}
			// The append-only trigger is back.
			if _, err := db.SQL.ExecContext(ctx, "UPDATE ledger_entries SET balance_after = '0'"); err == nil || !strings.Contains(err.Error(), "append-only") {
				t.Errorf("update after the migration: %v", err)
			}
		})
	}
}

// rebindAll turns every ? into PostgreSQL's $n (rebind handles nine).
func rebindAll(dialect, q string) string {
	if dialect != "postgres" {
		return q
	}
	for i := 1; strings.Contains(q, "?"); i++ {
		q = strings.Replace(q, "?", fmt.Sprintf("$%d", i), 1)
	}
	return q
}
