package main

import (
	"context"
	"fmt"
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

// TestBackupWhileServeWrites runs writers against a real serve while creditd backup copies
// the database several times; each copy, put into a fresh directory as a restore would, is
// checked with the crash test's invariants (integrity, outstanding = Σ entries, gapless
// sequences, one entry and one event per adjustment) and must hold every write acknowledged
// before its backup started. Each copy is restored into a fresh directory by creditd restore.
func TestBackupWhileServeWrites(t *testing.T) {
	credittest.RequireSQLite(t)
	if testing.Short() {
		t.Skip("runs a real server under load; skipped with -short")
	}
	bin, err := instancesBinary()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	db := filepath.Join(dir, "live.db")
	secret, companies := newLoadDatabase(t, bin, db, "Backup Test")
	c := &crashRun{t: t, secret: secret, writes: map[string]*crashWrite{}, client: &http.Client{Timeout: 10 * time.Second}}
	p := startCreditd(t, bin, dir, "serve", "--db", db, "--addr", "127.0.0.1:0", "--rate-limit", "1000000")
	c.base = "http://" + p.waitForListening(t)
	stop := make(chan struct{})
	wait := c.startWriters(3, 1, companies, stop)
	const copies = 4
	for i := range copies {
		time.Sleep(300 * time.Millisecond)
		// What was acknowledged before this backup starts, as it was then.
		c.mu.Lock()
		before := &crashRun{t: t, writes: map[string]*crashWrite{}, kills: i}
		acked := 0
		for _, k := range c.order {
			if w := *c.writes[k]; w.status != 0 {
				before.writes[k] = &w
				before.order = append(before.order, k)
				acked++
			}
		}
		c.mu.Unlock()
		out := filepath.Join(dir, fmt.Sprintf("copy%d.db", i))
		start := time.Now()
		cmd := exec.Command(bin, "backup", "--db", db, "--to", out)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("backup %d: %v\n%s", i, err, b)
		}
		took := time.Since(start)
		fresh := filepath.Join(t.TempDir(), "restored.db")
		if b, err := exec.Command(bin, "restore", "--from", out, "--db", fresh).CombinedOutput(); err != nil {
			t.Fatalf("restore %d: %v\n%s", i, err, b)
		}
		before.checkDatabase(fresh, false)
		if t.Failed() {
			t.FailNow()
		}
		t.Logf("copy %d: %d acknowledged writes before it, all present; backup took %s", i, acked, took.Round(time.Millisecond))
	}
	close(stop)
	wait()
	p.stop(t)
	if len(c.order) == 0 {
		t.Fatal("no writes were made")
	}
}
