package database_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
	"github.com/creditd/creditd/database"
	"github.com/creditd/creditd/ent"
	"github.com/creditd/creditd/ent/company"
	"github.com/creditd/creditd/ent/event"
	"github.com/creditd/creditd/ids"
	"github.com/creditd/creditd/tenant"
)

// TestStoreWritersTakeTurnsOnlyToCommit (PostgreSQL): a writer of one company locks that
// company's row, and its store's event counter only with the last statement before its commit
// (InsertNumberedAtCommit), so the store's writers of other companies, and Idempotency-Key
// claims, pass beside it while it works; writers of the same company still take turns; and the
// store's events are numbered in commit order. Before, a writer locked the store's row before
// its company's and held it to its commit: the adjustment of the other company below waited
// for the first writer (issue 40: 229–286 adjustments a second on one store, BENCHMARKS.md).
func TestStoreWritersTakeTurnsOnlyToCommit(t *testing.T) {
	if credittest.Backend() != "postgres" {
		t.Skip("row locks are PostgreSQL's; SQLite's writers take turns on the database's one write lock")
	}
	t.Parallel()
	env := credittest.NewService(t)
	st := env.MustStore(t, "Store", "EUR")
	a := env.MustCompany(t, st, "A", "100.00")
	b := env.MustCompany(t, st, "B", "100.00")
	ctx := credittest.Staff(st)

	// A writer of company A, holding its lock and with an event queued, until released.
	firstEvent := ids.New("ev")
	locked, release, done := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	go func() {
		done <- env.DB.InTx(ctx, func(tx *ent.Tx) error {
			if err := env.DB.BeforeCompanyLock(tx, a.ID); err != nil {
				return err
			}
			if _, err := tx.Company.Query().Where(company.ID(a.ID), env.DB.ForUpdate).Only(ctx); err != nil {
				return err
			}
			if err := env.DB.InsertNumberedAtCommit(ctx, tx, event.Table, []string{"id", "store_id", "type", "occurred_at", "data"},
				[]any{firstEvent, st, "key.created", time.Now().UTC(), `{"object":{}}`}); err != nil {
				return err
			}
			close(locked)
			<-release
			return nil
		})
	}()
	select {
	case <-locked:
	case err := <-done:
		t.Fatalf("the first writer: %v", err)
	}
	released := false
	defer func() {
		if !released {
			close(release)
		}
	}()

	// An adjustment of company B commits while the first writer works.
	writeCtx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	note := "beside"
	res, err := env.Service.Ledger.CreateAdjustment(writeCtx, credit.AdjustmentInput{CompanyID: b.ID, Amount: credit.Amount("1.00"), Note: &note})
	if err != nil {
		t.Fatalf("an adjustment of another company of the store while a writer works: %v (it waited for the writer)", err)
	}

	// A claim of an Idempotency-Key of the same store goes through too; its run answers
	// without writing.
	key := tenant.APIKey(context.Background(), st, "key_locks", "ERP", []string{credit.ScopeWriteCredit})
	claimCtx, cancelClaim := context.WithTimeout(key, 3*time.Second)
	defer cancelClaim()
	resp, replayed, err := env.Service.Idempotency.Run(claimCtx, "while-locked", "fp", func(context.Context) ([]byte, bool, error) {
		return []byte("answered"), true, nil
	})
	if err != nil || replayed || string(resp) != "answered" {
		t.Fatalf("a claim while the store's writer holds its lock: %q %v %v (it waited for the writer)", resp, replayed, err)
	}

	// The next writer of company A still waits for the first.
	next, err := env.DB.Client.Tx(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = next.Rollback() }()
	if _, err := next.ExecContext(ctx, "SET LOCAL lock_timeout = '300ms'"); err != nil {
		t.Fatal(err)
	}
	if _, err = next.Company.Query().Where(company.ID(a.ID), env.DB.ForUpdate).Only(ctx); err == nil {
		t.Fatal("a second writer of company A took its lock while the first held it")
	}

	// The first writer commits last, so its event comes after the adjustment's.
	released = true
	close(release)
	if err := <-done; err != nil {
		t.Fatalf("the first writer's commit: %v", err)
	}
	events, err := env.DB.Client.Event.Query().Where(event.StoreID(st)).Order(ent.Asc(event.FieldSeq)).All(credittest.Admin())
	if err != nil {
		t.Fatal(err)
	}
	if n := len(events); n < 2 || events[n-1].ID != firstEvent || events[n-2].Type != string(credit.EventTypeLedgerEntryCreated) || events[n-1].Seq != events[n-2].Seq+1 {
		t.Errorf("the feed's last events: %v; want the adjustment's (%s) then the first writer's %s, numbered one after the other", feedOf(events), res.LedgerEntry.ID, firstEvent)
	}
}

func feedOf(events []*ent.Event) []string {
	out := make([]string, len(events))
	for i, e := range events {
		out[i] = e.ID + " " + e.Type
	}
	return out
}

// TestLockOrderIsEnforced: where writers run concurrently, the data layer refuses the locks
// that could close a cycle between two writers of a store (txstate.go), whoever asks: a second
// company without the store's turn, or the turn after a company. With the turn first, a
// transaction locks as many companies as it needs. SQLite needs no order and refuses nothing.
func TestLockOrderIsEnforced(t *testing.T) {
	t.Parallel()
	env := credittest.NewService(t)
	st := env.MustStore(t, "Store", "EUR")
	a := env.MustCompany(t, st, "A", "100.00").ID
	b := env.MustCompany(t, st, "B", "100.00").ID
	ctx := credittest.Staff(st)
	want := func(name string, fn func(tx *ent.Tx) error, refused bool) {
		t.Helper()
		err := env.DB.InTx(ctx, fn)
		if refused = refused && credittest.Backend() == "postgres"; refused != errors.Is(err, database.ErrLockOrder) {
			t.Errorf("%s: %v (refused %v)", name, err, refused)
		}
	}
	want("one company, twice", func(tx *ent.Tx) error {
		if err := env.DB.BeforeCompanyLock(tx, a); err != nil {
			return err
		}
		return env.DB.BeforeCompanyLock(tx, a)
	}, false)
	want("a second company without the turn", func(tx *ent.Tx) error {
		if err := env.DB.BeforeCompanyLock(tx, a); err != nil {
			return err
		}
		return env.DB.BeforeCompanyLock(tx, b)
	}, true)
	want("the turn after a company", func(tx *ent.Tx) error {
		if err := env.DB.BeforeCompanyLock(tx, a); err != nil {
			return err
		}
		return env.DB.TakeStoreTurn(ctx, tx, st)
	}, true)
	want("two companies under the turn", func(tx *ent.Tx) error {
		if err := env.DB.TakeStoreTurn(ctx, tx, st); err != nil {
			return err
		}
		if err := env.DB.BeforeCompanyLock(tx, a); err != nil {
			return err
		}
		return env.DB.BeforeCompanyLock(tx, b)
	}, false)
}

// TestStoresArePrunedEarly (PostgreSQL): the stores table keeps its pages 90% free
// (migration 0020), so that the versions of a store's row, which every write updates and every
// insert naming the store locks FOR KEY SHARE, are pruned before a long chain of them makes
// each foreign-key check read MultiXact members version after version (BENCHMARKS.md,
// issue 40). This fails when a migration or a table rewrite drops the setting.
func TestStoresArePrunedEarly(t *testing.T) {
	if credittest.Backend() != "postgres" {
		t.Skip("fillfactor is PostgreSQL's")
	}
	t.Parallel()
	env := credittest.NewService(t)
	rows, err := env.DB.SQL.QueryContext(context.Background(), `SELECT coalesce(array_to_string(reloptions, ','), '') FROM pg_class WHERE oid = 'stores'::regclass`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var options string
	for rows.Next() {
		if err := rows.Scan(&options); err != nil {
			t.Fatal(err)
		}
	}
	if options != "fillfactor=10" {
		t.Errorf("stores' storage options: %q, want fillfactor=10", options)
	}
}

// TestStoreTurnOutlivesARestart (PostgreSQL): a request's transaction that took its store's
// turn and whose first operation failed is rolled back and begun again (Join), which ends every
// lock; the turn is taken again, since the request's later operations may lock several
// companies under it. (Without restarted's takeTurn, the transaction holds no advisory lock
// after the restart.)
func TestStoreTurnOutlivesARestart(t *testing.T) {
	if credittest.Backend() != "postgres" {
		t.Skip("the store's turn is an advisory lock of PostgreSQL's")
	}
	t.Parallel()
	env := credittest.NewService(t)
	st := env.MustStore(t, "Store", "EUR")
	ctx := credittest.Staff(st)
	turns := func(tx *ent.Tx) int {
		t.Helper()
		rows, err := tx.QueryContext(ctx, `SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		n := 0
		for rows.Next() {
			if err := rows.Scan(&n); err != nil {
				t.Fatal(err)
			}
		}
		return n
	}
	err := env.DB.InTx(ctx, func(tx *ent.Tx) error {
		if err := env.DB.TakeStoreTurn(ctx, tx, st); err != nil {
			return err
		}
		joined := env.DB.Join(ctx, tx)
		if err := env.DB.InTx(joined, func(tx *ent.Tx) error { return errors.New("the first operation fails") }); err == nil {
			t.Error("the failed operation returned no error")
		}
		if n := turns(tx); n != 1 {
			t.Errorf("after the restart the transaction holds %d advisory locks, want the store's turn", n)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
