package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/creditd/creditd/credit"
)

// runWithStdin runs one creditd command line in-process with stdin.
func runWithStdin(tb testing.TB, stdin string, args ...string) cliRun {
	tb.Helper()
	var out, errOut bytes.Buffer
	m := NewMain(strings.NewReader(stdin), &out, &errOut)
	m.Now = func() time.Time { return cliStart }
	code := m.Run(context.Background(), args)
	if err := m.Close(); err != nil {
		tb.Fatalf("close: %v", err)
	}
	return cliRun{args: args, code: code, stdout: out.String(), stderr: errOut.String()}
}

// TestStaffCommands: staff create reads the password from stdin and prints the account without
// it; staff list shows the store's accounts; staff reset-password changes the password and ends
// the sessions; staff disable ends them too and stops sign-ins. Bad input is refused with exit 2,
// one line, and nothing written.
func TestStaffCommands(t *testing.T) {
	d := newCLIDB(t)
	created := runWithStdin(t, "correct horse battery\n", "staff", "create", "--store", d.store, "--name", "Anna Berg",
		"--email", "Anna@Example.com", "--password-stdin", "--db", d.path, "--json").mustSucceed(t).object(t)
	mustKeys(t, "staff create --json", created, "id", "store_id", "name", "email", "created_at", "disabled_at")
	if created["email"] != "anna@example.com" || created["store_id"] != d.store || created["disabled_at"] != nil {
		t.Fatalf("created %v", created)
	}
	id := created["id"].(string)
	human := runWithStdin(t, "another good password", "staff", "create", "--store", d.store, "--name", "Ben", "--email", "ben@example.com", "--password-stdin", "--db", d.path).mustSucceed(t)
	if !strings.Contains(human.stdout, "Ben can now sign in to the staff console as ben@example.com") || strings.Contains(human.stdout, "another good password") {
		t.Errorf("staff create printed %q", human.stdout)
	}

	svc := d.service(t)
	ctx := context.Background()
	token, _, err := svc.Staff.SignIn(ctx, "anna@example.com", "correct horse battery", credit.SessionPolicy{})
	if err != nil {
		t.Fatalf("sign in with the password from stdin: %v", err)
	}

	list := d.json(t, "staff", "list", "--store", d.store)
	data := list["data"].([]any)
	// Both accounts were made at the test's fixed time, so their order (oldest first, then by
	// ID) is not theirs to assert; Anna must be among them.
	listed := map[any]bool{}
	for _, m := range data {
		listed[m.(map[string]any)["id"]] = true
	}
	if len(data) != 2 || !listed[id] {
		t.Fatalf("staff list: %v", list)
	}
	table := d.run(t, "staff", "list", "--store", d.store).mustSucceed(t).stdout
	if !strings.Contains(table, "anna@example.com") || !strings.Contains(table, "active") {
		t.Errorf("staff list printed %q", table)
	}

	runWithStdin(t, "a brand new passphrase\r\n", "staff", "reset-password", id, "--password-stdin", "--db", d.path).mustSucceed(t)
	if _, _, err := svc.Staff.ResumeSession(ctx, token, credit.SessionPolicy{}); err == nil {
		t.Error("the session survived a password reset")
	}
	if _, _, err := svc.Staff.SignIn(ctx, "anna@example.com", "correct horse battery", credit.SessionPolicy{}); err == nil {
		t.Error("the old password still works")
	}
	token, _, err = svc.Staff.SignIn(ctx, "anna@example.com", "a brand new passphrase", credit.SessionPolicy{})
	if err != nil {
		t.Fatalf("the new password (read without its CRLF): %v", err)
	}

	disabled := d.json(t, "staff", "disable", id)
	if disabled["disabled_at"] == nil {
		t.Fatalf("staff disable: %v", disabled)
	}
	if _, _, err := svc.Staff.ResumeSession(ctx, token, credit.SessionPolicy{}); err == nil {
		t.Error("the session survived disabling the account")
	}
	if _, _, err := svc.Staff.SignIn(ctx, "anna@example.com", "a brand new passphrase", credit.SessionPolicy{}); err == nil {
		t.Error("a disabled account can sign in")
	}
	if !strings.Contains(d.run(t, "staff", "list", "--store", d.store).stdout, "disabled 2026-03-02") {
		t.Error("staff list does not show the account disabled")
	}

	before := d.dump(t)
	for _, tc := range []struct {
		stdin string
		args  []string
		want  string
	}{
		{"correct horse battery", []string{"staff", "create", "--store", d.store, "--name", "C", "--email", "c@example.com"}, "--password-stdin is required"},
		{"", []string{"staff", "create", "--store", d.store, "--name", "C", "--email", "c@example.com", "--password-stdin"}, "the password read from stdin is empty"},
		{"\n", []string{"staff", "create", "--store", d.store, "--name", "C", "--email", "c@example.com", "--password-stdin"}, "the password read from stdin is empty"},
		{"short\n", []string{"staff", "create", "--store", d.store, "--name", "C", "--email", "c@example.com", "--password-stdin"}, "at least 12 characters"},
		{"correct horse battery", []string{"staff", "create", "--store", d.store, "--name", "C", "--email", "ben@example.com", "--password-stdin"}, "already exists"},
		{"correct horse battery", []string{"staff", "create", "--store", d.store, "--name", "C", "--email", "not an email", "--password-stdin"}, "plain address"},
		{"correct horse battery", []string{"staff", "create", "--store", "st_0000000000000000000000", "--name", "C", "--email", "c@example.com", "--password-stdin"}, "no such store"},
		{"correct horse battery", []string{"staff", "create", "--name", "C", "--email", "c@example.com", "--password-stdin"}, "--store is required"},
		{"", []string{"staff", "disable", "stf_0000000000000000000000"}, "no such staff member"},
		{"", []string{"staff", "disable"}, "expected 1 argument(s): ID"},
		{"short", []string{"staff", "reset-password", id, "--password-stdin"}, "at least 12 characters"},
		{"correct horse battery", []string{"staff", "reset-password", id}, "--password-stdin is required"},
		{"correct horse battery", []string{"staff", "reset-password", "stf_0000000000000000000000", "--password-stdin"}, "no such staff member"},
		{"", []string{"staff", "list"}, "--store is required"},
	} {
		r := runWithStdin(t, tc.stdin, append(tc.args, "--db", d.path)...)
		if r.code != exitBadInput || !strings.Contains(r.stderr, tc.want) || strings.Count(r.stderr, "\n") != 1 || r.stdout != "" {
			t.Errorf("creditd %s: exit %d, stderr %q, stdout %q; want exit 2 and %q", strings.Join(tc.args, " "), r.code, r.stderr, r.stdout, tc.want)
		}
		if strings.Contains(r.stderr, "correct horse battery") {
			t.Errorf("creditd %s printed the password: %q", strings.Join(tc.args, " "), r.stderr)
		}
	}
	if after := d.dump(t); after != before {
		t.Error("a refused staff command changed the database")
	}
}

// TestServeAdminAddr: serve --admin-addr starts the staff console on its own listener, beside
// the API on its own, sharing the database: an account created with the command line signs in
// there. The API's listener does not serve the console, the console's does not serve the API,
// both stop together, and the console cannot be put on the API's address.
func TestServeAdminAddr(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "creditd.db")
	store := runCreditd(t, "store", "create", "--name", "Acme", "--currency", "EUR", "--db", dbPath, "--json").mustSucceed(t).object(t)["id"].(string)
	runWithStdin(t, "correct horse battery", "staff", "create", "--store", store, "--name", "Anna", "--email", "anna@example.com", "--password-stdin", "--db", dbPath).mustSucceed(t)

	ctx, cancel := context.WithCancel(context.Background())
	apiReady, adminReady := make(chan string, 1), make(chan string, 1)
	done := make(chan int, 1)
	var stdout, stderr bytes.Buffer
	m := NewMain(nil, &stdout, &stderr)
	m.Ready = func(addr string) { apiReady <- addr }
	m.AdminReady = func(addr string) { adminReady <- addr }
	go func() {
		done <- m.Run(ctx, []string{"serve", "--db", dbPath, "--addr", "127.0.0.1:0", "--admin-addr", "127.0.0.1:0"})
	}()
	var api, admin string
	for api == "" || admin == "" {
		select {
		case a := <-apiReady:
			api = "http://" + a
		case a := <-adminReady:
			admin = "http://" + a
		case code := <-done:
			t.Fatalf("serve exited with %d: %s", code, stderr.String())
		case <-time.After(30 * time.Second):
			t.Fatal("serve did not start")
		}
	}
	defer m.Close()

	if want := "Staff console on " + admin + "/"; !strings.Contains(stdout.String(), want) {
		t.Errorf("serve printed %q, want %q", stdout.String(), want)
	}
	// The hint names the database's one store, and a command a go run reader has.
	if want := "go run ./cmd/creditd staff create --db " + shellQuote(dbPath) + " --store " + store + " --name N"; !strings.Contains(stdout.String(), want) || strings.Contains(stdout.String(), "--store ST") {
		t.Errorf("serve printed %q, want the hint %q", stdout.String(), want)
	}

	jar, _ := cookiejar.New(nil)
	client := &http.Client{Jar: jar}
	get := func(u string) (int, string) {
		t.Helper()
		resp, err := client.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	status, body := get(admin + "/login")
	if status != http.StatusOK || !strings.Contains(body, `<input id="password" name="password" type="password"`) {
		t.Fatalf("console /login: %d %.300s", status, body)
	}
	csrf := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(body)[1]
	resp, err := client.PostForm(admin+"/login", url.Values{"csrf": {csrf}, "email": {"anna@example.com"}, "password": {"correct horse battery"}})
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(page), "<h1>Overview</h1>") || !strings.Contains(string(page), "Anna") {
		t.Fatalf("sign-in on the console: %d %.500s", resp.StatusCode, page)
	}
	if status, body := get(api + "/login"); status != http.StatusNotFound || !strings.Contains(body, `"code":"not_found"`) {
		t.Errorf("the API's listener answers /login with %d %s", status, body)
	}
	if status, _ := get(admin + "/v1/companies"); status == http.StatusOK || status == http.StatusUnauthorized {
		t.Errorf("the console's listener answers /v1/companies with %d", status)
	}
	if status, _ := get(admin + "/healthz"); status == http.StatusOK {
		t.Error("the console's listener serves the API's /healthz")
	}

	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("serve exited with %d: %s", code, stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not stop")
	}
	if _, err := http.Get(admin + "/login"); err == nil {
		t.Error("the console still answers after serve stopped")
	}
	if strings.Contains(stderr.String(), "correct horse battery") {
		t.Error("the log holds a password")
	}

	r := runCreditd(t, "serve", "--db", dbPath, "--addr", "127.0.0.1:18080", "--admin-addr", "127.0.0.1:18080")
	if r.code != exitBadInput || !strings.Contains(r.stderr, "--admin-addr must differ from --addr") {
		t.Errorf("console on the API's address: exit %d, %q", r.code, r.stderr)
	}
}
