package database_test

import (
	"context"
	"errors"
	"testing"

	"github.com/creditd/creditd/credittest"
	"github.com/creditd/creditd/ent"
	"github.com/creditd/creditd/ent/store"
	"github.com/creditd/creditd/tenant"
)

// TestSQLiteWriteTransactionEnds: SQLite's write transactions, which run on a pooled
// connection without database/sql's Tx (writetx.go), behave as database/sql's did: a write
// whose caller is gone stops at its next statement and leaves nothing; one that fails is rolled
// back; statements after the end are refused; and every connection goes back to the pool out of
// its transaction, so that the writes and reads after them see only what committed.
func TestSQLiteWriteTransactionEnds(t *testing.T) {
	credittest.RequireSQLite(t)
	env := credittest.New(t)
	db := env.DB
	sys := tenant.System(context.Background())
	stores := func(name string) int {
		t.Helper()
		n, err := db.Client.Store.Query().Where(store.Name(name)).Count(sys)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}

	// The caller leaves between two statements: the second is refused, nothing is written.
	ctx, cancel := context.WithCancel(sys)
	err := db.InTx(ctx, func(tx *ent.Tx) error {
		if err := createStore(ctx, tx, "left"); err != nil {
			return err
		}
		cancel()
		return createStore(ctx, tx, "left too")
	})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("a write whose caller left: %v, want context.Canceled", err)
	}
	if n := stores("left") + stores("left too"); n != 0 {
		t.Errorf("%d stores of a write whose caller left", n)
	}

	// A failing write is rolled back; its transaction refuses statements once it ended.
	var ended *ent.Tx
	err = db.InTx(sys, func(tx *ent.Tx) error {
		ended = tx
		if err := createStore(sys, tx, "failed"); err != nil {
			return err
		}
		return errors.New("planted")
	})
	if err == nil || err.Error() != "planted" || stores("failed") != 0 {
		t.Errorf("a failed write: %v, %d stores", err, stores("failed"))
	}
	if err := createStore(sys, ended, "after the end"); err == nil || stores("after the end") != 0 {
		t.Errorf("a statement after the transaction ended: %v", err)
	}

	// Every connection of the pool is out of a transaction: as many concurrent reads as the
	// pool holds, and writes after them, all work and see the committed state only.
	for i := range 20 {
		if err := db.InTx(sys, func(tx *ent.Tx) error { return createStore(sys, tx, "kept") }); err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
	}
	errs := make(chan error, 20)
	for range 20 {
		go func() {
			n, err := db.Client.Store.Query().Where(store.Name("kept")).Count(sys)
			if err == nil && n != 20 {
				err = errors.New("a read saw an uncommitted or missing store")
			}
			errs <- err
		}()
	}
	for range 20 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
