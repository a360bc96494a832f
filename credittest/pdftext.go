package credittest

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// PDFText returns the text of a PDF as poppler's pdftotext extracts it, in its layout, so that
// a test can check what a reader of the document sees. Without pdftotext (package
// poppler-utils) the test is skipped, except under CI, where .ci/run installs it.
func PDFText(tb testing.TB, pdf []byte) string {
	tb.Helper()
	bin, err := exec.LookPath("pdftotext")
	if err != nil {
		if os.Getenv("CI") != "" {
			tb.Fatal("pdftotext is missing: .ci/run installs poppler-utils")
		}
		tb.Skip("pdftotext (poppler-utils) is not installed")
	}
	path := filepath.Join(tb.TempDir(), "doc.pdf")
	if err := os.WriteFile(path, pdf, 0o600); err != nil {
		tb.Fatal(err)
	}
	out, err := exec.Command(bin, "-layout", "-enc", "UTF-8", path, "-").Output()
	if err != nil {
		tb.Fatalf("pdftotext: %v", err)
	}
	return string(out)
}
