package database

import (
	"context"
	"database/sql"
	"fmt"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"

	"github.com/creditd/creditd/ent"
)

// ReadSnapshot runs fn with a context that carries one read-only transaction, so that every
// read fn makes through the domain's Reader sees the database as of one moment, however long
// fn runs and whatever commits meanwhile (the export, contract §18).
//
// PostgreSQL: a REPEATABLE READ READ ONLY transaction, whose snapshot is taken by its first
// statement. SQLite: a deferred BEGIN on a connection of its own; in WAL mode the first read
// fixes the transaction's view of the file, and writers go on appending to the WAL beside it
// (a checkpoint cannot go past the snapshot while it is open, so the WAL grows meanwhile).
// The transaction ends when fn returns, also when ctx is cancelled (a client gone): the
// snapshot is released at once. Its statements go through WithDriver's wrapper, as the
// client's do (tests fault them, the benchmarks count them).
//
// Errors: the database's, and fn's.
func (db *DB) ReadSnapshot(ctx context.Context, fn func(ctx context.Context) error) error {
	var q entsql.ExecQuerier
	if db.Dialect == dialect.Postgres {
		tx, err := db.SQL.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true})
		if err != nil {
			return fmt.Errorf("begin snapshot: %w", err)
		}
		// Read only: rolling back and committing are the same, and rollback also ends a
		// transaction whose statement failed.
		defer tx.Rollback()
		q = tx
	} else {
		conn, err := db.SQL.Conn(ctx)
		if err != nil {
			return fmt.Errorf("snapshot connection: %w", err)
		}
		defer conn.Close()
		// A plain BEGIN is deferred (the pool's _txlock=immediate applies only to the
		// driver's own transactions), so it takes no write lock.
		if _, err := conn.ExecContext(ctx, "BEGIN"); err != nil {
			return fmt.Errorf("begin snapshot: %w", err)
		}
		// Without the request's cancellation: the connection goes back to the pool and must
		// not keep the snapshot open there.
		defer conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK") //nolint:errcheck
		q = conn
	}
	var drv dialect.Driver = snapshotDriver{entsql.NewDriver(db.Dialect, entsql.Conn{ExecQuerier: q})}
	if db.wrap != nil {
		drv = db.wrap(drv)
	}
	client := ent.NewClient(ent.Driver(drv))
	tx, err := client.Tx(ctx)
	if err != nil {
		return err
	}
	return fn(ent.NewTxContext(ctx, tx))
}

// snapshotDriver is the driver of a snapshot's ent client: its statements run in the
// snapshot's transaction, and the transaction ent asks of it is that same one (a transaction
// whose commit and rollback do nothing: ReadSnapshot ends the real one).
type snapshotDriver struct{ *entsql.Driver }

// Tx returns the snapshot itself.
func (d snapshotDriver) Tx(context.Context) (dialect.Tx, error) { return dialect.NopTx(d.Driver), nil }
