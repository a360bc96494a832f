package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/creditd/creditd/database"
)

// TestBackupCopiesTheDatabase: the copy passes the integrity check and holds every row of
// the original; no temporary file is left beside it.
func TestBackupCopiesTheDatabase(t *testing.T) {
	d := newCLIDB(t)
	out := filepath.Join(t.TempDir(), "copy.db")
	obj := d.json(t, "backup", "--to", out)
	if obj["status"] != "copied" || obj["to"] != out {
		t.Fatalf("backup printed %v", obj)
	}
	if err := database.IntegrityCheck(context.Background(), out); err != nil {
		t.Fatal(err)
	}
	copyDB := &cliDB{path: out, store: d.store}
	if got, want := copyDB.dump(t), d.dump(t); got != want {
		t.Errorf("the copy differs from the original:\ncopy: %s\noriginal: %s", got, want)
	}
	entries, err := os.ReadDir(filepath.Dir(out))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("backup left %s behind", e.Name())
		}
	}
}

// TestBackupRefusesPostgres names PostgreSQL's own tools instead.
func TestBackupRefusesPostgres(t *testing.T) {
	out := filepath.Join(t.TempDir(), "copy.db")
	r := runCreditd(t, "backup", "--db", "postgres://postgres@127.0.0.1:5432/test", "--to", out)
	if r.code == 0 || !strings.Contains(r.stderr, "pg_dump") || !strings.Contains(r.stderr, "pg_basebackup") {
		t.Fatalf("backup of a PostgreSQL URL: exit %d, stderr %q; want a refusal naming pg_dump and pg_basebackup", r.code, r.stderr)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a refused backup wrote its file")
	}
}
