package reliability_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
	"github.com/creditd/creditd/ent/ledgerentry"
	"github.com/creditd/creditd/ent/timelineevent"
)

// TestLedgerInvariantsUnderConcurrentWrites runs many goroutines writing at random through HTTP
// (REST adjustments, limit changes, holds placed and lifted, GraphQL adjustments), with retries
// of one Idempotency-Key sent concurrently and again later, while others record ledger entries
// from the platform side as the command line does (orders, payments, refunds). A checker takes
// consistent snapshots at random moments. At every snapshot and at the end: each company's
// outstanding equals the sum of its ledger, sequence numbers are gapless, and no adjustment sent
// under one key appears twice. At the end: every write acknowledged as freshly applied has
// exactly one timeline event, attributed to its key, and every event has exactly one such write.
// Run with -race; RELIABILITY_SEED replays a run.
func TestLedgerInvariantsUnderConcurrentWrites(t *testing.T) {
	t.Parallel()
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("RELIABILITY_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	t.Logf("seed %d (RELIABILITY_SEED=%d replays it)", seed, seed)
	const workers, opsPerWorker = 8, 150

	env := newEnv(t)
	r := &run{t: t, env: env, client: env.Server.Client(), base: env.Server.URL, orders: map[string][]string{}, applied: map[string]*applied{}}
	for i, cur := range []string{"EUR", "JPY"} {
		st := env.MustStore(t, fmt.Sprintf("store %d", i), cur)
		keys := []string{env.MustKey(t, st, fmt.Sprintf("writer %d-a", i), credit.AllScopes...), env.MustKey(t, st, fmt.Sprintf("writer %d-b", i), credit.AllScopes...)}
		for j := range 3 {
			c := env.MustCompany(t, st, fmt.Sprintf("company %d-%d", i, j), "10000")
			r.companies = append(r.companies, company{id: c.ID, currency: cur, keys: keys, labels: []string{fmt.Sprintf("writer %d-a", i), fmt.Sprintf("writer %d-b", i)}})
			r.applied[c.ID] = &applied{entries: map[string]string{}}
		}
	}

	stop := make(chan struct{})
	checks := make(chan int, 1)
	go func() {
		rng := rand.New(rand.NewPCG(seed, 1))
		n := 0
		defer func() { checks <- n }()
		for {
			select {
			case <-stop:
				return
			case <-time.After(time.Duration(rng.IntN(10)) * time.Millisecond):
			}
			if err := r.checkSnapshot(); err != nil {
				t.Errorf("snapshot %d: %v", n, err)
				return
			}
			n++
		}
	}()
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, uint64(w)+2))
			for op := range opsPerWorker {
				if err := r.randomWrite(rng, fmt.Sprintf("w%d-%d", w, op)); err != nil {
					t.Errorf("worker %d op %d: %v", w, op, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	snapshots := <-checks
	if err := r.checkSnapshot(); err != nil {
		t.Fatalf("final snapshot: %v", err)
	}
	r.checkTimelines()
	t.Logf("%d workers: %d HTTP requests (%d retries of a key), %d platform entries, %d freshly applied API writes, %d snapshots checked mid-run",
		workers, r.requests.Load(), r.retries.Load(), r.platform.Load(), r.fresh.Load(), snapshots)
}

type company struct {
	id, currency string
	keys, labels []string
}

// applied is what the API acknowledged as freshly applied to one company.
type applied struct {
	mu sync.Mutex
	// entries maps each adjustment's ledger entry ID to the label of the key that wrote it.
	entries map[string]string
	// events counts the other writes by "type|label".
	events map[string]int
}

func (a *applied) add(entry, label, event string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if entry != "" {
		a.entries[entry] = label
		return
	}
	if a.events == nil {
		a.events = map[string]int{}
	}
	a.events[event+"|"+label]++
}

type run struct {
	t         *testing.T
	env       *credittest.Env
	client    *http.Client
	base      string
	companies []company

	mu      sync.Mutex
	orders  map[string][]string // company → order GIDs recorded
	applied map[string]*applied

	requests, retries, platform, fresh atomic.Int64
	orderSeq                           atomic.Int64
}

// answer is one HTTP response.
type answer struct {
	status   int
	replayed bool
	body     []byte
}

func (r *run) send(method, path, key, idemKey, body string) (answer, error) {
	r.requests.Add(1)
	req, err := http.NewRequest(method, r.base+path, strings.NewReader(body))
	if err != nil {
		return answer{}, err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if idemKey != "" {
		req.Header.Set("Idempotency-Key", idemKey)
	}
	resp, err := r.client.Do(req)
	if err != nil {
		return answer{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return answer{}, err
	}
	if resp.StatusCode >= 500 {
		return answer{}, fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, b)
	}
	return answer{status: resp.StatusCode, replayed: resp.Header.Get("Idempotent-Replayed") == "true", body: b}, nil
}

// sendWithRetries sends one write; under a key, sometimes as a storm of concurrent copies and
// sometimes again after it finished. It returns every answer.
func (r *run) sendWithRetries(rng *rand.Rand, method, path, key, idemKey, body string) ([]answer, error) {
	copies := 1
	if idemKey != "" && rng.IntN(3) == 0 {
		copies = 2 + rng.IntN(3)
	}
	answers := make([]answer, copies)
	errs := make([]error, copies)
	var wg sync.WaitGroup
	for i := range copies {
		wg.Add(1)
		go func() {
			defer wg.Done()
			answers[i], errs[i] = r.send(method, path, key, idemKey, body)
		}()
	}
	wg.Wait()
	r.retries.Add(int64(copies - 1))
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	if idemKey != "" && rng.IntN(3) == 0 {
		a, err := r.send(method, path, key, idemKey, body)
		if err != nil {
			return nil, err
		}
		r.retries.Add(1)
		answers = append(answers, a)
	}
	return answers, nil
}

// freshOne returns the one answer that applied the write, or nil when none did (a hold
// conflict), checking that copies of one keyed request applied it at most once and that every
// replay repeats the answer that was not a replay, byte for byte.
func freshOne(answers []answer) (*answer, error) {
	var fresh, first *answer
	for i := range answers {
		a := &answers[i]
		if a.replayed || strings.Contains(string(a.body), "idempotency_key_in_use") {
			continue
		}
		if first != nil {
			return nil, fmt.Errorf("one key ran twice: %d %s and %d %s", first.status, first.body, a.status, a.body)
		}
		first = a
		if a.status < 300 {
			fresh = a
		}
	}
	for _, a := range answers {
		if a.replayed && (first == nil || a.status != first.status || string(a.body) != string(first.body)) {
			return nil, fmt.Errorf("a replay differs from the answer it replays: %d %s", a.status, a.body)
		}
	}
	return fresh, nil
}

// randomWrite makes one random write.
func (r *run) randomWrite(rng *rand.Rand, name string) error {
	c := r.companies[rng.IntN(len(r.companies))]
	k := rng.IntN(len(c.keys))
	key, label := c.keys[k], c.labels[k]
	idemKey := ""
	if rng.IntN(2) == 0 {
		idemKey = "key-" + name
	}
	amount := func(sign int) string {
		n := int64(1 + rng.IntN(90000))
		if c.currency == "JPY" {
			return strconv.FormatInt(int64(sign)*n, 10)
		}
		return decimal.New(int64(sign)*n, -2).String()
	}
	co := "/v1/companies/" + c.id
	switch op := rng.IntN(12); {
	case op < 3: // REST adjustment; its note names the key so a double apply shows in the ledger
		body := fmt.Sprintf(`{"amount":%q,"note":"api %s"}`, amount(1-2*rng.IntN(2)), name)
		answers, err := r.sendWithRetries(rng, "POST", co+"/adjustments", key, idemKey, body)
		if err != nil {
			return err
		}
		fresh, err := freshOne(answers)
		if err != nil || fresh == nil {
			return fmt.Errorf("adjustment %s: %v %v", name, err, answers)
		}
		var res credit.AdjustmentResult
		if err := json.Unmarshal(fresh.body, &res); err != nil || fresh.status != http.StatusCreated {
			return fmt.Errorf("adjustment %s: %d %s", name, fresh.status, fresh.body)
		}
		r.fresh.Add(1)
		r.applied[c.id].add(res.LedgerEntry.ID, label, "")
	case op < 4: // GraphQL adjustment, the same write through the other transport
		doc := fmt.Sprintf(`mutation { createAdjustment(input: {companyId: %q, amount: %q, note: "api %s"}) { ledgerEntry { id } } }`, c.id, amount(1), name)
		body, _ := json.Marshal(map[string]string{"query": doc})
		answers, err := r.sendWithRetries(rng, "POST", "/graphql", key, idemKey, string(body))
		if err != nil {
			return err
		}
		fresh, err := freshOne(answers)
		if err != nil || fresh == nil {
			return fmt.Errorf("graphql adjustment %s: %v %v", name, err, answers)
		}
		var res struct {
			Data struct {
				CreateAdjustment struct {
					LedgerEntry struct{ ID string }
				}
			}
			Errors []any
		}
		if err := json.Unmarshal(fresh.body, &res); err != nil || len(res.Errors) > 0 || res.Data.CreateAdjustment.LedgerEntry.ID == "" {
			return fmt.Errorf("graphql adjustment %s: %s", name, fresh.body)
		}
		r.fresh.Add(1)
		r.applied[c.id].add(res.Data.CreateAdjustment.LedgerEntry.ID, label, "")
	case op < 5: // limit change
		body := fmt.Sprintf(`{"amount":%q,"reason":"limit %s"}`, amount(1), name)
		answers, err := r.sendWithRetries(rng, "PUT", co+"/credit-limit", key, idemKey, body)
		if err != nil {
			return err
		}
		fresh, err := freshOne(answers)
		if err != nil || fresh == nil || fresh.status != http.StatusOK {
			return fmt.Errorf("limit %s: %v %v", name, err, answers)
		}
		r.fresh.Add(1)
		r.applied[c.id].add("", label, string(credit.TimelineCreditLimitChanged))
	case op < 7: // hold placed or lifted: conflicts are answers too, but only a 200 applied
		method, event, body := "POST", credit.TimelineHoldPlaced, fmt.Sprintf(`{"note":"hold %s"}`, name)
		if rng.IntN(2) == 0 {
			method, event, body = "DELETE", credit.TimelineHoldLifted, ""
		}
		answers, err := r.sendWithRetries(rng, method, co+"/hold", key, idemKey, body)
		if err != nil {
			return err
		}
		fresh, err := freshOne(answers)
		if err != nil {
			return fmt.Errorf("hold %s: %v", name, err)
		}
		if fresh != nil {
			r.fresh.Add(1)
			r.applied[c.id].add("", label, string(event))
		}
	case op < 8: // the same key with another body is refused, never applied
		if idemKey == "" {
			return nil
		}
		first := fmt.Sprintf(`{"amount":"1","note":"api %s"}`, name)
		a, err := r.send("POST", co+"/adjustments", key, idemKey, first)
		if err != nil || a.status != http.StatusCreated {
			return fmt.Errorf("adjustment %s: %v %d %s", name, err, a.status, a.body)
		}
		var res credit.AdjustmentResult
		_ = json.Unmarshal(a.body, &res)
		r.fresh.Add(1)
		r.applied[c.id].add(res.LedgerEntry.ID, label, "")
		b, err := r.send("POST", co+"/adjustments", key, idemKey, strings.Replace(first, `"1"`, `"2"`, 1))
		if err != nil || b.status != http.StatusUnprocessableEntity || !strings.Contains(string(b.body), "idempotency_key_reused") {
			return fmt.Errorf("reused key %s: %v %d %s", name, err, b.status, b.body)
		}
	default: // platform side, as `creditd ledger record` does
		return r.recordPlatformEntry(rng, c, amount)
	}
	return nil
}

func (r *run) recordPlatformEntry(rng *rand.Rand, c company, amount func(int) string) error {
	r.platform.Add(1)
	r.mu.Lock()
	orders := append([]string(nil), r.orders[c.id]...)
	r.mu.Unlock()
	in := credit.LedgerEntryInput{CompanyID: c.id}
	switch {
	case len(orders) == 0 || rng.IntN(2) == 0:
		in.Kind, in.Amount = credit.KindOrderPlaced, amount(1)
		in.OrderGID = fmt.Sprintf("gid://platform/Order/%d", 1000+r.orderSeq.Add(1))
	case rng.IntN(2) == 0:
		in.Kind, in.Amount = credit.KindPayment, amount(-1)
		if rng.IntN(2) == 0 {
			in.OrderGID = orders[rng.IntN(len(orders))]
		}
	default:
		in.Kind, in.Amount, in.OrderGID = credit.KindRefund, amount(-1), orders[rng.IntN(len(orders))]
	}
	in.Note = "platform " + in.Kind
	store, err := r.env.Service.Stores.OwnerOf(context.Background(), in.CompanyID)
	if err != nil {
		return err
	}
	if _, _, err := r.env.Service.Ledger.Record(credittest.Staff(store), in); err != nil {
		return fmt.Errorf("record %+v: %v", in, err)
	}
	if in.Kind == credit.KindOrderPlaced {
		r.mu.Lock()
		r.orders[c.id] = append(r.orders[c.id], in.OrderGID)
		r.mu.Unlock()
	}
	return nil
}

// checkSnapshot reads every company's balance and ledger in one statement (a consistent
// snapshot on SQLite and PostgreSQL alike while writers run) and checks the balance, the
// sequence, that each entry's balance_after is the sum of its company's entries up to it
// (contract §5, 2026-11-27), and that no API adjustment note (one per Idempotency-Key) appears
// twice.
func (r *run) checkSnapshot() error {
	ctx := context.Background()
	rows, err := r.env.DB.SQL.QueryContext(ctx, `SELECT c.id, c.outstanding, c.ledger_seq, e.seq, e.amount, e.balance_after, e.note
		FROM companies c LEFT JOIN ledger_entries e ON e.company_id = c.id ORDER BY c.id, e.seq`)
	if err != nil {
		return err
	}
	defer rows.Close()
	type balance struct {
		outstanding decimal.Decimal
		seq, n      int64
		sum         decimal.Decimal
	}
	balances := map[string]*balance{}
	notes := map[string]bool{}
	for rows.Next() {
		var id, outstanding string
		var ledgerSeq int64
		var seq sql.NullInt64
		var amount, balanceAfter, note sql.NullString
		if err := rows.Scan(&id, &outstanding, &ledgerSeq, &seq, &amount, &balanceAfter, &note); err != nil {
			return err
		}
		b := balances[id]
		if b == nil {
			o, err := decimal.NewFromString(outstanding)
			if err != nil {
				return err
			}
			b = &balance{outstanding: o, seq: ledgerSeq}
			balances[id] = b
		}
		if !seq.Valid {
			continue
		}
		b.n++
		if seq.Int64 != b.n {
			return fmt.Errorf("%s: entry %d has seq %d", id, b.n, seq.Int64)
		}
		d, err := decimal.NewFromString(amount.String)
		if err != nil {
			return err
		}
		b.sum = b.sum.Add(d)
		after, err := decimal.NewFromString(balanceAfter.String)
		if err != nil {
			return err
		}
		if !after.Equal(b.sum) {
			return fmt.Errorf("%s: entry %d has balance_after %s, the ledger's sum up to it is %s", id, b.n, after, b.sum)
		}
		if strings.HasPrefix(note.String, "api ") {
			if notes[note.String] {
				return fmt.Errorf("%s: %q applied twice", id, note.String)
			}
			notes[note.String] = true
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if len(balances) != len(r.companies) {
		return fmt.Errorf("%d companies in the snapshot, want %d", len(balances), len(r.companies))
	}
	for id, b := range balances {
		if !b.outstanding.Equal(b.sum) || b.seq != b.n {
			return fmt.Errorf("%s: outstanding %s, ledger sum %s; ledger_seq %d, %d entries", id, b.outstanding, b.sum, b.seq, b.n)
		}
	}
	return nil
}

// checkTimelines compares each company's timeline and API adjustments with what the API
// acknowledged as freshly applied: one to one.
func (r *run) checkTimelines() {
	t := r.t
	ctx := credittest.Admin()
	for _, c := range r.companies {
		want := r.applied[c.id]
		events, err := r.env.DB.Client.TimelineEvent.Query().Where(timelineevent.CompanyID(c.id)).All(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]int{}
		gotEntries := map[string]string{}
		for _, ev := range events {
			if ev.Type == string(credit.TimelineLedgerEntryRecorded) {
				// The platform's entries, recorded here as staff, are on the timeline too
				// (issue 31); the ledger's own checks count them.
				continue
			}
			if ev.Type == string(credit.TimelineAdjustmentCreated) {
				id, _ := ev.Data["ledger_entry_id"].(string)
				if _, dup := gotEntries[id]; dup {
					t.Errorf("%s: two adjustment events for entry %s", c.id, id)
				}
				gotEntries[id] = ev.ActorLabel
				continue
			}
			got[ev.Type+"|"+ev.ActorLabel]++
		}
		if fmt.Sprint(got) != fmt.Sprint(want.events) {
			t.Errorf("%s: timeline events %v, acknowledged writes %v", c.id, got, want.events)
		}
		if fmt.Sprint(gotEntries) != fmt.Sprint(want.entries) {
			t.Errorf("%s: adjustment events %v, acknowledged adjustments %v", c.id, gotEntries, want.entries)
		}
		entries, err := r.env.DB.Client.LedgerEntry.Query().Where(ledgerentry.CompanyID(c.id), ledgerentry.KindEQ(ledgerentry.KindAdjustment)).All(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(entries) != len(want.entries) {
			t.Errorf("%s: %d adjustment entries in the ledger, %d acknowledged", c.id, len(entries), len(want.entries))
		}
		for _, e := range entries {
			if _, ok := want.entries[e.ID]; !ok {
				t.Errorf("%s: adjustment %s (%v) in the ledger was never acknowledged", c.id, e.ID, e.Note)
			}
		}
	}
}
