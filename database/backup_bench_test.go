package database_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mattn/go-sqlite3"

	"github.com/creditd/creditd/database"
)

// BenchmarkBackupMethods compares the two ways SQLite copies a database while a writer
// writes (issue 41): VACUUM INTO, which creditd backup uses, and the online backup API
// (sqlite3_backup) both in one step and stepped 100 pages at a time as backup tools do. Each
// copies the database at CREDITD_BENCH_BACKUP_DB (creditbench's seeded bench-full.db; the file
// is copied first and never written) while one writer commits small transactions as fast as it
// can through creditd's own pool (WAL, synchronous=FULL). It reports the copy's time, the
// writer's commits a second and its slowest commit during the copy, and, for the stepped API,
// how many times the writer made it start over. A copy still running after a minute is
// reported as starved.
//
//	go run ./cmd/creditbench --only company --duration 1s   # seeds <tmp>/creditbench/bench-full.db once
//	CREDITD_BENCH_BACKUP_DB=/tmp/creditbench/bench-full.db go test ./database -run '^$' -bench BackupMethods -benchtime 1x
func BenchmarkBackupMethods(b *testing.B) {
	src := os.Getenv("CREDITD_BENCH_BACKUP_DB")
	if src == "" {
		b.Skip("set CREDITD_BENCH_BACKUP_DB to a seeded SQLite database (creditbench's bench-full.db)")
	}
	dir := b.TempDir()
	live := filepath.Join(dir, "live.db")
	if err := database.Backup(context.Background(), src, live); err != nil {
		b.Fatal(err)
	}
	for _, method := range []string{"vacuum-into", "backup-api-one-step", "backup-api-stepped"} {
		b.Run(method, func(b *testing.B) {
			for i := range b.N {
				out := filepath.Join(dir, fmt.Sprintf("%s-%d.db", method, i))
				copied, restarts, starved, writer := copyUnderWriter(b, live, out, method)
				if starved {
					b.ReportMetric(1, "starved")
				}
				b.ReportMetric(copied.Seconds(), "s/copy")
				b.ReportMetric(writer.perSecond, "writes/s")
				b.ReportMetric(float64(writer.slowest.Microseconds())/1000, "ms-slowest-write")
				b.ReportMetric(float64(restarts), "restarts")
				os.Remove(out)
			}
		})
	}
}

type writerFigures struct {
	perSecond float64
	slowest   time.Duration
}

// copyUnderWriter copies live to out by method while a writer commits to live.
func copyUnderWriter(b *testing.B, live, out, method string) (time.Duration, int, bool, writerFigures) {
	ctx := context.Background()
	w, err := database.Open(ctx, live)
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	if _, err := w.SQL.ExecContext(ctx, "CREATE TABLE IF NOT EXISTS bench_backup_writes (id INTEGER PRIMARY KEY, at TEXT, pad TEXT)"); err != nil {
		b.Fatal(err)
	}
	stop := make(chan struct{})
	var writes atomic.Int64
	var slowest atomic.Int64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			t0 := time.Now()
			if _, err := w.SQL.ExecContext(ctx, "INSERT INTO bench_backup_writes (at, pad) VALUES (?, zeroblob(600))", t0.String()); err != nil {
				b.Error(err)
				return
			}
			d := int64(time.Since(t0))
			for s := slowest.Load(); d > s && !slowest.CompareAndSwap(s, d); s = slowest.Load() {
			}
			writes.Add(1)
		}
	}()
	time.Sleep(500 * time.Millisecond) // the writer at its pace
	writes.Store(0)
	slowest.Store(0)
	start := time.Now()
	restarts, starved := 0, false
	cctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	switch method {
	case "vacuum-into":
		src, err := sql.Open("sqlite3", "file:"+live+"?mode=rw&_busy_timeout=10000")
		if err != nil {
			b.Fatal(err)
		}
		if _, err := src.ExecContext(cctx, "VACUUM INTO ?", out); err != nil {
			b.Error(err)
		}
		src.Close()
	default:
		restarts, starved = onlineBackup(b, cctx, live, out, method == "backup-api-stepped")
	}
	copied := time.Since(start)
	close(stop)
	wg.Wait()
	return copied, restarts, starved, writerFigures{perSecond: float64(writes.Load()) / copied.Seconds(), slowest: time.Duration(slowest.Load())}
}

// onlineBackup copies with sqlite3_backup: all pages in one step, or 100 pages a step with a
// millisecond between steps, counting the restarts (the remaining page count going up).
func onlineBackup(b *testing.B, ctx context.Context, live, out string, stepped bool) (restarts int, starved bool) {
	srcDB, err := sql.Open("sqlite3", "file:"+live+"?mode=rw&_busy_timeout=10000")
	if err != nil {
		b.Fatal(err)
	}
	defer srcDB.Close()
	dstDB, err := sql.Open("sqlite3", "file:"+out)
	if err != nil {
		b.Fatal(err)
	}
	defer dstDB.Close()
	srcConn, err := srcDB.Conn(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer srcConn.Close()
	dstConn, err := dstDB.Conn(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer dstConn.Close()
	err = dstConn.Raw(func(d any) error {
		return srcConn.Raw(func(s any) error {
			bk, err := d.(*sqlite3.SQLiteConn).Backup("main", s.(*sqlite3.SQLiteConn), "main")
			if err != nil {
				return err
			}
			defer bk.Finish()
			pages := 100
			if !stepped {
				pages = -1
			}
			lastRemaining := -1
			for {
				done, err := bk.Step(pages)
				if err != nil {
					return err
				}
				if done {
					return nil
				}
				if r := bk.Remaining(); lastRemaining >= 0 && r > lastRemaining {
					restarts++
				} else {
					lastRemaining = r
				}
				if ctx.Err() != nil {
					return errStarved
				}
				time.Sleep(time.Millisecond)
			}
		})
	})
	if err == errStarved {
		return restarts, true
	}
	if err != nil {
		b.Error(err)
	}
	return restarts, false
}

var errStarved = errors.New("starved")
