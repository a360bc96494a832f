package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creditd/creditd/credittest"
	"github.com/creditd/creditd/database"
	"github.com/creditd/creditd/ids"
)

// instancesBinary builds creditd once per test binary run.
var instancesBinary = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "creditd-bin")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "creditd")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return bin, nil
})

// serveProcess starts `creditd serve` as its own process and returns its base URL.
func serveProcess(t *testing.T, bin string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)...)
	cmd.Stdout = io.Discard
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
	})
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			var line struct{ Msg, Addr string }
			if json.Unmarshal(sc.Bytes(), &line) == nil && line.Msg == "listening" {
				addr <- line.Addr
			}
		}
	}()
	select {
	case a := <-addr:
		return "http://" + a
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not start")
	}
	return ""
}

// runCLI runs a creditd command as a process and decodes its --json output.
func runCLI(t *testing.T, bin string, args ...string) map[string]any {
	t.Helper()
	out, err := exec.Command(bin, append(args, "--json")...).Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("creditd %s: %v %s", strings.Join(args, " "), err, stderr)
	}
	var v map[string]any
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("creditd %s printed %q", strings.Join(args, " "), out)
	}
	return v
}

func send(t *testing.T, method, url, secret, body string, header map[string]string) (int, http.Header) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+secret)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, resp.Header
}

// TestTwoInstancesOnPostgresAndRedis runs two `creditd serve` processes on one PostgreSQL
// database and one Redis and shows they behave as one service.
func TestTwoInstancesOnPostgresAndRedis(t *testing.T) {
	pgURL := credittest.PostgresURL(t)
	redisURL := credittest.RedisURL(t)
	bin, err := instancesBinary()
	if err != nil {
		t.Fatal(err)
	}
	dsn, drop, err := database.ScratchSchema(context.Background(), pgURL, "inst_"+strings.ToLower(ids.Random(10)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(drop)
	runCLI(t, bin, "migrate", "--db", dsn)
	st := runCLI(t, bin, "store", "create", "--db", dsn, "--name", "Big Merchant", "--currency", "EUR")["id"].(string)
	st2 := runCLI(t, bin, "store", "create", "--db", dsn, "--name", "Second", "--currency", "EUR")["id"].(string)
	key := runCLI(t, bin, "key", "create", "--db", dsn, "--store", st, "--label", "ERP", "--scopes", "read_credit,write_credit")
	key2 := runCLI(t, bin, "key", "create", "--db", dsn, "--store", st2, "--label", "ERP", "--scopes", "read_credit,write_credit")
	secret, secret2 := key["secret"].(string), key2["secret"].(string)
	co := runCLI(t, bin, "company", "create", "--db", dsn, "--store", st2, "--name", "Buyer", "--platform-company-gid", "gid://platform/Company/1",
		"--payment-terms", "NET_30", "--credit-limit", "100.00")["id"].(string)

	a := serveProcess(t, bin, "--db", dsn, "--redis", redisURL)
	b := serveProcess(t, bin, "--db", dsn, "--redis", redisURL)

	t.Run("rate limit is shared", func(t *testing.T) {
		ok, limited := 0, 0
		for i := 0; i < 200; i++ {
			base := a
			if i%2 == 1 {
				base = b
			}
			status, h := send(t, "GET", base+"/v1/companies", secret, "", nil)
			switch status {
			case 200:
				ok++
			case 429:
				limited++
				if h.Get("Retry-After") == "" {
					t.Fatal("429 without Retry-After")
				}
			default:
				t.Fatalf("status %d", status)
			}
		}
		t.Logf("two instances, 200 requests of one store: %d allowed, %d limited", ok, limited)
		if ok != 120 {
			t.Fatalf("allowed %d requests, want exactly 120 (not 240)", ok)
		}
	})

	t.Run("one idempotency key applies once across instances", func(t *testing.T) {
		body := `{"amount":"-5.00","note":"sent to both instances"}`
		hdr := map[string]string{"Idempotency-Key": "both-" + ids.Random(6)}
		var wg sync.WaitGroup
		statuses := make([]int, 10)
		for i := range statuses {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				base := a
				if i%2 == 1 {
					base = b
				}
				statuses[i], _ = send(t, "POST", base+"/v1/companies/"+co+"/adjustments", secret2, body, hdr)
			}(i)
		}
		wg.Wait()
		for _, s := range statuses {
			if s != 201 && s != 409 {
				t.Fatalf("statuses %v", statuses)
			}
		}
		req, _ := http.NewRequest("GET", a+"/v1/companies/"+co+"/ledger", nil)
		req.Header.Set("Authorization", "Bearer "+secret2)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var page struct{ Data []any }
		if err := json.NewDecoder(resp.Body).Decode(&page); err != nil || len(page.Data) != 1 {
			t.Fatalf("ledger after concurrent retries on two instances: %d entries (%v), statuses %v", len(page.Data), err, statuses)
		}
	})

	t.Run("revocation is seen by every instance at once", func(t *testing.T) {
		// A rotation's one-second grace ends on both instances by 1.5 s, though both cached
		// the old secret (the instances run on the machine's clock).
		old := secret2
		rotated := runCLI(t, bin, "key", "rotate", "--db", dsn, "--grace", "1s", key2["id"].(string))
		returned := time.Now()
		secret2 = rotated["secret"].(string)
		for _, base := range []string{a, b} {
			send(t, "GET", base+"/v1/companies/"+co, old, "", nil)
		}
		time.Sleep(time.Until(returned.Add(1500 * time.Millisecond)))
		for _, base := range []string{a, b} {
			if s, _ := send(t, "GET", base+"/v1/companies/"+co, old, "", nil); s != 401 {
				t.Fatalf("%s: the rotated-out secret 1.5 s after a --grace 1s rotation: %d, want 401", base, s)
			}
		}
		for _, base := range []string{a, b, a, b} {
			if s, _ := send(t, "GET", base+"/v1/companies/"+co, secret2, "", nil); s != 200 {
				t.Fatalf("%s before revoke: %d", base, s)
			}
		}
		// Both instances have cached the authentication; the revocation from a third process
		// must reach them before the command returns (contract §2): no sleep, no retry.
		runCLI(t, bin, "key", "revoke", "--db", dsn, key2["id"].(string))
		for _, base := range []string{a, b} {
			if s, _ := send(t, "GET", base+"/v1/companies/"+co, secret2, "", nil); s != 401 {
				t.Fatalf("%s: the first request after revoke is %d, want 401", base, s)
			}
		}
	})
}

// TestServeRefusesSchemaBehind shows serve will not run on a database that needs migrating.
func TestServeRefusesSchemaBehind(t *testing.T) {
	bin, err := instancesBinary()
	if err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(t.TempDir(), "old.db")
	runCLI(t, bin, "migrate", "--db", db)
	d, err := database.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.SQL.Exec("DELETE FROM schema_migrations WHERE version = (SELECT max(version) FROM schema_migrations)"); err != nil {
		t.Fatal(err)
	}
	d.Close()
	out, err := exec.Command(bin, "serve", "--db", db, "--addr", "127.0.0.1:0").CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() == 0 || !strings.Contains(string(out), "run `creditd migrate` first") {
		t.Fatalf("serve on a database behind: %v\n%s", err, out)
	}
}

// TestEventFeedAcrossTwoInstancesOnPostgres: eight writers send writes to two `creditd serve`
// processes on one PostgreSQL database while a reader follows GET /v1/events with after=,
// alternating between the instances. The reader must end with every event exactly once, in
// the order the full feed lists them: numbering under the store row's lock makes an event
// visible only after every event numbered before it, whichever instance wrote it.
func TestEventFeedAcrossTwoInstancesOnPostgres(t *testing.T) {
	pgURL := credittest.PostgresURL(t)
	bin, err := instancesBinary()
	if err != nil {
		t.Fatal(err)
	}
	dsn, drop, err := database.ScratchSchema(context.Background(), pgURL, "evinst_"+strings.ToLower(ids.Random(10)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(drop)
	runCLI(t, bin, "migrate", "--db", dsn)
	st := runCLI(t, bin, "store", "create", "--db", dsn, "--name", "Busy", "--currency", "EUR")["id"].(string)
	secret := runCLI(t, bin, "key", "create", "--db", dsn, "--store", st, "--label", "ERP", "--scopes", "read_credit,write_credit")["secret"].(string)
	var companies []string
	for i := range 4 {
		companies = append(companies, runCLI(t, bin, "company", "create", "--db", dsn, "--store", st, "--name", fmt.Sprintf("Buyer %d", i),
			"--platform-company-gid", fmt.Sprintf("gid://platform/Company/%d", i+1), "--payment-terms", "NET_30", "--credit-limit", "100000.00")["id"].(string))
	}
	instances := []string{
		serveProcess(t, bin, "--db", dsn, "--rate-limit", "1000000"),
		serveProcess(t, bin, "--db", dsn, "--rate-limit", "1000000"),
	}

	list := func(base, after string) (ids []string, more bool) {
		t.Helper()
		url := base + "/v1/events?limit=9"
		if after != "" {
			url += "&after=" + after
		}
		var page struct {
			Data []struct {
				ID string `json:"id"`
			} `json:"data"`
			HasMore bool `json:"has_more"`
		}
		if err := json.Unmarshal(httpGet(t, url, secret, 200), &page); err != nil {
			t.Fatalf("GET %s: %v", url, err)
		}
		for _, e := range page.Data {
			ids = append(ids, e.ID)
		}
		return ids, page.HasMore
	}

	const writers, writes = 8, 20
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range writes {
				base := instances[(w+i)%2]
				co := companies[w%len(companies)]
				status, _ := send(t, "POST", base+"/v1/companies/"+co+"/adjustments", secret, fmt.Sprintf(`{"amount":"1.00","note":"w%d-%d"}`, w, i), nil)
				if status != 201 {
					t.Errorf("adjustment on %s: %d", base, status)
					return
				}
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()

	var seen []string
	after := ""
	polls := 0
	follow := func() {
		for {
			ids, more := list(instances[polls%2], after)
			polls++
			seen = append(seen, ids...)
			if len(ids) > 0 {
				after = ids[len(ids)-1]
			}
			if !more {
				return
			}
		}
	}
	for running := true; running; {
		select {
		case <-done:
			running = false
		default:
		}
		follow()
	}
	follow()

	var all []string
	for last := ""; ; {
		ids, more := list(instances[0], last)
		all = append(all, ids...)
		if len(ids) > 0 {
			last = ids[len(ids)-1]
		}
		if !more {
			break
		}
	}
	// The key's event, the companies', and every adjustment's.
	if want := 1 + len(companies) + writers*writes; len(all) != want {
		t.Fatalf("the feed has %d events, want %d", len(all), want)
	}
	if !slices.Equal(seen, all) {
		t.Fatalf("the after= reader saw %d events, the feed has %d, or in another order", len(seen), len(all))
	}
	t.Logf("two instances, %d writers x %d adjustments: the reader followed all %d events in %d polls", writers, writes, len(all), polls)
}
