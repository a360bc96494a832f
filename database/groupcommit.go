package database

import (
	"context"
	"fmt"
	"sync"

	"github.com/creditd/creditd/ent"
)

// Group commit for SQLite.
//
// Every commit of a durable SQLite database waits for an fsync of its write-ahead log (about a
// millisecond on this project's disks), and SQLite admits one writer at a time, so committing
// each write on its own caps a process at roughly one write per fsync. Instead, writes that
// arrive while a transaction commits wait together and then run one after another in a single
// transaction, each inside its own savepoint, and share one commit and one fsync:
//
//   - a write whose function fails is rolled back to its savepoint and gets its error, as if
//     its own transaction had rolled back; the others are unaffected;
//   - no caller returns before the commit that holds its write is durable, and when that
//     commit fails every write in it gets the error;
//   - writes run in arrival order and each sees the ones before it, exactly as if they had
//     committed one by one.
//
// Without concurrent writers a batch holds a single write and behaves as a plain transaction.
//
// Performance code, kept because it was measured (BENCHMARKS.md, commit 105d037: writes 686 →
// 836/s, 1.56 → 1.21 ms a write). It is SQLite's InTx; PostgreSQL commits each on its own.

// maxGroup bounds how many writes share one transaction.
const maxGroup = 128

// groupCommit batches write transactions on one SQLite database.
type groupCommit struct {
	client *ent.Client

	mu      sync.Mutex
	queue   []*groupWrite
	leading bool // a goroutine is committing batches
	// leaders counts the leading goroutines still running, so that closing the database
	// returns only after the last one has (DB.Close): it outlives the last write it commits by
	// the moment it takes to find the queue empty.
	leaders sync.WaitGroup

	// current is the transaction of the write running in a savepoint of its own
	// (groupSavepoint), nil when none is. Only the leading goroutine sets it, before and
	// after each write, and only that write reads it (see inSavepoint).
	current *ent.Tx
}

// groupSavepoint is the savepoint of each write of a batch.
const groupSavepoint = "group_write"

// inSavepoint reports whether tx runs a write of a batch in a savepoint of its own, which it
// may roll back to without touching the batch's other writes. Only that write may ask.
func (g *groupCommit) inSavepoint(tx *ent.Tx) bool { return tx != nil && g.current == tx }

// groupWrite is one caller's write waiting for its batch.
type groupWrite struct {
	ctx      context.Context
	fn       func(tx *ent.Tx) error
	err      error
	panicked any
	done     chan struct{}
}

// run runs fn in a transaction shared with the writes waiting alongside it, and returns once
// that transaction committed (fn's changes are durable) or fn's changes were rolled back.
// A panic in fn is re-raised here, after fn's changes were rolled back.
func (g *groupCommit) run(ctx context.Context, fn func(tx *ent.Tx) error) error {
	w := &groupWrite{ctx: ctx, fn: fn, done: make(chan struct{})}
	g.mu.Lock()
	g.queue = append(g.queue, w)
	if !g.leading {
		g.leading = true
		g.leaders.Add(1)
		go func() {
			defer g.leaders.Done()
			g.lead()
		}()
	}
	g.mu.Unlock()
	<-w.done
	if w.panicked != nil {
		panic(w.panicked)
	}
	return w.err
}

// lead commits batches until no write waits.
func (g *groupCommit) lead() {
	for {
		g.mu.Lock()
		n := min(len(g.queue), maxGroup)
		if n == 0 {
			g.leading = false
			g.mu.Unlock()
			return
		}
		batch := g.queue[:n:n]
		g.queue = g.queue[n:]
		if len(g.queue) == 0 {
			g.queue = nil
		}
		g.mu.Unlock()
		g.commit(batch)
		for _, w := range batch {
			close(w.done)
		}
	}
}

// commit runs a batch in one transaction and sets each write's outcome.
func (g *groupCommit) commit(batch []*groupWrite) {
	fail := func(ws []*groupWrite, err error) {
		for _, w := range ws {
			if w.err == nil && w.panicked == nil {
				w.err = err
			}
		}
	}
	// The transaction belongs to no single caller: one leaving must not roll back the others.
	ctx := context.WithoutCancel(batch[0].ctx)
	tx, err := g.client.Tx(ctx)
	if err != nil {
		fail(batch, fmt.Errorf("begin transaction: %w", err))
		return
	}
	savepoints := len(batch) > 1
	var applied []*groupWrite
	for _, w := range batch {
		if err := w.ctx.Err(); err != nil {
			w.err = err // its caller is gone: do not write on its behalf
			continue
		}
		if savepoints {
			if _, err := tx.ExecContext(ctx, "SAVEPOINT "+groupSavepoint); err != nil {
				_ = tx.Rollback()
				fail(batch, fmt.Errorf("savepoint: %w", err))
				return
			}
		}
		if savepoints {
			g.current = tx
		}
		w.panicked, w.err = runWrite(w, tx)
		g.current = nil
		if w.err == nil && w.panicked == nil {
			if savepoints {
				if _, err := tx.ExecContext(ctx, "RELEASE "+groupSavepoint); err != nil {
					_ = tx.Rollback()
					fail(batch, fmt.Errorf("release savepoint: %w", err))
					return
				}
			}
			applied = append(applied, w)
			continue
		}
		if !savepoints {
			_ = tx.Rollback()
			return
		}
		// Undo this write only. If SQLite already rolled the whole transaction back (it does
		// on some I/O errors), this fails and so does the batch: nothing was acknowledged yet.
		if _, err := tx.ExecContext(ctx, "ROLLBACK TO "+groupSavepoint); err != nil {
			_ = tx.Rollback()
			fail(batch, fmt.Errorf("roll back to savepoint: %w", err))
			return
		}
		if _, err := tx.ExecContext(ctx, "RELEASE "+groupSavepoint); err != nil {
			_ = tx.Rollback()
			fail(batch, fmt.Errorf("release savepoint: %w", err))
			return
		}
	}
	if len(applied) == 0 {
		_ = tx.Rollback()
		return
	}
	if err := tx.Commit(); err != nil {
		fail(applied, fmt.Errorf("commit: %w", err))
	}
}

// runWrite runs one write's function, turning a panic into a value to re-raise in its caller.
func runWrite(w *groupWrite, tx *ent.Tx) (panicked any, err error) {
	defer func() {
		if p := recover(); p != nil {
			panicked = p
		}
	}()
	return nil, w.fn(tx)
}
