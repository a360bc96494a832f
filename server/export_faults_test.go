package server_test

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
	"github.com/creditd/creditd/database"
	"github.com/creditd/creditd/ids"
	"github.com/creditd/creditd/server"
)

// The database lost under an export (contract §18): the stream ends without export_end, which
// tells the client to start again, and the export's lock and snapshot go with it, so that the
// next try runs to its end at once rather than meeting 409 export_in_progress until the
// export's 30 minutes are over.

// TestExportDatabaseFailsMidStream: the snapshot's reads fail once the companies are streamed
// (as a disk that fails, or a server that goes away, fails them): the client reads the header
// and the companies and then the end of the response, without export_end; the next export, on
// the same instance, is whole.
func TestExportDatabaseFailsMidStream(t *testing.T) {
	t.Parallel()
	var lost atomic.Bool
	sqlLog := &credittest.SQLLog{Fail: func(statement string) error {
		if lost.Load() && strings.HasPrefix(statement, "SELECT") && strings.Contains(statement, "ledger_entries") {
			return errors.New("disk I/O error")
		}
		return nil
	}}
	logs := &credittest.LogBuffer{}
	env := credittest.New(t, sqlLog.Options(func(c *server.Config) { c.Logger = slog.New(slog.NewJSONHandler(logs, nil)) }))
	st := env.MustStore(t, "Lost", "EUR")
	key := env.MustKey(t, st, "erp", credit.ScopeReadCredit)
	for i := range 5 {
		c := env.MustCompany(t, st, fmt.Sprintf("Company %d", i), "1000.00")
		env.MustRecord(t, order(c.ID, fmt.Sprintf("gid://platform/Order/%d", i+1), "10.00"))
	}

	lost.Store(true)
	resp := openExport(t, env.Server.URL, key, "", nil)
	if resp.StatusCode != 200 {
		t.Fatalf("export: %d", resp.StatusCode)
	}
	lines := readExport(t, resp.Body, nil)
	resp.Body.Close()
	var types []string
	for _, l := range lines {
		types = append(types, l.Type)
	}
	if len(lines) != 6 || lines[0].Type != "export" || lines[5].Type != "company" {
		t.Fatalf("an export whose reads failed after the companies: lines %v, want the header and 5 companies", types)
	}
	// The response said 200: the log says why the stream ended, with the request's ID.
	if l := logs.String(); !strings.Contains(l, `"msg":"export cut"`) || !strings.Contains(l, "disk I/O error") || !strings.Contains(l, `"request_id":"req_`) {
		t.Errorf("the cut export is not in the log:\n%s", l)
	}

	// The lock went with the export: the next one, on the same instance, runs to its end.
	lost.Store(false)
	lines = mustExport(t, env, key, "")
	if got := lines[len(lines)-1].Counts; got["companies"] != 5 || got["ledger_entries"] != 5 || got["invoices"] != 5 {
		t.Fatalf("the export after the failure: counts %v", got)
	}
}

// TestExportPostgresBackendTerminated: the export's own PostgreSQL backend is terminated while
// the export streams to a slow client (pg_terminate_backend, as an administrator, a failover or
// a crashed backend ends it): the stream ends without export_end, and the next export on the
// same instance, whose pool lost that connection, is whole. The lock is held on another of
// the pool's connections, which the export releases itself.
func TestExportPostgresBackendTerminated(t *testing.T) {
	t.Parallel()
	pgURL := credittest.PostgresURL(t)
	ctx := context.Background()
	schemaURL, drop, err := database.ScratchSchema(ctx, pgURL, "t_"+strings.ToLower(ids.Random(12)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(drop)
	db, err := database.Open(ctx, schemaURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	admin, err := sql.Open("pgx", pgURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Close() })

	// The exporting instance names its connections, so that its backends can be found.
	app := "export_" + strings.ToLower(ids.Random(10))
	u, err := url.Parse(schemaURL)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("application_name", app)
	u.RawQuery = q.Encode()
	clock := credittest.NewClock(time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC))
	base := &credittest.Env{ServiceEnv: &credittest.ServiceEnv{DSN: u.String(), DB: db, Service: credit.New(db, credit.Options{Now: clock.Now}), Clock: clock}}
	inst := exportInstance(t, base, 0, 3)

	st := base.MustStore(t, "Terminated", "EUR")
	key := base.MustKey(t, st, "erp", credit.ScopeReadCredit)
	// Enough lines (about 300 KB) that the export waits for its slow client long before it
	// has read the store.
	const companies = 200
	for i := range companies {
		c := base.MustCompany(t, st, fmt.Sprintf("A company with a rather long name to fill the buffers, number %d", i), "1000.00")
		base.MustRecord(t, order(c.ID, fmt.Sprintf("gid://platform/Order/%d", i+1), "10.00"))
	}

	req, _ := http.NewRequest(http.MethodGet, inst.Server.URL+"/v1/export", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := slowClient().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("export: %d", resp.StatusCode)
	}
	r := bufio.NewReader(resp.Body)
	for range 3 {
		if _, err := r.ReadBytes('\n'); err != nil {
			t.Fatal(err)
		}
	}
	// The snapshot is the instance's one backend in a transaction (the lock's connection is
	// idle between its statements).
	var pid int
	waitFor(t, func() bool {
		err := admin.QueryRow(`SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND xact_start IS NOT NULL`, app).Scan(&pid)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			t.Fatal(err)
		}
		return err == nil
	})
	var terminated bool
	if err := admin.QueryRow(`SELECT pg_terminate_backend($1)`, pid).Scan(&terminated); err != nil || !terminated {
		t.Fatalf("pg_terminate_backend(%d): %v %v", pid, terminated, err)
	}
	rest, _ := io.ReadAll(r) // a cut stream ends cleanly or with an error: either way, without export_end
	if bytes.Contains(rest, []byte(`"export_end"`)) {
		t.Fatal("the export ran to its end without its backend")
	}

	// The next export, on the same instance, at once.
	resp2 := openExport(t, inst.Server.URL, key, "", nil)
	defer resp2.Body.Close()
	if resp2.StatusCode != 200 {
		body, _ := io.ReadAll(resp2.Body)
		t.Fatalf("the export after the backend's end: %d %s", resp2.StatusCode, body)
	}
	lines := readExport(t, resp2.Body, nil)
	if end := lines[len(lines)-1]; end.Type != "export_end" || end.Counts["companies"] != companies || end.Counts["ledger_entries"] != companies {
		t.Fatalf("the export after the backend's end: last line %+v", end)
	}
}
