package server_test

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/creditd/creditd/credittest"
	"github.com/creditd/creditd/server"
)

// BenchmarkAdjustmentRequest is POST /v1/companies/{id}/adjustments through the real handler
// (no network, no load generator), each with its own Idempotency-Key, from 8 goroutines over 8
// companies, as creditbench's write scenario sends them: the write path's CPU per request
// for profiles (go test ./server -run '^$' -bench AdjustmentRequest -cpuprofile cpu.out).
// cpu-µs/op is the process's CPU time (user and system) per request.
func BenchmarkAdjustmentRequest(b *testing.B) {
	env := credittest.New(b, credittest.Options{ServerConfig: func(cfg *server.Config) { cfg.RateLimit = 1_000_000_000 }})
	st := env.MustStore(b, "Bench", "EUR")
	key := env.MustKey(b, st, "bench", "read_credit", "write_credit")
	companies := make([]string, 8)
	for i := range companies {
		companies[i] = env.MustCompany(b, st, "Buyer "+strconv.Itoa(i), "100000000").ID
	}
	var n atomic.Int64
	b.ReportAllocs()
	b.SetParallelism(4) // 8 goroutines on 2 cores
	start := rusage()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := n.Add(1)
			req := httptest.NewRequest(http.MethodPost, "/v1/companies/"+companies[i%8]+"/adjustments",
				strings.NewReader(`{"amount":"1.00","note":"bench"}`))
			req.Header.Set("Authorization", "Bearer "+key)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Idempotency-Key", "bench-"+strconv.FormatInt(i, 10))
			rec := httptest.NewRecorder()
			env.Handler.ServeHTTP(rec, req)
			if rec.Code != http.StatusCreated {
				b.Errorf("status %d: %s", rec.Code, rec.Body)
				return
			}
		}
	})
	b.StopTimer()
	b.ReportMetric(float64((rusage()-start).Microseconds())/float64(b.N), "cpu-µs/op")
}

func rusage() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
