package main

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/creditd/creditd/database"
)

// TestRestoreReplacesTheDatabase: restore puts the backup in place, keeps the database it
// replaced as FILE.before-restore (with every commit, its log folded in), and the restored file
// opens; a second restore refuses to overwrite the kept copy.
func TestRestoreReplacesTheDatabase(t *testing.T) {
	d := newCLIDB(t)
	backup := filepath.Join(t.TempDir(), "backup.db")
	d.json(t, "backup", "--to", backup)
	wantBackup := (&cliDB{path: backup, store: d.store}).dump(t)
	// A change after the backup: the restore must undo it, and the kept copy must hold it.
	d.run(t, "store", "create", "--name", "After the backup", "--currency", "EUR")
	wantBefore := d.dump(t)

	obj := d.json(t, "restore", "--from", backup)
	if obj["status"] != "restored" || obj["replaced"] != d.path+".before-restore" {
		t.Fatalf("restore printed %v", obj)
	}
	if got := d.dump(t); got != wantBackup {
		t.Errorf("the restored database is not the backup:\ngot  %s\nwant %s", got, wantBackup)
	}
	if got := (&cliDB{path: d.path + ".before-restore", store: d.store}).dump(t); got != wantBefore {
		t.Errorf("the kept database lost what it had:\ngot  %s\nwant %s", got, wantBefore)
	}
	if r := d.run(t, "restore", "--from", backup); r.code == 0 || !strings.Contains(r.stderr, ".before-restore exists") {
		t.Fatalf("a second restore over a kept copy: exit %d, %q", r.code, r.stderr)
	}
	db, err := database.OpenExisting(context.Background(), d.path)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Prepare(context.Background()); err != nil {
		t.Fatal(err)
	}
	db.Close()
}

// TestRestoreRefusals: an open database, a damaged backup, a file that is no creditd database
// and a backup newer than this binary are each refused with a clear message, and nothing is
// replaced.
func TestRestoreRefusals(t *testing.T) {
	d := newCLIDB(t)
	dir := t.TempDir()
	good := filepath.Join(dir, "good.db")
	d.json(t, "backup", "--to", good)
	want := d.dump(t)

	damaged := filepath.Join(dir, "damaged.db")
	b, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	for i := 4096; i < len(b) && i < 4096*6; i++ {
		b[i] ^= 0x5a // pages after the header: a file SQLite still recognises, broken inside
	}
	if err := os.WriteFile(damaged, b, 0o600); err != nil {
		t.Fatal(err)
	}
	foreign := filepath.Join(dir, "foreign.db")
	mustSQL(t, foreign, "CREATE TABLE notes (body TEXT)")
	newer := filepath.Join(dir, "newer.db")
	if err := os.WriteFile(newer, mustRead(t, good), 0o600); err != nil {
		t.Fatal(err)
	}
	mustSQL(t, newer, "INSERT INTO schema_migrations (version, name, applied_at) VALUES ('9999', 'from-the-future', '2030-01-01T00:00:00Z')")

	for _, tc := range []struct{ name, from, want string }{
		{"damaged backup", damaged, "the backup is damaged"},
		{"not a creditd database", foreign, "is not a creditd database"},
		{"newer schema", newer, "newer than this creditd"},
		{"missing backup", filepath.Join(dir, "none.db"), "no such file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if r := d.run(t, "restore", "--from", tc.from); r.code == 0 || !strings.Contains(r.stderr, tc.want) {
				t.Fatalf("exit %d, stderr %q; want a refusal saying %q", r.code, r.stderr, tc.want)
			}
		})
	}

	// serve, or any command, holding the database open.
	db, err := database.OpenExisting(context.Background(), d.path)
	if err != nil {
		t.Fatal(err)
	}
	if r := d.run(t, "restore", "--from", good); r.code == 0 || !strings.Contains(r.stderr, "open in another process") {
		t.Fatalf("restore while the database is open: exit %d, %q", r.code, r.stderr)
	}
	db.Close()

	if got := d.dump(t); got != want {
		t.Errorf("a refused restore changed the database")
	}
	if _, err := os.Stat(d.path + ".before-restore"); err == nil {
		t.Error("a refused restore kept a copy as if it had replaced the database")
	}
}

func mustSQL(t *testing.T, path, stmt string) {
	t.Helper()
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(stmt); err != nil {
		t.Fatal(err)
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
