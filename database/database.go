// Package database opens the service's database: embedded SQLite by default, configured for
// durability and concurrency, with the schema and its append-only guards applied.
package database

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"strings"
	"sync"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
	_ "github.com/mattn/go-sqlite3" // the embedded database driver

	"github.com/creditd/creditd/ent"
	_ "github.com/creditd/creditd/ent/runtime" // registers the schema's tenant hooks and interceptors
)

var migrateMu sync.Mutex

// DB is an open database: the ent client, the raw handle and the dialect.
type DB struct {
	Client  *ent.Client
	SQL     *sql.DB
	Dialect string
}

// Close closes the database.
func (db *DB) Close() error { return db.Client.Close() }

// sqlitePragmas configure every SQLite connection:
//   - WAL lets readers run while one writer commits;
//   - synchronous=FULL fsyncs the WAL at every commit, so an acknowledged write survives a
//     process crash and a power loss (NORMAL would survive only a process crash);
//   - foreign keys on, a 10 s busy timeout for writers from other processes (the CLI beside
//     serve), and BEGIN IMMEDIATE so a write transaction takes the write lock up front instead
//     of failing when it upgrades from reading;
//   - secure_delete overwrites deleted content, so an erased person's bytes leave the file.
const sqlitePragmas = "_journal_mode=WAL&_synchronous=FULL&_foreign_keys=on&_busy_timeout=10000&_txlock=immediate&_secure_delete=on"

// Open opens the database named by dsn: a SQLite file path, or (later) a postgres:// URL.
func Open(ctx context.Context, dsn string) (*DB, error) {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		return nil, fmt.Errorf("PostgreSQL is not supported by this build yet")
	}
	path := strings.TrimPrefix(dsn, "file:")
	if i := strings.IndexByte(path, '?'); i >= 0 {
		path = path[:i]
	}
	if path == "" {
		return nil, fmt.Errorf("database path is empty")
	}
	raw, err := sql.Open("sqlite3", "file:"+(&url.URL{Path: path}).EscapedPath()+"?"+sqlitePragmas)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	if err := raw.PingContext(ctx); err != nil {
		raw.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	drv := entsql.OpenDB(dialect.SQLite, raw)
	db := &DB{Client: ent.NewClient(ent.Driver(drv)), SQL: raw, Dialect: dialect.SQLite}
	return db, nil
}

// Migrate brings the schema up to date and installs the guards that keep the ledger
// append-only at the database level too.
func (db *DB) Migrate(ctx context.Context) error {
	// ent's schema migration mutates the package-level table definitions, so two databases
	// migrating at once in one process (parallel tests) would race.
	migrateMu.Lock()
	err := db.Client.Schema.Create(ctx)
	migrateMu.Unlock()
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	for _, stmt := range []string{
		`CREATE TRIGGER IF NOT EXISTS ledger_entries_no_update BEFORE UPDATE ON ledger_entries
		 BEGIN SELECT RAISE(ABORT, 'ledger entries are append-only'); END`,
		`CREATE TRIGGER IF NOT EXISTS ledger_entries_no_delete BEFORE DELETE ON ledger_entries
		 BEGIN SELECT RAISE(ABORT, 'ledger entries are append-only'); END`,
	} {
		if _, err := db.SQL.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
	}
	return nil
}

// PurgeErased makes erased values unrecoverable from the files: secure_delete already zeroes
// freed content in the main file, and a truncating checkpoint moves the WAL's pages home and
// empties the WAL, which still held the old page images.
func (db *DB) PurgeErased(ctx context.Context) error {
	if db.Dialect != dialect.SQLite {
		return nil
	}
	var busy, logFrames, checkpointed int
	if err := db.SQL.QueryRowContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)").Scan(&busy, &logFrames, &checkpointed); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	if busy != 0 {
		return fmt.Errorf("checkpoint: readers kept the write-ahead log busy; run the erasure again")
	}
	return nil
}

// Ping reports whether the database answers.
func (db *DB) Ping(ctx context.Context) error { return db.SQL.PingContext(ctx) }
