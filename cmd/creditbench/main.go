// Command creditbench measures creditd against the targets of issue #8 (see BENCHMARKS.md).
//
// It seeds a large dataset into SQLite, or into a schema of a PostgreSQL database (or reuses
// one seeded earlier with the same size), starts `creditd serve` on it as a separate process
// with the rate limit raised, loads it over loopback with vegeta, and measures, in the same
// run, a bare net/http server returning the same response bytes. On PostgreSQL it also runs
// the GraphQL dashboard side by side with PostGraphile on the same tables. Run it from the
// repository root:
//
//	go run ./cmd/creditbench [--db PATH|postgres://...] [--duration 10s] [--concurrency 8] [--profile]
//
// `creditbench subscriptions [--subscribers 1000] [--rate 200] [--duration 10s] [--db URL]`
// runs issue 30's scenario instead: live subscriptions on one instance under a steady write
// load (commit-to-client latency, CPU per delivered message, memory per open subscription).
//
// `creditbench export [--db PATH|URL] [--rounds 1] [--profile]` runs issue 39's scenario: the
// large store's whole export over HTTP, without and with gzip, then with `creditd export`
// (time, rows a second, bytes, the server's memory growth).
//
// With --webhook it runs only the adjustments scenario, without and then with one webhook
// endpoint subscribed to ledger_entry.created, and compares the two (issue 12).
//
// `creditbench baseline --dir DIR --addr ADDR` is the baseline server it starts.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/creditd/creditd/bench"
	"github.com/creditd/creditd/database"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "creditbench:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	if len(args) > 0 && args[0] == "baseline" {
		fs := flag.NewFlagSet("baseline", flag.ContinueOnError)
		dir := fs.String("dir", "", "directory of <scenario>.body and <scenario>.status files")
		addr := fs.String("addr", "127.0.0.1:0", "listen address")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		return bench.ServeBaseline(ctx, *addr, *dir, os.Stdout)
	}
	if len(args) > 0 && args[0] == "subscriptions" {
		return runSubscriptions(ctx, args[1:])
	}
	if len(args) > 0 && args[0] == "export" {
		return runExport(ctx, args[1:])
	}

	fs := flag.NewFlagSet("creditbench", flag.ContinueOnError)
	work := fs.String("work", filepath.Join(os.TempDir(), "creditbench"), "directory for logs, baseline responses and profiles")
	dbPath := fs.String("db", "", "SQLite file to seed and serve (default <work>/bench-<size>.db; keep it on the disk you want to measure, not tmpfs), or a postgres:// URL")
	schema := fs.String("schema", bench.DefaultSchema, "with a postgres:// --db, the schema to seed and serve; the harness drops and recreates it, and refuses one it did not create")
	postgraphile := fs.Bool("postgraphile", true, "with a postgres:// --db, also run the dashboard on PostGraphile "+bench.PostGraphileVersion+" (installed with npm into <work>/postgraphile), interleaved with creditd's")
	rounds := fs.Int("rounds", 3, "rounds of the interleaved creditd/PostGraphile dashboard comparison, and of the --webhook comparison")
	size := fs.String("size", "full", "dataset: full (1,000 stores, 10,000 companies, 1M-entry ledger) or tiny")
	reseed := fs.Bool("reseed", false, "seed afresh even when the database holds a dataset of this size")
	creditd := fs.String("creditd", "", "creditd binary (default: built from ./cmd/creditd into <work>)")
	duration := fs.Duration("duration", 10*time.Second, "length of each measured run")
	warmup := fs.Duration("warmup", 2*time.Second, "length of the warm-up before each scenario")
	concurrency := fs.Int("concurrency", 8, "requests in flight during saturated runs")
	only := fs.String("only", "", "comma-separated scenarios to run (company, ledger-big, ledger-medium, companies, dashboard, adjustments, receivables, platform-deliveries, credit-check, behaviour, store-behaviour)")
	profile := fs.Bool("profile", false, "take a CPU profile of creditd (serve --pprof) during each saturated run, into <work>")
	jsonOut := fs.String("json", "", "also write the results as JSON to this file")
	webhooks := fs.Bool("webhook", false, "issue 12: run only the adjustments scenario, without and then with one webhook endpoint subscribed to ledger_entry.created (a receiver in this process), and compare")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cfg := bench.Config{
		WorkDir: *work, DB: *dbPath, Schema: *schema, PostGraphile: *postgraphile, Rounds: *rounds,
		Reseed: *reseed, Creditd: *creditd,
		Duration: *duration, Warmup: *warmup, Concurrency: *concurrency, Profile: *profile,
		Progress: os.Stderr,
	}
	switch *size {
	case "full":
		cfg.Size = bench.FullSize
	case "tiny":
		cfg.Size = bench.TinySize
	default:
		return fmt.Errorf("--size must be full or tiny")
	}
	if *only != "" {
		cfg.Only = strings.Split(*only, ",")
	}
	if cfg.DB == "" {
		cfg.DB = filepath.Join(cfg.WorkDir, "bench-"+*size+".db")
	}
	if err := os.MkdirAll(cfg.WorkDir, 0o755); err != nil {
		return err
	}
	if !database.IsPostgres(cfg.DB) && onTmpfs(filepath.Dir(cfg.DB)) {
		fmt.Fprintf(os.Stderr, "creditbench: warning: %s is on tmpfs, where fsync costs nothing: write figures will not be durable ones\n", filepath.Dir(cfg.DB))
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	cfg.Self = self
	if cfg.Creditd == "" {
		cfg.Creditd = filepath.Join(cfg.WorkDir, "creditd")
		fmt.Fprintln(os.Stderr, "building ./cmd/creditd")
		build := exec.CommandContext(ctx, "go", "build", "-o", cfg.Creditd, "./cmd/creditd")
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			return fmt.Errorf("build creditd (run from the repository root, or pass --creditd): %w", err)
		}
	}
	if *webhooks {
		cmp, err := bench.RunWebhookComparison(ctx, cfg)
		if cmp != nil && len(cmp.With) > 0 {
			fmt.Printf("Machine: %s, %d CPUs (GOMAXPROCS %d), %s.\n", cpuModel(), runtime.NumCPU(), runtime.GOMAXPROCS(0), runtime.Version())
			fmt.Printf("Command: creditbench %s\n", strings.Join(args, " "))
			fmt.Printf("Dataset: %+v.\n\n", cfg.Size)
			cmp.WriteMarkdown(os.Stdout)
			if *jsonOut != "" {
				b, _ := json.MarshalIndent(cmp, "", "  ")
				if werr := os.WriteFile(*jsonOut, b, 0o644); werr != nil && err == nil {
					err = werr
				}
			}
		}
		return err
	}
	rep, err := bench.Run(ctx, cfg)
	if rep != nil {
		fmt.Printf("Machine: %s, %d CPUs (GOMAXPROCS %d), %s.\n", cpuModel(), runtime.NumCPU(), runtime.GOMAXPROCS(0), runtime.Version())
		fmt.Printf("Command: creditbench %s\n", strings.Join(args, " "))
		fmt.Printf("Dataset: %+v; %s (seeding took %.0f s).\n\n", cfg.Size, map[bool]string{true: "reused", false: "seeded in this run"}[rep.Reused], rep.SeedSeconds)
		rep.WriteMarkdown(os.Stdout)
		if *jsonOut != "" {
			b, _ := json.MarshalIndent(rep, "", "  ")
			if werr := os.WriteFile(*jsonOut, b, 0o644); werr != nil && err == nil {
				err = werr
			}
		}
	}
	return err
}

// runSubscriptions is `creditbench subscriptions`: issue 30's scenario (see
// bench.RunSubscriptions and BENCHMARKS.md).
func runSubscriptions(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("subscriptions", flag.ContinueOnError)
	work := fs.String("work", filepath.Join(os.TempDir(), "creditbench"), "directory for the database, the log and the creditd binary")
	db := fs.String("db", "", "a postgres:// URL to run on PostgreSQL (a scratch schema, dropped afterwards); default a fresh SQLite file in --work")
	creditd := fs.String("creditd", "", "creditd binary (default: built from ./cmd/creditd into <work>)")
	subscribers := fs.Int("subscribers", 1000, "subscriptions open on the one instance, 50 per store")
	rate := fs.Int("rate", 200, "events written per second, spread over the stores")
	duration := fs.Duration("duration", 10*time.Second, "length of the load")
	jsonOut := fs.String("json", "", "also write the result as JSON to this file")
	profile := fs.Bool("profile", false, "take a CPU profile of creditd (serve --pprof) during the load, into <work>/subscriptions.cpu.pprof")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := os.MkdirAll(*work, 0o755); err != nil {
		return err
	}
	if *creditd == "" {
		*creditd = filepath.Join(*work, "creditd")
		fmt.Fprintln(os.Stderr, "building ./cmd/creditd")
		build := exec.CommandContext(ctx, "go", "build", "-o", *creditd, "./cmd/creditd")
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			return fmt.Errorf("build creditd (run from the repository root, or pass --creditd): %w", err)
		}
	}
	res, err := bench.RunSubscriptions(ctx, bench.SubscriptionConfig{
		Creditd: *creditd, WorkDir: *work, DB: *db, Subscribers: *subscribers, Rate: *rate, Duration: *duration, Progress: os.Stderr, Profile: *profile,
	})
	if err != nil {
		return err
	}
	fmt.Printf("Machine: %s, %d CPUs (GOMAXPROCS %d), %s.\n", cpuModel(), runtime.NumCPU(), runtime.GOMAXPROCS(0), runtime.Version())
	fmt.Printf("Command: creditbench subscriptions %s\n\n", strings.Join(args, " "))
	res.WriteMarkdown(os.Stdout)
	if *jsonOut != "" {
		b, _ := json.MarshalIndent(res, "", "  ")
		return os.WriteFile(*jsonOut, b, 0o644)
	}
	return nil
}

// onTmpfs reports whether dir is on a memory file system.
func onTmpfs(dir string) bool {
	var st syscall.Statfs_t
	const tmpfsMagic = 0x01021994
	return syscall.Statfs(dir, &st) == nil && st.Type == tmpfsMagic
}

func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return runtime.GOARCH
	}
	for _, line := range strings.Split(string(b), "\n") {
		if name, value, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(name) == "model name" {
			return strings.TrimSpace(value)
		}
	}
	return runtime.GOARCH
}

func runExport(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("export", flag.ContinueOnError)
	work := fs.String("work", filepath.Join(os.TempDir(), "creditbench"), "directory for the log, the exported file, the profile and the creditd binary")
	dbPath := fs.String("db", "", "SQLite file of the dataset (default <work>/bench-<size>.db), or a postgres:// URL")
	schema := fs.String("schema", bench.DefaultSchema, "with a postgres:// --db, the schema of the dataset")
	size := fs.String("size", "full", "dataset: full or tiny")
	reseed := fs.Bool("reseed", false, "seed afresh even when the database holds a dataset of this size")
	creditd := fs.String("creditd", "", "creditd binary (default: built from ./cmd/creditd into <work>)")
	rounds := fs.Int("rounds", 1, "exports over HTTP of each kind (identity, gzip)")
	profile := fs.Bool("profile", false, "take a CPU profile of creditd during the first export's first --duration, into <work>/export.cpu.pprof")
	duration := fs.Duration("duration", 30*time.Second, "length of the profile")
	jsonOut := fs.String("json", "", "also write the results as JSON to this file")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cfg := bench.Config{WorkDir: *work, DB: *dbPath, Schema: *schema, Reseed: *reseed, Creditd: *creditd,
		Rounds: *rounds, Profile: *profile, Duration: *duration, Progress: os.Stderr}
	switch *size {
	case "full":
		cfg.Size = bench.FullSize
	case "tiny":
		cfg.Size = bench.TinySize
	default:
		return fmt.Errorf("--size must be full or tiny")
	}
	if cfg.DB == "" {
		cfg.DB = filepath.Join(cfg.WorkDir, "bench-"+*size+".db")
	}
	if err := os.MkdirAll(cfg.WorkDir, 0o755); err != nil {
		return err
	}
	if cfg.Creditd == "" {
		cfg.Creditd = filepath.Join(cfg.WorkDir, "creditd")
		fmt.Fprintln(os.Stderr, "building ./cmd/creditd")
		build := exec.CommandContext(ctx, "go", "build", "-o", cfg.Creditd, "./cmd/creditd")
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			return fmt.Errorf("build creditd (run from the repository root, or pass --creditd): %w", err)
		}
	}
	rep, err := bench.RunExport(ctx, cfg)
	if rep != nil && len(rep.Runs) > 0 {
		fmt.Printf("Machine: %s, %d CPUs (GOMAXPROCS %d), %s.\n", cpuModel(), runtime.NumCPU(), runtime.GOMAXPROCS(0), runtime.Version())
		fmt.Printf("Command: creditbench export %s\n", strings.Join(args, " "))
		fmt.Printf("Dataset: %+v; %s.\n", cfg.Size, map[bool]string{true: "reused", false: "seeded in this run"}[rep.Reused])
		rep.WriteMarkdown(os.Stdout)
		if *jsonOut != "" {
			b, _ := json.MarshalIndent(rep, "", "  ")
			if werr := os.WriteFile(*jsonOut, b, 0o644); werr != nil && err == nil {
				err = werr
			}
		}
	}
	return err
}
