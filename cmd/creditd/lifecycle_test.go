package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/creditd/creditd/credittest"
)

// liveServer is `creditd serve` running in-process on a SQLite file, with a clock shared
// with the CLI commands the test runs against the same file.
type liveServer struct {
	db    string
	clock *credittest.Clock
	base  string
}

// startLiveServer starts serve, with extra flags, on a new database.
func startLiveServer(t *testing.T, extra ...string) *liveServer {
	t.Helper()
	ls := &liveServer{db: filepath.Join(t.TempDir(), "live.db"), clock: credittest.NewClock(time.Date(2026, 5, 4, 8, 0, 0, 0, time.UTC))}
	runCreditd(t, "migrate", "--db", ls.db).mustSucceed(t) // serve without --demo needs a database
	ls.base = startServe(t, ls.clock, append([]string{"--db", ls.db, "--addr", "127.0.0.1:0"}, extra...)...)
	return ls
}

// startServe runs `creditd serve` with args in-process on clock until the test ends and
// returns its base URL. The test fails when serve does not start within 30 s or, at the end,
// exits other than 0.
func startServe(t *testing.T, clock *credittest.Clock, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	done := make(chan int, 1)
	m := NewMain(nil, &credittest.LogBuffer{}, &credittest.LogBuffer{})
	m.Now = clock.Now
	m.Ready = func(addr string) { ready <- addr }
	go func() { done <- m.Run(ctx, append([]string{"serve"}, args...)) }()
	var base string
	select {
	case addr := <-ready:
		base = "http://" + addr
	case code := <-done:
		cancel()
		t.Fatalf("serve exited with %d", code)
	case <-time.After(30 * time.Second):
		cancel()
		t.Fatal("serve did not start")
	}
	t.Cleanup(func() {
		cancel()
		if code := <-done; code != 0 {
			t.Errorf("serve exited with %d", code)
		}
		m.Close()
	})
	return base
}

// cli runs one creditd command against the live server's database and decodes its --json.
func (ls *liveServer) cli(t *testing.T, args ...string) map[string]any {
	t.Helper()
	return ls.cliWithStdin(t, "", args...)
}

// cliWithStdin runs one creditd command in-process at the clock's time with stdin, against
// ls's database, and decodes its --json.
func (ls *liveServer) cliWithStdin(t *testing.T, stdin string, args ...string) map[string]any {
	t.Helper()
	var out, errOut bytes.Buffer
	m := NewMain(strings.NewReader(stdin), &out, &errOut)
	m.Now = ls.clock.Now
	defer m.Close()
	if code := m.Run(context.Background(), append(args, "--db", ls.db, "--json")); code != 0 {
		t.Fatalf("creditd %s: exit %d: %s", strings.Join(args, " "), code, errOut.String())
	}
	var v map[string]any
	if err := json.Unmarshal(out.Bytes(), &v); err != nil {
		t.Fatalf("creditd %s printed %q: %v", strings.Join(args, " "), out.String(), err)
	}
	return v
}

func (ls *liveServer) status(t *testing.T, secret, path string) int {
	t.Helper()
	req, _ := http.NewRequest("GET", ls.base+path, nil)
	req.Header.Set("Authorization", "Bearer "+secret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func TestKeyRotationAndRevocationOnRunningServer(t *testing.T) {
	ls := startLiveServer(t)
	st := ls.cli(t, "store", "create", "--name", "Acme", "--currency", "EUR")["id"].(string)
	key := ls.cli(t, "key", "create", "--store", st, "--label", "ERP", "--scopes", "read_credit")
	keyID, oldSecret := key["id"].(string), key["secret"].(string)
	if got := ls.status(t, oldSecret, "/v1/companies"); got != 200 {
		t.Fatalf("new key: %d", got)
	}

	rotated := ls.cli(t, "key", "rotate", keyID) // default grace 24h
	newSecret := rotated["secret"].(string)
	if rotated["id"] != keyID || newSecret == oldSecret {
		t.Fatalf("rotate: %v", rotated)
	}
	ls.clock.Advance(23*time.Hour + 59*time.Minute)
	if a, b := ls.status(t, oldSecret, "/v1/companies"), ls.status(t, newSecret, "/v1/companies"); a != 200 || b != 200 {
		t.Fatalf("within the grace period: old %d, new %d", a, b)
	}
	ls.clock.Advance(time.Minute)
	if a, b := ls.status(t, oldSecret, "/v1/companies"), ls.status(t, newSecret, "/v1/companies"); a != 401 || b != 200 {
		t.Fatalf("after the grace period: old %d, new %d", a, b)
	}

	// A short grace from the flag.
	third := ls.cli(t, "key", "rotate", "--grace", "10m", keyID)["secret"].(string)
	ls.clock.Advance(11 * time.Minute)
	if a, b := ls.status(t, newSecret, "/v1/companies"), ls.status(t, third, "/v1/companies"); a != 401 || b != 200 {
		t.Fatalf("--grace 10m: old %d, new %d", a, b)
	}

	// A one-second grace ends exactly: the old secret, cached by the server, is 401 at 1.5 s.
	fourth := ls.cli(t, "key", "rotate", "--grace", "1s", keyID)["secret"].(string)
	if a, b := ls.status(t, third, "/v1/companies"), ls.status(t, fourth, "/v1/companies"); a != 200 || b != 200 {
		t.Fatalf("--grace 1s, at once: old %d, new %d", a, b)
	}
	ls.clock.Advance(1500 * time.Millisecond)
	if a, b := ls.status(t, third, "/v1/companies"), ls.status(t, fourth, "/v1/companies"); a != 401 || b != 200 {
		t.Fatalf("--grace 1s, at 1.5 s: old %d, new %d", a, b)
	}
	third = fourth

	// Revocation from the command line stops every secret at once (contract §2): the very
	// next request after the command returns, without the service clock moving or a sleep.
	again := ls.cli(t, "key", "rotate", keyID)["secret"].(string)
	if b := ls.status(t, again, "/v1/companies"); b != 200 {
		t.Fatalf("the new secret before revoke: %d", b)
	}
	ls.cli(t, "key", "revoke", keyID)
	if a, b := ls.status(t, third, "/v1/companies"), ls.status(t, again, "/v1/companies"); a != 401 || b != 401 {
		t.Fatalf("the first requests after revoke: %d %d, want 401 401", a, b)
	}
	list := ls.cli(t, "key", "list", "--store", st)["data"].([]any)
	if len(list) != 1 || list[0].(map[string]any)["revoked_at"] == nil {
		t.Fatalf("key list after revoke: %v", list)
	}
}

func TestKeyListLastUsedAndCleanup(t *testing.T) {
	ls := startLiveServer(t)
	st := ls.cli(t, "store", "create", "--name", "Acme", "--currency", "EUR")["id"].(string)
	used := ls.cli(t, "key", "create", "--store", st, "--label", "used", "--scopes", "read_credit")
	ls.cli(t, "key", "create", "--store", st, "--label", "idle", "--scopes", "read_credit")
	keys := func(args ...string) map[string]map[string]any {
		out := map[string]map[string]any{}
		for _, k := range ls.cli(t, append([]string{"key", "list", "--store", st}, args...)...)["data"].([]any) {
			m := k.(map[string]any)
			out[m["label"].(string)] = m
		}
		return out
	}
	if k := keys(); k["used"]["last_used_at"] != nil || k["used"]["cleanup_suggested"] != false {
		t.Fatalf("fresh key: %v", k["used"])
	}
	ls.clock.Advance(time.Hour)
	ls.status(t, used["secret"].(string), "/v1/companies")
	firstUse := keys()["used"]["last_used_at"]
	if firstUse != "2026-05-04T09:00:00.000000Z" {
		t.Fatalf("first use not recorded: %v", firstUse)
	}
	// Within the minute, further use does not write.
	ls.clock.Advance(30 * time.Second)
	ls.status(t, used["secret"].(string), "/v1/companies")
	if got := keys()["used"]["last_used_at"]; got != firstUse {
		t.Fatalf("last_used_at written again within a minute: %v", got)
	}
	ls.clock.Advance(31 * time.Second)
	ls.status(t, used["secret"].(string), "/v1/companies")
	if got := keys()["used"]["last_used_at"]; got == firstUse {
		t.Fatal("last_used_at not refreshed after a minute")
	}
	ls.clock.Advance(89 * 24 * time.Hour) // 89 days and about an hour since creation
	if k := keys(); k["idle"]["cleanup_suggested"] != false || k["used"]["cleanup_suggested"] != false {
		t.Fatalf("cleanup suggested before 90 days: %v", k)
	}
	ls.clock.Advance(23 * time.Hour) // idle: 90 days since creation; used: 89 days 23 hours since its last use
	if k := keys(); k["idle"]["cleanup_suggested"] != true || k["used"]["cleanup_suggested"] != false {
		t.Fatalf("idle key after 90 days since creation: %v", k)
	}
	if k := keys("--stale-after", "1h"); k["used"]["cleanup_suggested"] != true {
		t.Fatalf("--stale-after 1h: %v", k)
	}
}

func TestHoldCommands(t *testing.T) {
	ls := startLiveServer(t)
	st := ls.cli(t, "store", "create", "--name", "Acme", "--currency", "EUR")["id"].(string)
	co := ls.cli(t, "company", "create", "--store", st, "--name", "Buyer", "--platform-company-gid", "gid://platform/Company/9",
		"--payment-terms", "NET_14", "--credit-limit", "100.00")["id"].(string)
	res := ls.cli(t, "hold", "place", co, "--staff", "Maria", "--note", "KYC pending")
	hold := res["company"].(map[string]any)["hold"].(map[string]any)
	if hold["placed_by"] != "Maria" || hold["kind"] != "manual" || hold["note"] != "KYC pending" {
		t.Fatalf("hold place: %v", res)
	}
	if res := ls.cli(t, "hold", "lift", "--staff", "Maria", co); res["company"].(map[string]any)["hold"] != nil {
		t.Fatalf("hold lift: %v", res)
	}
	ls.cli(t, "ledger", "record", "--company", co, "--kind", "order_placed", "--amount", "60.00", "--order", "gid://platform/Order/1")
	ls.clock.Advance(15 * 24 * time.Hour)
	if res := ls.cli(t, "holds", "sweep"); res["placed"] != float64(1) {
		t.Fatalf("sweep: %v", res)
	}
	// Staff cannot lift the overdue hold either: exit 2 and a one-line reason.
	var out, errOut bytes.Buffer
	m := NewMain(nil, &out, &errOut)
	m.Now = ls.clock.Now
	code := m.Run(context.Background(), []string{"hold", "lift", co, "--staff", "Maria", "--db", ls.db})
	m.Close()
	if code != 2 || !strings.Contains(errOut.String(), "overdue hold stays") || strings.Count(errOut.String(), "\n") != 1 {
		t.Fatalf("lift overdue: exit %d, %q", code, errOut.String())
	}
	// --now sweeps as of another time: before the due date nothing is overdue, so the hold lifts.
	if res := ls.cli(t, "holds", "sweep", "--now", "2026-05-05T00:00:00Z"); res["lifted"] != float64(1) {
		t.Fatalf("sweep --now: %v", res)
	}
}
