package bench

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/database"
	"github.com/creditd/creditd/ent/invoice"
	"github.com/creditd/creditd/server"
	"github.com/creditd/creditd/tenant"
)

// BenchmarkScenarios runs the read scenarios in this process through the real handler (no
// network, no load generator), for CPU profiles of creditd's own work while developing:
//
//	go test ./bench -run '^$' -bench Scenarios -cpuprofile cpu.out
//
// It uses the dataset seeded by creditbench in $CREDITBENCH_WORK (bench-full.db, seeded with
// `go run ./cmd/creditbench --work DIR --reseed`), or seeds the tiny one when that is unset.
func BenchmarkScenarios(b *testing.B) {
	// Cancellable, as net/http's request contexts are: drivers behave differently for them.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	path, ds, db := benchDatabase(ctx, b)
	srv := server.New(server.Config{Service: newService(db, path), DB: db, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), RateLimit: 1_000_000_000})
	for _, s := range Scenarios(ds, "inprocess") {
		if s.Write {
			continue
		}
		b.Run(s.Name, func(b *testing.B) {
			b.ReportAllocs()
			var n uint64
			start := cpuTime()
			defer func() { b.ReportMetric(float64((cpuTime()-start).Microseconds())/float64(b.N), "cpu-µs/op") }()
			for b.Loop() {
				n++
				method, path, header, body := s.request(n)
				req := httptest.NewRequestWithContext(ctx, method, path, bytes.NewReader(body))
				req.Header = header
				rec := httptest.NewRecorder()
				srv.ServeHTTP(rec, req)
				if rec.Code != s.Status {
					b.Fatalf("%s: status %d: %s", s.Name, rec.Code, rec.Body)
				}
			}
		})
	}
}

// cpuTime is the CPU time (user and system) this process has used: on a shared machine a
// steadier measure than the wall time per operation.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkStoreFigures measures the store's payment figures (Reports.StoreBehaviour, summed by
// the database) against the way the company's figures are made, reading every invoice paid in
// the window into the process and summing there in decimals (without even the cancellation
// check the real figures make), on the large store of the dataset; and the DSO alone
// (Reports.StoreDSO), which the overview shows:
//
//	CREDITBENCH_WORK=DIR go test ./bench -run '^$' -bench StoreFigures
func BenchmarkStoreFigures(b *testing.B) {
	ctx := context.Background()
	path, ds, db := benchDatabase(ctx, b)
	svc := newService(db, path)
	staff := tenant.Staff(ctx, ds.StoreID, "bench")
	var paid int
	b.Run("database", func(b *testing.B) {
		b.ReportAllocs()
		start := cpuTime()
		for b.Loop() {
			sb, err := svc.Reports.StoreBehaviour(staff, credit.BehaviourWindowDays)
			if err != nil {
				b.Fatal(err)
			}
			paid = sb.InvoicesPaid
		}
		b.ReportMetric(float64((cpuTime()-start).Microseconds())/float64(b.N), "cpu-µs/op")
		b.ReportMetric(float64(paid), "invoices")
	})
	b.Run("dso-alone", func(b *testing.B) {
		b.ReportAllocs()
		start := cpuTime()
		for b.Loop() {
			if _, err := svc.Reports.StoreDSO(staff); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64((cpuTime()-start).Microseconds())/float64(b.N), "cpu-µs/op")
	})
	b.Run("read-into-go", func(b *testing.B) {
		b.ReportAllocs()
		start := cpuTime()
		for b.Loop() {
			now := time.Now()
			rows, err := db.Client.Invoice.Query().
				Where(invoice.StoreID(ds.StoreID), invoice.Open(false), invoice.SettledAtGT(now.Add(-365*24*time.Hour)), invoice.SettledAtLTE(now)).
				Select(invoice.FieldAmount, invoice.FieldDueAt, invoice.FieldSettledAt).All(staff)
			if err != nil {
				b.Fatal(err)
			}
			var sum, weighted, onTime decimal.Decimal
			for _, r := range rows {
				sum = sum.Add(r.Amount)
				weighted = weighted.Add(r.Amount.Mul(decimal.NewFromInt(r.SettledAt.Sub(r.DueAt).Microseconds())))
				if !r.SettledAt.After(r.DueAt) {
					onTime = onTime.Add(r.Amount)
				}
			}
			paid = len(rows)
		}
		b.ReportMetric(float64((cpuTime()-start).Microseconds())/float64(b.N), "cpu-µs/op")
		b.ReportMetric(float64(paid), "invoices")
	})
}

// benchDatabase opens the dataset seeded by creditbench in $CREDITBENCH_WORK (bench-full.db),
// skipping the benchmark when there is none there, or seeds the tiny one when that is unset;
// the database closes with the benchmark.
func benchDatabase(ctx context.Context, b *testing.B) (string, Dataset, *database.DB) {
	b.Helper()
	var (
		path string
		ds   Dataset
	)
	if dir := os.Getenv("CREDITBENCH_WORK"); dir != "" {
		path = filepath.Join(dir, "bench-full.db")
		var ok bool
		if ds, ok = LoadDataset(path, FullSize); !ok {
			b.Skipf("no full dataset in %s", dir)
		}
	} else {
		path = filepath.Join(b.TempDir(), "bench.db")
		var err error
		if ds, err = Seed(ctx, path, TinySize); err != nil {
			b.Fatal(err)
		}
	}
	db, err := database.Open(ctx, path)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	return path, ds, db
}
