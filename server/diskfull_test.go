package server_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
	"github.com/creditd/creditd/server"
)

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
	var logs credittest.LogBuffer
	f := newPlatformFixture(t, func(c *server.Config) { c.Logger = slog.New(slog.NewJSONHandler(&logs, nil)) })
	env := f.env
	limitPages(t, env, 3)
	note := strings.Repeat("n", 450)
	n := 0
	write := func(i int) *credittest.Response {
		return env.Do(t, credittest.Request{Method: "POST", Path: "/v1/companies/" + f.company.ID + "/adjustments", Key: f.key,
			Header: map[string]string{"Idempotency-Key": fmt.Sprintf("fill-%d", i)},
			Body:   map[string]string{"amount": "1.00", "note": fmt.Sprintf("%d %s", i, note)}})
	}
	// untilFull sends writes of one transport until one is refused: each answer is a success or
	// the full-disk 503 (a refused write's freed claim may leave room for a small one after it).
	untilFull := func(what string, send func(i int) *credittest.Response, ok int) (refused int) {
		t.Helper()
		for range 300 {
			n++
			r := send(n)
			switch r.Status {
			case ok:
				if strings.Contains(string(r.Body), "internal_error") || strings.Contains(string(r.Body), "unavailable") {
					t.Fatalf("%s %d: %d %s", what, n, r.Status, r.Body)
				}
			case http.StatusServiceUnavailable:
				wantDiskFull(t, what, r)
				return n
			default:
				t.Fatalf("%s %d: %d %s", what, n, r.Status, r.Body)
			}
		}
		t.Fatalf("%s: the file never filled", what)
		return 0
	}
	refused := untilFull("REST write", write, http.StatusCreated)
	untilFull("GraphQL write", func(i int) *credittest.Response {
		return env.Do(t, credittest.Request{Method: "POST", Path: "/graphql", Key: f.key, Body: map[string]any{
			"query":     `mutation($c: ID!, $n: String!) { createAdjustment(input: {companyId: $c, amount: "1.00", note: $n}) { ledgerEntry { id } } }`,
			"variables": map[string]string{"c": f.company.ID, "n": fmt.Sprintf("%d %s", i, note)}}})
	}, http.StatusOK)
	untilFull("platform door", func(i int) *credittest.Response {
		return f.deliver(t, f.shop, f.secret, credit.TopicOrderCreated, fmt.Sprintf("full-%d", i), orderBody(1000+i, gid42, ptr(14), "1.00"))
	}, http.StatusOK)
	if r := env.Get(t, f.key, "/v1/companies/"+f.company.ID); r.Status != http.StatusOK {
		t.Errorf("a read on a full disk: %d %s", r.Status, r.Body)
	}

	// A retry with the key of a refused write runs again (it is not locked out by a 409): on
	// a disk still full it is refused the same way, or it fits.
	if r := write(refused); r.Status != http.StatusServiceUnavailable && r.Status != http.StatusCreated {
		t.Errorf("a retry on a full disk: %d %s", r.Status, r.Body)
	} else if r.Status == http.StatusServiceUnavailable {
		wantDiskFull(t, "a retry", r)
	} else {
		refused = -1
	}
	// /readyz after a refused write says why it is not ready.
	last := untilFull("REST write", write, http.StatusCreated)
	if refused < 0 {
		refused = last
	}
	wantDiskFull(t, "/readyz", env.Get(t, "", "/readyz"))

	// Logged at most once a minute, however many answers it cost (the limit is the process's:
	// another test may have logged it already).
	if n := strings.Count(logs.String(), "database disk full"); n > 1 {
		t.Errorf("the full disk was logged %d times within a minute", n)
	}
	if strings.Contains(logs.String(), "internal error") {
		t.Errorf("an internal error was logged: %s", logs.String())
	}

	limitPages(t, env, 10000)
	// /readyz trusts a commit a second after the last refusal (a refused write's clean-up
	// commits right after it).
	time.Sleep(1100 * time.Millisecond)
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
	// REST's error object, or GraphQL's extensions.code.
	code := r.ErrorCode() == "unavailable" || strings.Contains(string(r.Body), `"code":"unavailable"`)
	if r.Status != http.StatusServiceUnavailable || r.Header.Get("Retry-After") == "" || !code || !strings.Contains(string(r.Body), "disk is full") {
		t.Errorf("%s on a full disk: %d Retry-After %q %s", what, r.Status, r.Header.Get("Retry-After"), r.Body)
	}
}
