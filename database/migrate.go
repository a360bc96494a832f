package database

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"
	"sync"
	"time"

	"entgo.io/ent/dialect"
)

// Migrations are SQL files under migrations/<dialect>/, named <version>_<name>.sql and applied
// in version order, each in its own transaction, recording their version in
// schema_migrations. A file may name Go steps (steps.go), run after its SQL in the same
// transaction, by lines "-- step: NAME". New files are written by `go run ./database/newmigration NAME`, which
// asks ent (through Atlas) for the difference between the schema in ent/schema and the
// database the existing files build; a test checks that difference is empty.

//go:embed migrations/sqlite/*.sql migrations/postgres/*.sql
var migrationFiles embed.FS

// Migration is one versioned migration file.
type Migration struct {
	Version string
	Name    string
	SQL     string
}

// Migrations returns the migrations for a dialect in the order they apply.
func Migrations(dialectName string) ([]Migration, error) {
	dir := "migrations/" + dirFor(dialectName)
	entries, err := fs.ReadDir(migrationFiles, dir)
	if err != nil {
		return nil, err
	}
	var out []Migration
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".sql") {
			continue
		}
		body, err := fs.ReadFile(migrationFiles, path.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		version, name, _ := strings.Cut(strings.TrimSuffix(e.Name(), ".sql"), "_")
		out = append(out, Migration{Version: version, Name: name, SQL: string(body)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	return out, nil
}

func dirFor(dialectName string) string {
	if dialectName == dialect.Postgres {
		return "postgres"
	}
	return "sqlite"
}

// SchemaState describes a database's schema relative to this binary.
type SchemaState struct {
	// Fresh is true for a database with no tables at all.
	Fresh bool
	// Applied lists applied versions; Pending the binary's versions not applied yet; Unknown
	// applied versions this binary does not know (the database is newer than the binary).
	Applied, Pending, Unknown []string
}

// State reads which migrations the database has.
func (db *DB) State(ctx context.Context) (SchemaState, error) {
	var st SchemaState
	all, err := Migrations(db.Dialect)
	if err != nil {
		return st, err
	}
	tables, hasLog, err := db.tables(ctx)
	if err != nil {
		return st, err
	}
	st.Fresh = tables == 0
	applied := map[string]bool{}
	if hasLog {
		rows, err := db.SQL.QueryContext(ctx, "SELECT version FROM schema_migrations ORDER BY version")
		if err != nil {
			return st, err
		}
		defer rows.Close()
		for rows.Next() {
			var v string
			if err := rows.Scan(&v); err != nil {
				return st, err
			}
			applied[v] = true
			st.Applied = append(st.Applied, v)
		}
		if err := rows.Err(); err != nil {
			return st, err
		}
	}
	known := map[string]bool{}
	for _, m := range all {
		known[m.Version] = true
		if !applied[m.Version] {
			st.Pending = append(st.Pending, m.Version)
		}
	}
	for _, v := range st.Applied {
		if !known[v] {
			st.Unknown = append(st.Unknown, v)
		}
	}
	return st, nil
}

func (db *DB) tables(ctx context.Context) (count int, hasLog bool, err error) {
	q := "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
	if db.Dialect == dialect.Postgres {
		q = "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()"
	}
	rows, err := db.SQL.QueryContext(ctx, q)
	if err != nil {
		return 0, false, err
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return 0, false, err
		}
		count++
		hasLog = hasLog || name == "schema_migrations"
	}
	return count, hasLog, rows.Err()
}

// Prepare readies the database for serving: a fresh database is initialised with every
// migration; a database behind or ahead of this binary is refused with what to do.
func (db *DB) Prepare(ctx context.Context) error {
	st, err := db.State(ctx)
	if err != nil {
		return fmt.Errorf("read schema version: %w", err)
	}
	switch {
	case st.Fresh:
		return db.Migrate(ctx)
	case len(st.Unknown) > 0:
		return fmt.Errorf("the database schema is newer than this creditd (it has migration %s, which this binary does not know): upgrade creditd", st.Unknown[len(st.Unknown)-1])
	case len(st.Pending) > 0:
		return fmt.Errorf("the database schema is behind this creditd (%d migration(s) pending, up to %s): run `creditd migrate` first", len(st.Pending), st.Pending[len(st.Pending)-1])
	}
	return nil
}

// migrateMu serialises migrations within one process; across processes on PostgreSQL an
// advisory lock does.
var migrateMu sync.Mutex

// Migrate applies every pending migration, each in its own transaction, and returns how many
// it applied through the state afterwards.
func (db *DB) Migrate(ctx context.Context) error { return db.migrateTo(ctx, "") }

// migrateTo applies the pending migrations up to version (all of them for ""), so that a test
// can build a database as an older binary left it.
func (db *DB) migrateTo(ctx context.Context, version string) error {
	migrateMu.Lock()
	defer migrateMu.Unlock()
	all, err := Migrations(db.Dialect)
	if err != nil {
		return err
	}
	if _, err := db.SQL.ExecContext(ctx, "CREATE TABLE IF NOT EXISTS schema_migrations (version TEXT PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)"); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	for _, m := range all {
		if version != "" && m.Version > version {
			break
		}
		if err := db.apply(ctx, m); err != nil {
			return fmt.Errorf("migrate %s_%s: %w", m.Version, m.Name, err)
		}
	}
	return nil
}

func (db *DB) apply(ctx context.Context, m Migration) error {
	tx, err := db.SQL.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if db.Dialect == dialect.Postgres {
		// Instances starting together take turns; the loser finds the migration applied.
		if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock(hashtext('creditd migrate'))"); err != nil {
			return err
		}
	}
	var done int
	if err := tx.QueryRowContext(ctx, db.rebind("SELECT count(*) FROM schema_migrations WHERE version = ?"), m.Version).Scan(&done); err != nil {
		return err
	}
	if done > 0 {
		return nil
	}
	if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
		return err
	}
	for _, name := range m.steps() {
		step, ok := steps[name]
		if !ok {
			return fmt.Errorf("migration step %q is unknown to this binary", name)
		}
		if err := step(ctx, tx, db.Dialect); err != nil {
			return fmt.Errorf("step %s: %w", name, err)
		}
	}
	if _, err := tx.ExecContext(ctx, db.rebind("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)"), m.Version, m.Name, nowText()); err != nil {
		return err
	}
	return tx.Commit()
}

// rebind turns ? placeholders into PostgreSQL's $n.
func (db *DB) rebind(q string) string {
	if db.Dialect != dialect.Postgres {
		return q
	}
	var b strings.Builder
	n := 0
	for _, r := range q {
		if r == '?' {
			n++
			fmt.Fprintf(&b, "$%d", n)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func nowText() string { return time.Now().UTC().Format(time.RFC3339Nano) }
