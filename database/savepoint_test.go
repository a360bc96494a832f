package database_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/creditd/creditd/credittest"
	"github.com/creditd/creditd/ent"
	"github.com/creditd/creditd/ids"
)

// TestJoinedOperationIsAllOrNothing: operations that join an enclosing transaction (as every
// operation of an idempotent request does) keep their own all-or-nothing: one that fails after
// writing leaves nothing behind, and the others' writes commit. The first operation runs
// without a savepoint (a failure restarts the transaction), the later ones in one each: this
// fails if a later one is run like the first (its failure would undo the earlier operations'
// writes, or keep its own), or if the first's failure is not undone. Each operation also
// appends an event to its store's feed, which PostgreSQL inserts at the commit
// (InsertNumberedAtCommit): a failed operation's event goes with it. (Without the queue's
// rollback, the commit inserts the event of a store that was undone and fails.)
func TestJoinedOperationIsAllOrNothing(t *testing.T) {
	env := credittest.New(t)
	db := env.DB
	ctx := credittest.Admin()
	boom := errors.New("failed after writing")
	// op is one operation: it creates a store, then fails as told (after writing).
	type op struct {
		name string
		fail string // "", "error" (fn returns an error) or "statement" (a statement fails)
	}
	for _, tc := range []struct {
		name string
		ops  []op
		kept []string
	}{
		{"a later operation fails", []op{{"first", ""}, {"second", "error"}, {"third", ""}, {"fourth", "statement"}}, []string{"first", "third"}},
		{"the first operation fails", []op{{"first", "error"}, {"second", ""}, {"third", "error"}}, []string{"second"}},
		{"the first statement fails", []op{{"first", "statement"}, {"second", ""}}, []string{"second"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := db.Client.Event.Delete().Exec(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := db.Client.Store.Delete().Exec(ctx); err != nil {
				t.Fatal(err)
			}
			write := func(tx *ent.Tx) error {
				joined := db.Join(ctx, tx)
				for _, o := range tc.ops {
					err := db.InTx(joined, func(tx *ent.Tx) error {
						id, err := newStore(joined, tx, o.name)
						if err != nil {
							return err
						}
						if err := db.InsertNumberedAtCommit(joined, tx, "events", []string{"id", "store_id", "type", "occurred_at", "data"},
							[]any{ids.New("ev"), id, "key.created", time.Now().UTC(), `{"object":{}}`}); err != nil {
							return err
						}
						switch o.fail {
						case "error":
							return boom
						case "statement":
							_, err := tx.ExecContext(joined, "SELECT * FROM no_such_table")
							return err
						}
						return nil
					})
					if (err != nil) != (o.fail != "") {
						t.Errorf("operation %s: %v", o.name, err)
					}
				}
				// The owner of the transaction writes after its operations, as Idempotent
				// completes its record.
				return createStore(ctx, tx, "owner")
			}
			if err := db.InTx(ctx, write); err != nil {
				t.Fatal(err)
			}
			if credittest.Backend() != "postgres" {
				// SQLite: also as the second write of a group commit's batch, in its savepoint,
				// where the first operation runs without one of its own. The batch's first
				// write is kept too.
				if errs := db.InBatch(ctx, func(tx *ent.Tx) error { return createStore(ctx, tx, "batched") }, write); errs[0] != nil || errs[1] != nil {
					t.Fatal(errs)
				}
			}
			names, err := db.Client.Store.Query().Select("name").Strings(ctx)
			if err != nil {
				t.Fatal(err)
			}
			slices.Sort(names)
			want := append(slices.Clone(tc.kept), "owner")
			if credittest.Backend() != "postgres" {
				want = append(want, tc.kept...)
				want = append(want, "owner", "batched")
			}
			slices.Sort(want)
			if !slices.Equal(names, want) {
				t.Errorf("stores after commit: %v, want %v", names, want)
			}
			stores, err := db.Client.Store.Query().All(ctx)
			if err != nil {
				t.Fatal(err)
			}
			nameOf := map[string]string{}
			for _, st := range stores {
				nameOf[st.ID] = st.Name
			}
			storeIDs, err := db.Client.Event.Query().Select("store_id").Strings(ctx)
			if err != nil {
				t.Fatal(err)
			}
			var fed []string
			for _, id := range storeIDs {
				fed = append(fed, nameOf[id])
			}
			wantFed := slices.Clone(tc.kept)
			if credittest.Backend() != "postgres" {
				wantFed = append(wantFed, tc.kept...)
			}
			slices.Sort(fed)
			slices.Sort(wantFed)
			if !slices.Equal(fed, wantFed) {
				t.Errorf("stores with an event after commit: %v, want %v", fed, wantFed)
			}
		})
	}
}
