package bench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"

	"entgo.io/ent/dialect"

	"github.com/creditd/creditd/database"
	"github.com/creditd/creditd/server"
)

// CountQueries runs each scenario's request once through the real handler in this process,
// over a driver that counts SQL statements, and returns the count per scenario (-1 where the
// request failed). It also counts the dashboard query and the payment behaviour query at
// several page sizes, to show whether their cost grows with the number of companies (N+1) or
// stays constant.
func CountQueries(ctx context.Context, dbPath string, ds Dataset, scenarios []Scenario) (counts map[string]int, dashboard, behaviour map[int]int, err error) {
	db, err := database.Open(ctx, dbPath)
	if err != nil {
		return nil, nil, nil, err
	}
	defer db.Close()
	var n atomic.Int64
	counted := db.WithDriver(func(d dialect.Driver) dialect.Driver {
		return dialect.DebugWithContext(d, func(_ context.Context, args ...any) {
			if strings.Contains(fmt.Sprint(args...), "query=") {
				n.Add(1)
			}
		})
	})
	svc := newService(counted, dbPath)
	srv := server.New(server.Config{Service: svc, DB: db, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), RateLimit: 1_000_000})

	run := func(method, path string, header http.Header, body []byte, want int) int {
		// Twice: the first request of a key writes its last-used time, which no later one does.
		for i := 0; ; i++ {
			req := httptest.NewRequestWithContext(ctx, method, path, bytes.NewReader(body))
			req.Header = header
			rec := httptest.NewRecorder()
			n.Store(0)
			srv.ServeHTTP(rec, req)
			if rec.Code != want {
				return -1
			}
			if i == 1 {
				return int(n.Load())
			}
		}
	}
	counts = map[string]int{}
	for _, s := range scenarios {
		method, path, header, body := s.request(1)
		if s.Write {
			// Each write request is new (its own Idempotency-Key), so the second is no replay.
			counts[s.Name] = -1
			for i := uint64(1); i <= 2; i++ {
				method, path, header, body = s.request(i)
				req := httptest.NewRequestWithContext(ctx, method, path, bytes.NewReader(body))
				req.Header = header
				rec := httptest.NewRecorder()
				n.Store(0)
				srv.ServeHTTP(rec, req)
				if rec.Code == s.Status && i == 2 {
					counts[s.Name] = int(n.Load())
				}
			}
			continue
		}
		counts[s.Name] = run(method, path, header, body, s.Status)
	}
	dashboard, behaviour = map[int]int{}, map[int]int{}
	for _, first := range []int{1, 10, 50, 250} {
		h := http.Header{"Authorization": {"Bearer " + ds.Secret}, "Content-Type": {"application/json"}}
		if c := run(http.MethodPost, "/graphql", h, DashboardBody(first, 5), http.StatusOK); c >= 0 {
			dashboard[first] = c
		}
		if c := run(http.MethodPost, "/graphql", h, BehaviourBody(first), http.StatusOK); c >= 0 {
			behaviour[first] = c
		}
	}
	return counts, dashboard, behaviour, nil
}
