package main

import (
	"context"
	"flag"
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/creditd/creditd/credit"
)

// Release is the version of creditd's API and behaviour that this source is: the newest
// release in CHANGELOG.md, whose schema and OpenAPI document are kept in api/baseline/Release/
// (contract §19). It changes only in a release commit, together with CHANGELOG.md's heading
// and, for a deliberate break, a new baseline; TestReleaseMatchesChangelog ties the three.
// Changes since the release are listed under "Unreleased" and do not change it.
const Release = "1.0.0"

// buildVersion is what `creditd version` reports: the release (Release), the module version
// the binary was built from and, when it was built in a checkout, the commit (Go records these
// in every binary).
type buildVersion struct {
	// Release is the CHANGELOG's version (Release). It was added beside the members
	// `version --json` had, which keep their meaning (version is still the module's).
	Release string `json:"release"`
	// Version is the module's version: v1.2.3 when installed with go install module@version;
	// built in a git clone, a pseudo-version of the commit's time and hash
	// (v0.0.0-20261123131214-08d75962817d); "(devel)" when the build recorded neither.
	Version string `json:"version"`
	// Revision and Time name the commit built from; Modified says the checkout had changes
	// beyond it. Empty and false when the build recorded no version control information:
	// go run, go test, -buildvcs=false, or a git worktree (whose .git is a file, which the go
	// command does not recognise as a checkout).
	Revision string `json:"revision"`
	Time     string `json:"time"`
	Modified bool   `json:"modified"`
	// Go is the toolchain that built the binary.
	Go string `json:"go"`
}

// readBuildVersion reads the version from the running binary's build information.
func readBuildVersion() buildVersion {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return buildVersion{Release: Release, Version: "unknown"}
	}
	return versionFrom(info)
}

// versionFrom picks the version out of a binary's build information.
func versionFrom(info *debug.BuildInfo) buildVersion {
	v := buildVersion{Release: Release, Version: info.Main.Version, Go: info.GoVersion}
	if v.Version == "" {
		v.Version = "(devel)"
	}
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Revision = s.Value
		case "vcs.time":
			v.Time = s.Value
		case "vcs.modified":
			v.Modified = s.Value == "true"
		}
	}
	return v
}

// String is the one line `creditd version` prints: the release first, then the module
// version where it says more than the release (a pseudo-version of a checkout's commit; not
// "(devel)", and not v<Release> itself, as go install creditd@v1.0.0 records).
func (v buildVersion) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "creditd %s", v.Release)
	if v.Version != "" && v.Version != "(devel)" && v.Version != "v"+v.Release {
		fmt.Fprintf(&b, " (module %s)", v.Version)
	}
	if v.Revision == "" {
		b.WriteString(", no commit recorded (built without version control information)")
	} else {
		fmt.Fprintf(&b, ", commit %s", v.Revision)
		if v.Time != "" {
			fmt.Fprintf(&b, " of %s", v.Time)
		}
		if v.Modified {
			b.WriteString(", with uncommitted changes")
		}
	}
	if v.Go != "" {
		fmt.Fprintf(&b, ", built with %s", v.Go)
	}
	return b.String()
}

func versionCommand() command {
	return command{summary: "print creditd's version and the commit it was built from", noDatabase: true, flags: func(fs *flag.FlagSet, opts *credit.Options) func(context.Context, *cmdEnv, []string) error {
		return func(ctx context.Context, env *cmdEnv, args []string) error {
			if err := exactlyArgs(args); err != nil {
				return err
			}
			v := readBuildVersion()
			return env.print(v, v.String())
		}
	}}
}
