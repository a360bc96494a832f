package credittest

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// NPMPackages installs the npm packages that dir's package.json and package-lock.json pin, with
// npm ci, into the user's cache directory, once per version of the two files, and returns the
// installation's directory (its node_modules holds them). Without npm the test is skipped with
// what to install, except under CI, where that is a failure. Install scripts do not run:
// esbuild's binary, for one, comes as its platform's optional package.
func NPMPackages(tb testing.TB, dir string) string {
	tb.Helper()
	npm, err := exec.LookPath("npm")
	if err != nil {
		if os.Getenv("CI") != "" {
			tb.Fatalf("npm is required under CI (for the packages of %s)", dir)
		}
		tb.Skipf("skipping: npm not found, which installs the packages of %s (install Node.js and npm)", dir)
	}
	h := sha256.New()
	var files [2][]byte
	for i, name := range []string{"package.json", "package-lock.json"} {
		if files[i], err = os.ReadFile(filepath.Join(dir, name)); err != nil {
			tb.Fatal(err)
		}
		h.Write(files[i])
	}
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	installed := filepath.Join(base, "creditd", "npm-"+hex.EncodeToString(h.Sum(nil))[:16])
	const complete = ".creditd-installed"
	if _, err := os.Stat(filepath.Join(installed, complete)); err == nil {
		return installed
	}
	if err := os.MkdirAll(filepath.Dir(installed), 0o755); err != nil {
		tb.Fatal(err)
	}
	// Installed beside, then renamed into place: a run cut short leaves no half installation
	// under the name, and two runs at once both end with a whole one.
	tmp, err := os.MkdirTemp(filepath.Dir(installed), "install-")
	if err != nil {
		tb.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	for i, name := range []string{"package.json", "package-lock.json"} {
		if err := os.WriteFile(filepath.Join(tmp, name), files[i], 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	cmd := exec.Command(npm, "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error")
	cmd.Dir = tmp
	if out, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("npm ci (%s): %v\n%s", dir, err, out)
	}
	if err := os.WriteFile(filepath.Join(tmp, complete), nil, 0o644); err != nil {
		tb.Fatal(err)
	}
	if err := os.Rename(tmp, installed); err != nil {
		if _, statErr := os.Stat(filepath.Join(installed, complete)); statErr != nil { // not another run's install
			tb.Fatal(err)
		}
	}
	return installed
}

// Bundle writes files (name to content) into a directory inside the installation that
// NPMPackages returned, so that their imports find its node_modules, and bundles entry with
// that installation's esbuild for the browser, as an immediately invoked script, in the
// libraries' development builds (which warn about what a page does wrong).
func Bundle(tb testing.TB, installed string, files map[string]string, entry string) []byte {
	tb.Helper()
	build, err := os.MkdirTemp(installed, "build-")
	if err != nil {
		tb.Fatal(err)
	}
	defer os.RemoveAll(build)
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(build, name), []byte(content), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	cmd := exec.Command(filepath.Join(installed, "node_modules", ".bin", "esbuild"), entry, "--bundle", "--format=iife",
		"--platform=browser", "--conditions=development", `--define:process.env.NODE_ENV="development"`, "--outfile=bundle.js", "--log-level=warning")
	cmd.Dir = build
	if out, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("esbuild: %v\n%s", err, out)
	}
	bundle, err := os.ReadFile(filepath.Join(build, "bundle.js"))
	if err != nil {
		tb.Fatal(err)
	}
	return bundle
}
