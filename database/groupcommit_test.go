package database_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/creditd/creditd/credittest"
	"github.com/creditd/creditd/ent"
	"github.com/creditd/creditd/ent/store"
	"github.com/creditd/creditd/tenant"
)

// TestGroupCommitIsolatesEachWrite queues writes behind a running one so that they share a
// transaction, and checks that each behaves as if it had its own: a failing one and a
// panicking one are rolled back alone, and the others commit.
func TestGroupCommitIsolatesEachWrite(t *testing.T) {
	credittest.RequireSQLite(t)
	env := credittest.New(t)
	db := env.DB
	ctx := tenant.System(context.Background())
	type outcome struct {
		name     string
		err      error
		panicked any
	}
	results := make(chan outcome, 5)
	write := func(name string, fn func(tx *ent.Tx) error) {
		go func() {
			o := outcome{name: name}
			defer func() {
				o.panicked = recover()
				results <- o
			}()
			o.err = db.InTx(ctx, fn)
		}()
	}
	started, release := make(chan struct{}), make(chan struct{})
	write("a", func(tx *ent.Tx) error {
		close(started)
		<-release
		return createStore(ctx, tx, "a")
	})
	<-started
	errRefused := errors.New("refused")
	write("b", func(tx *ent.Tx) error { return createStore(ctx, tx, "b") })
	waitQueued(t, db.QueuedWrites, 1)
	write("c", func(tx *ent.Tx) error {
		if err := createStore(ctx, tx, "c"); err != nil {
			return err
		}
		return errRefused
	})
	waitQueued(t, db.QueuedWrites, 2)
	write("d", func(tx *ent.Tx) error {
		if err := createStore(ctx, tx, "d"); err != nil {
			return err
		}
		panic("boom")
	})
	waitQueued(t, db.QueuedWrites, 3)
	write("e", func(tx *ent.Tx) error { return createStore(ctx, tx, "e") })
	waitQueued(t, db.QueuedWrites, 4)
	close(release)

	got := map[string]outcome{}
	for range 5 {
		o := <-results
		got[o.name] = o
	}
	for _, name := range []string{"a", "b", "e"} {
		if o := got[name]; o.err != nil || o.panicked != nil {
			t.Errorf("write %s: %+v", name, o)
		}
	}
	if o := got["c"]; !errors.Is(o.err, errRefused) {
		t.Errorf("write c: %+v, want its own error", o)
	}
	if o := got["d"]; fmt.Sprint(o.panicked) != "boom" {
		t.Errorf("write d: %+v, want its panic", o)
	}
	names, err := env.DB.Client.Store.Query().Order(ent.Asc(store.FieldName)).Select(store.FieldName).Strings(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(names) != "[a b e]" {
		t.Errorf("stores %v, want [a b e]: each write commits or rolls back on its own", names)
	}
}

func waitQueued(t *testing.T, queued func() int, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for queued() < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d writes queued, want %d", queued(), n)
		}
		time.Sleep(time.Millisecond)
	}
}
