package database_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"time"

	"github.com/creditd/creditd/database"
	"github.com/creditd/creditd/ent"
	"github.com/creditd/creditd/tenant"
)

// TestJoinedOperationIsAllOrNothing: operations that join an enclosing transaction (as every
// operation of an idempotent request does) keep their own all-or-nothing: one that fails after
// writing leaves nothing behind, and the others' writes commit.
func TestJoinedOperationIsAllOrNothing(t *testing.T) {
	ctx := tenant.System(context.Background())
	db, err := database.Open(ctx, filepath.Join(t.TempDir(), "sp.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("failed after writing")
	createStore := func(ctx context.Context, tx *ent.Tx, name string) error {
		return tx.Store.Create().SetName(name).SetCurrency("EUR").SetCursorSecret([]byte("x")).SetCreatedAt(time.Now()).Exec(ctx)
	}
	err = db.InTx(ctx, func(tx *ent.Tx) error {
		joined := ent.NewTxContext(ctx, tx)
		if err := db.InTx(joined, func(tx *ent.Tx) error { return createStore(joined, tx, "kept") }); err != nil {
			return err
		}
		err := db.InTx(joined, func(tx *ent.Tx) error {
			if err := createStore(joined, tx, "undone"); err != nil {
				return err
			}
			return boom
		})
		if !errors.Is(err, boom) {
			t.Errorf("joined operation: %v", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	names, err := db.Client.Store.Query().Select("name").Strings(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(names) != 1 || names[0] != "kept" {
		t.Fatalf("stores after commit: %v", names)
	}
}
