package database

import (
	"context"
	"database/sql/driver"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mattn/go-sqlite3"
)

// A prepared-statement cache for SQLite connections.
//
// go-sqlite3 compiles every statement from its SQL text on every call (sqlite3_prepare_v2) and
// throws it away afterwards; for the service's short indexed reads that compilation cost as
// much as running them (12-15% of creditd's CPU under load). Each connection here keeps the
// statements it compiled, keyed by their SQL text, and runs them again with new arguments.
// SQLite re-compiles a kept statement by itself when the schema changed.
//
// Kept are queries, whose rows reset them when closed, and INSERT, UPDATE and DELETE statements
// without RETURNING run with Exec, which run to completion in one step (go-sqlite3 leaves an
// Exec'd statement unreset, so one that still had rows to give, a PRAGMA say, would keep the
// transaction busy). Only single statements with exactly their positional arguments are
// kept; anything else takes go-sqlite3's own path. A kept
// statement is reused only once the rows of its previous run are closed, and a statement that
// failed is dropped rather than reused.
//
// Performance code, kept because it was measured (BENCHMARKS.md, commit 13e44a0: a ledger page
// 886/902 → 798/734 µs, a write 1.52 → 1.19–1.28 ms). It is tied to go-sqlite3's driver
// interfaces, which it wraps per connection.

// maxCachedStatements bounds each connection's cache; ent writes "IN (?, ?, …)" lists of
// varying length, so the set of texts is not fixed.
const maxCachedStatements = 128

// cachingConnector opens SQLite connections that keep their prepared statements.
type cachingConnector struct {
	dsn    string
	driver *sqlite3.SQLiteDriver
	// faults holds the busy timeout of new connections (DB.LimitStatements).
	faults *faults
}

func (c cachingConnector) Connect(context.Context) (driver.Conn, error) {
	conn, err := c.driver.Open(c.dsn)
	if err != nil {
		return nil, err
	}
	if err := registerSQLiteFunctions(conn.(*sqlite3.SQLiteConn)); err != nil {
		conn.Close()
		return nil, err
	}
	if d := c.faults.statementTimeout.Load(); d > 0 {
		// How long a statement waits for another process's write lock: the request's
		// deadline, which statements here do not watch (see cachingConn).
		if _, err := conn.(*sqlite3.SQLiteConn).Exec(fmt.Sprintf("PRAGMA busy_timeout = %d", max(1, d/int64(time.Millisecond))), nil); err != nil {
			conn.Close()
			return nil, err
		}
	}
	if n := c.faults.autoCheckpoint.Load(); n > 0 {
		if _, err := conn.(*sqlite3.SQLiteConn).Exec(fmt.Sprintf("PRAGMA wal_autocheckpoint = %d", n-1), nil); err != nil {
			conn.Close()
			return nil, err
		}
	}
	return &cachingConn{SQLiteConn: conn.(*sqlite3.SQLiteConn), stmts: map[string]*cachedStmt{}}, nil
}

func (c cachingConnector) Driver() driver.Driver { return c.driver }

// cachingConn is a go-sqlite3 connection with a statement cache. database/sql uses a
// connection from one goroutine at a time, so the map needs no lock.
type cachingConn struct {
	*sqlite3.SQLiteConn
	stmts map[string]*cachedStmt
	clock uint64
}

type cachedStmt struct {
	stmt     *sqlite3.SQLiteStmt
	busy     atomic.Bool // its rows are open
	dropped  atomic.Bool // evicted while busy: finalize when the rows close
	lastUsed uint64
}

// cached returns the kept statement for query, compiling and keeping it if need be, or nil
// when query must take the uncached path.
func (c *cachingConn) cached(ctx context.Context, query string, args []driver.NamedValue) *cachedStmt {
	if strings.Contains(query, ";") {
		return nil
	}
	for _, a := range args {
		if a.Name != "" {
			return nil
		}
	}
	c.clock++
	cs, ok := c.stmts[query]
	if ok && cs.dropped.Load() {
		delete(c.stmts, query) // its last run failed; it was finalized when its rows closed
		ok = false
	}
	if !ok {
		s, err := c.SQLiteConn.PrepareContext(ctx, query)
		if err != nil {
			return nil // the uncached path reports the error
		}
		if len(c.stmts) >= maxCachedStatements {
			c.evictOldest()
		}
		cs = &cachedStmt{stmt: s.(*sqlite3.SQLiteStmt)}
		c.stmts[query] = cs
	}
	if cs.busy.Load() || cs.stmt.NumInput() != len(args) {
		return nil
	}
	cs.lastUsed = c.clock
	return cs
}

func (c *cachingConn) evictOldest() {
	var oldest string
	var at uint64
	for q, cs := range c.stmts {
		if oldest == "" || cs.lastUsed < at {
			oldest, at = q, cs.lastUsed
		}
	}
	c.drop(oldest)
}

// drop forgets a statement and finalizes it, at once or, if its rows are open, when they close.
func (c *cachingConn) drop(query string) {
	cs, ok := c.stmts[query]
	if !ok {
		return
	}
	delete(c.stmts, query)
	cs.dropped.Store(true)
	if !cs.busy.Load() {
		_ = cs.stmt.Close()
	}
}

// Statements run detached from their context's cancellation (context.WithoutCancel). For a
// context that can be cancelled, as every HTTP request's can, go-sqlite3 starts a goroutine
// and a channel for each statement and for each row it steps to, to call sqlite3_interrupt
// on cancellation; a page of 250 companies made 250 of them. creditd's statements are short
// indexed reads and single-row writes, so a request that went away finishes its current
// statement; database/sql still stops between statements, at the next one it is asked for,
// and a transaction still rolls back. An interrupted kept statement was also dropped and
// compiled again on its next use.

// BeginTx begins a transaction, detached from ctx's cancellation as the statements are.
func (c *cachingConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	return c.SQLiteConn.BeginTx(context.WithoutCancel(ctx), opts)
}

// QueryContext runs a query through the cache.
func (c *cachingConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	ctx = context.WithoutCancel(ctx)
	cs := c.cached(ctx, query, args)
	if cs == nil {
		return c.SQLiteConn.QueryContext(ctx, query, args)
	}
	rows, err := cs.stmt.QueryContext(ctx, args)
	if err != nil {
		c.drop(query)
		return nil, err
	}
	cs.busy.Store(true)
	return &cachedRows{SQLiteRows: rows.(*sqlite3.SQLiteRows), cs: cs}, nil
}

// ExecContext runs INSERT, UPDATE and DELETE statements through the cache.
func (c *cachingConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	ctx = context.WithoutCancel(ctx)
	var cs *cachedStmt
	if completesInOneStep(query) {
		cs = c.cached(ctx, query, args)
	}
	if cs == nil {
		return c.SQLiteConn.ExecContext(ctx, query, args)
	}
	res, err := cs.stmt.ExecContext(ctx, args)
	if err != nil {
		c.drop(query)
	}
	return res, err
}

// completesInOneStep reports whether a statement is a data change that returns no rows.
func completesInOneStep(query string) bool {
	q := strings.TrimSpace(query)
	if len(q) < 6 {
		return false
	}
	switch strings.ToUpper(q[:6]) {
	case "INSERT", "UPDATE", "DELETE":
		return !strings.Contains(strings.ToUpper(q), "RETURNING")
	}
	return false
}

// Close finalizes the kept statements, then closes the connection.
func (c *cachingConn) Close() error {
	for q := range c.stmts {
		c.drop(q)
	}
	return c.SQLiteConn.Close()
}

// cachedRows are the rows of a kept statement: closing them resets the statement for its next
// run (go-sqlite3 does that for statements it did not compile itself) and frees it.
type cachedRows struct {
	*sqlite3.SQLiteRows
	cs *cachedStmt
}

func (r *cachedRows) Close() error {
	err := r.SQLiteRows.Close()
	if err != nil && !r.cs.dropped.Load() {
		// The statement's last step failed; compile it afresh next time. Close may run on
		// database/sql's cancellation goroutine, so mark it instead of touching the map.
		r.cs.dropped.Store(true)
	}
	r.cs.busy.Store(false)
	if r.cs.dropped.Load() {
		_ = r.cs.stmt.Close()
	}
	return err
}
