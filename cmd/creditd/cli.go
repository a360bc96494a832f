package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"strings"
	"time"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/database"
	"github.com/creditd/creditd/httpapi"
	"github.com/creditd/creditd/tenant"
)

// Exit codes: 0 success, 1 a failure of the service or its database, 2 bad input (nothing
// was written).
const (
	exitOK       = 0
	exitFailure  = 1
	exitBadInput = 2
)

// Main is the program, separated from main() so end-to-end tests run exactly what users run.
type Main struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Self is how the hints serve prints name this program: "creditd" when that is on PATH,
	// "go run ./cmd/creditd" under go run, else the path it was started by (see selfCommand).
	Self string
	// Now overrides the clock (tests only).
	Now func() time.Time
	// Ready, when set, receives the address serve listens on once it accepts connections.
	Ready func(addr string)
	// AdminReady, when set, receives the address of the staff console (serve --admin-addr)
	// once it accepts connections.
	AdminReady func(addr string)

	// afterOpen, when set by a test, runs on the database once it is open and prepared, to
	// inject a fault (closing it, say) before the command runs.
	afterOpen func(db *database.DB)
	// sweeping, when set by a test, runs in each of serve's sweeps once it holds the sweep's
	// lock, before the sweep's work, with the sweep's context.
	sweeping func(ctx context.Context)

	db *database.DB
}

// NewMain returns a Main wired to the given streams.
func NewMain(stdin io.Reader, stdout, stderr io.Writer) *Main {
	exe, _ := os.Executable()
	return &Main{Stdin: stdin, Stdout: stdout, Stderr: stderr, Self: selfCommand(exe, os.Args[0], exec.LookPath)}
}

// Close releases the database.
func (m *Main) Close() error {
	if m.db != nil {
		err := m.db.Close()
		m.db = nil
		return err
	}
	return nil
}

// usageError is bad input on the command line. syntax marks a mistake in the command's flags
// or arguments, which the command's -h answers.
type usageError struct {
	msg    string
	syntax bool
}

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return usageError{msg: fmt.Sprintf(format, args...)} }

// syntaxf is a usage error in the command's flags or arguments.
func syntaxf(format string, args ...any) error {
	return usageError{msg: fmt.Sprintf(format, args...), syntax: true}
}

// command is one subcommand: it declares its flags on fs and runs with the positional args.
type command struct {
	summary string
	// args names the positional arguments for the usage line ("APP"), if the command takes any.
	args  string
	flags func(fs *flag.FlagSet, opts *credit.Options) func(ctx context.Context, env *cmdEnv, args []string) error
	// createsDatabase, when set, reports whether this run may create a SQLite file that does
	// not exist yet (migrate, store create, serve --demo). Every other command refuses a
	// missing file, so that a mistyped --db never leaves a new, empty database behind.
	createsDatabase func(fs *flag.FlagSet) bool
	// noDatabase commands (version) run without opening a database; env.svc and env.db are nil.
	noDatabase bool
}

// always is createsDatabase for the commands that may always create the database.
func always(*flag.FlagSet) bool { return true }

// cmdEnv is what a running command can use.
type cmdEnv struct {
	m    *Main
	svc  *credit.Service
	db   *database.DB
	json bool
	out  io.Writer
	// dbArg is the --db the command line was given, to repeat in a command it suggests; ""
	// when the database came from CREDITD_DB or the default, which the suggestion inherits.
	dbArg string
	// dbPath is the --db (or CREDITD_DB, or the default) as given, for commands that open
	// the file themselves (backup).
	dbPath string
}

// dbFlag is the " --db PATH" a suggested command repeats, "" when there is none to repeat.
func (e *cmdEnv) dbFlag() string {
	if e.dbArg == "" {
		return ""
	}
	return " --db " + shellQuote(e.dbArg)
}

// cliStaff names the staff member acting for commands that take no --staff: the operator at
// the command line.
const cliStaff = "command line"

// staffFor checks that args is exactly one ID, called what in the usage error, and returns ctx
// acting as the command line's staff member in the store that owns that ID.
func (e *cmdEnv) staffFor(ctx context.Context, args []string, what string) (context.Context, error) {
	if err := exactlyArgs(args, what); err != nil {
		return nil, err
	}
	return e.asStaff(ctx, args[0], cliStaff)
}

// asStaff returns ctx acting as a member, named name, of the staff of the store that owns id (a
// store, company, ledger entry, application or key), so that the data layer scopes the
// command to that store like any request.
//
// Errors: not_found.
func (e *cmdEnv) asStaff(ctx context.Context, id, name string) (context.Context, error) {
	storeID, err := e.svc.Stores.OwnerOf(ctx, id)
	if err != nil {
		return nil, err
	}
	return tenant.Staff(ctx, storeID, name), nil
}

// print writes v as one JSON object with --json, otherwise the human text.
func (e *cmdEnv) print(v any, human string) error {
	if e.json {
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintln(e.out, string(b))
		return err
	}
	_, err := fmt.Fprintln(e.out, human)
	return err
}

func commands() map[string]command {
	return map[string]command{
		"serve":                     serveCommand(),
		"migrate":                   migrateCommand(),
		"store create":              storeCreateCommand(),
		"store list":                storeListCommand(),
		"key create":                keyCreateCommand(),
		"key rotate":                keyRotateCommand(),
		"key revoke":                keyRevokeCommand(),
		"key list":                  keyListCommand(),
		"company create":            companyCreateCommand(),
		"company set-gid":           companySetGIDCommand(),
		"ledger record":             ledgerRecordCommand(),
		"application create":        applicationCreateCommand(),
		"application set-status":    applicationSetStatusCommand(),
		"person erase":              personEraseCommand(),
		"hold place":                holdPlaceCommand(),
		"hold lift":                 holdLiftCommand(),
		"holds sweep":               holdsSweepCommand(),
		"invoices promise":          invoicePromiseCommand(),
		"invoices withdraw-promise": invoiceWithdrawPromiseCommand(),
		"invoices dispute":          invoiceDisputeCommand(),
		"invoices resolve":          invoiceResolveCommand(),
		"reminders set":             remindersSetCommand(),
		"reminders show":            remindersShowCommand(),
		"reminders sweep":           remindersSweepCommand(),
		"export":                    exportCommand(),
		"statement":                 statementCommand(),
		"version":                   versionCommand(),
		"backup":                    backupCommand(),
		"restore":                   restoreCommand(),
		"staff create":              staffCreateCommand(),
		"staff list":                staffListCommand(),
		"staff disable":             staffDisableCommand(),
		"staff reset-password":      staffResetPasswordCommand(),
		"webhook create":            webhookCreateCommand(),
		"webhook list":              webhookListCommand(),
		"webhook disable":           webhookEnableCommand(false),
		"webhook enable":            webhookEnableCommand(true),
		"webhook rotate-secret":     webhookRotateCommand(),
		"webhook delete":            webhookDeleteCommand(),
		"webhook deliveries":        webhookDeliveriesCommand(),
		"webhook redeliver":         webhookRedeliverCommand(),
		"platform connect":          platformConnectCommand(),
		"platform rotate-secret":    platformRotateCommand(),
		"platform inbox":            platformInboxCommand(),
		"platform retry":            platformRetryCommand(),
		"platform send":             platformSendCommand(),
		"webhook test":              webhookTestCommand(),
	}
}

// Run runs one command line and returns the exit code.
func (m *Main) Run(ctx context.Context, args []string) int {
	cmds := commands()
	if len(args) == 0 {
		// Bad input like any other: one line on stderr, the list only when asked for.
		fmt.Fprintln(m.Stderr, "creditd: a command is required; run creditd help for the list")
		return exitBadInput
	}
	if args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		m.usage(cmds)
		return exitOK
	}
	if args[0] == "--version" {
		args = append([]string{"version"}, args[1:]...)
	}
	name, rest := args[0], args[1:]
	cmd, ok := cmds[name]
	if !ok && len(rest) > 0 {
		name = args[0] + " " + args[1]
		cmd, ok = cmds[name]
		rest = args[2:]
	}
	if !ok {
		if strings.HasPrefix(args[0], "-") {
			fmt.Fprintf(m.Stderr, "creditd: flags such as %s go after the command name: creditd COMMAND [flags]; run creditd help\n", args[0])
			return exitBadInput
		}
		words := args[:1]
		if len(args) > 1 && !strings.HasPrefix(args[1], "-") {
			words = args[:2]
		}
		fmt.Fprintf(m.Stderr, "creditd: unknown command %q; run creditd help\n", strings.Join(words, " "))
		return exitBadInput
	}
	fs := flag.NewFlagSet("creditd "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	dbPath := fs.String("db", envOr("CREDITD_DB", "creditd.db"), "SQLite file path or postgres:// URL (env CREDITD_DB)")
	asJSON := fs.Bool("json", false, "print the result as one JSON object")
	opts := credit.Options{Now: m.Now}
	run := cmd.flags(fs, &opts)
	positional, err := parseInterleaved(fs, rest)
	if errors.Is(err, flag.ErrHelp) {
		m.commandUsage(name, cmd, fs)
		return exitOK
	}
	if err != nil {
		fmt.Fprintf(m.Stderr, "creditd %s: %s; run creditd %s -h for its flags\n", name, flagError(err), name)
		return exitBadInput
	}
	env := &cmdEnv{m: m, json: *asJSON, out: m.Stdout, dbPath: *dbPath}
	if cmd.noDatabase {
		return m.finish(name, run(ctx, env, positional))
	}
	if isSet(fs, "db") {
		env.dbArg = *dbPath
	}
	open := database.OpenExisting
	if cmd.createsDatabase != nil && cmd.createsDatabase(fs) {
		open = database.Open
	}
	db, err := open(ctx, *dbPath)
	if errors.Is(err, database.ErrNoDatabase) {
		fmt.Fprintf(m.Stderr, "creditd %s: %s\n", name, noDatabase(*dbPath, env.dbArg != ""))
		return exitBadInput
	}
	if err != nil {
		fmt.Fprintf(m.Stderr, "creditd %s: %v\n", name, oneLine(err))
		return exitFailure
	}
	m.db = db
	prepare := db.Prepare
	if name == "migrate" {
		prepare = db.Migrate
	}
	if err := prepare(ctx); err != nil {
		fmt.Fprintf(m.Stderr, "creditd %s: %v\n", name, oneLine(err))
		return exitFailure
	}
	if m.afterOpen != nil {
		m.afterOpen(db)
	}
	opts.WebhookSealer = webhookSealer(*dbPath)
	env.db, env.svc = db, credit.New(db, opts)
	return m.finish(name, run(ctx, env, positional))
}

// finish reports a command's error in one line and returns the exit code.
func (m *Main) finish(name string, err error) int {
	if err == nil {
		return exitOK
	}
	msg := oneLine(describe(err))
	if ue := (usageError{}); errors.As(err, &ue) && ue.syntax {
		msg += fmt.Sprintf("; run creditd %s -h for its flags", name)
	}
	fmt.Fprintf(m.Stderr, "creditd %s: %s\n", name, msg)
	return exitCode(err)
}

func (m *Main) usage(cmds map[string]command) {
	names := make([]string, 0, len(cmds))
	for n := range cmds {
		names = append(names, n)
	}
	sort.Strings(names)
	fmt.Fprintln(m.Stdout, "usage: creditd <command> [flags]   (flags may come before or after arguments)")
	fmt.Fprintln(m.Stdout, "every command takes --db PATH|URL (env CREDITD_DB, default creditd.db) and --json")
	fmt.Fprintln(m.Stdout, "\ncommands:")
	for _, n := range names {
		fmt.Fprintf(m.Stdout, "  %-24s %s\n", n, cmds[n].summary)
	}
	fmt.Fprintln(m.Stdout, "\nrun creditd <command> -h for a command's flags")
}

// parseInterleaved parses flags that may stand before or after positional arguments.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return positional, nil
		}
		positional = append(positional, args[0])
		args = args[1:]
	}
}

// exitCode is 2 for bad input (a usage error, or anything refused as the caller's mistake) and
// 1 for a failure of the service or its database (what the API answers with a 5xx: an outage,
// after which the same command may succeed, or an internal error), as httpapi.Describe decides
// for every transport.
func exitCode(err error) int {
	var ue usageError
	if errors.As(err, &ue) {
		return exitBadInput
	}
	if httpapi.Describe(err).Status >= 500 {
		return exitFailure
	}
	return exitBadInput
}

// describe is the one line the command prints for err. The operator at the command line sees
// the cause of a failure, which API callers never do.
func describe(err error) string {
	var ue usageError
	if errors.As(err, &ue) {
		return ue.msg
	}
	p := httpapi.Describe(err)
	switch p.Code {
	case httpapi.CodeInternal:
		return err.Error()
	case httpapi.CodeUnavailable:
		return "the database is unavailable (" + err.Error() + "); retry when it is back"
	}
	if p.Param != "" && !strings.Contains(p.Message, p.Param) {
		return fmt.Sprintf("%s (%s)", p.Message, p.Param)
	}
	return p.Message
}

func oneLine(s any) string {
	return strings.Join(strings.Fields(fmt.Sprint(s)), " ")
}

func envOr(name, fallback string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return fallback
}

// required checks that required flags were given.
func required(pairs ...string) error {
	for i := 0; i+1 < len(pairs); i += 2 {
		if strings.TrimSpace(pairs[i+1]) == "" {
			return syntaxf("--%s is required", pairs[i])
		}
	}
	return nil
}

// exactlyArgs checks the number of positional arguments.
func exactlyArgs(args []string, names ...string) error {
	if len(args) != len(names) {
		return syntaxf("expected %d argument(s): %s; got %d", len(names), strings.Join(names, " "), len(args))
	}
	return nil
}

// optionalTimestamp parses an optional RFC 3339 flag value.
func optionalTimestamp(name, v string) (*credit.Timestamp, error) {
	if v == "" {
		return nil, nil
	}
	ts, err := credit.ParseTimestamp(v)
	if err != nil {
		return nil, usagef("--%s: %v", name, err)
	}
	return &ts, nil
}
