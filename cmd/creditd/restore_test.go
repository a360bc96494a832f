package main

import (
	"context"
	"database/sql"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/creditd/creditd/credittest"
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

// TestRestoreAfterAKilledServe: a serve killed with SIGKILL leaves its last commits in the
// write-ahead log, not in the database file. Restore folds that log into the file it keeps as
// FILE.before-restore, so the kept copy holds every acknowledged write on its own, with no
// -wal file beside it, and the log of the replaced database does not apply to the restored one.
func TestRestoreAfterAKilledServe(t *testing.T) {
	credittest.RequireSQLite(t)
	if testing.Short() {
		t.Skip("runs a real server; skipped with -short")
	}
	bin, err := instancesBinary()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	db := filepath.Join(dir, "live.db")
	secret, companies := newLoadDatabase(t, bin, db, "Restore Test")
	backup := filepath.Join(dir, "backup.db")
	if b, err := exec.Command(bin, "backup", "--db", db, "--to", backup).CombinedOutput(); err != nil {
		t.Fatalf("backup: %v\n%s", err, b)
	}
	p := startCreditd(t, bin, dir, "serve", "--db", db, "--addr", "127.0.0.1:0")
	c := &crashRun{t: t, base: "http://" + p.waitForListening(t), secret: secret, writes: map[string]*crashWrite{}, client: &http.Client{Timeout: 10 * time.Second}}
	w := &crashWrite{key: "after-backup", kind: "adjustment", method: "POST", path: "/v1/companies/" + companies[0] + "/adjustments",
		note: "after the backup", amount: "12.34", body: `{"amount":"12.34","note":"after the backup"}`}
	c.writes[w.key], c.order = w, []string{w.key}
	c.send(w)
	if w.status != 201 {
		t.Fatalf("adjustment: %d %s", w.status, w.answer)
	}
	_ = p.cmd.Process.Kill()
	go func() {
		for range p.lines {
		}
	}()
	_ = p.cmd.Wait()
	if st, err := os.Stat(db + "-wal"); err != nil || st.Size() == 0 {
		t.Fatalf("the killed serve left no write-ahead log (%v): the test needs one", err)
	}

	if b, err := exec.Command(bin, "restore", "--from", backup, "--db", db).CombinedOutput(); err != nil {
		t.Fatalf("restore: %v\n%s", err, b)
	}
	kept := db + ".before-restore"
	if _, err := os.Stat(kept + "-wal"); err == nil {
		t.Errorf("%s-wal exists: the kept copy depends on a log beside it", kept)
	}
	// The kept copy, read on its own (a copy of the file alone, as an operator would move it).
	alone := filepath.Join(t.TempDir(), "kept.db")
	if err := os.WriteFile(alone, mustRead(t, kept), 0o600); err != nil {
		t.Fatal(err)
	}
	keptDB, state := c.checkInvariants(alone)
	keptDB.Close()
	if n, _ := state.present(w); n != 1 {
		t.Errorf("the kept copy holds the adjustment acknowledged before the kill %d times, want 1", n)
	}
	restoredDB, restored := c.checkInvariants(db)
	restoredDB.Close()
	if n, _ := restored.present(w); n != 0 {
		t.Errorf("the restored database holds the adjustment made after the backup")
	}
}

// TestRestoreInterrupted kills creditd restore (SIGKILL) at moments spread over its copy, again
// and again: whenever it dies, the database's name holds either the whole old database or the
// whole backup, never a mixture or a half file; what a killed restore leaves (the kept copy, a
// hidden temporary file) is never under the database's name, and once the kept copy is moved
// away the next restore runs to its end.
func TestRestoreInterrupted(t *testing.T) {
	credittest.RequireSQLite(t)
	if testing.Short() {
		t.Skip("kills restores repeatedly; skipped with -short")
	}
	bin, err := instancesBinary()
	if err != nil {
		t.Fatal(err)
	}
	d := newCLIDB(t)
	dir := t.TempDir()
	backup := filepath.Join(dir, "backup.db")
	d.json(t, "backup", "--to", backup)
	// A backup big enough that its copy takes a while, told apart from the live database by a
	// store only it has.
	mustSQL(t, backup, "CREATE TABLE ballast (b BLOB); INSERT INTO ballast WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 4000) SELECT randomblob(16384) FROM n")
	(&cliDB{path: backup}).json(t, "store", "create", "--name", "Only in the backup", "--currency", "EUR")
	wantOld, wantNew := d.dump(t), (&cliDB{path: backup, store: d.store}).dump(t)

	took := time.Now()
	if b, err := exec.Command(bin, "restore", "--from", backup, "--db", filepath.Join(t.TempDir(), "probe.db")).CombinedOutput(); err != nil {
		t.Fatalf("restore: %v\n%s", err, b)
	}
	whole := time.Since(took)
	restored, kills := 0, 0
	for i := range 12 {
		kills++
		cmd := exec.Command(bin, "restore", "--from", backup, "--db", d.path)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(whole * time.Duration(i) / 10)
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		switch got := d.dump(t); got {
		case wantOld:
		case wantNew:
			restored++
		default:
			t.Fatalf("killed after %s: the database is neither the old one nor the backup:\n%s", whole*time.Duration(i)/10, got)
		}
		if err := database.IntegrityCheck(context.Background(), d.path); err != nil {
			t.Fatalf("killed after %s: %v", whole*time.Duration(i)/10, err)
		}
		// The operator moves the kept copy away before trying again; a killed restore's
		// temporary file is hidden and never under the database's name.
		os.Remove(d.path + ".before-restore")
		if restored > 0 {
			break
		}
	}
	// Whatever the kills left, a restore runs to its end.
	os.Remove(d.path + ".before-restore")
	if r := d.run(t, "restore", "--from", backup); r.code != 0 {
		t.Fatalf("restore after the kills: exit %d %s", r.code, r.stderr)
	}
	if got := d.dump(t); got != wantNew {
		t.Fatalf("the last restore did not put the backup in place")
	}
	t.Logf("a whole restore took %s; %d kills at moments across it left the old database (%d) or the backup (%d)", whole.Round(time.Millisecond), kills, kills-restored, restored)
}
