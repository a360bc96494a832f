package docs_test

import (
	"bufio"
	"bytes"
	"fmt"
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

// A shell example is a fenced code block tagged sh or bash in README.md or docs/*.md. The few
// that must not run (they start a server, or need services of the reader's own) say so on the
// line just before the fence, with the reason:
//
//	<!-- docs-test: skip: starts the server the other examples talk to -->
const skipMarker = "<!-- docs-test: skip: "

// shellExample is one fenced sh or bash block.
type shellExample struct {
	file string
	line int // of the opening fence
	code string
	// skip is the reason the block is not run, from the marker before it; "" runs it.
	skip string
}

// shellLanguages are the fence tags of the shell examples that run; shellLookalikes are tags
// that would hide a shell example from the test.
var (
	shellLanguages  = []string{"sh", "bash"}
	shellLookalikes = []string{"shell", "console", "zsh", "shell-session", "sh-session"}
)

// shellExamples returns the shell examples of a Markdown file, in order.
func shellExamples(t *testing.T, file string) []shellExample {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(raw), "\n")
	var out []shellExample
	var cur *shellExample // the shell example being read
	inOther := false      // inside a block of another language
	for i, line := range lines {
		switch {
		case inOther:
			inOther = line != "```"
		case cur != nil && line == "```":
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			cur.code += line + "\n"
		case strings.HasPrefix(line, "```"):
			lang := ""
			if f := strings.Fields(strings.TrimPrefix(line, "```")); len(f) > 0 {
				lang = f[0]
			}
			if slices.Contains(shellLookalikes, lang) {
				t.Errorf("%s:%d: a shell example tagged %q is not run; tag it sh", file, i+1, lang)
			}
			if !slices.Contains(shellLanguages, lang) {
				inOther = true
				continue
			}
			cur = &shellExample{file: file, line: i + 1}
			if i > 0 && strings.HasPrefix(lines[i-1], skipMarker) {
				cur.skip = strings.TrimSuffix(strings.TrimPrefix(lines[i-1], skipMarker), " -->")
				if strings.TrimSpace(cur.skip) == "" || !strings.HasSuffix(lines[i-1], " -->") {
					t.Errorf("%s:%d: a skip marker needs a reason: %s<why> -->", file, i, skipMarker)
				}
			}
		case strings.HasPrefix(line, skipMarker) && (i+1 == len(lines) || !strings.HasPrefix(lines[i+1], "```")):
			t.Errorf("%s:%d: a skip marker must stand on the line just before the fence it skips", file, i+1)
		}
	}
	if cur != nil || inOther {
		t.Errorf("%s: a code block is not closed", file)
	}
	return out
}

// placeholder lines are what a reader replaces with the demo's output: the keys it printed
// and its address. Nothing else in an example is rewritten.
var placeholders = map[string]*regexp.Regexp{
	"KEY":  regexp.MustCompile(`(?m)^((?:export )?KEY=)ck_\.\.\.`),
	"DASH": regexp.MustCompile(`(?m)^((?:export )?DASH=)ck_\.\.\.`),
	"BASE": regexp.MustCompile(`(?m)^((?:export )?BASE=)http://(?:localhost|127\.0\.0\.1):8080`),
}

// examplePrelude runs before a file's examples. The examples stop at the first failing
// command (set -e) or unset variable (set -u), and curl is wrapped to tell errors: an HTTP
// status of 400 or more, or a GraphQL response with errors, is written to the failures file
// (so a curl inside a pipeline or a $(...) counts too) and fails the command.
const examplePrelude = `set -eu
trap 'echo "docs-test: failed: $BASH_COMMAND" >&2' ERR
curl() {
	local out status
	out=$(command curl --show-error --write-out '\n%{http_code}' "$@") || { echo "curl $* failed" >>"$DOCS_TEST_FAILURES"; return 1; }
	status=${out##*$'\n'}
	out=${out%$'\n'*}
	printf '%s\n' "$out"
	if [ "$status" -ge 400 ]; then
		echo "curl $*: HTTP $status: $out" >>"$DOCS_TEST_FAILURES"
		return 22
	fi
	case "$out" in *'"errors":'*)
		echo "curl $*: GraphQL errors: $out" >>"$DOCS_TEST_FAILURES"
		return 23
	esac
}
`

// TestShellExamplesRun runs every shell example of README.md and docs/*.md as a reader would:
// against a real `creditd serve --demo` on a fresh database, the blocks of one file one after
// the other in one bash session, from the repository's root, with only the placeholders a
// reader fills in (KEY, DASH, BASE) replaced by what the demo printed. Variables set on one
// page (CO, say) are not carried to the next: each page looks up the IDs it uses. KEY, DASH and
// BASE are in the environment, as after the quickstart's export lines, and CREDITD_DB names the
// demo's database, which a reader's `go run ./cmd/creditd ...` finds as creditd.db in the
// working directory.
func TestShellExamplesRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds creditd, runs it and the examples")
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash on PATH to run the examples with")
	}
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("no curl on PATH: the examples are curl commands")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool on PATH to build creditd with")
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	files := []string{filepath.Join(root, "README.md")}
	guides, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	files = append(files, guides...)
	var examples []shellExample
	for _, f := range files {
		examples = append(examples, shellExamples(t, f)...)
	}
	if len(examples) < 8 {
		t.Fatalf("found only %d shell examples in %v", len(examples), files)
	}

	dir := t.TempDir()
	bin := filepath.Join(dir, "creditd")
	build := exec.Command(goTool, "build", "-o", bin, "./cmd/creditd")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	demo := startDemo(t, bin, dir)

	for _, file := range files {
		var script strings.Builder
		script.WriteString(examplePrelude)
		ran := 0
		for _, e := range examples {
			if e.file != file {
				continue
			}
			rel, _ := filepath.Rel(root, e.file)
			if e.skip != "" {
				t.Logf("%s:%d not run: %s", rel, e.line, e.skip)
				continue
			}
			code := e.code
			for name, re := range placeholders {
				code = re.ReplaceAllString(code, "${1}"+demo.values[name])
			}
			fmt.Fprintf(&script, "echo '### %s:%d' >&2\n%s", rel, e.line, code)
			fmt.Fprintf(&script, "if [ -s \"$DOCS_TEST_FAILURES\" ]; then echo 'docs-test: %s:%d answered with an error' >&2; exit 1; fi\n", rel, e.line)
			ran++
		}
		if ran == 0 {
			continue
		}
		rel, _ := filepath.Rel(root, file)
		t.Run(rel, func(t *testing.T) {
			failures := filepath.Join(t.TempDir(), "failures")
			cmd := exec.Command(bash, "-c", script.String())
			cmd.Dir = root
			cmd.Env = append(slices.DeleteFunc(os.Environ(), func(kv string) bool {
				return strings.HasPrefix(kv, "CREDITD_") || strings.HasPrefix(kv, "KEY=") || strings.HasPrefix(kv, "DASH=") || strings.HasPrefix(kv, "BASE=")
			}),
				"KEY="+demo.values["KEY"], "DASH="+demo.values["DASH"], "BASE="+demo.values["BASE"],
				"CREDITD_DB="+demo.db, "DOCS_TEST_FAILURES="+failures)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			errs, _ := os.ReadFile(failures)
			if err != nil || len(errs) > 0 {
				t.Fatalf("the examples of %s fail (%v):\n%s\n%s\nstdout (last 2000 bytes):\n%s", rel, err, errs, stderr.String(), tail(stdout.String(), 2000))
			}
		})
	}
}

// demoServer is a running `creditd serve --demo` and what it printed.
type demoServer struct {
	db     string
	values map[string]string // KEY, DASH, BASE
}

// startDemo runs `creditd serve --demo` in dir on a free port, reads its keys and address
// from what it prints, and stops it when the test ends.
func startDemo(t *testing.T, bin, dir string) demoServer {
	t.Helper()
	cmd := exec.Command(bin, "serve", "--demo", "--addr", "127.0.0.1:0")
	cmd.Dir = dir
	cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "CREDITD_") })
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var logs credittest.LogBuffer
	cmd.Stderr = &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		_ = cmd.Wait()
		close(done)
	}()
	key := regexp.MustCompile(`^  demo .*?(ck_[0-9A-Za-z]+)\s+(\S+)$`)
	curlLine := regexp.MustCompile(`curl .*(http://127\.0\.0\.1:[0-9]+)/v1/companies`)
	d := demoServer{db: filepath.Join(dir, "creditd.db"), values: map[string]string{}}
	var printed strings.Builder
	deadline := time.After(60 * time.Second)
	for d.values["BASE"] == "" {
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatalf("creditd serve --demo exited:\n%s\n%s", printed.String(), logs.String())
			}
			printed.WriteString(line + "\n")
			if m := key.FindStringSubmatch(line); m != nil {
				switch m[2] {
				case "read_credit,read_applications,write_credit":
					d.values["KEY"] = m[1]
				case "read_credit,read_applications":
					d.values["DASH"] = m[1]
				}
			}
			if m := curlLine.FindStringSubmatch(line); m != nil {
				d.values["BASE"] = m[1]
			}
		case <-deadline:
			t.Fatalf("creditd serve --demo printed no curl line within a minute:\n%s\n%s", printed.String(), logs.String())
		}
	}
	if d.values["KEY"] == "" || d.values["DASH"] == "" {
		t.Fatalf("no full-access or dashboard key in the demo's output:\n%s", printed.String())
	}
	go func() { // keep reading, so creditd never blocks on a full pipe
		for range lines {
		}
	}()
	for start := time.Now(); !strings.Contains(logs.String(), `"msg":"listening"`); time.Sleep(20 * time.Millisecond) {
		if time.Since(start) > 60*time.Second {
			t.Fatalf("creditd did not start listening:\n%s", logs.String())
		}
	}
	return d
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "..." + s[len(s)-n:]
}
