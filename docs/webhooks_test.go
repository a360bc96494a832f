package docs_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestWebhookVerificationExamplesRun runs the Go and the Python verification examples of
// webhooks.md: each must accept the Standard Webhooks specification's test vector, and each
// must refuse it once the body is changed (so the examples do verify something).
func TestWebhookVerificationExamplesRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go and python3")
	}
	goCode, pyCode := fences(t, "webhooks.md", "go"), fences(t, "webhooks.md", "python")
	if len(goCode) != 1 || len(pyCode) != 1 {
		t.Fatalf("webhooks.md has %d Go and %d Python examples, want one of each", len(goCode), len(pyCode))
	}
	tampered := func(code string) string {
		return strings.Replace(code, `{"test": 2432232314}`, `{"test": 2432232315}`, 1)
	}
	t.Run("go", func(t *testing.T) {
		goTool, err := exec.LookPath("go")
		if err != nil {
			t.Skip("no go tool on PATH")
		}
		for _, tt := range []struct {
			code, want string
		}{{goCode[0], "test vector: true"}, {tampered(goCode[0]), "test vector: false"}} {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(tt.code), 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(goTool, "run", "main.go")
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GO111MODULE=off")
			out, err := cmd.CombinedOutput()
			if err != nil || strings.TrimSpace(string(out)) != tt.want {
				t.Errorf("go run of the Go example printed %q (%v), want %q", out, err, tt.want)
			}
		}
	})
	t.Run("python", func(t *testing.T) {
		python, err := exec.LookPath("python3")
		if err != nil {
			if os.Getenv("CI") != "" {
				t.Fatal("python3 is required under CI to run the Python example: apt-get install -y python3")
			}
			t.Skip("no python3 on PATH; the Python example is not run")
		}
		out, err := exec.Command(python, "-c", pyCode[0]).CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) != "test vector: True" {
			t.Errorf("the Python example printed %q (%v)", out, err)
		}
		if out, err := exec.Command(python, "-c", tampered(pyCode[0])).CombinedOutput(); err == nil || !strings.Contains(string(out), "no valid signature") {
			t.Errorf("the Python example accepted a changed body: %q", out)
		}
	})
}
