package database

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"
)

// faults is what a process saw of the database's outages that a ping cannot see, and the
// statement timeout of its connections.
type faults struct {
	// statementTimeout is PostgreSQL's statement_timeout for connections opened from now on,
	// in nanoseconds; zero leaves the server's.
	statementTimeout atomic.Int64
	// autoCheckpoint is SQLite's wal_autocheckpoint (pages) for connections opened from now
	// on, plus one; zero leaves SQLite's default (1,000 pages).
	autoCheckpoint atomic.Int64
	// fullAt is when a write last failed on a full disk, wroteAt when one last committed
	// (Unix nanoseconds).
	fullAt, wroteAt atomic.Int64
	// fullErr is the error of the last write that failed on a full disk.
	fullErr atomic.Pointer[error]
}

// fullMemory is how long a full disk is remembered without a write that proves otherwise:
// a disk freed while nothing writes reads as ready again after it.
const fullMemory = time.Minute

// fullSettle is how long after the last write refused on a full disk a commit must come to show
// that space was freed: a refused write's own clean-up (giving its Idempotency-Key claim up)
// commits right after it, and deleting takes no space.
const fullSettle = time.Second

// LimitStatements bounds every statement of this database's connections to d. On PostgreSQL
// it is statement_timeout, from the server's side: a statement whose client gave up (its
// request's deadline passed, its link stalled) does not keep running and holding locks. On
// SQLite, whose statements run in-process and do not watch their context (see cachingConn),
// it is the busy timeout: how long a statement waits for another process's write lock, the
// one way a local statement waits. Connections open now are closed when idle and reopened with
// the limit.
func (db *DB) LimitStatements(d time.Duration) {
	if d <= 0 {
		return
	}
	db.faults.statementTimeout.Store(int64(d))
	// Closing the idle connections makes the next ones open with the limit.
	db.SQL.SetMaxIdleConns(0)
	db.SQL.SetMaxIdleConns(db.conns)
}

// SetWALAutoCheckpoint sets SQLite's automatic checkpoint on every connection of this
// database: after a commit that leaves the write-ahead log at pages pages or more, the
// committing connection copies the log back into the database file (a PASSIVE checkpoint).
// SQLite's default is 1,000 pages; 0 turns automatic checkpoints off, for a process beside
// which another one checkpoints (Litestream, see the README's "Backups"): without one, the
// log then grows without bound. PostgreSQL has no such setting: it returns an error.
func (db *DB) SetWALAutoCheckpoint(pages int) error {
	if db.path == "" {
		return fmt.Errorf("--wal-autocheckpoint applies to SQLite only; PostgreSQL checkpoints by itself")
	}
	if pages < 0 {
		return fmt.Errorf("wal-autocheckpoint must be 0 (off) or a number of pages, got %d", pages)
	}
	db.faults.autoCheckpoint.Store(int64(pages) + 1)
	// Closing the idle connections makes the next ones open with the setting.
	db.SQL.SetMaxIdleConns(0)
	db.SQL.SetMaxIdleConns(db.conns)
	return nil
}

// noteWrite records how a top-level write transaction ended, for Ready.
func (db *DB) noteWrite(err error) {
	now := time.Now().UnixNano()
	switch {
	case err == nil:
		db.faults.wroteAt.Store(now)
	case IsDiskFull(err):
		db.faults.fullErr.Store(&err)
		db.faults.fullAt.Store(now)
	}
}

// Ready reports whether the database can serve requests: it answers a ping, and no write
// failed on a full disk in the last minute unless one committed more than fullSettle after
// it. Its error is marked ErrUnavailable, and says why.
func (db *DB) Ready(ctx context.Context) error {
	if err := db.Ping(ctx); err != nil {
		return err
	}
	full := db.faults.fullAt.Load()
	if db.faults.wroteAt.Load() < full+int64(fullSettle) && time.Since(time.Unix(0, full)) < fullMemory {
		if p := db.faults.fullErr.Load(); p != nil {
			return fmt.Errorf("%w: writes fail, the disk is full: %w", ErrUnavailable, *p)
		}
	}
	return nil
}
