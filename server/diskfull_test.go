package server_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
	"github.com/creditd/creditd/server"
)

// syncBuffer is a log sink safe for concurrent requests.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// limitPages caps the SQLite file of env at its size plus extra pages on every connection of
// its pool (PRAGMA max_page_count is a connection's setting): writes that do not fit fail with
// SQLITE_FULL, exactly as on a full disk, without a file system of its own.
func limitPages(t *testing.T, env *credittest.Env, extra int) {
	t.Helper()
	ctx := context.Background()
	const conns = 4
	env.DB.SQL.SetMaxOpenConns(conns)
	held := make([]interface{ Close() error }, 0, conns)
	for range conns {
		c, err := env.DB.SQL.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var pages int
		if err := c.QueryRowContext(ctx, "PRAGMA page_count").Scan(&pages); err != nil {
			t.Fatal(err)
		}
		if _, err := c.ExecContext(ctx, "PRAGMA max_page_count = "+strconv.Itoa(pages+extra)); err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
	}
	for _, c := range held {
		c.Close()
	}
}

// TestFullDiskAnswers503 fills a size-limited SQLite file under writes: every refused write is
// 503 unavailable with Retry-After and a message that says the disk is full, over REST,
// GraphQL and the platform door, never 500; reads keep working; /readyz says why it is not
// ready; once space is freed, writes work again and /readyz is 200 by itself.
func TestFullDiskAnswers503(t *testing.T) {
	credittest.RequireSQLite(t)
	var logs syncBuffer
	f := newPlatformFixture(t, func(c *server.Config) { c.Logger = slog.New(slog.NewJSONHandler(&logs, nil)) })
	env := f.env
	limitPages(t, env, 3)
	note := strings.Repeat("n", 450)
	full := 0
	refused := -1
	write := func(i int) *credittest.Response {
		return env.Do(t, credittest.Request{Method: "POST", Path: "/v1/companies/" + f.company.ID + "/adjustments", Key: f.key,
			Header: map[string]string{"Idempotency-Key": fmt.Sprintf("fill-%d", i)},
			Body:   map[string]string{"amount": "1.00", "note": fmt.Sprintf("%d %s", i, note)}})
	}
	for i := 0; i < 300 && full < 3; i++ {
		r := write(i)
		switch r.Status {
		case http.StatusCreated:
		case http.StatusServiceUnavailable:
			full++
			if refused < 0 {
				refused = i
			}
			wantDiskFull(t, "REST write", r)
		default:
			t.Fatalf("write %d: %d %s", i, r.Status, r.Body)
		}
	}
	if full == 0 {
		t.Fatal("the file never filled")
	}
	gql := env.Do(t, credittest.Request{Method: "POST", Path: "/graphql", Key: f.key, Body: map[string]any{
		"query":     `mutation($c: ID!, $n: String!) { createAdjustment(input: {companyId: $c, amount: "1.00", note: $n}) { ledgerEntry { id } } }`,
		"variables": map[string]string{"c": f.company.ID, "n": note}}})
	if gql.Status != http.StatusServiceUnavailable || gql.Header.Get("Retry-After") == "" || !strings.Contains(string(gql.Body), `"code":"unavailable"`) {
		t.Errorf("GraphQL write on a full disk: %d %s", gql.Status, gql.Body)
	}
	door := f.deliver(t, f.shop, f.secret, credit.TopicOrderCreated, "full-1", orderBody(77, gid42, ptr(14), "1.00"))
	wantDiskFull(t, "platform door", door)
	if r := env.Get(t, f.key, "/v1/companies/"+f.company.ID); r.Status != http.StatusOK {
		t.Errorf("a read on a full disk: %d %s", r.Status, r.Body)
	}
	ready := env.Get(t, "", "/readyz")
	wantDiskFull(t, "/readyz", ready)

	// Logged at most once a minute, however many answers it cost (the limit is the process's:
	// another test may have logged it already).
	if n := strings.Count(logs.String(), "database disk full"); n > 1 {
		t.Errorf("the full disk was logged %d times within a minute", n)
	}
	if strings.Contains(logs.String(), "internal error") {
		t.Errorf("an internal error was logged: %s", logs.String())
	}

	// A retry with the key of a refused write is refused the same way, not locked out (409).
	wantDiskFull(t, "a retry", write(refused))

	limitPages(t, env, 10000)
	r := write(refused)
	if r.Status != http.StatusCreated || r.Header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("the refused write retried once space is freed: %d %v %s", r.Status, r.Header, r.Body)
	}
	if again := write(refused); again.Header.Get("Idempotent-Replayed") != "true" || string(again.Body) != string(r.Body) {
		t.Fatalf("its next retry: %d %v %s", again.Status, again.Header, again.Body)
	}
	if r := env.Get(t, "", "/readyz"); r.Status != http.StatusOK {
		t.Fatalf("/readyz once a write committed: %d %s", r.Status, r.Body)
	}
}

func wantDiskFull(t *testing.T, what string, r *credittest.Response) {
	t.Helper()
	if r.Status != http.StatusServiceUnavailable || r.Header.Get("Retry-After") == "" || r.ErrorCode() != "unavailable" || !strings.Contains(string(r.Body), "disk is full") {
		t.Errorf("%s on a full disk: %d Retry-After %q %s", what, r.Status, r.Header.Get("Retry-After"), r.Body)
	}
}
