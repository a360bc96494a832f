package reliability_test

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestFuzzScriptReportsTheRate runs scripts/fuzz.sh's summary over a real `go test -fuzz` log
// whose closing progress line says "(0/sec)", as go test's closing line often does (its rate
// covers only the moment since the previous line). The summary must give the rate over the
// whole fuzzing phase instead: (11492 − 184) executions in the 6 s between the first and the
// last progress line.
func TestFuzzScriptReportsTheRate(t *testing.T) {
	awk, err := exec.LookPath("awk")
	if err != nil {
		t.Skip("no awk on PATH; scripts/fuzz.sh needs it")
	}
	// Read both files here rather than letting awk open them, so that go test's cache knows
	// the result depends on them.
	program, err := os.ReadFile("../scripts/fuzz-summary.awk")
	if err != nil {
		t.Fatal(err)
	}
	log, err := os.ReadFile("testdata/fuzz-progress.log")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(awk, string(program))
	cmd.Stdin = bytes.NewReader(log)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("fuzz-summary.awk: %v\n%s", err, out)
	}
	const want = "elapsed 12s, 11492 execs (1885/sec while fuzzing), new interesting: 1 (total: 185)\n"
	if string(out) != want {
		t.Errorf("summary %q, want %q", out, want)
	}
	if strings.Contains(string(out), "(0/sec)") {
		t.Errorf("the summary repeats go test's closing rate: %q", out)
	}
}
