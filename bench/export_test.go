package bench

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunExportSmoke runs the export scenario on the tiny dataset: three whole exports (HTTP
// identity and gzip, the file) with the same counts, gzip smaller, and the server's memory read.
func TestRunExportSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("builds creditd and runs it")
	}
	dir := t.TempDir()
	bin := mustBuild(t)
	var progress bytes.Buffer
	rep, err := RunExport(context.Background(), Config{Creditd: filepath.Join(bin, "creditd"),
		DB: filepath.Join(dir, "bench.db"), Size: TinySize, WorkDir: dir, Progress: &progress})
	if err != nil {
		t.Fatalf("%v\n%s", err, progress.String())
	}
	if len(rep.Runs) != 3 {
		t.Fatalf("runs %+v", rep.Runs)
	}
	identity, gz, file := rep.Runs[0], rep.Runs[1], rep.Runs[2]
	if identity.Rows == 0 || identity.Counts["companies"] != TinySize.LargeCompanies || gz.Rows != identity.Rows || file.Counts["ledger_entries"] != identity.Counts["ledger_entries"] {
		t.Errorf("rows: identity %+v, gzip %+v, file %+v", identity.Counts, gz.Counts, file.Counts)
	}
	if gz.Bytes >= identity.Bytes || identity.PeakRSS == 0 || file.PeakRSS == 0 || identity.Phases["invoice"] == 0 {
		t.Errorf("identity %+v\ngzip %+v\nfile %+v", identity, gz, file)
	}
	var md bytes.Buffer
	rep.WriteMarkdown(&md)
	if !strings.Contains(md.String(), "| HTTP, gzip |") {
		t.Errorf("report:\n%s", md.String())
	}
}
