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

// Exported for the external tests of packed reads.
var (
	ParseSQLiteTime = parseSQLiteTime
	ErrRowForm      = errRowForm
)

// PackedCompanies is ReadCompanies's packed read alone, which never falls back.
func PackedCompanies(ctx context.Context, q *ent.CompanyQuery, columns []string) ([]*ent.Company, error) {
	return packedCompanies(ctx, q, columns)
}

// PackedLedgerEntries is ReadLedgerEntries's packed read alone, which never falls back.
func PackedLedgerEntries(ctx context.Context, q *ent.LedgerEntryQuery, columns []string) ([]*ent.LedgerEntry, error) {
	return packedLedgerEntries(ctx, q, columns)
}

// PackedOrPlain is packedOrPlain for the tests.
func PackedOrPlain[T any](packed, plain func() (T, error)) (T, error) {
	return packedOrPlain(packed, plain)
}

// FillInvoiceSettledAt runs migration 0015's step again, in a transaction of its own.
func (db *DB) FillInvoiceSettledAt(ctx context.Context) error {
	tx, err := db.SQL.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fillInvoiceSettledAt(ctx, tx, db.Dialect); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}
