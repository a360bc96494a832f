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
	fmt.Fprintln(w, "| Scenario | req/s | p50 ms | p99 ms | CPU µs/req | ½-load req/s | ½-load p50 ms | ½-load p99 ms | baseline req/s | baseline CPU µs/req | share of baseline | peak RSS MB | SQL/req |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
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
		fmt.Fprintf(w, "| %s%s | %.0f | %s | %s | %s | %.0f | %s | %s | %.0f | %s | %s | %s | %s |\n", res.Title, errs,
			res.Saturated.Throughput, ms(res.Saturated.P50), ms(res.Saturated.P99), us(res.Saturated.CPUPerRequest),
			res.Half.Throughput, ms(res.Half.P50), ms(res.Half.P99),
			res.Baseline.Throughput, us(res.Baseline.CPUPerRequest), share, mb(res.PeakRSS), queries(res.Queries))
	}
	fmt.Fprintln(w)
	if len(r.DashboardQueries) > 0 {
		fmt.Fprint(w, "Dashboard SQL statements by page size:")
		for _, first := range []int{1, 10, 50, 250} {
			if n, ok := r.DashboardQueries[first]; ok {
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
	if s5, ok := r.result("adjustments"); ok {
		check("5: ≥ 1,000 durable writes/s", fmt.Sprintf("%.0f/s (%d entries found after the server stopped)", s5.Saturated.Throughput, s5.Durable), s5.Saturated.Throughput >= targetWrites)
	}
	check("peak RSS < 150 MB throughout", fmt.Sprintf("%s MB (%s MB after start)", mb(r.PeakRSS), mb(r.StartRSS)), r.PeakRSS < targetPeakRSS)
}

func queries(n int) string {
	if n < 0 {
		return "–"
	}
	return fmt.Sprint(n)
}
