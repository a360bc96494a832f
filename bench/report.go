package bench

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// Targets of issue #8.
const (
	targetBaselineShare  = 0.40 // scenario 1 throughput / baseline
	targetHalfLoadP99    = 5 * time.Millisecond
	targetLedgerCost     = 1.5         // 1M-entry page cost / 10k-entry page cost
	targetDashboardShare = 0.25        // scenario 4 throughput / scenario 3
	targetWrites         = 1000.0      // durable writes per second
	targetPeakRSS        = 150_000_000 // bytes (150 MB)
)

func ms(d time.Duration) string {
	if d == 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f", float64(d)/float64(time.Millisecond))
}

func us(d time.Duration) string { return fmt.Sprintf("%.0f", float64(d)/float64(time.Microsecond)) }

func mb(b int64) string { return fmt.Sprintf("%.0f", float64(b)/1e6) }

func (r *Report) result(name string) (Result, bool) {
	for _, res := range r.Results {
		if res.Name == name && res.Skipped == "" {
			return res, true
		}
	}
	return Result{}, false
}

// WriteMarkdown writes the report as the tables of BENCHMARKS.md.
func (r *Report) WriteMarkdown(w io.Writer) {
	c := r.Config
	fmt.Fprintf(w, "Run %s; load average before %s, after %s.\n", r.Started.Format(time.RFC3339), r.LoadBefore, r.LoadAfter)
	fmt.Fprintf(w, "Each run: %s warm-up, then %s saturated with %d requests in flight, then %s at a constant rate of half the saturated throughput; the baseline is saturated the same way.\n\n",
		c.Warmup, c.Duration, c.Concurrency, c.Duration)
	db, cpu, pgColumn, pgAlign := "SQLite", "CPU µs/req", "", ""
	if r.Postgres {
		db, pgAlign = "PostgreSQL", "---:|"
		if r.BackendCPU {
			cpu, pgColumn = "CPU µs/req (creditd + PostgreSQL)", " of which PostgreSQL µs/req |"
		} else {
			cpu, pgColumn = "CPU µs/req (creditd alone)", " PostgreSQL µs/req |"
		}
	}
	if r.Postgres {
		db = fmt.Sprintf("PostgreSQL %s, schema %s", r.PostgresVersion, r.Schema)
	}
	fmt.Fprintf(w, "Database: %s.\n\n", db)
	fmt.Fprintf(w, "| Scenario | req/s | p50 ms | p99 ms | %s |%s ½-load req/s | ½-load p50 ms | ½-load p99 ms | baseline req/s | baseline CPU µs/req | share of baseline | peak RSS MB | SQL/req |\n", cpu, pgColumn)
	fmt.Fprintf(w, "|---|---:|---:|---:|---:|%s---:|---:|---:|---:|---:|---:|---:|---:|\n", pgAlign)
	for _, res := range r.Results {
		if res.Skipped != "" {
			fmt.Fprintf(w, "| %s | skipped: %s |||||||||||| \n", res.Title, strings.ReplaceAll(res.Skipped, "|", "/"))
			continue
		}
		share := "–"
		if res.Baseline.Throughput > 0 {
			share = fmt.Sprintf("%.0f%%", 100*res.Saturated.Throughput/res.Baseline.Throughput)
		}
		errs := ""
		if n := res.Saturated.Errors + res.Half.Errors; n > 0 {
			errs = fmt.Sprintf(" (%d errors: %s)", n, res.Saturated.FirstError+res.Half.FirstError)
		}
		pgCell := ""
		if r.Postgres {
			pgCell = " – |"
			if r.BackendCPU {
				pgCell = " " + us(res.Saturated.BackendCPUPerRequest) + " |"
			}
		}
		fmt.Fprintf(w, "| %s%s | %.0f | %s | %s | %s |%s %.0f | %s | %s | %.0f | %s | %s | %s | %s |\n", res.Title, errs,
			res.Saturated.Throughput, ms(res.Saturated.P50), ms(res.Saturated.P99), us(res.Saturated.CPUPerRequest), pgCell,
			res.Half.Throughput, ms(res.Half.P50), ms(res.Half.P99),
			res.Baseline.Throughput, us(res.Baseline.CPUPerRequest), share, mb(res.PeakRSS), queries(res.Queries))
	}
	if r.Postgres && !r.BackendCPU {
		fmt.Fprintf(w, "\nPostgreSQL's CPU time is not in the CPU figures: %s.\n", r.BackendCPUMissing)
	}
	fmt.Fprintln(w)
	for _, q := range []struct {
		name   string
		counts map[int]int
	}{{"Dashboard", r.DashboardQueries}, {"Payment behaviour", r.BehaviourQueries}} {
		if len(q.counts) == 0 {
			continue
		}
		fmt.Fprintf(w, "%s SQL statements by page size:", q.name)
		for _, first := range []int{1, 10, 50, 250} {
			if n, ok := q.counts[first]; ok {
				fmt.Fprintf(w, " %d companies → %d;", first, n)
			}
		}
		fmt.Fprintln(w)
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w, "| Target | Measured | Met |")
	fmt.Fprintln(w, "|---|---|---|")
	check := func(name, measured string, ok bool) {
		mark := "no"
		if ok {
			mark = "yes"
		}
		fmt.Fprintf(w, "| %s | %s | %s |\n", name, measured, mark)
	}
	if s1, ok := r.result("company"); ok && s1.Baseline.Throughput > 0 {
		share := s1.Saturated.Throughput / s1.Baseline.Throughput
		check("1: ≥ 40% of baseline throughput", fmt.Sprintf("%.0f / %.0f = %.0f%%", s1.Saturated.Throughput, s1.Baseline.Throughput, 100*share), share >= targetBaselineShare)
		check("1: p99 < 5 ms at half load", fmt.Sprintf("%s ms at %.0f/s", ms(s1.Half.P99), s1.Half.Rate), s1.Half.P99 > 0 && s1.Half.P99 < targetHalfLoadP99)
	}
	big, okBig := r.result("ledger-big")
	medium, okMedium := r.result("ledger-medium")
	if okBig && okMedium && big.Saturated.Throughput > 0 {
		cost := medium.Saturated.Throughput / big.Saturated.Throughput
		p50 := float64(big.Half.P50) / float64(max(1, medium.Half.P50))
		check("2: big-ledger page ≤ 1.5× the cost of the medium one", fmt.Sprintf("throughput %.2f×, ½-load p50 %.2f×", cost, p50), cost <= targetLedgerCost && p50 <= targetLedgerCost)
	}
	s3, ok3 := r.result("companies")
	s4, ok4 := r.result("dashboard")
	if ok3 && ok4 && s3.Saturated.Throughput > 0 {
		share := s4.Saturated.Throughput / s3.Saturated.Throughput
		check("4: ≥ 25% of scenario 3's throughput", fmt.Sprintf("%.0f / %.0f = %.0f%%", s4.Saturated.Throughput, s3.Saturated.Throughput, 100*share), share >= targetDashboardShare)
	}
	if len(r.DashboardQueries) > 1 {
		constant := true
		var first int
		for _, n := range r.DashboardQueries {
			if first == 0 {
				first = n
			}
			constant = constant && n == first
		}
		check("4: SQL statements per request constant", fmt.Sprintf("%v", r.DashboardQueries), constant)
	}
	// Payment behaviour (issue 38): at most twice the cost, in CPU per request, of the same
	// page without it (scenario 4) and of the receivables without the store's figures
	// (scenario 6); scenario 1, one company, for scale.
	cpuRatio := func(a, b Result) float64 {
		return float64(a.Saturated.CPUPerRequest) / float64(max(1, b.Saturated.CPUPerRequest))
	}
	if s9, ok := r.result("behaviour"); ok {
		if s4, ok := r.result("dashboard"); ok {
			ratio := cpuRatio(s9, s4)
			check("9: payment behaviour of 50 companies ≤ 2× the dashboard page's CPU", fmt.Sprintf("%s / %s µs = %.2f×", us(s9.Saturated.CPUPerRequest), us(s4.Saturated.CPUPerRequest), ratio), ratio <= 2)
		}
		if s1, ok := r.result("company"); ok {
			fmt.Fprintf(w, "| 9: (for scale) against one company's GET | %s / %s µs = %.1f× | – |\n", us(s9.Saturated.CPUPerRequest), us(s1.Saturated.CPUPerRequest), cpuRatio(s9, s1))
		}
	}
	if s10, ok := r.result("store-behaviour"); ok {
		if s6, ok := r.result("receivables"); ok {
			ratio := cpuRatio(s10, s6)
			check("10: the store's figures ≤ 2× the receivables' CPU", fmt.Sprintf("%s / %s µs = %.2f×", us(s10.Saturated.CPUPerRequest), us(s6.Saturated.CPUPerRequest), ratio), ratio <= 2)
		}
	}
	if len(r.BehaviourQueries) > 1 {
		constant := true
		first := -1
		for _, n := range r.BehaviourQueries {
			if first < 0 {
				first = n
			}
			constant = constant && n == first
		}
		check("9: SQL statements per request constant", fmt.Sprintf("%v", r.BehaviourQueries), constant)
	}
	if s5, ok := r.result("adjustments"); ok {
		check("5: ≥ 1,000 durable writes/s", fmt.Sprintf("%.0f/s (%d entries found after the server stopped)", s5.Saturated.Throughput, s5.Durable), s5.Saturated.Throughput >= targetWrites)
	}
	check("peak RSS < 150 MB throughout", fmt.Sprintf("%s MB (%s MB after start)", mb(r.PeakRSS), mb(r.StartRSS)), r.PeakRSS < targetPeakRSS)
	if r.PostGraphile != nil {
		fmt.Fprintln(w)
		r.PostGraphile.WriteMarkdown(w)
	}
}

// WriteMarkdown writes the comparison as BENCHMARKS.md's table: each round, then the mean
// with the range of the rounds.
func (c *Comparison) WriteMarkdown(w io.Writer) {
	fmt.Fprintf(w, "Scenario 4 side by side with PostGraphile %s (Node %s), interleaved creditd, PostGraphile, creditd, …; the same first 50 companies, figures, holds and newest 5 entries in both answers.\n\n",
		c.PostGraphileVersion, c.NodeVersion)
	cpu := "CPU µs/req (server + PostgreSQL)"
	if !c.BackendCPU {
		cpu = "CPU µs/req (server alone)"
	}
	fmt.Fprintf(w, "| Round | creditd req/s | creditd %s | of which PostgreSQL | PostGraphile req/s | PostGraphile %s | of which PostgreSQL |\n", cpu, cpu)
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|")
	for i := range c.Creditd {
		a, b := c.Creditd[i], c.PostGraphile[i]
		backendA, backendB := us(a.BackendCPUPerRequest), us(b.BackendCPUPerRequest)
		if !c.BackendCPU {
			backendA, backendB = "–", "–"
		}
		fmt.Fprintf(w, "| %d | %.0f | %s | %s | %.0f | %s | %s |\n", i+1,
			a.Throughput, us(a.CPUPerRequest), backendA, b.Throughput, us(b.CPUPerRequest), backendB)
	}
	a, b := summarize(c.Creditd), summarize(c.PostGraphile)
	if !c.BackendCPU {
		a.backend, b.backend = "–", "–"
	}
	fmt.Fprintf(w, "| mean (range) | %s | %s | %s | %s | %s | %s |\n", a.throughput, a.cpu, a.backend, b.throughput, b.cpu, b.backend)
	fmt.Fprintln(w)
	if b.meanThroughput > 0 && b.meanCPU > 0 {
		fmt.Fprintf(w, "creditd / PostGraphile: throughput %.2f×, CPU per request %.2f×. Peak RSS: creditd %s MB, PostGraphile %s MB.\n",
			a.meanThroughput/b.meanThroughput, a.meanCPU/b.meanCPU, mb(c.CreditdPeakRSS), mb(c.PostGraphilePeakRSS))
	}
	var errs []string
	for i := range c.Creditd {
		if e := c.Creditd[i].Errors; e > 0 {
			errs = append(errs, fmt.Sprintf("creditd round %d: %d errors (%s)", i+1, e, c.Creditd[i].FirstError))
		}
		if e := c.PostGraphile[i].Errors; e > 0 {
			errs = append(errs, fmt.Sprintf("PostGraphile round %d: %d errors (%s)", i+1, e, c.PostGraphile[i].FirstError))
		}
	}
	if len(errs) > 0 {
		fmt.Fprintf(w, "Errors: %s.\n", strings.Join(errs, "; "))
	}
}

// spread is a side's figures over the rounds, as "mean (min–max)" cells.
type spread struct {
	throughput, cpu, backend string
	meanThroughput, meanCPU  float64
}

func summarize(ms []Measurement) spread {
	if len(ms) == 0 {
		return spread{throughput: "–", cpu: "–", backend: "–"}
	}
	cell := func(get func(Measurement) float64, format string) (string, float64) {
		lo, hi, sum := get(ms[0]), get(ms[0]), 0.0
		for _, m := range ms {
			v := get(m)
			lo, hi, sum = min(lo, v), max(hi, v), sum+v
		}
		mean := sum / float64(len(ms))
		return fmt.Sprintf(format+" ("+format+"–"+format+")", mean, lo, hi), mean
	}
	micro := func(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
	var s spread
	s.throughput, s.meanThroughput = cell(func(m Measurement) float64 { return m.Throughput }, "%.0f")
	s.cpu, s.meanCPU = cell(func(m Measurement) float64 { return micro(m.CPUPerRequest) }, "%.0f")
	s.backend, _ = cell(func(m Measurement) float64 { return micro(m.BackendCPUPerRequest) }, "%.0f")
	return s
}

func queries(n int) string {
	if n < 0 {
		return "–"
	}
	return fmt.Sprint(n)
}
