package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creditd/creditd/credittest"
)

// TestServeDemoEndToEnd does what the README tells a new user to do: build creditd, run
// `creditd serve --demo`, and paste the printed curl line. It runs the real binary as a
// separate process on a real port.
func TestServeDemoEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	t.Parallel()
	dir := t.TempDir()
	bin := filepath.Join(dir, "creditd")
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool on PATH to build creditd with")
	}
	build := exec.Command(goTool, "build", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}

	// First start: an empty database in the working directory (the default --db).
	srv := startCreditd(t, bin, dir, "serve", "--demo", "--addr", "127.0.0.1:0")
	printed := srv.readUntil(t, regexp.MustCompile(`/playground#key=\S+`))
	keys := regexp.MustCompile(`(?m)^  (demo [^\n]*?)\s+(ck_[0-9A-Za-z]+)\s+(\S+)$`).FindAllStringSubmatch(printed, -1)
	if len(keys) != 3 {
		t.Fatalf("serve --demo printed %d keys, want 3:\n%s", len(keys), printed)
	}
	secretOf := map[string]string{}
	for _, k := range keys {
		secretOf[k[3]] = k[2]
	}
	readOnly, dashboard, full := secretOf["read_credit"], secretOf["read_credit,read_applications"], secretOf["read_credit,read_applications,write_credit"]
	if readOnly == "" || dashboard == "" || full == "" {
		t.Fatalf("want a read-only, a dashboard and a full key, got %v:\n%s", secretOf, printed)
	}
	curlLine := regexp.MustCompile(`curl -s -H 'Authorization: Bearer (ck_[0-9A-Za-z]+)' (http://127\.0\.0\.1:[0-9]+)/v1/companies`).FindStringSubmatch(printed)
	if curlLine == nil {
		t.Fatalf("no ready curl line with the real address:\n%s", printed)
	}
	secret, base := curlLine[1], curlLine[2]

	// The printed line itself, run by curl when the machine has it.
	var body []byte
	if _, err := exec.LookPath("curl"); err == nil {
		out, err := exec.Command("sh", "-c", curlLine[0]).Output()
		if err != nil {
			t.Fatalf("%s: %v", curlLine[0], err)
		}
		body = out
	} else {
		body = httpGet(t, base+"/v1/companies", secret, 200)
	}
	var companies struct {
		Data []struct {
			Name   string `json:"name"`
			Status string `json:"status"`
			Hold   *struct {
				Kind     string `json:"kind"`
				PlacedBy string `json:"placed_by"`
			} `json:"hold"`
			Outstanding struct{ Amount, Currency string } `json:"outstanding"`
		} `json:"data"`
		HasMore bool `json:"has_more"`
	}
	if err := json.Unmarshal(body, &companies); err != nil {
		t.Fatalf("the curl line did not return JSON: %v\n%s", err, body)
	}
	holds := map[string]string{}
	var names []string
	for _, c := range companies.Data {
		names = append(names, c.Name)
		if c.Hold != nil {
			holds[c.Name] = c.Hold.Kind + " by " + c.Hold.PlacedBy
		}
		if c.Outstanding.Currency != "EUR" {
			t.Errorf("%s outstanding in %q", c.Name, c.Outstanding.Currency)
		}
	}
	slices.Sort(names)
	if want := []string{"Alpenblick Hotels AG", "Brauhaus Kessler KG", "Café Morgenrot", "Nordlicht Feinkost GmbH", "Seeblick Catering"}; !slices.Equal(names, want) || companies.HasMore {
		t.Errorf("demo companies %v, want %v", names, want)
	}
	if holds["Brauhaus Kessler KG"] != "overdue by system" || holds["Seeblick Catering"] != "manual by Demo Admin" || len(holds) != 2 {
		t.Errorf("demo holds %v, want Brauhaus overdue and Seeblick manual", holds)
	}

	// The three keys carry what their labels promise.
	httpGet(t, base+"/v1/applications", readOnly, 403)
	var apps struct {
		Data []struct {
			Status  string         `json:"status"`
			Contact map[string]any `json:"contact"`
		} `json:"data"`
	}
	if err := json.Unmarshal(httpGet(t, base+"/v1/applications", dashboard, 200), &apps); err != nil {
		t.Fatal(err)
	}
	if len(apps.Data) != 4 || apps.Data[0].Status != "submitted" || apps.Data[0].Contact["email"] != "maria.huber@example.com" {
		t.Errorf("demo applications: %+v", apps.Data)
	}
	httpGet(t, base+"/healthz", "", 200)
	httpGet(t, base+"/readyz", "", 200)

	// The printed playground link opens the playground signed in with the dashboard key, which
	// travels in the fragment (never sent to the server).
	link := regexp.MustCompile(`(http://127\.0\.0\.1:[0-9]+/playground)#key=(ck_[0-9A-Za-z]+)`).FindStringSubmatch(printed)
	if link == nil || link[2] != dashboard {
		t.Errorf("no playground link with the dashboard key in its fragment:\n%s", printed)
	} else {
		httpGet(t, link[1], "", 200)
	}

	// SIGTERM shuts down gracefully; the logs carry no secrets.
	logs := srv.stop(t)
	for _, s := range []string{readOnly, dashboard, full, "ck_", "maria.huber"} {
		if strings.Contains(logs, s) {
			t.Errorf("the logs contain %q", s)
		}
	}
	if !strings.Contains(logs, `"msg":"listening"`) || !strings.Contains(logs, `"route":"GET /v1/companies"`) {
		t.Errorf("the JSON logs lack the listening line or the access log:\n%s", logs)
	}

	// A second start on the same database seeds nothing, the keys keep working, and it says
	// how to make a new key: the line it prints, run as printed, makes one that works.
	store := regexp.MustCompile(`Demo store (st_[0-9A-Za-z]+) seeded`).FindStringSubmatch(printed)
	if store == nil {
		t.Fatalf("serve --demo did not name its store:\n%s", printed)
	}
	again := startCreditd(t, bin, dir, "serve", "--demo", "--addr", "127.0.0.1:0")
	printed = again.readUntil(t, regexp.MustCompile(`creditd key create`))
	if strings.Contains(printed, "ck_") || !strings.Contains(printed, "already has data") {
		t.Errorf("a second --demo printed secrets or no explanation:\n%s", printed)
	}
	// The line starts with the program as it was started (here by its path), which the reader
	// can run as printed.
	keyLine := regexp.MustCompile(`(?m)^\s+(\S*creditd) (key create .*)$`).FindStringSubmatch(printed)
	if want := "key create --store " + store[1] + " --label me --scopes read_credit,read_applications,write_credit"; keyLine == nil || keyLine[2] != want || keyLine[1] != bin {
		t.Fatalf("a second --demo prints %q, want the line %s %s:\n%s", keyLine, bin, want, printed)
	}
	keyLine = keyLine[1:]
	addr := again.waitForListening(t)
	httpGet(t, "http://"+addr+"/v1/companies", full, 200)
	create := exec.Command(bin, append(strings.Fields(keyLine[1]), "--json")...)
	create.Dir = dir
	create.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "CREDITD_DB=") })
	out, err := create.Output()
	var made struct{ Secret string }
	if err != nil || json.Unmarshal(out, &made) != nil {
		t.Fatalf("creditd %s: %v\n%s", keyLine[1], err, out)
	}
	httpGet(t, "http://"+addr+"/v1/applications", made.Secret, 200)
	again.stop(t)
}

// creditdProcess is a running creditd binary.
type creditdProcess struct {
	cmd    *exec.Cmd
	lines  chan string
	stderr *credittest.LogBuffer
	seen   strings.Builder
}

func startCreditd(t *testing.T, bin, dir string, args ...string) *creditdProcess {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "CREDITD_DB=") })
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &creditdProcess{cmd: cmd, lines: make(chan string, 100), stderr: &credittest.LogBuffer{}}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
		close(p.lines)
	}()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	return p
}

// readUntil collects stdout until a line matches, and returns everything read so far.
func (p *creditdProcess) readUntil(t *testing.T, re *regexp.Regexp) string {
	t.Helper()
	deadline := time.After(60 * time.Second)
	for {
		select {
		case line, ok := <-p.lines:
			if !ok {
				t.Fatalf("creditd exited before printing %s\nstdout:\n%s\nstderr:\n%s", re, p.seen.String(), p.stderr.String())
			}
			p.seen.WriteString(line + "\n")
			if re.MatchString(line) {
				return p.seen.String()
			}
		case <-deadline:
			t.Fatalf("creditd did not print %s within a minute\nstdout:\n%s\nstderr:\n%s", re, p.seen.String(), p.stderr.String())
		}
	}
}

// waitForListening reads the listening address from the JSON log.
func (p *creditdProcess) waitForListening(t *testing.T) string {
	t.Helper()
	re := regexp.MustCompile(`"msg":"listening","addr":"([^"]+)"`)
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if m := re.FindStringSubmatch(p.stderr.String()); m != nil {
			return m[1]
		}
	}
	t.Fatalf("creditd did not log its address:\n%s", p.stderr.String())
	return ""
}

// stop sends SIGTERM, expects a clean exit within 15 s, and returns the logs.
func (p *creditdProcess) stop(t *testing.T) string {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		for range p.lines { // drain stdout so the process never blocks on it
		}
		done <- p.cmd.Wait()
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("creditd exited with %v after SIGTERM\n%s", err, p.stderr.String())
		}
	case <-time.After(15 * time.Second):
		t.Fatalf("creditd did not stop within 15 s of SIGTERM")
	}
	return p.stderr.String()
}

func httpGet(t *testing.T, url, secret string, want int) []byte {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if secret != "" {
		req.Header.Set("Authorization", "Bearer "+secret)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != want {
		t.Fatalf("GET %s: %d, want %d: %s", url, resp.StatusCode, want, body)
	}
	return body
}
