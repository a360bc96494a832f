package database

import (
	"context"

	"github.com/creditd/creditd/ent"
)

// QueuedWrites is how many writes wait for the group commit in progress.
func (db *DB) QueuedWrites() int {
	db.commits.mu.Lock()
	defer db.commits.mu.Unlock()
	return len(db.commits.queue)
}

// MigrateTo applies the migrations up to version.
func (db *DB) MigrateTo(ctx context.Context, version string) error { return db.migrateTo(ctx, version) }

// InBatch runs fns as one batch of SQLite's group commit, as if they had arrived together:
// each write in a savepoint of its own. It returns each one's error.
func (db *DB) InBatch(ctx context.Context, fns ...func(tx *ent.Tx) error) []error {
	batch := make([]*groupWrite, len(fns))
	for i, fn := range fns {
		batch[i] = &groupWrite{ctx: ctx, fn: fn, done: make(chan struct{})}
	}
	db.commits.commit(batch)
	errs := make([]error, len(fns))
	for i, w := range batch {
		errs[i] = w.err
	}
	return errs
}
