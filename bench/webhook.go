package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/creditd/creditd/database"
	"github.com/creditd/creditd/webhook"
)

// WebhookComparison is issue 12's benchmark: the adjustments scenario without any webhook
// endpoint, then with one endpoint subscribed to ledger_entry.created pointing at a receiver
// in this process, so the server delivers every adjustment while it takes more; the two
// alternate for several rounds, so that a change in the machine's other load hits both.
type WebhookComparison struct {
	// Without and With are the adjustments scenario's results, one per round.
	Without []Result `json:"without"`
	With    []Result `json:"with"`
	// Ratio is the median of With's saturated throughputs over the median of Without's; the
	// issue wants at least 0.9.
	Ratio float64 `json:"ratio"`
	// Delivered counts the webhooks the receiver got in the With runs, Written the adjustments
	// those runs wrote; CatchUp is the longest a run's last webhook arrived after its load
	// stopped.
	Delivered int64         `json:"delivered"`
	Written   int64         `json:"written"`
	CatchUp   time.Duration `json:"catch_up"`
	// Concurrency is the requests in flight of the saturated runs.
	Concurrency int `json:"concurrency"`
}

// RunWebhookComparison runs the adjustments scenario cfg.Rounds times (default 3) in each of two
// ways, alternating on the same dataset: as it is, and with one subscribed endpoint (creditd
// serve --allow-private-webhooks, the receiver on loopback answering 204 at once). Each With
// run gets a new endpoint, deleted afterwards, so a reused dataset stays as it was seeded.
func RunWebhookComparison(ctx context.Context, cfg Config) (*WebhookComparison, error) {
	cfg.Only = []string{"adjustments"}
	rounds := cfg.Rounds
	if rounds <= 0 {
		rounds = 3
	}
	if database.IsPostgres(cfg.DB) && os.Getenv("CREDITD_WEBHOOK_KEY") == "" {
		// Every creditd process of the run (the CLI and serve) reads the same master key.
		os.Setenv("CREDITD_WEBHOOK_KEY", webhook.GenerateMasterKey())
	}
	var received atomic.Int64
	var lastAt atomic.Int64
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	receiver := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		received.Add(1)
		lastAt.Store(time.Now().UnixNano())
		w.WriteHeader(http.StatusNoContent)
	}), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = receiver.Serve(l) }()
	defer receiver.Close()
	dsn := cfg.DB
	if database.IsPostgres(dsn) {
		if dsn, err = SchemaURL(cfg.DB, cfg.schema(), "creditbench-webhook-cli"); err != nil {
			return nil, err
		}
	}

	out := &WebhookComparison{Concurrency: cfg.Concurrency}
	with := cfg
	with.ServeFlags = append(slices.Clone(cfg.ServeFlags), "--allow-private-webhooks")
	for round := 1; round <= rounds; round++ {
		cfg.logf("webhooks, round %d of %d: adjustments without an endpoint", round, rounds)
		rep, err := Run(ctx, cfg)
		if err != nil {
			return out, err
		}
		r, err := adjustmentsResult(rep)
		if err != nil {
			return out, err
		}
		out.Without = append(out.Without, r)

		var created struct{ ID string }
		if err := runCreditdJSON(ctx, cfg.Creditd, &created, "webhook", "create", "--db", dsn, "--store", rep.Dataset.StoreID,
			"--url", "http://"+l.Addr().String()+"/creditbench", "--events", "ledger_entry.created", "--allow-private-webhooks",
			"--description", "creditbench"); err != nil {
			return out, err
		}
		cfg.logf("webhooks, round %d of %d: adjustments with endpoint %s subscribed to ledger_entry.created", round, rounds, created.ID)
		before := received.Load()
		rep, err = runWithCatchUp(ctx, with, &received, before)
		_ = runCreditdJSON(context.WithoutCancel(ctx), cfg.Creditd, nil, "webhook", "delete", "--db", dsn, created.ID)
		if err != nil {
			return out, err
		}
		if r, err = adjustmentsResult(rep); err != nil {
			return out, err
		}
		out.With = append(out.With, r)
		out.Written += r.Durable
		out.Delivered += received.Load() - before
		if at := lastAt.Load(); at > 0 {
			out.CatchUp = max(out.CatchUp, time.Unix(0, at).Sub(rep.finished).Round(time.Millisecond))
		}
	}
	if without := medianThroughput(out.Without); without > 0 {
		out.Ratio = medianThroughput(out.With) / without
	}
	return out, nil
}

func medianThroughput(rs []Result) float64 {
	var t []float64
	for _, r := range rs {
		t = append(t, r.Saturated.Throughput)
	}
	slices.Sort(t)
	if len(t) == 0 {
		return 0
	}
	if len(t)%2 == 1 {
		return t[len(t)/2]
	}
	return (t[len(t)/2-1] + t[len(t)/2]) / 2
}

// runWithCatchUp is Run, keeping the server up after the measurements until the receiver has
// had (since it counted before) as many webhooks as the run acknowledged adjustments and then
// nothing new for half a second (or 60 s passed), so the delivery backlog is measured too.
func runWithCatchUp(ctx context.Context, cfg Config, received *atomic.Int64, before int64) (*Report, error) {
	cfg.beforeStop = func(written uint64) {
		deadline := time.Now().Add(60 * time.Second)
		last, quietSince := received.Load(), time.Now()
		for time.Now().Before(deadline) && ctx.Err() == nil {
			time.Sleep(20 * time.Millisecond)
			n := received.Load()
			if n != last {
				last, quietSince = n, time.Now()
			}
			if uint64(n-before) >= written && time.Since(quietSince) > 500*time.Millisecond {
				return
			}
		}
	}
	return Run(ctx, cfg)
}

func adjustmentsResult(rep *Report) (Result, error) {
	for _, r := range rep.Results {
		if r.Name == "adjustments" {
			if r.Skipped != "" {
				return r, fmt.Errorf("the adjustments scenario was skipped: %s", r.Skipped)
			}
			return r, nil
		}
	}
	return Result{}, fmt.Errorf("the run has no adjustments result")
}

// runCreditdJSON runs a creditd command with --json and decodes its output into v.
func runCreditdJSON(ctx context.Context, binary string, v any, args ...string) error {
	cmd := exec.CommandContext(ctx, binary, append(args, "--json")...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("creditd %s: %v: %s", args[0]+" "+args[1], err, strings.TrimSpace(stderr.String()))
	}
	if v == nil {
		return nil
	}
	return json.Unmarshal(out, v)
}

// WriteMarkdown prints the comparison as a table, a row per run.
func (c *WebhookComparison) WriteMarkdown(w io.Writer) {
	fmt.Fprintf(w, "| round | adjustments (%d in flight) | req/s | p50 | p99 | CPU/req |\n|---|---|---|---|---|---|\n", c.Concurrency)
	for i := range c.With {
		for _, row := range []struct {
			name string
			r    Result
		}{{"no webhook endpoint", c.Without[i]}, {"one endpoint subscribed to ledger_entry.created", c.With[i]}} {
			m := row.r.Saturated
			fmt.Fprintf(w, "| %d | %s | %.0f | %s | %s | %s |\n", i+1, row.name, m.Throughput, m.P50.Round(10*time.Microsecond), m.P99.Round(10*time.Microsecond), m.CPUPerRequest.Round(time.Microsecond))
		}
	}
	verdict := "meets"
	if c.Ratio < 0.9 {
		verdict = "misses"
	}
	fmt.Fprintf(w, "\nMedian with the endpoint: %.1f%% of the median without (%s the issue's 90%%). Webhooks delivered: %d for %d adjustments written in the runs with the endpoint; a run's last webhook arrived at most %s after its load stopped.\n",
		100*c.Ratio, verdict, c.Delivered, c.Written, c.CatchUp)
}
