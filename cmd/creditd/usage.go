package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/creditd/creditd/database"
)

// What the command line tells its operator beyond a command's result: help, and the messages
// that say how to fix a mistake.

// selfCommand is how a printed command line should start so that the reader can run it: a
// README reader who used `go run ./cmd/creditd` has no creditd on PATH. exe is this
// executable, arg0 the name it was started by, lookPath exec.LookPath.
func selfCommand(exe, arg0 string, lookPath func(string) (string, error)) string {
	// go run builds into a temporary go-build directory and runs the binary from there.
	if strings.Contains(filepath.ToSlash(exe), "/go-build") {
		return "go run ./cmd/creditd"
	}
	if p, err := lookPath("creditd"); err == nil {
		if a, err1 := filepath.EvalSymlinks(p); err1 == nil {
			if b, err2 := filepath.EvalSymlinks(exe); err2 == nil && a == b {
				return "creditd"
			}
		}
	}
	if strings.ContainsRune(arg0, '/') {
		return shellQuote(arg0)
	}
	return "creditd"
}

// commonFlags are the flags every command takes; a command's help lists them last.
var commonFlags = map[string]bool{"db": true, "json": true}

// commandUsage prints a command's help: its summary and its flags, spelt --name as the README
// spells them (the flag package's own PrintDefaults writes -name).
func (m *Main) commandUsage(name string, cmd command, fs *flag.FlagSet) {
	w := m.Stdout
	call := name
	if cmd.args != "" {
		call += " " + cmd.args
	}
	fmt.Fprintf(w, "creditd %s: %s\n\nusage: creditd %s [flags]   (flags may come before or after arguments)\n", name, cmd.summary, call)
	var own, common []*flag.Flag
	fs.VisitAll(func(f *flag.Flag) {
		if commonFlags[f.Name] {
			common = append(common, f)
		} else {
			own = append(own, f)
		}
	})
	if len(own) > 0 {
		fmt.Fprintln(w, "\nflags:")
		printFlags(w, own)
	}
	fmt.Fprintln(w, "\nflags of every command:")
	printFlags(w, common)
}

// printFlags lists flags as flag.PrintDefaults does, with two dashes.
func printFlags(w io.Writer, flags []*flag.Flag) {
	for _, f := range flags {
		kind, usage := flag.UnquoteUsage(f)
		line := "  --" + f.Name
		if kind != "" {
			line += " " + kind
		}
		line += "\n    \t" + strings.ReplaceAll(usage, "\n", "\n    \t")
		switch f.DefValue {
		case "", "0", "false", "0s":
		default:
			if kind == "string" {
				line += fmt.Sprintf(" (default %q)", f.DefValue)
			} else {
				line += fmt.Sprintf(" (default %s)", f.DefValue)
			}
		}
		fmt.Fprintln(w, line)
	}
}

// noDatabase says that the SQLite file a command was pointed at does not exist, where the path
// came from, and how to create it.
func noDatabase(dsn string, fromFlag bool) string {
	path := database.SQLitePath(dsn)
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	from := "the default --db, creditd.db in the working directory"
	switch {
	case fromFlag:
		from = "from --db"
	case os.Getenv("CREDITD_DB") != "":
		from = "from CREDITD_DB"
	}
	return fmt.Sprintf("no database at %s (%s); check the path, or create the database with: creditd migrate --db %s", path, from, shellQuote(path))
}

// isSet reports whether the command line set the flag name.
func isSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// flagError rewrites an error of the flag package in the spelling of the README and the help
// text: --name rather than the package's -name.
func flagError(err error) string {
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		return "unknown flag --" + name
	}
	return singleDashFlag.ReplaceAllString(msg, "$1--$2")
}

// singleDashFlag finds the flag names in the flag package's messages ("flag needs an argument:
// -store", "invalid value \"x\" for flag -grace: ...").
var singleDashFlag = regexp.MustCompile(`((?:flag|for|argument:) )-([A-Za-z])`)

// shellQuote quotes s for a POSIX shell when it needs quoting, so a suggested command line can
// be pasted as printed.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./:@%+=,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
