package database_test

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/creditd/creditd/credittest"
	"github.com/creditd/creditd/database"
	"github.com/creditd/creditd/ent"
)

// The outages of contract §3 and §7, each produced by a real database and classified by
// database.IsUnavailable (503 unavailable with Retry-After in every transport).

func wantOutage(t *testing.T, what string, err error) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: no error", what)
	}
	if !database.IsUnavailable(err) {
		t.Errorf("%s: %T %q is not an outage", what, err, err)
	}
}

// openPostgres opens a database on the test server, or through dsn's rewrite.
func openPostgres(t *testing.T, through func(string) string) *database.DB {
	t.Helper()
	dsn := credittest.PostgresURL(t)
	if through != nil {
		dsn = through(dsn)
	}
	db, err := database.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func backendPID(t *testing.T, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}) int {
	t.Helper()
	var pid int
	if err := q.QueryRowContext(context.Background(), "SELECT pg_backend_pid()").Scan(&pid); err != nil {
		t.Fatal(err)
	}
	return pid
}

func terminate(t *testing.T, db *database.DB, pid int) {
	t.Helper()
	if _, err := db.SQL.ExecContext(context.Background(), "SELECT pg_terminate_backend($1)", pid); err != nil {
		t.Fatal(err)
	}
}

// TestPostgresBackendTerminatedMidTransaction: the statement that meets the terminated backend
// (57P01), the next one (driver: bad connection) and the commit (pgx's "conn closed") are
// outages.
func TestPostgresBackendTerminatedMidTransaction(t *testing.T) {
	db := openPostgres(t, nil)
	ctx := context.Background()
	tx, err := db.SQL.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	terminate(t, db, backendPID(t, tx))
	_, err = tx.ExecContext(ctx, "SELECT 1")
	wantOutage(t, "statement", err)
	_, err = tx.ExecContext(ctx, "SELECT 1")
	wantOutage(t, "next statement", err)
	wantOutage(t, "commit", tx.Commit())
}

// TestPostgresFailedRestartIsAnOutage: an operation joining a request's transaction fails
// because its backend was terminated, and restarting the transaction fails too ("and
// restarting the transaction failed: driver: bad connection"): an outage.
func TestPostgresFailedRestartIsAnOutage(t *testing.T) {
	db := openPostgres(t, nil)
	ctx := context.Background()
	err := db.InTx(ctx, func(tx *ent.Tx) error {
		jctx := db.Join(ctx, tx)
		return db.InTx(jctx, func(tx *ent.Tx) error {
			rows, err := tx.QueryContext(ctx, "SELECT pg_backend_pid()")
			if err != nil {
				return err
			}
			var pid int
			for rows.Next() {
				if err := rows.Scan(&pid); err != nil {
					return err
				}
			}
			rows.Close()
			terminate(t, db, pid)
			_, err = tx.ExecContext(ctx, "SELECT 1")
			return err
		})
	})
	if err == nil || !strings.Contains(err.Error(), "restarting the transaction failed") {
		t.Fatalf("want a failed restart, got %v", err)
	}
	wantOutage(t, "failed restart", err)
}

// TestPostgresLinkClosed: a link that closes mid-statement without a word from the server
// (pgx: unexpected EOF) and one reset by the peer are outages; so are the connections refused
// while it is down.
func TestPostgresLinkClosed(t *testing.T) {
	dsn := credittest.PostgresURL(t)
	proxy := credittest.NewProxy(t, credittest.PostgresHost(t, dsn))
	db := openPostgres(t, func(dsn string) string { return proxy.Through(t, dsn) })
	ctx := context.Background()

	done := make(chan error, 1)
	go func() {
		_, err := db.SQL.ExecContext(ctx, "SELECT pg_sleep(2)")
		done <- err
	}()
	time.Sleep(300 * time.Millisecond)
	proxy.Cut()
	err := <-done
	wantOutage(t, "statement cut off", err)
	if !strings.Contains(err.Error(), "EOF") && !strings.Contains(err.Error(), "reset") {
		t.Logf("cut off: %v", err)
	}
	_, err = db.SQL.ExecContext(ctx, "SELECT 1")
	wantOutage(t, "connection refused", err)

	proxy.Restore(t)
	if _, err := db.SQL.ExecContext(ctx, "SELECT 1"); err != nil {
		t.Fatalf("after the link is back: %v", err)
	}
	remove := proxy.Toxic(t, `{"type":"reset_peer","stream":"upstream","attributes":{"timeout":100}}`)
	_, err = db.SQL.ExecContext(ctx, "SELECT pg_sleep(1)")
	wantOutage(t, "link reset", err)
	remove()
}

// TestPostgresStatementTimeoutAndDeadline: a statement past LimitStatements' timeout (57014,
// cancelled by the server) and one past its context's deadline are outages.
func TestPostgresStatementTimeoutAndDeadline(t *testing.T) {
	db := openPostgres(t, nil)
	db.LimitStatements(200 * time.Millisecond)
	ctx := context.Background()
	start := time.Now()
	_, err := db.SQL.ExecContext(ctx, "SELECT pg_sleep(3)")
	wantOutage(t, "statement timeout", err)
	if !strings.Contains(err.Error(), "57014") {
		t.Errorf("want the server's statement timeout (57014), got %v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("the statement ran %v", d)
	}

	db2 := openPostgres(t, nil)
	dctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	_, err = db2.SQL.ExecContext(dctx, "SELECT pg_sleep(3)")
	wantOutage(t, "deadline", err)
}

// fullSQLite opens a SQLite database whose every connection is the one connection limited to
// a few more pages than it has: the next writes fill it (SQLITE_FULL), as a full disk does.
func fullSQLite(t *testing.T) (*database.DB, func(pages int)) {
	t.Helper()
	ctx := context.Background()
	db, err := database.Open(ctx, filepath.Join(t.TempDir(), "full.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	db.SQL.SetMaxOpenConns(1)
	if _, err := db.SQL.ExecContext(ctx, "CREATE TABLE filler (v BLOB)"); err != nil {
		t.Fatal(err)
	}
	limit := func(extra int) {
		var pages int
		if err := db.SQL.QueryRowContext(ctx, "PRAGMA page_count").Scan(&pages); err != nil {
			t.Fatal(err)
		}
		if _, err := db.SQL.ExecContext(ctx, "PRAGMA max_page_count = "+itoa(pages+extra)); err != nil {
			t.Fatal(err)
		}
	}
	limit(2)
	return db, limit
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestSQLiteFullIsAnOutage: a write that does not fit (SQLITE_FULL) is an outage and a full
// disk; /readyz's Ready says so until a write commits again.
func TestSQLiteFullIsAnOutage(t *testing.T) {
	db, limit := fullSQLite(t)
	ctx := context.Background()
	var err error
	for i := 0; i < 50 && err == nil; i++ {
		err = db.InTx(ctx, func(tx *ent.Tx) error {
			_, err := tx.ExecContext(ctx, "INSERT INTO filler VALUES (randomblob(4000))")
			return err
		})
	}
	wantOutage(t, "full", err)
	if !database.IsDiskFull(err) {
		t.Errorf("%v is not a full disk", err)
	}
	rerr := db.Ready(ctx)
	if !database.IsUnavailable(rerr) || !database.IsDiskFull(rerr) || !strings.Contains(rerr.Error(), "disk is full") {
		t.Fatalf("Ready on a full disk: %v", rerr)
	}
	limit(1000)
	time.Sleep(1100 * time.Millisecond) // Ready trusts a commit a second after the last refusal
	if err := db.InTx(ctx, func(tx *ent.Tx) error {
		_, err := tx.ExecContext(ctx, "INSERT INTO filler VALUES (randomblob(4000))")
		return err
	}); err != nil {
		t.Fatalf("after space was freed: %v", err)
	}
	if err := db.Ready(ctx); err != nil {
		t.Fatalf("Ready after a write committed: %v", err)
	}
}

// TestSQLiteReadOnlyAndIOErrors: a file opened read-only refuses a write (SQLITE_READONLY);
// a database whose file was replaced by a directory cannot be opened or read (SQLITE_CANTOPEN
// or SQLITE_IOERR): outages, not 500s.
func TestSQLiteReadOnlyAndIOErrors(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "ro.db")
	ctx := context.Background()
	db, err := database.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.SQL.ExecContext(ctx, "CREATE TABLE t (v TEXT)"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	ro, err := sql.Open("sqlite3", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	_, err = ro.ExecContext(ctx, "INSERT INTO t VALUES ('x')")
	wantOutage(t, "read-only file", err)

	gone := filepath.Join(dir, "gone.db")
	db, err = database.Open(ctx, gone)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SQL.SetMaxIdleConns(0)
	if err := os.Remove(gone); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(gone, 0o700); err != nil {
		t.Fatal(err)
	}
	_, err = db.SQL.ExecContext(ctx, "CREATE TABLE t (v TEXT)")
	wantOutage(t, "file replaced by a directory", err)
	if errors.Is(err, database.ErrNoDatabase) {
		t.Fatal("unexpected")
	}
}

// TestSQLiteWaitIsBounded: on SQLite, a write waiting for another process's write lock (a
// transaction held open on another handle of the file, as the command line beside serve would)
// waits at most LimitStatements' time, then fails as an outage (SQLITE_BUSY), not the default
// ten seconds.
func TestSQLiteWaitIsBounded(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "busy.db")
	db, err := database.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.SQL.ExecContext(ctx, "CREATE TABLE t (v TEXT)"); err != nil {
		t.Fatal(err)
	}
	db.LimitStatements(300 * time.Millisecond)
	other, err := database.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	holder, err := other.SQL.BeginTx(ctx, nil) // BEGIN IMMEDIATE: takes the write lock
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Rollback()
	start := time.Now()
	err = db.InTx(ctx, func(tx *ent.Tx) error {
		_, err := tx.ExecContext(ctx, "INSERT INTO t VALUES ('x')")
		return err
	})
	wantOutage(t, "a write behind another process's lock", err)
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("the write waited %v, past its 300 ms limit", d)
	}
}
