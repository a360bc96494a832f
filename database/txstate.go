package database

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"entgo.io/ent/dialect"

	"github.com/creditd/creditd/ent"
)

// How a store's writers take turns where they run concurrently (PostgreSQL), without
// deadlocks and without queueing for longer than their feed number needs.
//
// A store's events are numbered without gaps in commit order by the store's event_seq
// (numbered.go), so its row stays locked from the number's UPDATE until the commit: every
// writer of the store takes turns there. That turn is kept short: the events of a transaction
// are inserted, numbered, as its last statement before the commit (InsertNumberedAtCommit),
// not where the domain emits them, so the store's writers queue only for that statement and
// the commit, and the rest of their work (the company's row, the ledger, the timeline, the
// Idempotency-Key's record) runs beside each other's.
//
// The locks of a transaction then come in this order, which no two transactions can close
// into a cycle:
//
//  1. the store's turn (TakeStoreTurn), taken only by a transaction that may lock several
//     companies or must see the store's writes of its kind one at a time (a GraphQL request's
//     several mutations under one Idempotency-Key, a platform delivery, the reminder
//     schedule): an advisory lock, which no other writer takes;
//  2. companies' rows (BeforeCompanyLock): one company, or several under the store's turn;
//  3. rows of the locked company (its invoices, ...);
//  4. the store's row, for the numbers of its events, as the last statement before the commit
//     (a change of the store's own settings updates the row earlier, under the turn, and
//     locks nothing after it).
//
// A transaction waiting at step 2 without the turn holds no company, and one waiting at step 4
// waits only for a transaction that is committing; transactions that lock several companies
// take turns at step 1, so no two of them wait for each other's companies. The data layer
// refuses the orders that could close a cycle (ErrLockOrder) instead of trusting each caller.
// SQLite runs one write transaction at a time: none of this applies there, and none of it
// costs a statement.

// ErrLockOrder is the answer to a lock taken out of the order above: a second company locked
// without the store's turn, or the turn asked for after a company's lock. It is a defect of the
// caller's, not of the data: nothing is locked.
var ErrLockOrder = errors.New("data layer: locks taken out of order (a second company without the store's turn, or the turn after a company)")

// txState is what the data layer keeps of one of its PostgreSQL write transactions while it
// runs: the locks it took, in the order above, and the numbered rows it inserts at commit.
type txState struct {
	// turn is the store whose turn the transaction took ("" when none).
	turn string
	// company is the company the transaction locked without the store's turn.
	company string
	// atCommit are the rows InsertNumberedAtCommit queued, in order.
	atCommit []numberedInsert
}

// txStates holds the state of every PostgreSQL write transaction of InTx while it runs.
type txStates struct{ m sync.Map } // *ent.Tx → *txState

func (s *txStates) begin(tx *ent.Tx) *txState {
	st := &txState{}
	s.m.Store(tx, st)
	return st
}

func (s *txStates) end(tx *ent.Tx) { s.m.Delete(tx) }

// of returns tx's state, or nil when tx is not a PostgreSQL write transaction of InTx.
func (s *txStates) of(tx *ent.Tx) *txState {
	if v, ok := s.m.Load(tx); ok {
		return v.(*txState)
	}
	return nil
}

// stateOf returns tx's state, or nil on SQLite, where none is kept, or when tx is not a write
// transaction of InTx.
func (db *DB) stateOf(tx *ent.Tx) *txState {
	if db.Dialect != dialect.Postgres {
		return nil
	}
	return db.txs.of(tx)
}

// TakeStoreTurn makes tx wait for the turn of store storeID's writers that lock several
// companies, and keeps it until tx ends (step 1 above): for a transaction that may lock more
// than one company, or whose work must not run beside another of its kind in the store. It
// must come before tx locks any company. Writers of one company do not take it: they pass
// beside a transaction that holds it, up to the company it locks. On SQLite it does nothing
// and costs no statement.
//
// Errors: ErrLockOrder (tx locked a company already), and the database's.
func (db *DB) TakeStoreTurn(ctx context.Context, tx *ent.Tx, storeID string) error {
	st := db.stateOf(tx)
	if st == nil {
		return nil
	}
	switch {
	case st.turn == storeID:
		return nil
	case st.company != "" || st.turn != "":
		return ErrLockOrder
	}
	if err := takeTurn(ctx, tx, storeID); err != nil {
		return err
	}
	st.turn = storeID
	return nil
}

// takeTurn takes the advisory lock of storeID's turn until tx ends: a key of two integers, a
// class of creditd's own and the store ID's hash, so it meets no advisory lock of another kind;
// two stores whose IDs hash alike share a turn, which only makes them wait for each other.
func takeTurn(ctx context.Context, tx *ent.Tx, storeID string) error {
	if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(`+storeTurnClass+`, hashtext($1))`, storeID); err != nil {
		return fmt.Errorf("take the store's turn: %w", err)
	}
	return nil
}

// storeTurnClass is the first integer of a store turn's advisory lock key.
const storeTurnClass = "4101"

// BeforeCompanyLock is said by a transaction before it locks the row of company companyID
// (step 2 above): it refuses a second company where the transaction has not taken its store's
// turn. On SQLite, and for a company tx locked already, it does nothing.
//
// Errors: ErrLockOrder.
func (db *DB) BeforeCompanyLock(tx *ent.Tx, companyID string) error {
	st := db.stateOf(tx)
	switch {
	case st == nil || st.turn != "" || st.company == companyID:
		return nil
	case st.company != "":
		return ErrLockOrder
	}
	st.company = companyID
	return nil
}

// mark is where a savepoint of tx begins, for undoing what the data layer keeps of it.
type mark struct{ atCommit int }

func (db *DB) markOf(tx *ent.Tx) mark {
	if st := db.stateOf(tx); st != nil {
		return mark{atCommit: len(st.atCommit)}
	}
	return mark{}
}

// rollBackTo forgets the rows queued since m, as ROLLBACK TO SAVEPOINT forgets the writes. The
// locks stay noted: a company locked inside the savepoint counts as locked still, which can
// only make the order above stricter.
func (db *DB) rollBackTo(tx *ent.Tx, m mark) {
	if st := db.stateOf(tx); st != nil && len(st.atCommit) > m.atCommit {
		st.atCommit = st.atCommit[:m.atCommit]
	}
}

// restarted notes that tx was rolled back and begun again (Join): it holds no lock and has
// queued nothing. The store's turn, when it had one, is taken again, since its owner took it
// for the whole transaction.
func (db *DB) restarted(ctx context.Context, tx *ent.Tx) error {
	st := db.stateOf(tx)
	if st == nil {
		return nil
	}
	st.company, st.atCommit = "", nil
	if st.turn != "" {
		return takeTurn(ctx, tx, st.turn)
	}
	return nil
}

// beforeCommit inserts the rows tx queued for its commit, in order (step 4 above).
func (db *DB) beforeCommit(ctx context.Context, tx *ent.Tx, st *txState) error {
	for _, ins := range st.atCommit {
		if _, err := ins.run(ctx, tx); err != nil {
			return err
		}
	}
	st.atCommit = nil
	return nil
}
