package credit_test

import (
	"syscall"
	"testing"
	"time"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
)

// BenchmarkCreateAdjustment is the domain's half of POST /v1/companies/{id}/adjustments: one
// adjustment an iteration, on a SQLite file (a PostgreSQL schema under
// CREDITD_TEST_BACKEND=postgres). ns/op includes the wait for each commit's fsync; cpu-ns/op
// is this process's CPU time (user and system) an adjustment, the figure to compare (on
// PostgreSQL it leaves out the server's). On a shared machine both vary by ±15% between runs;
// an instruction count is steadier (BENCHMARKS.md, issue 27's write path).
func BenchmarkCreateAdjustment(b *testing.B) {
	env := credittest.NewService(b)
	st := env.MustStore(b, "Bench", "EUR")
	c := env.MustCompany(b, st, "Buyer", "1000000")
	key := ctxKey(st)
	note := "goodwill"
	amounts := []credit.AmountInput{credit.Amount("12.34"), credit.Amount("-5.67")}
	b.ReportAllocs()
	cpu := processCPU(b)
	b.ResetTimer()
	for i := range b.N {
		if _, err := env.Service.Ledger.CreateAdjustment(key, credit.AdjustmentInput{CompanyID: c.ID, Amount: amounts[i%2], Note: &note}); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(processCPU(b)-cpu)/float64(b.N), "cpu-ns/op")
}

// processCPU is the CPU time the process has used, user and system.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
