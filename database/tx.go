package database

import (
	"context"
	"fmt"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"

	"github.com/creditd/creditd/ent"
)

// Transactions for the domain. The domain asks for a write transaction, a client to read
// with, and row locks; how each database provides them (group commit on SQLite, savepoints
// when an operation joins a request's transaction, FOR UPDATE only where it exists) stays
// here, so package credit never sees a dialect or a driver.

// Ent returns the database's ent client.
func (db *DB) Ent() *ent.Client { return db.Client }

// InTx runs fn in one write transaction and commits it when fn returns nil; fn's error, or the
// commit's, is returned. When ctx already carries a transaction (an idempotent request runs
// all its operations in one), fn joins it inside a savepoint, so that an operation that fails
// after writing undoes only its own writes and the owner of the transaction commits; the
// first operation of a transaction handed over with Join gets the same without a savepoint
// (see Join).
//
// On SQLite, writes of this process queue for the database's single writer and share commits
// (see groupcommit.go); InTx still returns only once fn's changes are durable.
func (db *DB) InTx(ctx context.Context, fn func(tx *ent.Tx) error) error {
	if tx := ent.TxFromContext(ctx); tx != nil {
		if j, _ := ctx.Value(joinKey{}).(*joined); j != nil && j.tx == tx {
			return j.run(ctx, fn)
		}
		return db.inSavepoint(ctx, tx, fn)
	}
	if db.Dialect == dialect.SQLite {
		err := db.commits.run(ctx, fn)
		db.noteWrite(err)
		return err
	}
	err := db.inTx(ctx, fn)
	db.noteWrite(err)
	return err
}

// inTx is InTx's transaction on PostgreSQL.
func (db *DB) inTx(ctx context.Context, fn func(tx *ent.Tx) error) error {
	tx, err := db.Client.Tx(ctx)
	if err != nil {
		return fmt.Errorf("begin transaction: %w", err)
	}
	st := db.txs.begin(tx)
	defer db.txs.end(tx)
	defer func() {
		if p := recover(); p != nil {
			_ = tx.Rollback()
			panic(p)
		}
	}()
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	if err := db.beforeCommit(ctx, tx, st); err != nil {
		_ = tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// WritersTakeTurns reports whether the database runs one write transaction at a time, in
// every process on it: SQLite, whose write transactions begin IMMEDIATE and hold its single
// write lock until they end. A write transaction then sees every write committed before it
// began, and none commits beside it, so what a read in it finds stays true until it commits.
func (db *DB) WritersTakeTurns() bool { return db.Dialect == dialect.SQLite }

// WriteOne runs fn, which makes one write statement, as its own transaction: on PostgreSQL
// outside any transaction block, which makes a single statement atomic in one round trip
// instead of BEGIN, the statement and COMMIT; on SQLite, and when ctx carries a transaction,
// as InTx does.
func (db *DB) WriteOne(ctx context.Context, fn func(client *ent.Client) error) error {
	if db.Dialect == dialect.Postgres && ent.TxFromContext(ctx) == nil {
		err := fn(db.Client)
		db.noteWrite(err)
		return err
	}
	return db.InTx(ctx, func(tx *ent.Tx) error { return fn(tx.Client()) })
}

// Reader returns the client a read in ctx uses: the transaction ctx carries, so that what an
// idempotent request returns includes its own writes, else the database's client.
func (db *DB) Reader(ctx context.Context) *ent.Client {
	if tx := ent.TxFromContext(ctx); tx != nil {
		return tx.Client()
	}
	return db.Client
}

// ForUpdate, given to a query's Where, makes the query lock the rows it reads until the
// transaction ends, so that concurrent writers of the same rows take turns. PostgreSQL takes
// row locks: SELECT ... FOR NO KEY UPDATE, the lock an UPDATE of the row takes anyway, which
// every other writer's lock waits for, but which lets other transactions insert rows that
// refer to the locked one (their foreign-key checks take FOR KEY SHARE). FOR UPDATE would make
// them wait too: every idempotency claim and every insert of another company's rows, which
// all refer to the store's row, would queue behind the store's writer that holds it (issue
// 40: measured in BENCHMARKS.md). No writer changes a key of these rows, and a
// delete takes FOR UPDATE, which still waits. SQLite has none and needs none: its write
// transactions start with BEGIN IMMEDIATE and hold the database's single write lock
// throughout.
func (db *DB) ForUpdate(s *entsql.Selector) {
	if db.Dialect == dialect.Postgres {
		s.For(entsql.LockNoKeyUpdate)
	}
}

// Join returns ctx carrying tx, a transaction of InTx that has written nothing yet, for the
// operations that join it (InTx). Each runs in a savepoint of its own, as with any transaction
// in ctx, except the first where the transaction can restart: nothing was written before it,
// so undoing it is undoing the transaction, and restarting the transaction undoes exactly
// what rolling back to a savepoint would have, without the two statements (SAVEPOINT and
// RELEASE, two round trips on PostgreSQL) that every request would pay. On PostgreSQL a
// transaction restarts with ROLLBACK and BEGIN; on SQLite only a write that group commit runs
// in a savepoint of its own can restart (back to that savepoint), so a write committing
// alone keeps the savepoint.
func (db *DB) Join(ctx context.Context, tx *ent.Tx) context.Context {
	j := &joined{db: db, tx: tx}
	switch {
	case db.Dialect == dialect.Postgres:
		j.restart = "ROLLBACK; BEGIN"
	case db.commits.inSavepoint(tx):
		j.restart = "ROLLBACK TO " + groupSavepoint
	}
	return context.WithValue(ent.NewTxContext(ctx, tx), joinKey{}, j)
}

type joinKey struct{}

// joined is a transaction that operations join (see Join).
type joined struct {
	db *DB
	tx *ent.Tx
	// restart undoes every write of the transaction and leaves it open, or "" where that
	// cannot be done.
	restart string
	// started: an operation has joined the transaction; the next ones run in savepoints.
	started bool
}

// run runs an operation that joins the transaction.
func (j *joined) run(ctx context.Context, fn func(tx *ent.Tx) error) (err error) {
	if j.started || j.restart == "" {
		j.started = true
		return j.db.inSavepoint(ctx, j.tx, fn)
	}
	j.started = true
	defer func() {
		p := recover()
		if p == nil && err == nil {
			return
		}
		rctx, cancel := detached(ctx)
		defer cancel()
		_, rerr := j.tx.ExecContext(rctx, j.restart)
		if rerr == nil {
			rerr = j.db.restarted(rctx, j.tx)
		}
		if rerr != nil {
			// The transaction's state is unknown: end it, so that nothing else the request
			// does can commit (every later statement and the commit fail).
			_ = j.tx.Rollback()
			err = fmt.Errorf("%w (and restarting the transaction failed: %w)", err, rerr)
		}
		if p != nil {
			panic(p)
		}
	}()
	return fn(j.tx)
}

// detached returns ctx without its cancellation but with its deadline: for the statements
// that clean up after a failure, which must run even when the caller left, but never past
// the work's deadline (a stalled link would hold them forever).
func detached(ctx context.Context) (context.Context, context.CancelFunc) {
	d, ok := ctx.Deadline()
	if !ok {
		return context.WithoutCancel(ctx), func() {}
	}
	return context.WithDeadline(context.WithoutCancel(ctx), d)
}

// inSavepoint runs fn inside a savepoint of an enclosing transaction: when fn fails, its own
// writes are undone and the transaction's other writes are kept.
func (db *DB) inSavepoint(ctx context.Context, tx *ent.Tx, fn func(tx *ent.Tx) error) error {
	if _, err := tx.ExecContext(ctx, "SAVEPOINT credit_operation"); err != nil {
		return fmt.Errorf("savepoint: %w", err)
	}
	m := db.markOf(tx)
	if err := fn(tx); err != nil {
		db.rollBackTo(tx, m)
		if _, rerr := tx.ExecContext(ctx, "ROLLBACK TO SAVEPOINT credit_operation"); rerr != nil {
			return fmt.Errorf("%w (and rolling back to the savepoint failed: %w)", err, rerr)
		}
		_, _ = tx.ExecContext(ctx, "RELEASE SAVEPOINT credit_operation")
		return err
	}
	if _, err := tx.ExecContext(ctx, "RELEASE SAVEPOINT credit_operation"); err != nil {
		return fmt.Errorf("release savepoint: %w", err)
	}
	return nil
}
