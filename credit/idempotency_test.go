package credit_test

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"entgo.io/ent/dialect"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
	"github.com/creditd/creditd/ent/idempotencyrecord"
	"github.com/creditd/creditd/ids"
)

// Idempotency-Key (contract §7), the domain's half: Idempotency.Run runs a write at most once
// per key and replays its stored response; the key is the store's; what is not stored leaves
// the key free for a corrected retry.

// adjusting is a run of Idempotency.Run that makes an adjustment of amount to company and
// answers its error code, or "created", storing what credit.Stored says to store.
func adjusting(env *ruleEnv, company, amount string, runs *atomic.Int32) func(ctx context.Context) ([]byte, bool, error) {
	return func(ctx context.Context) ([]byte, bool, error) {
		runs.Add(1)
		_, err := env.Service.Ledger.CreateAdjustment(ctx, credit.AdjustmentInput{CompanyID: company, Amount: credit.Amount(amount), Note: ptr("n")})
		if err != nil {
			return []byte(credit.CodeOf(err)), credit.Stored(err), nil
		}
		return []byte("created " + amount), true, nil
	}
}

// TestIdempotencyReplays: a completed write's key replays its response without running again,
// whatever the response was; the same key with another request is idempotency_key_reused;
// without a key every call runs; another store's same key is its own.
func TestIdempotencyReplays(t *testing.T) {
	t.Parallel()
	env := newRuleEnv(t, "EUR")
	co := env.MustCompany(t, env.store, "Buyer", "1000.00")
	key := apiKey(env.store, credit.ScopeWriteCredit)
	var runs atomic.Int32
	run := func(ctx context.Context, idem, fingerprint, amount string) (string, bool, error) {
		resp, replayed, err := env.Service.Idempotency.Run(ctx, idem, fingerprint, adjusting(env, co.ID, amount, &runs))
		return string(resp), replayed, err
	}
	resp, replayed, err := run(key, "order-77", "fp-A", "-20.00")
	if err != nil || resp != "created -20.00" || replayed || runs.Load() != 1 {
		t.Fatalf("first: %q %v %v, %d runs", resp, replayed, err, runs.Load())
	}
	for i := range 3 {
		resp, replayed, err = run(key, "order-77", "fp-A", "-20.00")
		if err != nil || resp != "created -20.00" || !replayed || runs.Load() != 1 {
			t.Fatalf("replay %d: %q %v %v, %d runs", i, resp, replayed, err, runs.Load())
		}
	}
	_, _, err = run(key, "order-77", "fp-B", "-21.00")
	wantError(t, "the key with another request", err, credit.CodeIdempotencyKeyReused, "")
	if n := len(env.ledger(t, co.ID)); n != 1 || runs.Load() != 1 {
		t.Errorf("%d entries after %d runs, want one of each", n, runs.Load())
	}
	// Without a key, each call runs.
	for range 2 {
		if resp, replayed, err := run(key, "", "fp-A", "-1.00"); err != nil || replayed || resp != "created -1.00" {
			t.Errorf("without a key: %q %v %v", resp, replayed, err)
		}
	}
	if n := len(env.ledger(t, co.ID)); n != 3 {
		t.Errorf("%d entries, want 3", n)
	}
	// Another store's key of the same name and request runs for that store.
	other := env.MustStore(t, "Other", "EUR")
	theirs := env.MustCompany(t, other, "Theirs", "10.00")
	resp2, replayed, err := env.Service.Idempotency.Run(apiKey(other, credit.ScopeWriteCredit), "order-77", "fp-A", adjusting(env, theirs.ID, "-20.00", &runs))
	if err != nil || replayed || string(resp2) != "created -20.00" || runs.Load() != 4 {
		t.Errorf("another store, the same key: %q %v %v", resp2, replayed, err)
	}
	// A key that may not write learns nothing of a stored result, nor does no one.
	_, _, err = run(apiKey(env.store, credit.ScopeReadCredit, credit.ScopeReadApplications), "order-77", "fp-A", "-20.00")
	wantError(t, "a read-only key", err, credit.CodeInsufficientScope, "")
	_, _, err = run(context.Background(), "order-77", "fp-A", "-20.00")
	wantError(t, "no viewer", err, credit.CodeUnauthenticated, "")
	if runs.Load() != 4 {
		t.Errorf("%d runs, want 4", runs.Load())
	}
}

// TestIdempotencyStoresOnlyDecidedOutcomes: an outcome decided by the data (a success, an
// unknown company, a hold already there, nothing to lift) is stored and replayed; invalid input,
// a response the write does not store and a failure are not: the write is rolled back and the
// key left free, so a corrected retry (even of another request) runs.
func TestIdempotencyStoresOnlyDecidedOutcomes(t *testing.T) {
	t.Parallel()
	env := newRuleEnv(t, "EUR")
	co := env.MustCompany(t, env.store, "Buyer", "1000.00")
	held := env.MustCompany(t, env.store, "Held", "1000.00")
	if _, err := env.Service.Companies.PlaceHold(env.staff, credit.HoldInput{CompanyID: held.ID}); err != nil {
		t.Fatal(err)
	}
	key := apiKey(env.store, credit.ScopeWriteCredit)
	holding := func(company string) func(ctx context.Context) ([]byte, bool, error) {
		return func(ctx context.Context) ([]byte, bool, error) {
			_, err := env.Service.Companies.PlaceHold(ctx, credit.HoldInput{CompanyID: company})
			if err != nil {
				return []byte(credit.CodeOf(err)), credit.Stored(err), nil
			}
			return []byte("held"), true, nil
		}
	}
	boom := errors.New("the write failed")
	for _, tc := range []struct {
		name   string
		run    func(ctx context.Context) ([]byte, bool, error)
		answer string // the first call's response
		err    error  // or error
		stored bool
		writes int // ledger entries of co the first call leaves
	}{
		{"a success", adjusting(env, co.ID, "5.00", new(atomic.Int32)), "created 5.00", nil, true, 1},
		{"an unknown company", adjusting(env, ids.New("co"), "5.00", new(atomic.Int32)), "not_found", nil, true, 0},
		{"a hold already there", holding(held.ID), "hold_exists", nil, true, 0},
		{"a zero adjustment", adjusting(env, co.ID, "0", new(atomic.Int32)), "invalid_amount", nil, false, 0},
		{"a response not stored", func(ctx context.Context) ([]byte, bool, error) {
			if _, err := env.Service.Ledger.CreateAdjustment(ctx, credit.AdjustmentInput{CompanyID: co.ID, Amount: credit.Amount("7.00"), Note: ptr("n")}); err != nil {
				return nil, false, err
			}
			return []byte("not kept"), false, nil
		}, "not kept", nil, false, 0},
		{"a failure after a write", func(ctx context.Context) ([]byte, bool, error) {
			if _, err := env.Service.Ledger.CreateAdjustment(ctx, credit.AdjustmentInput{CompanyID: co.ID, Amount: credit.Amount("9.00"), Note: ptr("n")}); err != nil {
				return nil, false, err
			}
			return nil, false, boom
		}, "", boom, false, 0},
	} {
		idem := "key " + tc.name
		entries := len(env.ledger(t, co.ID))
		resp, replayed, err := env.Service.Idempotency.Run(key, idem, "fp", tc.run)
		if !errors.Is(err, tc.err) || string(resp) != tc.answer || replayed {
			t.Errorf("%s: %q %v %v, want %q %v", tc.name, resp, replayed, err, tc.answer, tc.err)
		}
		if n := len(env.ledger(t, co.ID)) - entries; n != tc.writes {
			t.Errorf("%s: %d entries written, want %d", tc.name, n, tc.writes)
		}
		// Stored: the same request is replayed, another one refused. Not stored: the key is
		// free, and a corrected request runs.
		var runs atomic.Int32
		again := func(ctx context.Context) ([]byte, bool, error) { runs.Add(1); return []byte("ran again"), true, nil }
		if tc.stored {
			resp, replayed, err = env.Service.Idempotency.Run(key, idem, "fp", again)
			if err != nil || !replayed || string(resp) != tc.answer || runs.Load() != 0 {
				t.Errorf("%s, again: %q replayed %v (%v) after %d runs, want %q replayed", tc.name, resp, replayed, err, runs.Load(), tc.answer)
			}
			_, _, err = env.Service.Idempotency.Run(key, idem, "another fp", again)
			wantError(t, tc.name+", another request", err, credit.CodeIdempotencyKeyReused, "")
			continue
		}
		resp, replayed, err = env.Service.Idempotency.Run(key, idem, "another fp", again)
		if err != nil || replayed || string(resp) != "ran again" || runs.Load() != 1 {
			t.Errorf("%s, corrected: %q replayed %v (%v) after %d runs, want it run", tc.name, resp, replayed, err, runs.Load())
		}
	}
}

// TestIdempotencyKeyInUse: while a request holds its key unfinished, a retry is told the key is
// in use (or, where writes take turns, waits and gets the stored answer), a different request is
// told the key was reused, and nothing runs twice; a claim whose holder died is taken over once
// its lease (a minute) ends; a key's result is remembered for the TTL only.
func TestIdempotencyKeyInUse(t *testing.T) {
	t.Parallel()
	env := newRuleEnv(t, "EUR", credittest.Options{ServiceOptions: func(o *credit.Options) { o.IdempotencyTTL = time.Hour }})
	key := apiKey(env.store, credit.ScopeWriteCredit)
	never := func(context.Context) ([]byte, bool, error) {
		t.Error("a run while the key is in use")
		return nil, false, nil
	}

	// A request holding its key while its write runs.
	started, release := make(chan struct{}), make(chan struct{})
	done := make(chan error, 1)
	go func() {
		_, _, err := env.Service.Idempotency.Run(key, "slow", "fp", func(context.Context) ([]byte, bool, error) {
			close(started)
			<-release
			return []byte("slow done"), true, nil
		})
		done <- err
	}()
	<-started
	if credittest.Backend() == "postgres" {
		// Writers run side by side: the retry is answered at once.
		_, _, err := env.Service.Idempotency.Run(key, "slow", "fp", never)
		wantError(t, "a retry while the first runs", err, credit.CodeIdempotencyKeyInUse, "")
		_, _, err = env.Service.Idempotency.Run(key, "slow", "other fp", never)
		wantError(t, "another request while the first runs", err, credit.CodeIdempotencyKeyReused, "")
		close(release)
	} else {
		// SQLite's writes take turns: the retry waits for the first and replays its answer.
		retried := make(chan []byte, 1)
		go func() {
			resp, replayed, err := env.Service.Idempotency.Run(key, "slow", "fp", never)
			if err != nil || !replayed {
				t.Errorf("a retry while the first runs: %q %v %v, want the first's answer replayed", resp, replayed, err)
			}
			retried <- resp
		}()
		time.Sleep(20 * time.Millisecond)
		close(release)
		if resp := <-retried; string(resp) != "slow done" {
			t.Errorf("the retry got %q", resp)
		}
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	// A claim left by a request whose instance died: in use until its lease ends.
	now := env.Clock.Now()
	if err := env.DB.Ent().IdempotencyRecord.Create().SetStoreID(env.store).SetKey("orphan").SetFingerprint("fp").
		SetClaim("dead instance").SetLockedUntil(now.Add(time.Minute)).SetCreatedAt(now).SetExpiresAt(now.Add(time.Hour)).
		Exec(credittest.Admin()); err != nil {
		t.Fatal(err)
	}
	_, _, err := env.Service.Idempotency.Run(key, "orphan", "fp", never)
	wantError(t, "a claim in its lease", err, credit.CodeIdempotencyKeyInUse, "")
	_, _, err = env.Service.Idempotency.Run(key, "orphan", "other fp", never)
	wantError(t, "another request against a claim in its lease", err, credit.CodeIdempotencyKeyReused, "")
	env.Clock.Advance(time.Minute - time.Microsecond)
	_, _, err = env.Service.Idempotency.Run(key, "orphan", "fp", never)
	wantError(t, "a microsecond before the lease ends", err, credit.CodeIdempotencyKeyInUse, "")
	env.Clock.Advance(time.Microsecond)
	resp, replayed, err := env.Service.Idempotency.Run(key, "orphan", "fp", func(context.Context) ([]byte, bool, error) { return []byte("taken over"), true, nil })
	if err != nil || replayed || string(resp) != "taken over" {
		t.Fatalf("when the lease ends: %q %v %v, want the write run", resp, replayed, err)
	}

	// The TTL: replayed until it ends, a fresh key from then.
	stored := env.Clock.Now()
	if _, _, err := env.Service.Idempotency.Run(key, "daily", "fp", func(context.Context) ([]byte, bool, error) { return []byte("first"), true, nil }); err != nil {
		t.Fatal(err)
	}
	env.Clock.Set(stored.Add(time.Hour - time.Microsecond))
	if resp, replayed, err := env.Service.Idempotency.Run(key, "daily", "fp", never); err != nil || !replayed || string(resp) != "first" {
		t.Errorf("just within the TTL: %q %v %v", resp, replayed, err)
	}
	env.Clock.Set(stored.Add(time.Hour))
	if resp, replayed, err := env.Service.Idempotency.Run(key, "daily", "other fp", func(context.Context) ([]byte, bool, error) { return []byte("second"), true, nil }); err != nil || replayed || string(resp) != "second" {
		t.Errorf("when the TTL ends: %q %v %v, want a fresh run", resp, replayed, err)
	}
	if n, err := env.Service.Maintenance.PurgeIdempotencyRecords(t.Context()); err != nil || n != 2 {
		t.Errorf("purge: %d %v, want the two records past their TTL", n, err)
	}
}

// TestIdempotencyRetryStorm: many identical requests with one key at once: exactly one runs,
// every other replays its response or is told the key is in use.
func TestIdempotencyRetryStorm(t *testing.T) {
	t.Parallel()
	env := newRuleEnv(t, "EUR")
	co := env.MustCompany(t, env.store, "Buyer", "1000.00")
	key := apiKey(env.store, credit.ScopeWriteCredit)
	var runs atomic.Int32
	const n = 20
	var wg sync.WaitGroup
	type answer struct {
		resp     []byte
		replayed bool
		err      error
	}
	answers := make([]answer, n)
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			resp, replayed, err := env.Service.Idempotency.Run(key, "storm", "fp", adjusting(env, co.ID, "-7.00", &runs))
			answers[i] = answer{resp, replayed, err}
		})
	}
	close(start)
	wg.Wait()
	fresh, replays, inUse := 0, 0, 0
	for _, a := range answers {
		switch {
		case a.err == nil && !a.replayed && bytes.Equal(a.resp, []byte("created -7.00")):
			fresh++
		case a.err == nil && a.replayed && bytes.Equal(a.resp, []byte("created -7.00")):
			replays++
		case credit.CodeOf(a.err) == credit.CodeIdempotencyKeyInUse:
			inUse++
		default:
			t.Errorf("unexpected answer %q %v %v", a.resp, a.replayed, a.err)
		}
	}
	if fresh != 1 || runs.Load() != 1 {
		t.Errorf("%d applied, %d runs (replayed %d, in use %d), want one", fresh, runs.Load(), replays, inUse)
	}
	if c := env.company(t, co.ID); c.Outstanding.Amount != "-7.00" || len(env.ledger(t, co.ID)) != 1 {
		t.Errorf("outstanding %s after the storm", c.Outstanding.Amount)
	}
}

// TestIdempotentWriteRecord: a write under a key leaves one record, completed with its
// response, its claim's lease and the TTL counted from the request; a replay writes nothing.
// Where writers take turns (SQLite) the look-up, the write and the record are one
// transaction: no claim is committed ahead of the write, since no other write can run beside
// it (issue 40: one commit and one turn of the single writer fewer an idempotent write).
func TestIdempotentWriteRecord(t *testing.T) {
	t.Parallel()
	env := newRuleEnv(t, "EUR", credittest.Options{ServiceOptions: func(o *credit.Options) { o.IdempotencyTTL = time.Hour }})
	co := env.MustCompany(t, env.store, "Buyer", "1000.00")
	key := apiKey(env.store, credit.ScopeWriteCredit)
	var txs atomic.Int32
	counted := env.DB.WithDriver(func(d dialect.Driver) dialect.Driver { return txCounter{d, &txs} })
	svc := credit.New(counted, credit.Options{Now: env.Clock.Now, IdempotencyTTL: time.Hour})
	var runs atomic.Int32

	at := env.Clock.Now()
	resp, replayed, err := svc.Idempotency.Run(key, "once", "fp", adjusting(env, co.ID, "-5.00", &runs))
	if err != nil || replayed || string(resp) != "created -5.00" {
		t.Fatalf("first: %q %v %v", resp, replayed, err)
	}
	if env.DB.WritersTakeTurns() && txs.Load() != 1 {
		t.Errorf("%d transactions for one idempotent write, want 1", txs.Load())
	}
	rec, err := env.DB.Ent().IdempotencyRecord.Query().Where(idempotencyrecord.Key("once")).Only(credittest.Admin())
	if err != nil {
		t.Fatal(err)
	}
	if !rec.Completed || string(rec.Response) != "created -5.00" || rec.Fingerprint != "fp" || rec.StoreID != env.store || len(rec.Claim) != 22 ||
		!rec.CreatedAt.Equal(at) || !rec.LockedUntil.Equal(at.Add(time.Minute)) || !rec.ExpiresAt.Equal(at.Add(time.Hour)) {
		t.Errorf("record %+v, want completed with the response, a 22-character claim, a lease of a minute and the TTL from %s", rec, at)
	}

	txs.Store(0)
	env.Clock.Advance(time.Second)
	resp, replayed, err = svc.Idempotency.Run(key, "once", "fp", adjusting(env, co.ID, "-5.00", &runs))
	if err != nil || !replayed || string(resp) != "created -5.00" || runs.Load() != 1 {
		t.Fatalf("replay: %q %v %v after %d runs", resp, replayed, err, runs.Load())
	}
	after, err := env.DB.Ent().IdempotencyRecord.Query().Where(idempotencyrecord.Key("once")).Only(credittest.Admin())
	if err != nil || !after.LockedUntil.Equal(rec.LockedUntil) || after.Claim != rec.Claim {
		t.Errorf("the replay changed the record: %+v (%v)", after, err)
	}
	if env.DB.WritersTakeTurns() && txs.Load() > 1 {
		t.Errorf("%d transactions for a replay", txs.Load())
	}
	if c := env.company(t, co.ID); c.Outstanding.Amount != "-5.00" {
		t.Errorf("outstanding %s", c.Outstanding.Amount)
	}
}

// txCounter counts the transactions begun through it.
type txCounter struct {
	dialect.Driver
	n *atomic.Int32
}

func (d txCounter) Tx(ctx context.Context) (dialect.Tx, error) {
	d.n.Add(1)
	return d.Driver.Tx(ctx)
}
