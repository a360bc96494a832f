package database

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"entgo.io/ent/dialect"

	"github.com/creditd/creditd/ent"
	"github.com/creditd/creditd/tenant"
)

// Rows numbered without gaps by a counter: a store's events (stores.event_seq) and a company's
// timeline events (companies.timeline_seq). Each new row takes its counter's next value in its
// write transaction, and the counter's row stays locked until commit, so numbers follow commit
// order. On PostgreSQL the number and the row are one statement, a data-modifying WITH, instead
// of an UPDATE … RETURNING and an INSERT: one round trip fewer under the store's lock, on every
// write. SQLite has no UPDATE inside a WITH and no round trips; there it stays two statements.
//
// These rows are written as SQL, not through ent, so the TenantMixin's hook does not see them:
// InsertNumbered applies its rule (tenant.CheckNewRow) itself, and moves only a counter of the
// row's store. A hook added to these two entities would not run for them.

// numbering names the counter of a numbered table: counterColumn of the counterTable row whose
// id is the new row's key column.
type numbering struct {
	counterTable, counterColumn, key string
}

// numberings are the tables InsertNumbered writes, each numbered in its "seq" column.
var numberings = map[string]numbering{
	"events":          {counterTable: "stores", counterColumn: "event_seq", key: "store_id"},
	"timeline_events": {counterTable: "companies", counterColumn: "timeline_seq", key: "company_id"},
}

// ErrNoCounter is InsertNumbered's answer when the counter's row is not in the row's store (or
// does not exist): nothing was written.
var ErrNoCounter = errors.New("data layer: no counter for the row in its store")

// InsertNumbered inserts one row into table (events or timeline_events) in tx, with columns set
// to values and its seq column set to the next value of its counter, and returns that number.
// The row must name its store (store_id), which must be the viewer's unless the viewer is the
// system (tenant.CheckNewRow, the rule rows written through ent follow); only a counter row of
// that store is moved. The counter's row stays locked until tx ends.
//
// Errors: tenant.ErrNoViewer, tenant.ErrOtherStore, ErrNoCounter, and the database's.
func (db *DB) InsertNumbered(ctx context.Context, tx *ent.Tx, table string, columns []string, values []any) (int64, error) {
	ins, err := db.numbered(ctx, table, columns, values)
	if err != nil {
		return 0, err
	}
	return ins.run(ctx, tx)
}

// InsertNumberedAtCommit is InsertNumbered for a row whose number nothing in tx needs: where
// writers run concurrently (PostgreSQL), the row is inserted as one of tx's last statements,
// just before its commit, after the rows queued before it, so that its counter's row (a store's
// event_seq, which all the store's writers take turns on) is locked only for that statement
// and the commit (txstate.go). The row's checks are made now; a write that fails at the commit
// (ErrNoCounter, the database's) fails the commit. Where writers take turns (SQLite) the row is
// inserted now.
//
// Errors: tenant.ErrNoViewer, tenant.ErrOtherStore, ErrNoCounter, and the database's.
func (db *DB) InsertNumberedAtCommit(ctx context.Context, tx *ent.Tx, table string, columns []string, values []any) error {
	ins, err := db.numbered(ctx, table, columns, values)
	if err != nil {
		return err
	}
	if st := db.stateOf(tx); st != nil {
		st.atCommit = append(st.atCommit, ins)
		return nil
	}
	_, err = ins.run(ctx, tx)
	return err
}

// numberedInsert is the statement, or on SQLite the two, that insert one numbered row.
type numberedInsert struct {
	table string
	// next moves the counter and returns its value (SQLite); "" where insert does both.
	next    string
	counter []any
	insert  string
	values  []any
}

// numbered checks a numbered row of table and writes the statements that insert it.
func (db *DB) numbered(ctx context.Context, table string, columns []string, values []any) (numberedInsert, error) {
	num, ok := numberings[table]
	if !ok || len(columns) != len(values) {
		return numberedInsert{}, fmt.Errorf("insert numbered: table %q is not numbered, or %d columns for %d values", table, len(columns), len(values))
	}
	var storeID, key string
	for i, c := range columns {
		s, _ := values[i].(string)
		switch c {
		case "store_id":
			storeID = s
		case "seq":
			return numberedInsert{}, fmt.Errorf("insert numbered: %s.seq is the counter's", table)
		}
		if c == num.key {
			key = s
		}
	}
	if storeID == "" || key == "" {
		return numberedInsert{}, fmt.Errorf("insert numbered: a row of %s needs its store_id and %s", table, num.key)
	}
	if _, err := tenant.CheckNewRow(ctx, storeID); err != nil {
		return numberedInsert{}, err
	}
	// The counter's row, in the row's store: a store is its own; a company names its store.
	counter := []any{key}
	where := `"id" = $1`
	if num.counterTable != "stores" {
		counter = append(counter, storeID)
		where += ` AND "store_id" = $2`
	}
	update := `UPDATE "` + num.counterTable + `" SET "` + num.counterColumn + `" = "` + num.counterColumn + `" + 1 WHERE ` + where + ` RETURNING "` + num.counterColumn + `"`
	var insert strings.Builder
	insert.WriteString(`INSERT INTO "` + table + `" (`)
	for _, c := range columns {
		insert.WriteString(`"` + c + `", `)
	}
	insert.WriteString(`"seq") `)
	if db.Dialect == dialect.Postgres {
		insert.WriteString(`SELECT `)
		for i := range columns {
			insert.WriteString("$" + strconv.Itoa(len(counter)+i+1) + ", ")
		}
		insert.WriteString(`n."` + num.counterColumn + `" FROM n RETURNING "seq"`)
		return numberedInsert{table: table, insert: `WITH n AS (` + update + `) ` + insert.String(), values: append(counter, values...)}, nil
	}
	// SQLite: $1 and $2 are its first and second positional parameters.
	insert.WriteString(`VALUES (`)
	insert.WriteString(strings.Repeat("?, ", len(columns)))
	insert.WriteString(`?)`)
	return numberedInsert{table: table, next: update, counter: counter, insert: insert.String(), values: values[:len(values):len(values)]}, nil
}

// run inserts the row in tx and returns its number.
func (ins numberedInsert) run(ctx context.Context, tx *ent.Tx) (int64, error) {
	if ins.next == "" {
		seq, found, err := queryInt(ctx, tx, ins.insert, ins.values)
		if err != nil {
			return 0, fmt.Errorf("insert into %s: %w", ins.table, err)
		}
		if !found {
			return 0, fmt.Errorf("insert into %s: %w", ins.table, ErrNoCounter)
		}
		return seq, nil
	}
	seq, found, err := queryInt(ctx, tx, ins.next, ins.counter)
	if err != nil {
		return 0, fmt.Errorf("next seq of %s: %w", ins.table, err)
	}
	if !found {
		return 0, fmt.Errorf("insert into %s: %w", ins.table, ErrNoCounter)
	}
	if _, err := tx.ExecContext(ctx, ins.insert, append(ins.values, seq)...); err != nil {
		return 0, fmt.Errorf("insert into %s: %w", ins.table, err)
	}
	return seq, nil
}

// queryInt runs a statement that returns at most one integer, and reports whether it did.
func queryInt(ctx context.Context, tx *ent.Tx, query string, args []any) (int64, bool, error) {
	rows, err := tx.QueryContext(ctx, query, args...)
	if err != nil {
		return 0, false, err
	}
	defer rows.Close()
	if !rows.Next() {
		return 0, false, rows.Err()
	}
	var n int64
	if err := rows.Scan(&n); err != nil {
		return 0, false, err
	}
	return n, true, rows.Close()
}
