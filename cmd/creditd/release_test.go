package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// TestReleaseMatchesChangelog ties the three places that name a release (contract §19): the
// Release that `creditd version` prints, CHANGELOG.md's newest release heading, and the schema
// and OpenAPI document kept in api/baseline/Release/, which scripts/api-compat.sh compares the
// current ones against. A release commit (and so every deliberate break) changes all three at
// once; changing one alone fails here.
func TestReleaseMatchesChangelog(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..", "..")
	changelog, err := os.ReadFile(filepath.Join(root, "CHANGELOG.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(changelog, []byte("\n## [Unreleased]\n")) {
		t.Error(`CHANGELOG.md has no "## [Unreleased]" section for the changes since the release`)
	}
	heading := regexp.MustCompile(`(?m)^## \[(\d+\.\d+\.\d+)\] - \d{4}-\d{2}-\d{2}$`)
	m := heading.FindSubmatch(changelog)
	if m == nil {
		t.Fatal(`CHANGELOG.md names no release ("## [X.Y.Z] - YYYY-MM-DD")`)
	}
	if newest := string(m[1]); newest != Release {
		t.Errorf("CHANGELOG.md's newest release is %s, Release (cmd/creditd/version.go) is %s", newest, Release)
	}
	for _, f := range []string{"schema.graphqls", "openapi.yaml"} {
		if _, err := os.Stat(filepath.Join(root, "api", "baseline", Release, f)); err != nil {
			t.Errorf("release %s has no baseline %s: %v", Release, f, err)
		}
	}
}
