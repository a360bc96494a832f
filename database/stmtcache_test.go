package database_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/creditd/creditd/database"
)

// TestStatementCacheKeepsResultsRight runs statements again and again through SQLite's
// statement cache: nested runs of one statement on one connection, a statement that fails
// and is then used again, and more distinct statements than the cache holds.
func TestStatementCacheKeepsResultsRight(t *testing.T) {
	ctx := context.Background()
	db, err := database.Open(ctx, filepath.Join(t.TempDir(), "cache.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.SQL.ExecContext(ctx, "CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL UNIQUE)"); err != nil {
		t.Fatal(err)
	}
	insert := "INSERT INTO t (id, v) VALUES (?, ?)"
	for i := 1; i <= 5; i++ {
		if _, err := db.SQL.ExecContext(ctx, insert, i, fmt.Sprint("v", i)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.SQL.ExecContext(ctx, "UPDATE t SET v = v || ? WHERE id = ?", "!", 2); err != nil {
		t.Fatal(err)
	}
	res, err := db.SQL.ExecContext(ctx, "UPDATE t SET v = v || ? WHERE id = ?", "!", 3)
	if n, _ := res.RowsAffected(); err != nil || n != 1 {
		t.Fatalf("cached update: %d rows, %v", n, err)
	}
	if _, err := db.SQL.ExecContext(ctx, "UPDATE t SET v = ? WHERE id = ?", "v2", 2); err != nil {
		t.Fatal(err)
	}
	if _, err := db.SQL.ExecContext(ctx, "UPDATE t SET v = ? WHERE id = ?", "v3", 3); err != nil {
		t.Fatal(err)
	}
	// A failed run must not poison the next one.
	if _, err := db.SQL.ExecContext(ctx, insert, 6, "v1"); err == nil {
		t.Fatal("duplicate value inserted")
	}
	if _, err := db.SQL.ExecContext(ctx, insert, 6, "v6"); err != nil {
		t.Fatalf("insert after a failed one: %v", err)
	}

	// One connection (a transaction), the same query open twice at once.
	tx, err := db.SQL.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	q := "SELECT v FROM t WHERE id >= ? ORDER BY id"
	outer, err := tx.QueryContext(ctx, q, 1)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for outer.Next() {
		var v string
		if err := outer.Scan(&v); err != nil {
			t.Fatal(err)
		}
		var inner int
		rows, err := tx.QueryContext(ctx, q, 5)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			inner++
		}
		rows.Close()
		got = append(got, fmt.Sprintf("%s:%d", v, inner))
	}
	if err := outer.Err(); err != nil {
		t.Fatal(err)
	}
	outer.Close()
	if fmt.Sprint(got) != "[v1:2 v2:2 v3:2 v4:2 v5:2 v6:2]" {
		t.Fatalf("nested runs: %v", got)
	}

	// More distinct statements than the cache keeps, then the first ones again.
	for round := 0; round < 2; round++ {
		for n := 1; n <= 200; n++ {
			var count int
			if err := tx.QueryRowContext(ctx, fmt.Sprintf("SELECT count(*) FROM t WHERE id <= %d", n)).Scan(&count); err != nil {
				t.Fatal(err)
			}
			if want := min(n, 6); count != want {
				t.Fatalf("statement %d: count %d, want %d", n, count, want)
			}
		}
	}
}
