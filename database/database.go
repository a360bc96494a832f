// Package database opens the service's database — embedded SQLite by default, PostgreSQL for
// deployments with several instances — and keeps its schema at the version this binary needs
// through versioned migration files.
package database

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net/url"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib" // the PostgreSQL driver ("pgx")
	"github.com/mattn/go-sqlite3"

	"github.com/creditd/creditd/ent"
	_ "github.com/creditd/creditd/ent/runtime" // registers the schema's tenant hooks and interceptors
)

// DB is an open database: the ent client, the raw handle and the dialect.
type DB struct {
	Client  *ent.Client
	SQL     *sql.DB
	Dialect string

	// keyChanges shares concurrent reads of key_changes on PostgreSQL (see KeyChanges).
	keyChanges *sharedRead

	// driver is the ent client's driver (wrapped by WithDriver), for the few statements
	// written as SQL: they are counted and faulted like the client's.
	driver dialect.Driver
	// wrap is WithDriver's wrapper, which ReadSnapshot puts around a snapshot's driver too,
	// so that its statements are counted and faulted like the rest.
	wrap func(dialect.Driver) dialect.Driver

	// commits runs this process's write transactions on SQLite, which admits one writer at a
	// time anyway: waiting for it is cheaper and fairer than SQLite's busy-retry sleeps, and
	// writes that wait together commit together (group commit, see groupcommit.go).
	commits groupCommit

	// connector opens SQLite connections of their own, outside the pool: the feed watcher's
	// (see WatchFeed). Nil on PostgreSQL.
	connector driver.Connector

	// faults is what the process saw of outages, and the statement timeout; every view of the
	// database (WithDriver) shares it.
	faults *faults

	// txs is what the data layer keeps of each PostgreSQL write transaction while it runs
	// (txstate.go); every view of the database shares it.
	txs *txStates

	// inUse releases the shared lock that says a process has the SQLite file open (see
	// holdInUse); nil on PostgreSQL.
	inUse func()
	// path is the SQLite file, "" on PostgreSQL (for TryLock's lock files).
	path string
	// conns is the size of the connection pool.
	conns int
}

// newDB wraps an opened handle.
func newDB(raw *sql.DB, dialectName string) *DB {
	return (&DB{SQL: raw, Dialect: dialectName, faults: &faults{}, txs: &txStates{}}).WithDriver(func(d dialect.Driver) dialect.Driver { return d })
}

// WaitCommits returns once no goroutine of the group commit runs: every write that has
// returned is committed, and the goroutine that committed it has found nothing more to do.
func (db *DB) WaitCommits() { db.commits.leaders.Wait() }

// Close closes the database, after the group commit's last goroutine has returned.
func (db *DB) Close() error {
	db.WaitCommits()
	err := db.Client.Close()
	if db.inUse != nil {
		db.inUse()
	}
	return err
}

// sqlitePragmas configure every SQLite connection:
//   - WAL lets readers run while one writer commits;
//   - synchronous=FULL fsyncs the WAL at every commit, so an acknowledged write survives a
//     process crash and a power loss (NORMAL would survive only a process crash);
//   - foreign keys on, a 10 s busy timeout for writers from other processes (the CLI beside
//     serve), and BEGIN IMMEDIATE so a write transaction takes the write lock up front instead
//     of failing when it upgrades from reading;
//   - secure_delete overwrites deleted content, so an erased person's bytes leave the file.
const sqlitePragmas = "_journal_mode=WAL&_synchronous=FULL&_foreign_keys=on&_busy_timeout=10000&_txlock=immediate&_secure_delete=on"

// IsPostgres reports whether dsn names a PostgreSQL database.
func IsPostgres(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
}

// SQLitePath returns the file a SQLite dsn names (a path, optionally written as a file: URI
// with parameters), or "" for a PostgreSQL URL.
func SQLitePath(dsn string) string {
	if IsPostgres(dsn) {
		return ""
	}
	path := strings.TrimPrefix(dsn, "file:")
	if i := strings.IndexByte(path, '?'); i >= 0 {
		path = path[:i]
	}
	return path
}

// ErrNoDatabase is OpenExisting's answer to a SQLite file that does not exist.
var ErrNoDatabase = errors.New("no database file")

// Open opens the database named by dsn: a SQLite file path or a postgres:// URL. A SQLite file
// that does not exist is created. It does not touch the schema; call Prepare or Migrate.
func Open(ctx context.Context, dsn string) (*DB, error) { return open(ctx, dsn, true) }

// OpenExisting opens the database like Open but never creates a SQLite file: a path that does
// not exist is ErrNoDatabase and leaves nothing behind, so a mistyped path is reported instead
// of becoming a new, empty database. PostgreSQL URLs open as with Open.
func OpenExisting(ctx context.Context, dsn string) (*DB, error) { return open(ctx, dsn, false) }

func open(ctx context.Context, dsn string, create bool) (*DB, error) {
	if IsPostgres(dsn) {
		return openPostgres(ctx, dsn)
	}
	path := SQLitePath(dsn)
	if path == "" {
		return nil, fmt.Errorf("database path is empty")
	}
	params := sqlitePragmas
	if !create {
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%w: %s", ErrNoDatabase, path)
		}
		// Should the file vanish after the check, SQLite still refuses to create it.
		params += "&mode=rw"
	}
	// Every handle on the file says so with a shared lock, which creditd restore waits for no
	// one to hold; taken before SQLite opens the file, so a restore in progress is refused
	// here rather than read half-way.
	inUse, err := holdInUse(path)
	if err != nil {
		return nil, err
	}
	faults := &faults{}
	connector := cachingConnector{dsn: "file:" + (&url.URL{Path: path}).EscapedPath() + "?" + params, driver: &sqlite3.SQLiteDriver{}, faults: faults}
	raw := sql.OpenDB(connector)
	// Keep every connection open: database/sql keeps only two idle ones by default, so under
	// concurrent reads it closed and reopened SQLite connections all the time, paying for the
	// pragmas and a cold page cache each time. Reads run on the CPU, so more connections than
	// twice the cores only add page caches (about 2 MB each).
	conns := max(4, 2*runtime.GOMAXPROCS(0))
	raw.SetMaxOpenConns(conns)
	raw.SetMaxIdleConns(conns)
	if err := raw.PingContext(ctx); err != nil {
		raw.Close()
		inUse()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	db := newDB(raw, dialect.SQLite)
	db.connector, db.inUse = connector, inUse
	db.path, db.faults, db.conns = path, faults, conns
	return db, nil
}

// postgresConns is the size of a process's pool of PostgreSQL connections.
const postgresConns = 20

func openPostgres(ctx context.Context, dsn string) (*DB, error) {
	config, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("open PostgreSQL: %w", err)
	}
	// No JIT compilation: PostgreSQL compiles a statement whose estimated cost passes
	// jit_above_cost, and creditd's statements are short reads and writes for which a compile
	// never pays. The store's DSO (IssuedByDay) on the large store ran 0.3 s and compiled for
	// 1.3–2.1 s on top (EXPLAIN ANALYZE; BENCHMARKS.md, "Issue 38, third pass"). Sent in the
	// startup message: no round trip. A DSN that sets jit itself (…?jit=on) keeps its own.
	if _, ok := config.RuntimeParams["jit"]; !ok {
		config.RuntimeParams["jit"] = "off"
	}
	faults := &faults{}
	// Each new connection starts with the statement timeout of the moment (LimitStatements),
	// sent in its startup message: no round trip of its own.
	raw := stdlib.OpenDB(*config, stdlib.OptionBeforeConnect(func(_ context.Context, c *pgx.ConnConfig) error {
		if d := faults.statementTimeout.Load(); d > 0 {
			// c is this connection's copy of the configuration, but its map is everyone's.
			params := maps.Clone(c.RuntimeParams)
			params["statement_timeout"] = strconv.FormatInt(max(1, d/int64(time.Millisecond)), 10)
			c.RuntimeParams = params
		}
		return nil
	}))
	raw.SetMaxOpenConns(postgresConns)
	raw.SetMaxIdleConns(postgresConns)
	raw.SetConnMaxIdleTime(5 * time.Minute)
	pingCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := raw.PingContext(pingCtx); err != nil {
		raw.Close()
		return nil, fmt.Errorf("open PostgreSQL: %w", err)
	}
	db := newDB(raw, dialect.Postgres)
	db.faults, db.conns = faults, postgresConns
	return db, nil
}

// PurgeErased makes erased values unrecoverable from the database files. On SQLite,
// secure_delete already zeroes freed content in the main file, and a truncating checkpoint
// moves the WAL's pages home and empties the WAL, which still held the old page images. On
// PostgreSQL, VACUUM FULL rewrites the applications table without the old row versions.
func (db *DB) PurgeErased(ctx context.Context) error {
	if db.Dialect == dialect.Postgres {
		// A rewrite of the table may take longer than serve's statement timeout, which bounds
		// a request's statements: lift it for this one, on a connection of its own.
		conn, err := db.SQL.Conn(ctx)
		if err != nil {
			return fmt.Errorf("vacuum: %w", err)
		}
		defer conn.Close()
		if _, err := conn.ExecContext(ctx, "SET statement_timeout = 0"); err != nil {
			return fmt.Errorf("vacuum: %w", err)
		}
		defer conn.ExecContext(context.WithoutCancel(ctx), "RESET statement_timeout")
		if _, err := conn.ExecContext(ctx, "VACUUM FULL applications"); err != nil {
			return fmt.Errorf("vacuum: %w", err)
		}
		return nil
	}
	// A reader in another process (serve) can hold the log for a moment; try a few times, each
	// waiting a quarter of a second rather than the connection's busy timeout: Litestream,
	// replicating the file, holds a read transaction almost all the time, and a staff member
	// erasing a person in the console should hear that in seconds, not minutes.
	conn, err := db.SQL.Conn(ctx)
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	defer conn.Close()
	var busyTimeout int
	if err := conn.QueryRowContext(ctx, "PRAGMA busy_timeout").Scan(&busyTimeout); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	if _, err := conn.ExecContext(ctx, "PRAGMA busy_timeout = 250"); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), fmt.Sprintf("PRAGMA busy_timeout = %d", busyTimeout))
	for attempt := 0; ; attempt++ {
		var busy, logFrames, checkpointed int
		if err := conn.QueryRowContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)").Scan(&busy, &logFrames, &checkpointed); err != nil {
			return fmt.Errorf("checkpoint: %w", err)
		}
		if busy == 0 {
			return nil
		}
		if attempt == 10 {
			return fmt.Errorf("checkpoint: the values are erased from the database, but its write-ahead log still holds them: another process keeps a read transaction open on it (Litestream, when it replicates the database, always does); run the erasure again once it is stopped (README: Backups)")
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Ping reports whether the database answers; its error is marked ErrUnavailable.
func (db *DB) Ping(ctx context.Context) error {
	if err := db.SQL.PingContext(ctx); err != nil {
		return fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	return nil
}

// TryLock takes a lock named name across every instance on this database, without waiting.
// It returns ok=false when another holds it. The lock dies with its holder, whatever the way
// it stops: on PostgreSQL it is a session advisory lock on a connection of its own; on SQLite,
// whose processes share one machine, an exclusive flock(2) on a lock file beside the
// database (see lockFile), which the kernel releases when the process exits or is killed.
func (db *DB) TryLock(ctx context.Context, name string) (release func(), ok bool, err error) {
	if db.Dialect != dialect.Postgres {
		return db.lockFile(name)
	}
	conn, err := db.SQL.Conn(ctx)
	if err != nil {
		return nil, false, err
	}
	if err := conn.QueryRowContext(ctx, "SELECT pg_try_advisory_lock(hashtext($1))", name).Scan(&ok); err != nil || !ok {
		conn.Close()
		return nil, false, err
	}
	return func() {
		_, _ = conn.ExecContext(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock(hashtext($1))", name)
		conn.Close()
	}, true, nil
}

// WithDriver returns the database seen through a wrapped driver: the same connections, with
// every statement of its ent client going through wrap first, and commits of its own. Tests and
// the benchmarks count statements this way.
func (db *DB) WithDriver(wrap func(dialect.Driver) dialect.Driver) *DB {
	var base dialect.Driver = entsql.OpenDB(db.Dialect, db.SQL)
	switch db.Dialect {
	case dialect.Postgres:
		base = planDriver{base}
	case dialect.SQLite:
		base = sqliteDriver{Driver: base.(*entsql.Driver), pool: db.SQL}
	}
	drv := wrap(base)
	client := ent.NewClient(ent.Driver(drv))
	return &DB{Client: client, SQL: db.SQL, Dialect: db.Dialect, driver: drv, wrap: wrap, faults: db.faults, txs: db.txs, path: db.path, conns: db.conns, keyChanges: &sharedRead{}, commits: groupCommit{client: client}, connector: db.connector}
}

// keyChangesQuery reads the one row of key_changes (migration 0007). The table's name is
// quoted the way ent quotes it on both dialects, so statement logs name it.
const keyChangesQuery = `SELECT n FROM "key_changes" WHERE id = 1`

// KeyChanges returns the count of changes to API keys and secrets that can end an
// authentication: triggers bump it in every transaction that revokes a key or moves a
// secret's expiry, whichever process runs it (see credit's Authenticate), and every
// authenticated request reads it.
//
// Concurrent callers share a read, but only one that started after they called (see
// sharedRead), so what each sees was read after any revocation that returned before it
// called: a store's subscribers all confirm their keys at once after each event (credit's
// EventSubscription.Confirm), and share a few reads instead of making one each. A caller whose
// context has no deadline gets that of the database's statements (LimitStatements), else
// sharedReadTimeout's. SQLite: the statement stays prepared on
// each connection, and it runs without the caller's cancellation (a one-row read in WAL mode
// never waits), since go-sqlite3 starts a goroutine to watch a cancellable context on every row.
func (db *DB) KeyChanges(ctx context.Context) (int64, error) {
	return db.keyChanges.do(ctx, db.readKeyChanges)
}

// KeyChangesAre returns a condition for a query's Where that holds while the count of key
// changes is n: a read that adds it confirms a key cached under n in its own statement, whose
// snapshot includes every revocation that committed before the statement began.
func (db *DB) KeyChangesAre(n int64) func(*entsql.Selector) {
	return func(s *entsql.Selector) {
		s.Where(entsql.P(func(b *entsql.Builder) {
			b.WriteString("(" + keyChangesQuery + ") = ").Arg(n)
		}))
	}
}

func (db *DB) readKeyChanges(ctx context.Context) (int64, error) {
	if db.Dialect != dialect.Postgres {
		ctx = context.WithoutCancel(ctx)
	} else if _, ok := ctx.Deadline(); !ok {
		// The deadline of the database's statements (serve's --db-timeout, LimitStatements),
		// which also bounds each database read of a live subscription.
		d := time.Duration(db.faults.statementTimeout.Load())
		if d <= 0 {
			d = sharedReadTimeout
		}
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
	}
	var rows entsql.Rows
	if err := db.driver.Query(ctx, keyChangesQuery, []any{}, &rows); err != nil {
		return 0, err
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return 0, err
		}
		return 0, errors.New("key_changes has no row: run creditd migrate")
	}
	var n int64
	if err := rows.Scan(&n); err != nil {
		return 0, err
	}
	return n, rows.Close()
}

// sharedRead lets concurrent callers share reads of a value that only grows with commits,
// without ever answering a caller with a read that started before it called: a caller that
// finds no read running starts one; a caller that finds one running (it may have started
// before the caller came) joins the next read, which starts when the running one ends and
// serves everyone who joined it. Under load that is one read per round trip instead of one per
// request; alone, a caller waits for its own read only.
type sharedRead struct {
	mu      sync.Mutex
	running bool
	next    *sharedFlight
}

type sharedFlight struct {
	done chan struct{}
	n    int64
	err  error
}

// sharedReadTimeout bounds a read of the count of key changes on PostgreSQL whose context has
// no deadline, when the database's statements have none either (LimitStatements): a read made
// for the callers who joined it runs on a context of its own (any one caller's cancellation
// must not fail the others), and so does a live subscriber's.
const sharedReadTimeout = 10 * time.Second

func (s *sharedRead) do(ctx context.Context, read func(context.Context) (int64, error)) (int64, error) {
	s.mu.Lock()
	if !s.running {
		s.running = true
		s.mu.Unlock()
		n, err := read(ctx)
		s.finish(read)
		return n, err
	}
	f := s.next
	if f == nil {
		f = &sharedFlight{done: make(chan struct{})}
		s.next = f
	}
	s.mu.Unlock()
	select {
	case <-f.done:
		return f.n, f.err
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

// finish ends the running read and starts the next one if callers joined it.
func (s *sharedRead) finish(read func(context.Context) (int64, error)) {
	s.mu.Lock()
	f := s.next
	s.next = nil
	s.running = f != nil
	s.mu.Unlock()
	if f == nil {
		return
	}
	go func() {
		// No caller's context: read bounds its own time (readKeyChanges: the statements'
		// deadline).
		f.n, f.err = read(context.Background())
		close(f.done)
		s.finish(read)
	}()
}
