package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/creditd/creditd/credittest"
	"github.com/creditd/creditd/database"
)

// TestCrashSafety runs `creditd serve` on SQLite under concurrent write load, every write under
// its own Idempotency-Key, and kills it with SIGKILL at random moments, restarting it each
// time. Writes that got no answer before the kill are retried with the same key and body after
// the restart, until they get one. After every kill the database must pass PRAGMA
// integrity_check with balances equal to ledger sums; at the end, every write that was
// acknowledged, and every write that was retried, is in the database exactly once, with its
// timeline event, and a retry of an acknowledged write replays its answer. CRASH_KILLS sets the
// number of kills (default 50); RELIABILITY_SEED replays a run.
func TestCrashSafety(t *testing.T) {
	credittest.RequireSQLite(t)
	if testing.Short() {
		t.Skip("kills a real server repeatedly; skipped with -short")
	}
	kills := 50
	if v, err := strconv.Atoi(os.Getenv("CRASH_KILLS")); err == nil && v > 0 {
		kills = v
	}
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("RELIABILITY_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	t.Logf("seed %d (RELIABILITY_SEED=%d replays it)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	bin, err := instancesBinary()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	db := filepath.Join(dir, "crash.db")
	secret, companies := newLoadDatabase(t, bin, db, "Crash Test")

	c := &crashRun{t: t, secret: secret, writes: map[string]*crashWrite{}, client: &http.Client{Timeout: 10 * time.Second}}
	start := time.Now()
	for cycle := 0; cycle <= kills; cycle++ {
		p := startCreditd(t, bin, dir, "serve", "--db", db, "--addr", "127.0.0.1:0", "--rate-limit", "1000000")
		c.base = "http://" + p.waitForListening(t)
		// Writes left unanswered by the last kill are retried first, with their keys.
		c.retryPending()
		if cycle == kills {
			c.replayAcknowledged(rng)
			p.stop(t)
			break
		}
		stopLoad := make(chan struct{})
		var wg sync.WaitGroup
		for w := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				wrng := rand.New(rand.NewPCG(seed, uint64(cycle*10+w+1)))
				for n := 0; ; n++ {
					select {
					case <-stopLoad:
						return
					default:
					}
					c.send(c.newWrite(wrng, companies, fmt.Sprintf("c%d-w%d-%d", cycle, w, n)))
				}
			}()
		}
		time.Sleep(time.Duration(30+rng.IntN(300)) * time.Millisecond)
		if err := p.cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		close(stopLoad)
		go func() {
			for range p.lines {
			}
		}()
		_ = p.cmd.Wait()
		wg.Wait()
		c.kills++
		c.checkDatabase(db, false)
		if t.Failed() {
			t.FailNow()
		}
		c.noUnfinishedClaims(db)
	}
	c.checkDatabase(db, true)
	t.Logf("%d SIGKILLs survived in %s: %d writes (%d answered at once, %d unanswered and retried after a restart, of which %d had committed and replayed), %d replays of answered writes checked",
		c.kills, time.Since(start).Round(time.Millisecond), len(c.writes), c.ackedFirstTry, c.retried, c.committedUnanswered, c.replays)
	if c.retried == 0 {
		t.Errorf("no write was cut off by a kill: the test did not exercise retries")
	}
}

// newLoadDatabase makes the database at db, through the command line as an operator would, with
// a store named name, a key for reading and writing credit (its secret returned) and three
// companies to write to: the set-up of the tests that run writers against a real serve.
func newLoadDatabase(t *testing.T, bin, db, name string) (secret string, companies []string) {
	t.Helper()
	runCLI(t, bin, "migrate", "--db", db)
	st := runCLI(t, bin, "store", "create", "--db", db, "--name", name, "--currency", "EUR")["id"].(string)
	secret = runCLI(t, bin, "key", "create", "--db", db, "--store", st, "--label", "loader", "--scopes", "read_credit,write_credit")["secret"].(string)
	for i := range 3 {
		companies = append(companies, runCLI(t, bin, "company", "create", "--db", db, "--store", st, "--name", fmt.Sprintf("Buyer %d", i),
			"--platform-company-gid", fmt.Sprintf("gid://platform/Company/%d", i+1), "--payment-terms", "NET_30", "--credit-limit", "5000.00")["id"].(string))
	}
	return secret, companies
}

// crashWrite is one write and what became of it.
type crashWrite struct {
	key, method, path, body string
	// kind is "adjustment", "limit", "hold" or "lift"; note is what identifies it in the data.
	kind, note, amount string
	// status and answer are the final answer; zero while unanswered.
	status int
	answer []byte
	// retried says the first attempt got no answer.
	retried bool
	// answeredAt is when the answer came.
	answeredAt time.Time
}

type crashRun struct {
	t      *testing.T
	base   string
	secret string
	client *http.Client

	mu                                     sync.Mutex
	writes                                 map[string]*crashWrite
	order                                  []string
	kills, ackedFirstTry, retried, replays int
	committedUnanswered                    int
}

func (c *crashRun) newWrite(rng *rand.Rand, companies []string, name string) *crashWrite {
	co := companies[rng.IntN(len(companies))]
	w := &crashWrite{key: "crash-" + name, note: "crash " + name}
	switch n := rng.IntN(10); {
	case n < 6:
		w.kind, w.method, w.path = "adjustment", "POST", "/v1/companies/"+co+"/adjustments"
		w.amount = decimal.New(int64(rng.IntN(20000)-10000)|1, -2).String()
		w.body = fmt.Sprintf(`{"amount":%q,"note":%q}`, w.amount, w.note)
	case n < 8:
		w.kind, w.method, w.path = "limit", "PUT", "/v1/companies/"+co+"/credit-limit"
		w.amount = decimal.New(int64(rng.IntN(1000000)), -2).String()
		w.body = fmt.Sprintf(`{"amount":%q,"reason":%q}`, w.amount, w.note)
	case n < 9:
		w.kind, w.method, w.path = "hold", "POST", "/v1/companies/"+co+"/hold"
		w.body = fmt.Sprintf(`{"note":%q}`, w.note)
	default:
		w.kind, w.method, w.path = "lift", "DELETE", "/v1/companies/"+co+"/hold"
	}
	c.mu.Lock()
	c.writes[w.key] = w
	c.order = append(c.order, w.key)
	c.mu.Unlock()
	return w
}

// startWriters runs n writers, each sending random writes to c's server one after the other
// (rand seeded with the writer's number and seed), until stop closes; wait waits for them.
func (c *crashRun) startWriters(n int, seed uint64, companies []string, stop <-chan struct{}) (wait func()) {
	var wg sync.WaitGroup
	for w := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), seed))
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				c.send(c.newWrite(rng, companies, fmt.Sprintf("w%d-%d", w, i)))
			}
		}()
	}
	return wg.Wait
}

// do sends w once; it returns an error when no answer came (the server died).
func (c *crashRun) do(w *crashWrite) (status int, replayed bool, body []byte, err error) {
	req, err := http.NewRequest(w.method, c.base+w.path, strings.NewReader(w.body))
	if err != nil {
		return 0, false, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.secret)
	req.Header.Set("Idempotency-Key", w.key)
	if w.body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return 0, false, nil, err
	}
	defer resp.Body.Close()
	body, err = io.ReadAll(resp.Body)
	if err != nil {
		return 0, false, nil, err
	}
	return resp.StatusCode, resp.Header.Get("Idempotent-Replayed") == "true", body, nil
}

// send makes a write's first attempt; an attempt cut off by the kill leaves it pending.
func (c *crashRun) send(w *crashWrite) {
	status, _, body, err := c.do(w)
	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil {
		w.retried = true
		return
	}
	if status >= 500 {
		c.t.Errorf("%s %s: %d %s", w.method, w.path, status, body)
	}
	w.status, w.answer, w.answeredAt = status, body, time.Now()
	c.ackedFirstTry++
}

// retryPending retries every unanswered write with its key and body until it is answered.
func (c *crashRun) retryPending() {
	c.mu.Lock()
	var pending []*crashWrite
	for _, k := range c.order {
		if w := c.writes[k]; w.status == 0 {
			pending = append(pending, w)
		}
	}
	c.mu.Unlock()
	for _, w := range pending {
		status, replayed, body, err := c.do(w)
		if err != nil {
			c.t.Fatalf("retry of %s: %v", w.key, err)
		}
		if replayed {
			c.committedUnanswered++
		}
		if status >= 500 || strings.Contains(string(body), "idempotency_key_in_use") {
			c.t.Errorf("retry of %s %s %s: %d %s", w.key, w.method, w.path, status, body)
		}
		w.status, w.answer = status, body
		c.retried++
	}
}

// replayAcknowledged re-sends a sample of answered writes and checks each is a replay of the
// answer the client already has.
func (c *crashRun) replayAcknowledged(rng *rand.Rand) {
	for _, k := range c.order {
		w := c.writes[k]
		if rng.IntN(4) != 0 || w.status >= 400 && !strings.Contains(string(w.answer), "hold_") {
			continue
		}
		status, replayed, body, err := c.do(w)
		if err != nil || !replayed || status != w.status || string(body) != string(w.answer) {
			c.t.Errorf("retry of acknowledged %s: %v replayed=%v %d %s; first answer %d %s", w.key, err, replayed, status, body, w.status, w.answer)
		}
		c.replays++
	}
}

// noUnfinishedClaims checks that the kill left no unfinished idempotency claim: on SQLite,
// whose writers take turns, a key is looked up and recorded in its write's own transaction
// (credit's runInTurn), so a kill leaves the key either completed with its write or untouched,
// and a retry runs or replays at once. (A claim committed ahead of its write, as PostgreSQL's
// is, would answer idempotency_key_in_use until its one-minute lease ended: the takeover
// path, tested in credit and server.)
func (c *crashRun) noUnfinishedClaims(path string) {
	ctx := context.Background()
	d, err := database.Open(ctx, path)
	if err != nil {
		c.t.Fatal(err)
	}
	defer d.Close()
	var n int
	if err := d.SQL.QueryRowContext(ctx, "SELECT count(*) FROM idempotency_records WHERE NOT completed").Scan(&n); err != nil {
		c.t.Fatal(err)
	}
	if n != 0 {
		c.t.Errorf("the kill left %d unfinished idempotency claims", n)
	}
}

// ledgerState is what a database holds of the writes, by the note or reason that identifies
// each: adjustments in the ledger (notes, with their amounts) and timeline events by kind.
type ledgerState struct {
	notes, events map[string]int
	amounts       map[string]string
}

// present reports how often w is in the data: its ledger entries and events for an adjustment,
// its events for a credit limit or a hold, -1 for a lift (which leaves no note to count).
func (s ledgerState) present(w *crashWrite) (n int, ok bool) {
	switch w.kind {
	case "adjustment":
		n = s.notes[w.note]
		return n, s.events["adjustment|"+w.note] == n && (n == 0 || decimalEqual(s.amounts[w.note], w.amount))
	case "limit", "hold":
		return s.events[w.kind+"|"+w.note], true
	}
	return -1, true
}

// checkDatabase opens the database the killed server left and checks it. With final, every
// write has its answer and must be in the data exactly as often as its answer says.
func (c *crashRun) checkDatabase(path string, final bool) {
	t := c.t
	ctx := context.Background()
	d, state := c.checkInvariants(path)
	defer d.Close()
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, k := range c.order {
		w := c.writes[k]
		if w.status == 0 {
			if final {
				t.Errorf("%s was never answered", w.key)
			}
			continue
		}
		// An answered write is in the data once if it succeeded, else not at all.
		want := 0
		if w.status < 300 {
			want = 1
		}
		if n, ok := state.present(w); n >= 0 && (n != want || !ok) {
			t.Errorf("after kill %d: %s %s (answered %d, retried %v): %d times in the data (ledger entries %d of amount %s, events %d), want %d of %s",
				c.kills, w.kind, w.key, w.status, w.retried, n, state.notes[w.note], state.amounts[w.note], state.events[w.kind+"|"+w.note], want, w.amount)
		}
	}
	if final {
		var n, open int
		if err := d.SQL.QueryRowContext(ctx, "SELECT count(*), coalesce(sum(CASE WHEN completed THEN 0 ELSE 1 END), 0) FROM idempotency_records").Scan(&n, &open); err != nil {
			t.Fatal(err)
		}
		if n != len(c.writes) || open != 0 {
			t.Errorf("idempotency records: %d (%d unfinished), want %d, all finished", n, open, len(c.writes))
		}
	}
}

// checkInvariants opens the database at path and checks what holds whatever writes it has:
// SQLite's integrity check, every company's outstanding equal to the sum of its ledger and its
// ledger_seq to its entries' count, gapless sequences, each adjustment once with one event. It
// returns the open database and what it holds of the writes.
func (c *crashRun) checkInvariants(path string) (*database.DB, ledgerState) {
	t := c.t
	ctx := context.Background()
	d, err := database.Open(ctx, path)
	if err != nil {
		t.Fatalf("after kill %d: open: %v", c.kills, err)
	}
	var integrity string
	if err := d.SQL.QueryRowContext(ctx, "PRAGMA integrity_check").Scan(&integrity); err != nil || integrity != "ok" {
		t.Fatalf("after kill %d: PRAGMA integrity_check: %q %v", c.kills, integrity, err)
	}
	// Balances equal ledger sums, sequences are gapless.
	rows, err := d.SQL.QueryContext(ctx, "SELECT c.id, c.outstanding, c.ledger_seq, e.seq, e.amount, e.kind, COALESCE(e.note, '') FROM companies c LEFT JOIN ledger_entries e ON e.company_id = c.id ORDER BY c.id, e.seq")
	if err != nil {
		t.Fatal(err)
	}
	type balance struct {
		outstanding string
		seq, n      int64
		sum         decimal.Decimal
	}
	balances := map[string]*balance{}
	notes := map[string]int{}
	amounts := map[string]string{}
	for rows.Next() {
		var id, outstanding string
		var ledgerSeq int64
		var seq *int64
		var amount, kind, note *string
		if err := rows.Scan(&id, &outstanding, &ledgerSeq, &seq, &amount, &kind, &note); err != nil {
			t.Fatal(err)
		}
		b := balances[id]
		if b == nil {
			b = &balance{outstanding: outstanding, seq: ledgerSeq}
			balances[id] = b
		}
		if seq == nil {
			continue
		}
		b.n++
		if *seq != b.n {
			t.Fatalf("after kill %d: %s entry %d has seq %d", c.kills, id, b.n, *seq)
		}
		a, err := decimal.NewFromString(*amount)
		if err != nil {
			t.Fatal(err)
		}
		b.sum = b.sum.Add(a)
		if *kind == "adjustment" {
			notes[*note]++
			amounts[*note] = *amount
		}
	}
	rows.Close()
	for id, b := range balances {
		o, _ := decimal.NewFromString(b.outstanding)
		if !o.Equal(b.sum) || b.seq != b.n {
			t.Fatalf("after kill %d: %s outstanding %s, ledger sum %s, ledger_seq %d of %d entries", c.kills, id, b.outstanding, b.sum, b.seq, b.n)
		}
	}
	for note, n := range notes {
		if n > 1 {
			t.Fatalf("after kill %d: adjustment %q is in the ledger %d times", c.kills, note, n)
		}
	}
	// Timeline events, by the note or reason that identifies each write.
	events := map[string]int{}
	adjustmentEvents := 0
	rows, err = d.SQL.QueryContext(ctx, "SELECT type, data FROM timeline_events")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var typ string
		var data []byte
		if err := rows.Scan(&typ, &data); err != nil {
			t.Fatal(err)
		}
		var v struct {
			Note   *string `json:"note"`
			Reason *string `json:"reason"`
		}
		_ = json.Unmarshal(data, &v)
		switch typ {
		case "adjustment_created":
			adjustmentEvents++
			events["adjustment|"+deref(v.Note)]++
		case "credit_limit_changed":
			events["limit|"+deref(v.Reason)]++
		case "hold_placed":
			events["hold|"+deref(v.Note)]++
		}
	}
	rows.Close()
	if len(notes) != adjustmentEvents {
		t.Fatalf("after kill %d: %d adjustments in the ledger, %d adjustment events", c.kills, len(notes), adjustmentEvents)
	}
	return d, ledgerState{notes: notes, events: events, amounts: amounts}
}

func decimalEqual(a, b string) bool {
	x, err1 := decimal.NewFromString(a)
	y, err2 := decimal.NewFromString(b)
	return errors.Join(err1, err2) == nil && x.Equal(y)
}
