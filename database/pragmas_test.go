package database_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/creditd/creditd/database"
)

// TestSQLiteConnectionsAreDurable checks the settings every pooled SQLite connection gets:
// the durability the README promises (WAL with synchronous=FULL, not the driver's NORMAL
// default), foreign keys, a busy timeout for the CLI beside serve, and secure_delete for
// erasures.
func TestSQLiteConnectionsAreDurable(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := database.Open(ctx, filepath.Join(t.TempDir(), "pragmas.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// Hold several connections at once, so each is a separate one from the pool.
	for i := range 3 {
		conn, err := db.SQL.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		for pragma, want := range map[string]string{
			"journal_mode":  "wal",
			"synchronous":   "2", // FULL
			"foreign_keys":  "1",
			"busy_timeout":  "10000",
			"secure_delete": "1",
		} {
			var got string
			if err := conn.QueryRowContext(ctx, "PRAGMA "+pragma).Scan(&got); err != nil {
				t.Fatalf("PRAGMA %s: %v", pragma, err)
			}
			if got != want {
				t.Errorf("connection %d: PRAGMA %s = %s, want %s", i, pragma, got, want)
			}
		}
	}
}

// TestWALAutoCheckpointReachesEveryConnection: serve's --wal-autocheckpoint applies to the
// connection already open when it is set and to those opened after; SQLite's default before.
func TestWALAutoCheckpointReachesEveryConnection(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := database.Open(ctx, filepath.Join(t.TempDir(), "checkpoint.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	autocheckpoints := func() (got []int) {
		var conns []interface{ Close() error }
		defer func() {
			for _, c := range conns {
				c.Close()
			}
		}()
		for range 3 {
			conn, err := db.SQL.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			conns = append(conns, conn)
			var n int
			if err := conn.QueryRowContext(ctx, "PRAGMA wal_autocheckpoint").Scan(&n); err != nil {
				t.Fatal(err)
			}
			got = append(got, n)
		}
		return got
	}
	if got := autocheckpoints(); got[0] != 1000 || got[1] != 1000 || got[2] != 1000 {
		t.Fatalf("before the setting: wal_autocheckpoint %v, want SQLite's 1000", got)
	}
	if err := db.SetWALAutoCheckpoint(0); err != nil {
		t.Fatal(err)
	}
	if got := autocheckpoints(); got[0] != 0 || got[1] != 0 || got[2] != 0 {
		t.Errorf("after SetWALAutoCheckpoint(0): wal_autocheckpoint %v, want 0 on every connection", got)
	}
	if err := db.SetWALAutoCheckpoint(-1); err == nil {
		t.Error("SetWALAutoCheckpoint(-1) was accepted")
	}
}
