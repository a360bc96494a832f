package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creditd/creditd/credittest"
	"github.com/creditd/creditd/database"
)

// TestLitestreamReplicatesServe runs the README's Litestream set-up: serve, with its default
// checkpoints, under four writers while Litestream replicates its database to a file replica
// with the README's configuration; then both are SIGKILLed at once, as when the
// machine dies. litestream restore brings the replica back; the restored database must pass
// the crash test's invariants (integrity, outstanding = Σ entries, gapless sequences, each
// adjustment once with its event), serve must start on it and answer GET with those figures,
// and every acknowledged write it misses must be one acknowledged in the last seconds before
// the kill (Litestream ships the log every second). The figure is logged for the README.
// Litestream must not have had to snapshot the whole database again because serve checkpointed
// under it (Litestream's guidance warns of that for applications that checkpoint themselves).
//
// Without the litestream binary (on PATH or in $(go env GOPATH)/bin) the test is skipped,
// except under CI, whose .ci/run installs it.
func TestLitestreamReplicatesServe(t *testing.T) {
	credittest.RequireSQLite(t)
	if testing.Short() {
		t.Skip("runs a real server and Litestream under load; skipped with -short")
	}
	litestream := litestreamBinary(t)
	bin, err := instancesBinary()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	db := filepath.Join(dir, "creditd.db")
	replica := filepath.Join(dir, "replica")
	secret, companies := newLoadDatabase(t, bin, db, "Litestream Test")

	config := filepath.Join(dir, "litestream.yml")
	// Debug logging shows each sync, and whether it had to snapshot the whole database.
	if err := os.WriteFile(config, []byte(readmeLitestreamConfig(t, db, replica)+"logging:\n  level: debug\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// serve as the README runs it, with its default checkpoints; LITESTREAM_TEST_AUTOCHECKPOINT=0
	// measures Litestream's older advice of leaving every checkpoint to it.
	autocheckpoint := "1000"
	if v := os.Getenv("LITESTREAM_TEST_AUTOCHECKPOINT"); v != "" {
		autocheckpoint = v
	}
	p := startCreditd(t, bin, dir, "serve", "--db", db, "--addr", "127.0.0.1:0", "--rate-limit", "1000000", "--wal-autocheckpoint", autocheckpoint)
	base := "http://" + p.waitForListening(t)
	var lsLog lockedBuffer
	ls := exec.Command(litestream, "replicate", "-config", config)
	ls.Stdout, ls.Stderr = &lsLog, &lsLog
	if err := ls.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ls.Process.Kill(); _ = ls.Wait() })

	c := &crashRun{t: t, base: base, secret: secret, writes: map[string]*crashWrite{}, client: &http.Client{Timeout: 10 * time.Second}}
	stop := make(chan struct{})
	wait := c.startWriters(4, 41, companies, stop)
	load := 8 * time.Second
	if v, err := time.ParseDuration(os.Getenv("LITESTREAM_TEST_LOAD")); err == nil {
		load = v
	}
	// The replica exists once Litestream's first snapshot is complete; under the writers its
	// first attempts may find the database locked (it retries every second).
	for deadline := time.Now().Add(time.Minute); !strings.Contains(lsLog.String(), `msg="snapshot complete"`); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("Litestream made no snapshot in a minute:\n%s", lsLog.String())
		}
	}
	// /readyz stays 200 while Litestream replicates under the writers (the README says so).
	readyUntil := time.Now().Add(load / 2)
	probes := 0
	for ; time.Now().Before(readyUntil); probes++ {
		resp, err := http.Get(base + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("/readyz answered %d while Litestream replicated", resp.StatusCode)
		}
		time.Sleep(100 * time.Millisecond)
	}
	// An erasure's purge of the write-ahead log cannot run while Litestream holds its read
	// transaction: person erase says so in seconds, and what it erased stays erased.
	var store string
	if d, err := database.Open(context.Background(), db); err != nil {
		t.Fatal(err)
	} else {
		err := d.SQL.QueryRow("SELECT id FROM stores").Scan(&store)
		d.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	erasing := time.Now()
	erase := exec.Command(bin, "person", "erase", "--db", db, "--store", store, "--email", "nobody@example.com")
	if b, err := erase.CombinedOutput(); err == nil || !strings.Contains(string(b), "Litestream") {
		t.Errorf("person erase beside Litestream: %v %s; want a failure that names Litestream", err, b)
	} else if took := time.Since(erasing); took > 15*time.Second {
		t.Errorf("person erase beside Litestream took %s to give up", took)
	} else {
		t.Logf("person erase beside Litestream gave up in %s: %s", took.Round(10*time.Millisecond), strings.TrimSpace(string(b)))
	}
	time.Sleep(load / 2)
	// The machine dies: both processes at the same moment, writers still writing.
	killedAt := time.Now()
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	_ = ls.Process.Signal(syscall.SIGKILL)
	close(stop)
	go func() {
		for range p.lines {
		}
	}()
	_ = p.cmd.Wait()
	_ = ls.Wait()
	wait()

	restored := filepath.Join(t.TempDir(), "restored.db")
	if b, err := exec.Command(litestream, "restore", "-config", config, "-o", restored, db).CombinedOutput(); err != nil {
		var said []string // without the debug lines
		for _, l := range strings.Split(string(b), "\n") {
			if !strings.Contains(l, "level=DEBUG") {
				said = append(said, l)
			}
		}
		t.Fatalf("litestream restore: %v\n%s\nLitestream's replicate log:\n%s", err, strings.Join(said, "\n"), lsLog.String())
	}
	d, state := c.checkInvariants(restored)
	outstanding := map[string]string{}
	rows, err := d.SQL.QueryContext(context.Background(), "SELECT id, outstanding FROM companies")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id, o string
		if err := rows.Scan(&id, &o); err != nil {
			t.Fatal(err)
		}
		outstanding[id] = o
	}
	rows.Close()
	d.Close()

	// What the restore lost: acknowledged successes missing from it, by age at the kill.
	acked, succeeded := 0, 0
	var missing []time.Duration
	for _, k := range c.order {
		w := c.writes[k]
		if w.status == 0 {
			continue
		}
		acked++
		n, ok := state.present(w)
		if !ok || n > 1 || w.status >= 300 && n > 0 {
			t.Errorf("%s %s (answered %d) is %d times in the restored data", w.kind, w.key, w.status, n)
		}
		if w.status < 300 && n >= 0 {
			succeeded++
			if n == 0 {
				missing = append(missing, killedAt.Sub(w.answeredAt))
			}
		}
	}
	sort.Slice(missing, func(i, j int) bool { return missing[i] < missing[j] })
	oldest := time.Duration(0)
	if len(missing) > 0 {
		oldest = missing[len(missing)-1]
	}
	t.Logf("/readyz: %d probes, each 200", probes)
	t.Logf("%d writes acknowledged in %s (%d successes that leave a trace); the restore misses %d of them, the oldest acknowledged %s before the kill (sync-interval 1s, --wal-autocheckpoint %s)",
		acked, load, succeeded, len(missing), oldest.Round(10*time.Millisecond), autocheckpoint)
	if succeeded < 100 {
		t.Fatalf("only %d successful writes: the load did not run", succeeded)
	}
	// Litestream ships every second; a write older than a few seconds must be in the replica
	// (the margin is for a loaded CI machine).
	if oldest > 5*time.Second {
		t.Errorf("the restore misses a write acknowledged %s before the kill", oldest)
	}
	if os.Getenv("LITESTREAM_TEST_DUMP") != "" {
		_ = os.WriteFile(os.Getenv("LITESTREAM_TEST_DUMP"), []byte(lsLog.String()), 0o644)
	}
	// Each sync that had to copy the whole database says snap=true; the first is the replica's start.
	resnapshots := max(0, strings.Count(lsLog.String(), "snap=true")-1)
	t.Logf("Litestream took %d new snapshots after its first, because another process checkpointed under it", resnapshots)
	if resnapshots > 0 {
		t.Errorf("Litestream had to snapshot the database again: serve's checkpoints conflict with it:\n%s", lsLog.String())
	}

	// serve starts on the restored file and answers with the figures the file holds.
	p2 := startCreditd(t, bin, dir, "serve", "--db", restored, "--addr", "127.0.0.1:0")
	base2 := "http://" + p2.waitForListening(t)
	for _, id := range companies {
		req, _ := http.NewRequest("GET", base2+"/v1/companies/"+id, nil)
		req.Header.Set("Authorization", "Bearer "+secret)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var co struct {
			Outstanding struct {
				Amount string `json:"amount"`
			} `json:"outstanding"`
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err := json.Unmarshal(b, &co); err != nil || resp.StatusCode != 200 {
			t.Fatalf("GET %s on the restored database: %d %s", id, resp.StatusCode, b)
		}
		if !decimalEqual(co.Outstanding.Amount, outstanding[id]) {
			t.Errorf("GET %s: outstanding %s, the restored file holds %s", id, co.Outstanding.Amount, outstanding[id])
		}
	}
	p2.stop(t)
}

// readmeLitestreamConfig returns the README's tested Litestream configuration (its first yaml
// block with a file replica) with the database and replica paths of this test.
func readmeLitestreamConfig(t *testing.T, db, replica string) string {
	t.Helper()
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllStringSubmatch(string(readme), -1) {
		block := m[1]
		if !strings.Contains(block, "type: file") {
			continue
		}
		dbLine := regexp.MustCompile(`(?m)^(\s*- path: ).*$`)
		replicaLine := regexp.MustCompile(`(?m)^(\s+path: )/var/backups/.*$`)
		if !dbLine.MatchString(block) || !replicaLine.MatchString(block) {
			t.Fatalf("the README's Litestream configuration has no database path or no file replica path:\n%s", block)
		}
		block = dbLine.ReplaceAllString(block, "${1}"+db)
		return replicaLine.ReplaceAllString(block, "${1}"+replica)
	}
	t.Fatal("the README has no Litestream configuration with a file replica (a yaml block with type: file)")
	return ""
}

// litestreamBinary finds the litestream command: on PATH, or where go install puts it.
// Without it the test is skipped, except under CI.
func litestreamBinary(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("litestream"); err == nil {
		return p
	}
	if gopath, err := exec.Command("go", "env", "GOPATH").Output(); err == nil {
		p := filepath.Join(strings.TrimSpace(string(gopath)), "bin", "litestream")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	msg := "litestream is not installed: go install github.com/benbjohnson/litestream/cmd/litestream@v0.5.18"
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// lockedBuffer is a buffer that a process's output and the test can share.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
