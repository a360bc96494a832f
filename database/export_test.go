package database

import "context"

// QueuedWrites is how many writes wait for the group commit in progress.
func (db *DB) QueuedWrites() int {
	db.commits.mu.Lock()
	defer db.commits.mu.Unlock()
	return len(db.commits.queue)
}

// MigrateTo applies the migrations up to version.
func (db *DB) MigrateTo(ctx context.Context, version string) error { return db.migrateTo(ctx, version) }
