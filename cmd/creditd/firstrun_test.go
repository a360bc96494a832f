package main

// What a new user meets in the first minutes with the command line: the hints after a mistyped
// flag, a missing database file, an address in use, `store list`, `version`, and a second
// `serve --demo` that says how to get a key.

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/creditd/creditd/credittest"
)

// wantOneLine fails unless the run exited with code and printed exactly one line, starting
// with creditd, on stderr and nothing on stdout.
func (r cliRun) wantOneLine(tb testing.TB, code int) string {
	tb.Helper()
	if r.code != code || r.stdout != "" || strings.Count(r.stderr, "\n") != 1 || !strings.HasSuffix(r.stderr, "\n") || !strings.HasPrefix(r.stderr, "creditd") {
		tb.Fatalf("creditd %s: exit %d, stdout %q, stderr %q; want exit %d and one line on stderr", strings.Join(r.args, " "), r.code, r.stdout, r.stderr, code)
	}
	return strings.TrimSuffix(r.stderr, "\n")
}

func TestCLIFlagMistakesPointAtHelp(t *testing.T) {
	t.Parallel()
	d := newCLIDB(t)
	for _, tc := range []struct {
		command string
		flags   []string
		want    string
	}{
		{"key create", []string{"--stor", "x"}, "creditd key create: unknown flag --stor; run creditd key create -h for its flags"},
		{"key create", []string{"-stor", "x"}, "creditd key create: unknown flag --stor; run creditd key create -h for its flags"},
		{"key list", []string{"--store"}, "creditd key list: flag needs an argument: --store; run creditd key list -h for its flags"},
		{"serve", []string{"--rate-limit", "many"}, `creditd serve: invalid value "many" for flag --rate-limit: parse error; run creditd serve -h for its flags`},
		{"serve", []string{"--cors-origin", "https://*.example.com"}, `creditd serve: invalid value "https://*.example.com" for flag --cors-origin: a CORS origin is a scheme and host as a browser sends it, such as https://dashboard.example.com or http://localhost:3000; got "https://*.example.com"; run creditd serve -h for its flags`},
		{"store list", []string{"--json=maybe"}, `creditd store list: invalid boolean value "maybe" for --json: parse error; run creditd store list -h for its flags`},
		// A required flag left out, or an argument too many or too few, points at -h too.
		{"key create", []string{"--store", d.store, "--label", "L"}, "creditd key create: --scopes is required; run creditd key create -h for its flags"},
		{"key rotate", nil, "creditd key rotate: expected 1 argument(s): KEY; got 0; run creditd key rotate -h for its flags"},
	} {
		args := append(append(strings.Fields(tc.command), "--db", d.path), tc.flags...)
		if got := runCreditd(t, args...).wantOneLine(t, exitBadInput); got != tc.want {
			t.Errorf("creditd %s:\n got %s\nwant %s", strings.Join(args, " "), got, tc.want)
		}
	}
	// A mistake the operator cannot fix with -h gets no hint.
	r := runCreditd(t, "key", "list", "--store", "st_0000000000000000000000", "--db", d.path)
	if got := r.wantOneLine(t, exitBadInput); strings.Contains(got, "-h") {
		t.Errorf("an unknown store points at -h: %s", got)
	}
}

// TestCLIRefusesAMissingDatabase runs every command but the three that may create a database
// (migrate, store create, serve --demo) and version (which opens none) on a SQLite path that
// does not exist: each refuses in one line naming the path and how to create it, exits 2, and
// leaves no file behind. Commands added later are covered as they are added.
func TestCLIRefusesAMissingDatabase(t *testing.T) {
	t.Parallel()
	for name, cmd := range commands() {
		if cmd.noDatabase || name == "migrate" || name == "store create" {
			continue
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			path := filepath.Join(dir, "typo.db")
			args := append(strings.Fields(name), "--db", path)
			if name == "serve" {
				// Refused before it listens; were it not, the bad --rate-limit would stop it
				// instead of serving until the test times out.
				args = append(args, "--addr", "127.0.0.1:0", "--rate-limit", "0")
			}
			got := runCreditd(t, args...).wantOneLine(t, exitBadInput)
			want := "creditd " + name + ": no database at " + path + " (from --db); check the path, or create the database with: creditd migrate --db " + path
			if got != want {
				t.Errorf("\n got %s\nwant %s", got, want)
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 0 {
				t.Errorf("creditd %s left %v behind", name, entries)
			}
		})
	}
}

func TestCLIMissingDatabaseMessage(t *testing.T) {
	// Not parallel: it sets CREDITD_DB for the process.
	t.Setenv("CREDITD_DB", "")
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	inWorkingDir := filepath.Join(wd, "creditd.db")
	if got, want := noDatabase("creditd.db", false), "no database at "+inWorkingDir+" (the default --db, creditd.db in the working directory); check the path, or create the database with: creditd migrate --db "+inWorkingDir; got != want {
		t.Errorf("the default:\n got %s\nwant %s", got, want)
	}
	t.Setenv("CREDITD_DB", "/srv/my credit.db")
	if got, want := noDatabase("/srv/my credit.db", false), "no database at /srv/my credit.db (from CREDITD_DB); check the path, or create the database with: creditd migrate --db '/srv/my credit.db'"; got != want {
		t.Errorf("from the environment:\n got %s\nwant %s", got, want)
	}
	if got := noDatabase("file:/srv/credit.db?cache=shared", true); !strings.HasPrefix(got, "no database at /srv/credit.db (from --db);") {
		t.Errorf("a file: URI: %s", got)
	}
}

func TestCLIMayCreateTheDatabase(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	runCreditd(t, "migrate", "--db", filepath.Join(dir, "migrated.db")).mustSucceed(t)
	runCreditd(t, "store", "create", "--name", "A", "--currency", "EUR", "--db", filepath.Join(dir, "store.db")).mustSucceed(t)
	for _, f := range []string{"migrated.db", "store.db"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	// A PostgreSQL URL is never checked as a file: it reaches the driver (here, nothing
	// listens, so it is an outage) instead of being called a missing database.
	r := runCreditd(t, "key", "list", "--store", "st_x", "--db", "postgres://nobody@127.0.0.1:1/none?sslmode=disable&connect_timeout=1")
	if strings.Contains(r.stderr, "no database at") || r.code != exitFailure {
		t.Errorf("a PostgreSQL URL: exit %d %q", r.code, r.stderr)
	}
}

func TestStoreList(t *testing.T) {
	t.Parallel()
	d := &cliDB{path: filepath.Join(t.TempDir(), "creditd.db")}
	runCreditd(t, "migrate", "--db", d.path).mustSucceed(t)
	if out := d.run(t, "store", "list").mustSucceed(t).stdout; !strings.Contains(out, "no stores yet") {
		t.Errorf("store list on an empty database: %q", out)
	}
	if got := d.json(t, "store", "list"); len(got["data"].([]any)) != 0 {
		t.Errorf("store list --json on an empty database: %v", got)
	}
	// Created a day apart, the second with an ID that may sort before the first's: the list
	// is by age.
	first := runCreditdAt(t, cliStart, "store", "create", "--name", "Acme Wholesale", "--currency", "EUR", "--json", "--db", d.path).mustSucceed(t).object(t)
	second := runCreditdAt(t, cliStart.Add(24*time.Hour), "store", "create", "--name", "Kyoto Trading", "--currency", "JPY", "--buffer-percent", "0", "--json", "--db", d.path).mustSucceed(t).object(t)

	list := d.json(t, "store", "list")
	mustKeys(t, "store list", list, "data")
	stores := list["data"].([]any)
	if len(stores) != 2 {
		t.Fatalf("store list: %v", list)
	}
	for i, want := range []map[string]any{first, second} {
		got := stores[i].(map[string]any)
		mustKeys(t, "a listed store", got, "id", "name", "currency", "buffer_percent", "locale", "created_at")
		for k, v := range want {
			if got[k] != v {
				t.Errorf("store %d: %s is %v, store create said %v", i, k, got[k], v)
			}
		}
	}

	lines := strings.Split(strings.TrimSpace(d.run(t, "store", "list").mustSucceed(t).stdout), "\n")
	if len(lines) != 3 || strings.Join(strings.Fields(lines[0]), " ") != "ID NAME CURRENCY CREATED" {
		t.Fatalf("store list:\n%s", strings.Join(lines, "\n"))
	}
	for i, st := range []map[string]any{first, second} {
		for _, v := range []string{st["id"].(string), st["name"].(string), st["currency"].(string), st["created_at"].(string)} {
			if !strings.Contains(lines[i+1], v) {
				t.Errorf("store list line %q lacks %q", lines[i+1], v)
			}
		}
	}
}

func TestVersion(t *testing.T) {
	t.Parallel()
	// version opens no database: a path that does not exist is neither refused nor created.
	dir := t.TempDir()
	r := runCreditd(t, "version", "--db", filepath.Join(dir, "none.db")).mustSucceed(t)
	if !strings.HasPrefix(r.stdout, "creditd ") || strings.Count(r.stdout, "\n") != 1 {
		t.Errorf("version: %q", r.stdout)
	}
	if dashed := runCreditd(t, "--version", "--db", filepath.Join(dir, "none.db")).mustSucceed(t); dashed.stdout != r.stdout {
		t.Errorf("creditd --version printed %q, creditd version %q", dashed.stdout, r.stdout)
	}
	v := runCreditd(t, "version", "--json", "--db", filepath.Join(dir, "none.db")).mustSucceed(t).object(t)
	mustKeys(t, "version --json", v, "release", "version", "revision", "time", "modified", "go")
	if v["release"] != Release {
		t.Errorf("version --json: release %v, want %s", v["release"], Release)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("version left %v behind", entries)
	}

	stamped := versionFrom(&debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/creditd/creditd", Version: "v1.4.0"}, Settings: []debug.BuildSetting{
		{Key: "vcs", Value: "git"},
		{Key: "vcs.revision", Value: "c536541a0b2f7e0d5c3c1b8d2a9e4f6a7b8c9d0e"},
		{Key: "vcs.time", Value: "2026-11-23T10:12:00Z"},
		{Key: "vcs.modified", Value: "true"},
	}})
	if want := (buildVersion{Release: Release, Version: "v1.4.0", Revision: "c536541a0b2f7e0d5c3c1b8d2a9e4f6a7b8c9d0e", Time: "2026-11-23T10:12:00Z", Modified: true, Go: "go1.26.8"}); stamped != want {
		t.Errorf("versionFrom: %+v, want %+v", stamped, want)
	}
	if got, want := stamped.String(), "creditd "+Release+" (module v1.4.0), commit c536541a0b2f7e0d5c3c1b8d2a9e4f6a7b8c9d0e of 2026-11-23T10:12:00Z, with uncommitted changes, built with go1.26.8"; got != want {
		t.Errorf("version line:\n got %s\nwant %s", got, want)
	}
	bare := versionFrom(&debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/creditd/creditd"}})
	if got, want := bare.String(), "creditd "+Release+", no commit recorded (built without version control information), built with go1.26.8"; got != want {
		t.Errorf("version line without VCS information:\n got %s\nwant %s", got, want)
	}
}

func TestServeSuggestsAFreeAddress(t *testing.T) {
	t.Parallel()
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	d := newCLIDB(t)
	// A port in use or an address without a colon is the operator's to fix (exit 2), with the
	// fix, and never reads as a database outage, whichever listener it is.
	for _, tt := range []struct {
		args []string
		want []string
	}{
		{[]string{"--addr", taken.Addr().String()}, []string{"address already in use", "--addr 127.0.0.1:0 for any free port"}},
		{[]string{"--addr", "127.0.0.1:0", "--admin-addr", taken.Addr().String()}, []string{"--admin-addr", "address already in use", "--admin-addr 127.0.0.1:0 for any free port"}},
		{[]string{"--addr", "127.0.0.1:0", "--admin-addr", "8083"}, []string{"write --admin-addr :8083"}},
		{[]string{"--addr", "8082"}, []string{"write --addr :8082"}},
		{[]string{"--addr", "localhost"}, []string{"[host]:port"}},
	} {
		got := d.run(t, append([]string{"serve"}, tt.args...)...).wantOneLine(t, exitBadInput)
		for _, w := range tt.want {
			if !strings.Contains(got, w) || strings.Contains(got, "database") {
				t.Errorf("serve %s: %s\nwant it to say %q, and nothing of the database", strings.Join(tt.args, " "), got, w)
			}
		}
	}
}

func TestSelfCommand(t *testing.T) {
	onPath := func(string) (string, error) { return "/usr/local/bin/creditd", nil }
	notOnPath := func(string) (string, error) { return "", errors.New("not found") }
	for _, tt := range []struct {
		exe, arg0 string
		look      func(string) (string, error)
		want      string
	}{
		{"/tmp/go-build123/b001/exe/creditd", "/tmp/go-build123/b001/exe/creditd", notOnPath, "go run ./cmd/creditd"},
		{"/home/me/creditd/creditd", "./creditd", notOnPath, "./creditd"},
		{"/home/me/creditd/creditd", "./creditd", onPath, "./creditd"},
		{"/home/me/go/bin/creditd", "creditd", notOnPath, "creditd"},
	} {
		if got := selfCommand(tt.exe, tt.arg0, tt.look); got != tt.want {
			t.Errorf("selfCommand(%q, %q) = %q, want %q", tt.exe, tt.arg0, got, tt.want)
		}
	}
}

// TestSecondDemoSaysHowToMakeAKey starts serve --demo twice on one database: the second start
// seeds nothing, prints the demo store's ID and a key create line, and that line, run as
// printed, makes a key of that store.
func TestSecondDemoSaysHowToMakeAKey(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "demo.db")
	first := serveInProcess(t, "serve", "--demo", "--db", db, "--addr", "127.0.0.1:0")
	m := regexp.MustCompile(`Demo store (st_[0-9A-Za-z]+) seeded`).FindStringSubmatch(first)
	if m == nil {
		t.Fatalf("the first --demo did not seed:\n%s", first)
	}
	store := m[1]

	second := serveInProcess(t, "serve", "--demo", "--db", db, "--addr", "127.0.0.1:0")
	if strings.Contains(second, "ck_") || !strings.Contains(second, "no demo was seeded") || !strings.Contains(second, store+"  Demo Wholesale GmbH (EUR)") {
		t.Errorf("the second --demo:\n%s", second)
	}
	// The test binary runs from Go's build cache, as under go run, so the line names
	// go run ./cmd/creditd, which a README reader has (TestSelfCommand covers the other cases).
	line := regexp.MustCompile(`(?m)^\s+go run \./cmd/(creditd key create .*)$`).FindStringSubmatch(second)
	if line == nil {
		t.Fatalf("the second --demo prints no key create line:\n%s", second)
	}
	if want := "creditd key create --db " + db + " --store " + store + " --label me --scopes read_credit,read_applications,write_credit"; line[1] != want {
		t.Errorf("key create line:\n got %s\nwant %s", line[1], want)
	}
	key := runCreditd(t, append(strings.Fields(line[1])[1:], "--json")...).mustSucceed(t).object(t)
	if owner, err := (&cliDB{path: db}).service(t).Stores.OwnerOf(context.Background(), key["id"].(string)); err != nil || owner != store {
		t.Errorf("the printed line made key %v of store %q (%v), want one of %s", key["id"], owner, err, store)
	}
}

// serveInProcess runs a serve command line until it listens, stops it, and returns what it
// printed on stdout.
func serveInProcess(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := &credittest.LogBuffer{}
	m := NewMain(strings.NewReader(""), out, &credittest.LogBuffer{})
	m.Now = func() time.Time { return cliStart }
	ready := make(chan struct{})
	m.Ready = func(string) { close(ready) }
	done := make(chan int, 1)
	go func() { done <- m.Run(ctx, args) }()
	select {
	case <-ready:
	case code := <-done:
		t.Fatalf("creditd %s exited with %d before listening:\n%s", strings.Join(args, " "), code, out.String())
	case <-time.After(60 * time.Second):
		t.Fatalf("creditd %s did not start listening", strings.Join(args, " "))
	}
	cancel()
	if code := <-done; code != 0 {
		t.Errorf("creditd %s exited with %d", strings.Join(args, " "), code)
	}
	if err := m.Close(); err != nil {
		t.Error(err)
	}
	return out.String()
}
