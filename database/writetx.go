package database

import (
	"context"
	"database/sql"
	"database/sql/driver"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
)

// SQLite's write transactions, on a connection taken from the pool, without database/sql's Tx.
//
// database/sql gives every Tx a context of its own that can be cancelled, and starts a
// goroutine for every query made in a Tx, to close its rows when either context ends; it
// starts one for every query outside a Tx too whose context can be cancelled (every
// request's can). In SQLite's write transactions those goroutines, and waking a processor to
// run each, cost about 28 µs of every adjustment's turn on the group commit's one leading
// goroutine, which all of the process's writes wait for (issue 40: 4.5% of the adjustments'
// CPU in BenchmarkAdjustmentRequest), for reads of one row that never wait. So a write
// transaction here is a pooled connection on which BEGIN IMMEDIATE, the statements and
// COMMIT run as plain statements (as ReadSnapshot runs its read transaction), and each
// statement checks its caller's context before it runs instead of having it watched: a
// caller gone stops the write at its next statement, as database/sql's own check did, and a
// statement already running finishes (SQLite's statements do not watch their context either,
// see cachingConn).
//
// Ending the transaction is what database/sql's Tx did: COMMIT, and after a failed COMMIT
// (SQLite may leave the transaction open) or on Rollback, ROLLBACK; a connection still in a
// transaction after that is closed, never handed back to the pool.
//
// Performance code, kept because it was measured (BENCHMARKS.md, issue 40).

// sqliteDriver is the SQLite driver under the ent client: its transactions are connTxs.
type sqliteDriver struct {
	*entsql.Driver
	pool *sql.DB
}

// Tx begins a write transaction: BEGIN IMMEDIATE (the write lock, as the pool's
// _txlock=immediate takes it for database/sql's transactions) on a connection of its own.
func (d sqliteDriver) Tx(ctx context.Context) (dialect.Tx, error) {
	conn, err := d.pool.Conn(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := conn.ExecContext(context.WithoutCancel(ctx), "BEGIN IMMEDIATE"); err != nil {
		conn.Close()
		return nil, err
	}
	return &connTx{conn: conn, q: entsql.Conn{ExecQuerier: conn}}, nil
}

// connTx is a write transaction on conn (see above).
type connTx struct {
	conn  *sql.Conn
	q     entsql.Conn
	ended bool
}

// detach returns ctx without its cancellation, or ctx's error when it is done already. A
// statement after the transaction ended is refused by its connection, closed by then.
func (t *connTx) detach(ctx context.Context) (context.Context, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return context.WithoutCancel(ctx), nil
}

// Exec runs a statement of ent's builders.
func (t *connTx) Exec(ctx context.Context, query string, args, v any) error {
	ctx, err := t.detach(ctx)
	if err != nil {
		return err
	}
	return t.q.Exec(ctx, query, args, v)
}

// Query runs a query of ent's builders.
func (t *connTx) Query(ctx context.Context, query string, args, v any) error {
	ctx, err := t.detach(ctx)
	if err != nil {
		return err
	}
	return t.q.Query(ctx, query, args, v)
}

// ExecContext runs a statement written as SQL (ent.Tx.ExecContext).
func (t *connTx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	ctx, err := t.detach(ctx)
	if err != nil {
		return nil, err
	}
	return t.conn.ExecContext(ctx, query, args...)
}

// QueryContext runs a query written as SQL (ent.Tx.QueryContext).
func (t *connTx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	ctx, err := t.detach(ctx)
	if err != nil {
		return nil, err
	}
	return t.conn.QueryContext(ctx, query, args...)
}

// Commit commits the transaction; when COMMIT fails, the transaction is rolled back.
func (t *connTx) Commit() error {
	if t.ended {
		return sql.ErrTxDone
	}
	_, err := t.conn.ExecContext(context.Background(), "COMMIT")
	t.end(err != nil)
	return err
}

// Rollback rolls the transaction back.
func (t *connTx) Rollback() error {
	if t.ended {
		return sql.ErrTxDone
	}
	t.end(true)
	return nil
}

// end ends the transaction, rolling it back first if asked, and gives the connection back to
// the pool, or closes it when it is still in a transaction.
func (t *connTx) end(rollback bool) {
	t.ended = true
	bg := context.Background()
	if rollback {
		// SQLite may have rolled back already (some errors do); the error that says so is
		// of no interest, the state checked below is.
		_, _ = t.conn.ExecContext(bg, "ROLLBACK")
	}
	_ = t.conn.Raw(func(dc any) error {
		if c, ok := dc.(interface{ AutoCommit() bool }); ok && !c.AutoCommit() {
			return driver.ErrBadConn // still in a transaction: database/sql closes it
		}
		return nil
	})
	_ = t.conn.Close()
}
