package server_test

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
	"github.com/creditd/creditd/database"
	"github.com/creditd/creditd/ids"
	"github.com/creditd/creditd/server"
)

// faultDeadline is the instances' --db-timeout in the fault tests: short, so that a stall
// outlasts it within a test's budget.
const faultDeadline = time.Second

// faultLoad is two creditd instances on one PostgreSQL schema, both reaching it through the
// same toxiproxy, and writers that keep sending adjustments under Idempotency-Keys, retrying
// each with its key on 503 and 409 the way docs/idempotency.md tells clients to.
type faultLoad struct {
	// db and svc are the first instance's.
	db        *database.DB
	svc       *credit.Service
	clock     *credittest.Clock
	proxy     *credittest.Proxy
	appName   string
	instances []string
	key       string
	companies []string

	mu       sync.Mutex
	answers  map[int]int // status -> count
	problems []string
	// longest is the longest time a request took.
	longest time.Duration
	// done is when each logical write was acknowledged, by its note.
	done map[string]time.Time

	logs credittest.LogBuffer
}

// skipInPostgresPass skips a fault test in the suite's PostgreSQL pass: it runs on PostgreSQL
// whatever the backend, so the first pass (under -race, where it found a data race) runs it
// already, and CI's time is better spent once.
func skipInPostgresPass(t *testing.T) {
	if credittest.Backend() == "postgres" {
		t.Skip("uses PostgreSQL whatever the backend: it runs in the suite's first pass")
	}
}

// newFaultLoad starts the instances on a schema of its own on the PostgreSQL server at pgURL.
// (It builds them itself rather than with credittest.New: both are alike, on one schema,
// through the proxy.)
func newFaultLoad(t *testing.T, pgURL string) *faultLoad {
	t.Helper()
	ctx := context.Background()
	l := &faultLoad{proxy: credittest.NewProxy(t, credittest.PostgresHost(t, pgURL)), appName: "faults_" + strings.ToLower(ids.Random(10)),
		answers: map[int]int{}, done: map[string]time.Time{}, clock: credittest.NewClock(time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC))}
	schemaURL, drop, err := database.ScratchSchema(ctx, pgURL, "t_"+strings.ToLower(ids.Random(12)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(drop)
	u, err := url.Parse(l.proxy.Through(t, schemaURL))
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("application_name", l.appName)
	u.RawQuery = q.Encode()
	// The instances' logs, for the text of an internal error should one happen.
	logger := slog.New(slog.NewJSONHandler(&l.logs, nil))
	for i := range 2 {
		db, err := database.Open(ctx, u.String())
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			if err := db.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			l.db = db
		}
		db.LimitStatements(faultDeadline)
		svc := credit.New(db, credit.Options{Now: l.clock.Now})
		if i == 0 {
			l.svc = svc
		}
		ts := httptest.NewServer(server.New(server.Config{Service: svc, DB: db, Logger: logger, Now: l.clock.Now, RateLimit: 1_000_000, DBTimeout: faultDeadline}))
		t.Cleanup(func() { ts.Close(); db.Close() })
		l.instances = append(l.instances, ts.URL)
	}
	st, err := l.svc.Stores.Create(credittest.Admin(), "faults", "EUR", credit.DefaultBufferPercent)
	if err != nil {
		t.Fatal(err)
	}
	key, err := l.svc.Keys.Create(credittest.Staff(st.ID), "erp", credit.AllScopes)
	if err != nil {
		t.Fatal(err)
	}
	l.key = key.Secret
	for i := range 3 {
		c, err := l.svc.Companies.Create(credittest.Staff(st.ID), credit.CompanyInput{Name: fmt.Sprintf("c%d", i),
			PlatformCompanyGID: fmt.Sprintf("gid://platform/Company/%d", i+1), PaymentTerms: "NET_30", CreditLimit: "100000.00"})
		if err != nil {
			t.Fatal(err)
		}
		l.companies = append(l.companies, c.ID)
	}
	return l
}

// write sends one logical write until it is acknowledged, alternating instances; it records
// every answer.
func (l *faultLoad) write(ctx context.Context, client *http.Client, writer, n int) {
	note := fmt.Sprintf("fault w%d-%d", writer, n)
	key := "fk-" + strings.ReplaceAll(note, " ", "-")
	body := fmt.Sprintf(`{"amount":"1.00","note":%q}`, note)
	path := "/v1/companies/" + l.companies[n%len(l.companies)] + "/adjustments"
	for attempt := 0; ctx.Err() == nil; attempt++ {
		req, _ := http.NewRequest("POST", l.instances[(writer+attempt)%2]+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+l.key)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", key)
		start := time.Now()
		resp, err := client.Do(req)
		took := time.Since(start)
		l.mu.Lock()
		l.longest = max(l.longest, took)
		if err != nil {
			l.problems = append(l.problems, fmt.Sprintf("%s: %v", note, err))
			l.mu.Unlock()
			time.Sleep(100 * time.Millisecond)
			continue
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		l.answers[resp.StatusCode]++
		switch resp.StatusCode {
		case http.StatusCreated:
			l.done[note] = time.Now()
			l.mu.Unlock()
			return
		case http.StatusServiceUnavailable:
			if resp.Header.Get("Retry-After") == "" || !strings.Contains(string(b), `"unavailable"`) {
				l.problems = append(l.problems, fmt.Sprintf("%s: 503 without Retry-After or code: %s", note, b))
			}
		case http.StatusConflict:
			if !strings.Contains(string(b), "idempotency_key_in_use") {
				l.problems = append(l.problems, fmt.Sprintf("%s: %d %s", note, resp.StatusCode, b))
			}
		default:
			l.problems = append(l.problems, fmt.Sprintf("%s: %d %s", note, resp.StatusCode, b))
		}
		l.mu.Unlock()
		time.Sleep(100 * time.Millisecond)
	}
}

// run starts writers that write until stop is closed, and returns once they all finished their
// last write (ctx bounds the wait).
func (l *faultLoad) run(ctx context.Context, writers int, stop <-chan struct{}) *sync.WaitGroup {
	client := &http.Client{Timeout: 20 * time.Second}
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				l.write(ctx, client, w, n)
			}
		})
	}
	// Readers beside them: a REST read and a GraphQL query, on both instances.
	for r := range 2 {
		wg.Go(func() {
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				l.read(client, r+n)
				time.Sleep(20 * time.Millisecond)
			}
		})
	}
	return &wg
}

// read sends a REST GET or a GraphQL query and records its answer: 200 or 503 with
// Retry-After, and never internal_error.
func (l *faultLoad) read(client *http.Client, n int) {
	base := l.instances[n%2]
	var req *http.Request
	if n%4 < 2 {
		req, _ = http.NewRequest("GET", base+"/v1/companies/"+l.companies[0], nil)
	} else {
		req, _ = http.NewRequest("POST", base+"/graphql", strings.NewReader(`{"query":"{ companies(first: 5) { edges { node { id outstanding { amount } } } } }"}`))
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Authorization", "Bearer "+l.key)
	start := time.Now()
	resp, err := client.Do(req)
	took := time.Since(start)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.longest = max(l.longest, took)
	if err != nil {
		l.problems = append(l.problems, fmt.Sprintf("read: %v", err))
		return
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	l.answers[resp.StatusCode]++
	switch {
	case resp.StatusCode == http.StatusServiceUnavailable && resp.Header.Get("Retry-After") != "" && strings.Contains(string(b), `"unavailable"`):
	case resp.StatusCode == http.StatusOK && !strings.Contains(string(b), "internal_error"):
	default:
		l.problems = append(l.problems, fmt.Sprintf("read %s: %d Retry-After %q %s", req.URL.Path, resp.StatusCode, resp.Header.Get("Retry-After"), b))
	}
}

// finish waits for the writers' last writes: a few seconds after the database is back, each
// must have been acknowledged (a retry locked out of its key is not).
func (l *faultLoad) finish(t *testing.T, wg *sync.WaitGroup, cancel func()) {
	t.Helper()
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()
	select {
	case <-finished:
	case <-time.After(5 * time.Second):
		t.Error("writers were still retrying 5 s after the database was back")
		cancel()
		<-finished
	}
}

// terminateBackends ends every PostgreSQL backend of the instances (as a crash of the server
// process serving them would, mid-transaction for those in one).
func (l *faultLoad) terminateBackends(t *testing.T, admin *sql.DB) int {
	t.Helper()
	var n int
	if err := admin.QueryRow("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = $1", l.appName).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// check asserts what the contract promises after a fault run: no 500 or other unexpected
// answer, no request past its deadline, every write acknowledged and applied exactly once, and
// the last ones within a few seconds of the database's return.
func (l *faultLoad) check(t *testing.T, back time.Time) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, p := range l.problems {
		t.Error(p)
	}
	if l.answers[http.StatusInternalServerError] > 0 {
		t.Errorf("%d answers were 500", l.answers[http.StatusInternalServerError])
	}
	for _, line := range strings.Split(l.logs.String(), "\n") {
		if strings.Contains(line, `"internal error"`) {
			t.Log(line)
		}
	}
	// A request's database work ends at its deadline; what follows (the answer, a release
	// attempt bounded by the same deadline) is quick.
	if l.longest > faultDeadline+time.Second {
		t.Errorf("a request took %v, past its deadline of %v", l.longest, faultDeadline)
	}
	var last time.Time
	for _, at := range l.done {
		if at.After(last) {
			last = at
		}
	}
	if wait := last.Sub(back); wait > 5*time.Second {
		t.Errorf("the last write was acknowledged %v after the database was back", wait)
	}
	// Each acknowledged write is in the ledger exactly once, and nothing else is.
	counts := map[string]int{}
	rows, err := l.db.SQL.Query("SELECT note, count(*) FROM ledger_entries WHERE kind = 'adjustment' GROUP BY note")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var note string
		var n int
		if err := rows.Scan(&note, &n); err != nil {
			t.Fatal(err)
		}
		counts[note] = n
	}
	rows.Close()
	for note := range l.done {
		if counts[note] != 1 {
			t.Errorf("%s is in the ledger %d times", note, counts[note])
		}
	}
	for note, n := range counts {
		if _, ok := l.done[note]; !ok {
			t.Errorf("%s is in the ledger %d times but was never acknowledged", note, n)
		}
	}
	t.Logf("answers %v, %d writes, longest request %v, last acknowledged %v after the database was back", l.answers, len(l.done), l.longest, last.Sub(back).Round(time.Millisecond))
}

// TestPostgresFaultsUnderLoad runs two instances under write load while their PostgreSQL link
// meets every fault in turn: backends terminated mid-transaction, 200 ms of latency, a stall
// longer than the deadline, a cut (connections closed, new ones refused), resets. No answer
// is 500, every 503 has Retry-After, no request outlives its deadline, and every write,
// retried with its key, is applied exactly once within a few seconds of the link's return.
func TestPostgresFaultsUnderLoad(t *testing.T) {
	skipInPostgresPass(t)
	l := newFaultLoad(t, credittest.PostgresURL(t))
	admin, err := sql.Open("pgx", credittest.PostgresURL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	stop := make(chan struct{})
	wg := l.run(ctx, 6, stop)

	time.Sleep(300 * time.Millisecond)
	terminated := 0
	for range 8 {
		terminated += l.terminateBackends(t, admin)
		time.Sleep(60 * time.Millisecond)
	}
	remove := l.proxy.Toxic(t, `{"type":"latency","attributes":{"latency":200}}`)
	time.Sleep(500 * time.Millisecond)
	remove()
	remove = l.proxy.Toxic(t, `{"type":"timeout","attributes":{"timeout":0}}`)
	time.Sleep(faultDeadline + 1500*time.Millisecond)
	remove()
	l.proxy.Cut()
	time.Sleep(time.Second)
	l.proxy.Restore(t)
	remove = l.proxy.Toxic(t, `{"type":"reset_peer","attributes":{"timeout":50}}`)
	time.Sleep(300 * time.Millisecond)
	remove()
	back := time.Now()
	time.Sleep(500 * time.Millisecond)
	close(stop)
	l.finish(t, wg, cancel)
	t.Logf("%d backends terminated", terminated)
	l.check(t, back)
	if l.answers[http.StatusServiceUnavailable] == 0 {
		t.Error("no fault was ever answered 503: the faults missed")
	}
}

// TestPostgresRestartUnderLoad stops a private PostgreSQL server under the same load, in fast
// mode (sessions are told: 57P01) and in immediate mode (it dies without a word: unexpected
// EOF, then connections refused and "the database system is starting up" while it recovers),
// and starts it again: the same guarantees as TestPostgresFaultsUnderLoad.
func TestPostgresRestartUnderLoad(t *testing.T) {
	skipInPostgresPass(t)
	credittest.PostgresURL(t) // PostgreSQL tests run where it is set (CI)
	cluster := credittest.NewPGCluster(t)
	l := newFaultLoad(t, cluster.URL())
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	stop := make(chan struct{})
	wg := l.run(ctx, 6, stop)
	for _, mode := range []string{"fast", "immediate"} {
		time.Sleep(400 * time.Millisecond)
		cluster.Stop(mode)
		time.Sleep(300 * time.Millisecond)
		cluster.Start()
	}
	back := time.Now()
	time.Sleep(500 * time.Millisecond)
	close(stop)
	l.finish(t, wg, cancel)
	l.check(t, back)
	if l.answers[http.StatusServiceUnavailable] == 0 {
		t.Error("no fault was ever answered 503: the restarts missed")
	}
}
