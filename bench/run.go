package bench

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/creditd/creditd/database"
)

// Config says what Run does.
type Config struct {
	// Creditd is the creditd binary; Self is this program, re-executed as the baseline server.
	Creditd, Self string
	// DB is the SQLite file to seed and serve, or the postgres:// URL of a PostgreSQL database,
	// whose Schema (DefaultSchema if empty) the harness seeds and serves; Size is the data. A
	// dataset seeded earlier with the same size is reused unless Reseed is set.
	DB     string
	Schema string
	Size   Size
	Reseed bool
	// PostGraphile, on PostgreSQL and when the dashboard is among the scenarios, also runs the
	// dashboard on PostGraphile over the same tables, interleaved with creditd's for Rounds
	// rounds (default 3). It installs PostGraphile with npm into WorkDir/postgraphile.
	PostGraphile bool
	Rounds       int
	// WorkDir holds logs, baseline responses and profiles.
	WorkDir string
	// Warmup and Duration are the lengths of each load run; Concurrency is the number of
	// requests kept in flight by the saturating runs.
	Warmup, Duration time.Duration
	Concurrency      int
	// Only, when not empty, names the scenarios to run.
	Only []string
	// Profile takes a CPU profile of creditd during each scenario's saturating run, into WorkDir.
	Profile bool
	// ServeFlags are extra flags for creditd serve.
	ServeFlags []string
	// Progress receives a line per step.
	Progress io.Writer

	// beforeStop, when set, runs after the measurements and before the server stops, with the
	// number of adjustments it acknowledged (the webhook comparison waits for deliveries).
	beforeStop func(writes uint64)
}

// Result is one scenario's figures.
type Result struct {
	Name  string `json:"name"`
	Title string `json:"title"`
	// Saturated is creditd with Concurrency requests in flight; Half is creditd at a constant
	// rate of half Saturated's throughput; Baseline is the bare server with Concurrency in flight.
	Saturated Measurement `json:"saturated"`
	Half      Measurement `json:"half"`
	Baseline  Measurement `json:"baseline"`
	// PeakRSS is creditd's resident-set high-water mark during the scenario, in bytes.
	PeakRSS int64 `json:"peak_rss"`
	// Queries is the number of SQL statements one request runs (counted in-process), -1 if
	// not counted.
	Queries int `json:"queries"`
	// Skipped says why a scenario did not run.
	Skipped string `json:"skipped,omitempty"`
	// Durable, for the write scenario, is how many of its entries are in the database after
	// the server stopped.
	Durable int64 `json:"durable,omitempty"`
}

// Report is a whole run.
type Report struct {
	Started     time.Time `json:"started"`
	Config      Config    `json:"-"`
	Dataset     Dataset   `json:"-"`
	SeedSeconds float64   `json:"seed_seconds"`
	Reused      bool      `json:"reused_dataset"`
	// StartRSS is creditd's peak before the first scenario; PeakRSS the highest of the run.
	StartRSS int64    `json:"start_rss"`
	PeakRSS  int64    `json:"peak_rss"`
	Results  []Result `json:"results"`
	// DashboardQueries maps a dashboard page size to the SQL statements it runs.
	DashboardQueries map[int]int `json:"dashboard_queries,omitempty"`
	// BehaviourQueries maps a page size of the payment behaviour query to its statements.
	BehaviourQueries map[int]int `json:"behaviour_queries,omitempty"`
	// LoadBefore and LoadAfter are /proc/loadavg when the run started and ended.
	LoadBefore string `json:"load_before"`
	LoadAfter  string `json:"load_after"`
	// Postgres is set when creditd ran on PostgreSQL; BackendCPU when its backends' CPU time
	// is in the CPU figures (PostgreSQL on this machine), else BackendCPUMissing says why not.
	Postgres          bool   `json:"postgres"`
	PostgresVersion   string `json:"postgres_version,omitempty"`
	Schema            string `json:"schema,omitempty"`
	BackendCPU        bool   `json:"backend_cpu"`
	BackendCPUMissing string `json:"backend_cpu_missing,omitempty"`
	// PostGraphile is the dashboard side by side with PostGraphile, when it ran.
	PostGraphile *Comparison `json:"postgraphile,omitempty"`

	// finished is when the measurements ended, before the server stopped.
	finished time.Time
}

func (c Config) logf(format string, args ...any) {
	if c.Progress != nil {
		fmt.Fprintf(c.Progress, format+"\n", args...)
	}
}

func (c Config) wants(name string) bool { return len(c.Only) == 0 || slices.Contains(c.Only, name) }

// Run seeds (or reuses) the dataset, starts creditd and the baseline, and measures every
// scenario.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	rep := &Report{Started: time.Now().UTC(), Config: cfg, LoadBefore: loadAvg()}
	if err := os.MkdirAll(cfg.WorkDir, 0o755); err != nil {
		return nil, err
	}
	ds, err := cfg.dataset(ctx, rep)
	if err != nil {
		return nil, err
	}
	rep.Dataset, rep.SeedSeconds = ds, ds.SeedSeconds
	runID := randomID()
	scenarios := Scenarios(ds, runID)
	rep.Postgres = database.IsPostgres(cfg.DB)
	dsn, creditdDSN := cfg.DB, cfg.DB
	var admin *sql.DB
	if rep.Postgres {
		if dsn, err = SchemaURL(cfg.DB, cfg.schema(), "creditbench-harness"); err != nil {
			return nil, err
		}
		if creditdDSN, err = SchemaURL(cfg.DB, cfg.schema(), "creditbench-"+runID+"-creditd"); err != nil {
			return nil, err
		}
		if admin, err = sql.Open("pgx", dsn); err != nil {
			return nil, err
		}
		defer admin.Close()
		if err := admin.QueryRowContext(ctx, "SHOW server_version").Scan(&rep.PostgresVersion); err != nil {
			return nil, err
		}
		rep.Schema = cfg.schema()
	}
	if rep.Postgres && cfg.PostGraphile && cfg.wants("dashboard") {
		// First, so that a failing install stops the run before it measures anything.
		cfg.logf("installing PostGraphile %s into %s", PostGraphileVersion, filepath.Join(cfg.WorkDir, "postgraphile"))
		if err := InstallPostGraphile(ctx, filepath.Join(cfg.WorkDir, "postgraphile")); err != nil {
			return nil, err
		}
	}

	cfg.logf("counting SQL statements per request in-process")
	counts, dashboard, behaviour, err := CountQueries(ctx, dsn, ds, scenarios)
	if err != nil {
		return nil, fmt.Errorf("count queries: %w", err)
	}
	rep.DashboardQueries, rep.BehaviourQueries = dashboard, behaviour
	before, err := countBenchEntries(ctx, dsn)
	if err != nil {
		return nil, err
	}

	flags := append([]string{"--rate-limit", "1000000000", "--platform-rate-limit", "1000000000"}, cfg.ServeFlags...)
	if cfg.Profile {
		flags = append(flags, "--pprof", "127.0.0.1:0")
	}
	srv, err := StartCreditd(ctx, cfg.Creditd, creditdDSN, filepath.Join(cfg.WorkDir, "creditd.log"), flags...)
	if err != nil {
		return nil, err
	}
	defer srv.Stop()
	base := "http://" + srv.Addr

	// One real response per scenario is what the baseline serves.
	baselineDir := filepath.Join(cfg.WorkDir, "baseline")
	if err := os.MkdirAll(baselineDir, 0o755); err != nil {
		return nil, err
	}
	skipped := map[string]string{}
	for _, s := range scenarios {
		if !cfg.wants(s.Name) {
			continue
		}
		status, body, err := sample(ctx, base, s)
		if err != nil {
			return nil, err
		}
		if status != s.Status {
			skipped[s.Name] = fmt.Sprintf("creditd answered %d, not %d: %s", status, s.Status, firstLine(body))
			continue
		}
		if err := writeBaselineResponse(baselineDir, s.Name, status, body); err != nil {
			return nil, err
		}
	}
	baseline, err := StartBaseline(ctx, cfg.Self, baselineDir, filepath.Join(cfg.WorkDir, "baseline.log"))
	if err != nil {
		return nil, err
	}
	defer baseline.Stop()
	meter, baselineMeter := cpuMeter{proc: srv}, cpuMeter{proc: baseline}
	if rep.Postgres {
		// The sample requests above opened creditd's first connections.
		backends := &pgBackends{db: admin, app: "creditbench-" + runID + "-creditd"}
		if err := backends.check(ctx); err != nil {
			rep.BackendCPUMissing = err.Error()
			cfg.logf("warning: PostgreSQL's CPU time is left out of the CPU figures: %v", err)
		} else {
			meter.backends, rep.BackendCPU = backends, true
		}
	}

	mem, err := srv.ReadMemory()
	if err != nil {
		return nil, err
	}
	rep.StartRSS, rep.PeakRSS = mem.Peak, mem.Peak
	var writes uint64
	for _, s := range scenarios {
		if !cfg.wants(s.Name) {
			continue
		}
		res := Result{Name: s.Name, Title: s.Title, Queries: counts[s.Name]}
		if why, skip := skipped[s.Name]; skip {
			res.Skipped = why
			cfg.logf("%s: skipped: %s", s.Name, why)
			rep.Results = append(rep.Results, res)
			continue
		}
		if err := srv.ResetPeak(); err != nil {
			return nil, err
		}
		var counter atomic.Uint64
		counter.Store(1_000_000) // past the numbers sample and CountQueries used
		cfg.logf("%s: warming up for %s", s.Name, cfg.Warmup)
		attack(s.targeter(base, &counter, ""), 0, cfg.Concurrency, cfg.Warmup, s.Status)
		stopProfile := func() error { return nil }
		if cfg.Profile {
			stopProfile = profile(ctx, srv.PprofAddr, cfg.Duration, filepath.Join(cfg.WorkDir, s.Name+".cpu.pprof"))
		}
		res.Saturated = measureCPU(ctx, meter, func() Measurement {
			return attack(s.targeter(base, &counter, ""), 0, cfg.Concurrency, cfg.Duration, s.Status)
		})
		if err := stopProfile(); err != nil {
			cfg.logf("%s: profile: %v", s.Name, err)
		}
		cfg.logf("%s: saturated %.0f/s p50 %s p99 %s cpu/req %s errors %d", s.Name, res.Saturated.Throughput, res.Saturated.P50, res.Saturated.P99, res.Saturated.CPUPerRequest, res.Saturated.Errors)
		if half := res.Saturated.Throughput / 2; half >= 1 {
			res.Half = attack(s.targeter(base, &counter, ""), half, cfg.Concurrency, cfg.Duration, s.Status)
			cfg.logf("%s: at %.0f/s p50 %s p99 %s errors %d", s.Name, half, res.Half.P50, res.Half.P99, res.Half.Errors)
		}
		mem, err := srv.ReadMemory()
		if err != nil {
			return nil, err
		}
		res.PeakRSS = mem.Peak
		rep.PeakRSS = max(rep.PeakRSS, mem.Peak)
		if s.Name == "adjustments" { // what countBenchEntries counts
			writes += res.Saturated.Requests - res.Saturated.Errors + res.Half.Requests - res.Half.Errors
		}
		var bc atomic.Uint64
		bc.Store(1_000_000)
		attack(s.targeter("http://"+baseline.Addr, &bc, "/"+s.Name), 0, cfg.Concurrency, cfg.Warmup, s.Status)
		res.Baseline = measureCPU(ctx, baselineMeter, func() Measurement {
			return attack(s.targeter("http://"+baseline.Addr, &bc, "/"+s.Name), 0, cfg.Concurrency, cfg.Duration, s.Status)
		})
		cfg.logf("%s: baseline %.0f/s p50 %s p99 %s cpu/req %s", s.Name, res.Baseline.Throughput, res.Baseline.P50, res.Baseline.P99, res.Baseline.CPUPerRequest)
		rep.Results = append(rep.Results, res)
	}
	baseline.Stop()
	if rep.Postgres && cfg.PostGraphile && cfg.wants("dashboard") {
		for _, s := range scenarios {
			if s.Name != "dashboard" {
				continue
			}
			if rep.PostGraphile, err = comparePostGraphile(ctx, cfg, ds, runID, admin, meter, s); err != nil {
				return rep, fmt.Errorf("PostGraphile: %w", err)
			}
			rep.PeakRSS = max(rep.PeakRSS, rep.PostGraphile.CreditdPeakRSS)
		}
	}
	rep.finished = time.Now()
	if cfg.beforeStop != nil {
		cfg.beforeStop(writes)
	}
	srv.Stop()
	rep.LoadAfter = loadAvg()
	if writes > 0 {
		after, err := countBenchEntries(ctx, dsn)
		if err != nil {
			return nil, err
		}
		for i := range rep.Results {
			if rep.Results[i].Name == "adjustments" {
				rep.Results[i].Durable = after - before
			}
		}
		// The sample request and CountQueries each wrote one more.
		if got := uint64(after - before); got < writes {
			return rep, fmt.Errorf("the server acknowledged %d adjustments but the database has %d", writes, got)
		}
	}
	return rep, nil
}

// attack sends requests from tr at rate per second (0: as fast as workers requests in flight
// allow) for d, and measures them; a response with another status than want is an error.
func attack(tr vegeta.Targeter, rate float64, workers int, d time.Duration, want int) Measurement {
	opts := []func(*vegeta.Attacker){
		vegeta.Connections(workers), vegeta.KeepAlive(true), vegeta.HTTP2(false),
		vegeta.Timeout(60 * time.Second), vegeta.Redirects(vegeta.NoFollow),
		vegeta.Workers(uint64(workers)),
	}
	pacer := vegeta.ConstantPacer{Freq: 0, Per: time.Second}
	if rate > 0 {
		// Open loop: requests leave on schedule whatever the latency, so a stall shows in the
		// percentiles instead of slowing the sender down.
		pacer = vegeta.ConstantPacer{Freq: int(rate + 0.5), Per: time.Second}
		opts = append(opts, vegeta.MaxWorkers(10_000))
	} else {
		opts = append(opts, vegeta.MaxWorkers(uint64(workers)), vegeta.MaxConnections(workers))
	}
	atk := vegeta.NewAttacker(opts...)
	var (
		lat        []time.Duration
		m          Measurement
		first      time.Time
		last       time.Time
		successes  uint64
		firstError string
	)
	m.Rate = rate
	for res := range atk.Attack(tr, pacer, d, "") {
		m.Requests++
		lat = append(lat, res.Latency)
		if first.IsZero() || res.Timestamp.Before(first) {
			first = res.Timestamp
		}
		if end := res.Timestamp.Add(res.Latency); end.After(last) {
			last = end
		}
		if int(res.Code) != want || res.Error != "" {
			m.Errors++
			if firstError == "" {
				firstError = fmt.Sprintf("status %d %s %s", res.Code, res.Error, firstLine(res.Body))
			}
			continue
		}
		successes++
	}
	m.FirstError = firstError
	if len(lat) == 0 {
		return m
	}
	slices.Sort(lat)
	q := func(p float64) time.Duration { return lat[min(len(lat)-1, int(p*float64(len(lat))))] }
	m.P50, m.P90, m.P99, m.Max = q(0.50), q(0.90), q(0.99), lat[len(lat)-1]
	if span := last.Sub(first).Seconds(); span > 0 {
		m.Throughput = float64(successes) / span
	}
	return m
}

// sample sends a scenario's first request once and returns the response.
func sample(ctx context.Context, base string, s Scenario) (int, []byte, error) {
	method, path, header, body := s.request(0)
	req, err := http.NewRequestWithContext(ctx, method, base+path, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header = header
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// profile starts a CPU profile of d on the pprof listener and returns a function that waits
// for it and writes it to path.
func profile(ctx context.Context, addr string, d time.Duration, path string) func() error {
	var wg sync.WaitGroup
	var err error
	wg.Add(1)
	go func() {
		defer wg.Done()
		secs := max(1, int(d.Seconds()))
		var req *http.Request
		req, err = http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", addr, secs), nil)
		if err != nil {
			return
		}
		var resp *http.Response
		resp, err = http.DefaultClient.Do(req)
		if err != nil {
			return
		}
		defer resp.Body.Close()
		var b []byte
		if b, err = io.ReadAll(resp.Body); err == nil {
			err = os.WriteFile(path, b, 0o644)
		}
	}()
	return func() error { wg.Wait(); return err }
}

// countBenchEntries counts the adjustments the write scenario made, as a reader of the
// database (a SQLite file or a postgres:// URL) sees them.
func countBenchEntries(ctx context.Context, dsn string) (int64, error) {
	var db *sql.DB
	var err error
	if database.IsPostgres(dsn) {
		db, err = sql.Open("pgx", dsn)
	} else {
		db, err = sql.Open("sqlite3", "file:"+dsn+"?mode=ro&_busy_timeout=10000")
	}
	if err != nil {
		return 0, err
	}
	defer db.Close()
	var n int64
	err = db.QueryRowContext(ctx, "SELECT count(*) FROM ledger_entries WHERE note = 'creditbench'").Scan(&n)
	return n, err
}

// schema is the PostgreSQL schema the run seeds and serves.
func (c Config) schema() string {
	if c.Schema == "" {
		return DefaultSchema
	}
	return c.Schema
}

// dataset reuses the dataset of cfg.Size seeded earlier in cfg.DB, or seeds it afresh.
func (c Config) dataset(ctx context.Context, rep *Report) (Dataset, error) {
	var ds Dataset
	var ok bool
	if database.IsPostgres(c.DB) {
		var err error
		if ds, ok, err = LoadPostgresDataset(ctx, c.DB, c.schema(), c.Size); err != nil {
			return ds, err
		}
	} else {
		ds, ok = LoadDataset(c.DB, c.Size)
	}
	where := c.DB
	if database.IsPostgres(c.DB) {
		where = "schema " + c.schema() + " of " + redact(c.DB)
	}
	if ok && ds.PlatformSecret == "" {
		ok = false // seeded before the platform connector: seed afresh
	}
	if ok && ds.PlatformKey != "" && os.Getenv("CREDITD_WEBHOOK_KEY") == "" {
		os.Setenv("CREDITD_WEBHOOK_KEY", ds.PlatformKey) // what the platform secret is sealed with
	}
	if ok && !c.Reseed {
		rep.Reused = true
		c.logf("reusing the dataset in %s (seeded in %.1f s)", where, ds.SeedSeconds)
		return ds, nil
	}
	c.logf("seeding %s: %+v", where, c.Size)
	var err error
	if database.IsPostgres(c.DB) {
		ds, err = SeedPostgres(ctx, c.DB, c.schema(), c.Size)
	} else {
		ds, err = Seed(ctx, c.DB, c.Size)
	}
	if err != nil {
		return ds, fmt.Errorf("seed: %w", err)
	}
	c.logf("seeded in %.1f s", ds.SeedSeconds)
	return ds, nil
}

// redact returns a database URL without its password, for logs.
func redact(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		return "the database"
	}
	return u.Redacted()
}

func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	return string(bytes.TrimSpace(b))
}

func randomID() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func firstLine(b []byte) string {
	line, _, _ := bytes.Cut(b, []byte("\n"))
	if len(line) > 200 {
		line = line[:200]
	}
	return string(line)
}
