package server_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
)

func TestIdempotentReplay(t *testing.T) {
	f := newWriteFixture(t)
	path := "/v1/companies/" + f.company.ID + "/adjustments"
	send := func(key, body string) *credittest.Response {
		return f.env.Do(t, credittest.Request{Method: "POST", Path: path, Key: f.full, Body: body, Header: map[string]string{"Idempotency-Key": key}})
	}
	first := send("order-77-credit", `{"amount":"-20.00","note":"credit note 77"}`)
	if first.Status != 201 || first.Header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("first: %d %v %s", first.Status, first.Header, first.Body)
	}
	// The same request with its members reordered and spaced differently is the same request.
	again := send("order-77-credit", "{ \"note\": \"credit note 77\",\n \"amount\": \"-20.00\" }")
	if again.Status != 201 || again.Header.Get("Idempotent-Replayed") != "true" || !bytes.Equal(again.Body, first.Body) {
		t.Fatalf("replay: %d %v\n%s\n%s", again.Status, again.Header, again.Body, first.Body)
	}
	if n := f.ledgerCount(t); n != 1 {
		t.Fatalf("replay applied again: %d entries", n)
	}
	if r := send("order-77-credit", `{"amount":"-21.00","note":"credit note 77"}`); r.Status != 422 || r.ErrorCode() != "idempotency_key_reused" {
		t.Fatalf("different body: %d %s", r.Status, r.Body)
	}
	r := f.env.Do(t, credittest.Request{Method: "PUT", Path: "/v1/companies/" + f.company.ID + "/credit-limit", Key: f.full,
		Body: `{"amount":"20.00"}`, Header: map[string]string{"Idempotency-Key": "order-77-credit"}})
	if r.Status != 422 || r.ErrorCode() != "idempotency_key_reused" {
		t.Fatalf("different path: %d %s", r.Status, r.Body)
	}
	// Keys are scoped to the store: another store may use the same key for its own write.
	other := f.env.MustStore(t, "Other", "EUR")
	oc := f.env.MustCompany(t, other, "Theirs", "10.00")
	ok := f.env.MustKey(t, other, "their ERP", credit.ScopeWriteCredit)
	r = f.env.Do(t, credittest.Request{Method: "POST", Path: "/v1/companies/" + oc.ID + "/adjustments", Key: ok,
		Body: `{"amount":"-20.00","note":"credit note 77"}`, Header: map[string]string{"Idempotency-Key": "order-77-credit"}})
	if r.Status != 201 || r.Header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("other store, same key: %d %s", r.Status, r.Body)
	}
	// A key that may not write learns nothing about stored results.
	r = f.env.Do(t, credittest.Request{Method: "POST", Path: path, Key: f.read, Body: `{"amount":"-20.00","note":"credit note 77"}`,
		Header: map[string]string{"Idempotency-Key": "order-77-credit"}})
	if r.Status != 403 {
		t.Fatalf("read key replay: %d %s", r.Status, r.Body)
	}
}

func TestIdempotencyStoresOnlyRanOperations(t *testing.T) {
	f := newWriteFixture(t)
	path := "/v1/companies/" + f.company.ID + "/adjustments"
	hdr := map[string]string{"Idempotency-Key": "fix-typo"}
	// A validation failure is not stored: the corrected retry with the same key runs.
	if r := f.env.Do(t, credittest.Request{Method: "POST", Path: path, Key: f.full, Body: `{"amount":"0","note":"x"}`, Header: hdr}); r.Status != 422 {
		t.Fatalf("invalid: %d %s", r.Status, r.Body)
	}
	if r := f.env.Do(t, credittest.Request{Method: "POST", Path: path, Key: f.full, Body: `{"amount":"5.00","note":"x"}`, Header: hdr}); r.Status != 201 || r.Header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("corrected retry: %d %s", r.Status, r.Body)
	}
	// A business outcome is stored: hold_exists replays even after the hold is gone.
	holdPath := "/v1/companies/" + f.company.ID + "/hold"
	if r := f.env.Do(t, credittest.Request{Method: "POST", Path: holdPath, Key: f.full}); r.Status != 200 {
		t.Fatal(r.Status)
	}
	h2 := map[string]string{"Idempotency-Key": "hold-2"}
	if r := f.env.Do(t, credittest.Request{Method: "POST", Path: holdPath, Key: f.full, Header: h2}); r.ErrorCode() != "hold_exists" {
		t.Fatalf("hold exists: %d %s", r.Status, r.Body)
	}
	if r := f.env.Do(t, credittest.Request{Method: "DELETE", Path: holdPath, Key: f.full}); r.Status != 200 {
		t.Fatal(r.Status)
	}
	r := f.env.Do(t, credittest.Request{Method: "POST", Path: holdPath, Key: f.full, Header: h2})
	if r.ErrorCode() != "hold_exists" || r.Header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("stored hold_exists: %d %v %s", r.Status, r.Header, r.Body)
	}
}

func TestIdempotencyKeyExpires(t *testing.T) {
	f := newWriteFixture(t)
	req := credittest.Request{Method: "POST", Path: "/v1/companies/" + f.company.ID + "/adjustments", Key: f.full,
		Body: `{"amount":"1.00","note":"x"}`, Header: map[string]string{"Idempotency-Key": "daily"}}
	f.env.Do(t, req)
	f.env.Clock.Advance(23 * time.Hour)
	if r := f.env.Do(t, req); r.Header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("within 24 h: %d %s", r.Status, r.Body)
	}
	f.env.Clock.Advance(time.Hour + time.Second)
	n, err := f.env.Service.Maintenance.PurgeIdempotencyRecords(credittest.Admin())
	if err != nil || n != 1 {
		t.Fatalf("purge: %d %v", n, err)
	}
	if r := f.env.Do(t, req); r.Status != 201 || r.Header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("after 24 h: %d %s", r.Status, r.Body)
	}
	if n := f.ledgerCount(t); n != 2 {
		t.Fatalf("entries %d", n)
	}
}

// TestConcurrentRetriesApplyOnce sends 50 identical requests with one key at once: exactly
// one applies; every other one either replays its result or is told the key is in use.
func TestConcurrentRetriesApplyOnce(t *testing.T) {
	f := newWriteFixture(t)
	req := credittest.Request{Method: "POST", Path: "/v1/companies/" + f.company.ID + "/adjustments", Key: f.full,
		Body: `{"amount":"-7.00","note":"retry storm"}`, Header: map[string]string{"Idempotency-Key": "storm"}}
	const n = 50
	var wg sync.WaitGroup
	results := make([]*credittest.Response, n)
	start := make(chan struct{})
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			<-start
			results[i] = f.env.Do(t, req)
		}(i)
	}
	close(start)
	wg.Wait()
	var created []byte
	fresh, replayed, inUse := 0, 0, 0
	for _, r := range results {
		switch {
		case r.Status == 201 && r.Header.Get("Idempotent-Replayed") == "":
			fresh++
			created = r.Body
		case r.Status == 201:
			replayed++
		case r.Status == 409 && r.ErrorCode() == "idempotency_key_in_use":
			inUse++
		default:
			t.Fatalf("unexpected answer %d %s", r.Status, r.Body)
		}
	}
	if fresh != 1 {
		t.Fatalf("%d requests applied (replayed %d, in use %d)", fresh, replayed, inUse)
	}
	for _, r := range results {
		if r.Status == 201 && !bytes.Equal(r.Body, created) {
			t.Fatalf("replay differs:\n%s\n%s", r.Body, created)
		}
	}
	if got := f.ledgerCount(t); got != 1 {
		t.Fatalf("%d ledger entries", got)
	}
	if c := f.companyNow(t); c.Outstanding.Amount != "-7.00" {
		t.Fatalf("outstanding %s", c.Outstanding.Amount)
	}
	if ev := f.timeline(t); len(ev) != 1 {
		t.Fatalf("%d timeline events", len(ev))
	}
	t.Logf("50 concurrent retries: 1 applied, %d replayed, %d told in use", replayed, inUse)
}

func TestRateLimit(t *testing.T) {
	f := newWriteFixture(t)
	other := f.env.MustStore(t, "Other", "EUR")
	otherKey := f.env.MustKey(t, other, "k", credit.ScopeReadCredit)
	second := f.env.MustKey(t, f.storeID, "second key of the same store", credit.ScopeReadCredit)
	start := f.env.Clock.Now()
	for i := 1; i <= 120; i++ {
		key := f.read
		if i%2 == 0 {
			key = second // the limit is per store, not per key
		}
		r := f.env.Get(t, key, "/v1/companies")
		if r.Status != 200 {
			t.Fatalf("request %d: %d %s", i, r.Status, r.Body)
		}
		if r.Header.Get("X-RateLimit-Limit") != "120" || r.Header.Get("X-RateLimit-Remaining") != strconv.Itoa(120-i) {
			t.Fatalf("request %d headers: %v", i, r.Header)
		}
	}
	r := f.env.Get(t, f.read, "/v1/companies")
	if r.Status != http.StatusTooManyRequests || r.ErrorCode() != "rate_limited" || r.Header.Get("Retry-After") == "" || r.Header.Get("X-RateLimit-Remaining") != "0" {
		t.Fatalf("121st: %d %v %s", r.Status, r.Header, r.Body)
	}
	// Writes count too.
	if w := f.env.Do(t, credittest.Request{Method: "POST", Path: "/v1/companies/" + f.company.ID + "/hold", Key: f.full}); w.Status != 429 {
		t.Fatalf("write over the limit: %d", w.Status)
	}
	if o := f.env.Get(t, otherKey, "/v1/companies"); o.Status != 200 {
		t.Fatalf("another store was limited: %d", o.Status)
	}
	// Ops endpoints are never limited.
	if h := f.env.Get(t, "", "/healthz"); h.Status != 200 {
		t.Fatalf("healthz: %d", h.Status)
	}
	// Exactly 120 in any minute (contract §8): nothing more until the first of the 120 is a
	// minute old, and Retry-After says how long that is (a token bucket would admit 2 a second).
	for _, after := range []time.Duration{time.Second, 30 * time.Second, 59 * time.Second} {
		f.env.Clock.Set(start.Add(after))
		r := f.env.Get(t, f.read, "/v1/companies")
		if want := strconv.Itoa(int((time.Minute - after) / time.Second)); r.Status != 429 || r.Header.Get("Retry-After") != want {
			t.Fatalf("%v after the first request: %d, Retry-After %q, want 429 and %s", after, r.Status, r.Header.Get("Retry-After"), want)
		}
	}
	f.env.Clock.Set(start.Add(time.Minute))
	if r := f.env.Get(t, f.read, "/v1/companies"); r.Status != 200 || r.Header.Get("X-RateLimit-Remaining") != "119" {
		t.Fatalf("a minute after the first request: %d %v", r.Status, r.Header)
	}
}

func TestFailedAuthenticationsLimitedPerAddress(t *testing.T) {
	f := newWriteFixture(t)
	for i := 0; i < 30; i++ {
		if r := f.env.Get(t, "ck_guess"+strconv.Itoa(i), "/v1/companies"); r.Status != 401 {
			t.Fatalf("guess %d: %d", i, r.Status)
		}
	}
	r := f.env.Get(t, "ck_guess", "/v1/companies")
	if r.Status != 429 || r.ErrorCode() != "rate_limited" || r.Header.Get("Retry-After") == "" {
		t.Fatalf("31st failure: %d %s", r.Status, r.Body)
	}
	f.env.Clock.Advance(time.Minute)
	if r := f.env.Get(t, f.read, "/v1/companies"); r.Status != 200 {
		t.Fatalf("after a minute: %d %s", r.Status, r.Body)
	}
}

// TestIdempotencyKeyInFlight covers a key claimed by a request that has not finished (here, an
// instance that died mid-write): retries get 409 until the claim's lease runs out, then one
// retry takes the key over and applies the write once.
func TestIdempotencyKeyInFlight(t *testing.T) {
	f := newWriteFixture(t)
	path := "/v1/companies/" + f.company.ID + "/adjustments"
	body := `{"amount":"3.00","note":"n"}`
	// The fingerprint written independently of httpapi: SHA-256 of method, path and the
	// canonical body, NUL-separated. It must never change, or keys stored before an upgrade
	// would refuse their own retries.
	sum := sha256.Sum256([]byte("POST\x00" + path + "\x00" + `{"amount":"3.00","note":"n"}`))
	now := f.env.Clock.Now()
	if err := f.env.DB.Client.IdempotencyRecord.Create().
		SetStoreID(f.storeID).SetKey("inflight").SetFingerprint(hex.EncodeToString(sum[:])).
		SetClaim("dead-instance").SetLockedUntil(now.Add(time.Minute)).SetCreatedAt(now).SetExpiresAt(now.Add(24 * time.Hour)).
		Exec(credittest.Admin()); err != nil {
		t.Fatal(err)
	}
	req := credittest.Request{Method: "POST", Path: path, Key: f.full, Body: body, Header: map[string]string{"Idempotency-Key": "inflight"}}
	if r := f.env.Do(t, req); r.Status != 409 || r.ErrorCode() != "idempotency_key_in_use" {
		t.Fatalf("in flight: %d %s", r.Status, r.Body)
	}
	other := req
	other.Body = `{"amount":"4.00","note":"n"}`
	if r := f.env.Do(t, other); r.Status != 422 || r.ErrorCode() != "idempotency_key_reused" {
		t.Fatalf("in flight, other body: %d %s", r.Status, r.Body)
	}
	f.env.Clock.Advance(time.Minute)
	if r := f.env.Do(t, req); r.Status != 201 || r.Header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("after the lease: %d %s", r.Status, r.Body)
	}
	if r := f.env.Do(t, req); r.Header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("replay after takeover: %d %s", r.Status, r.Body)
	}
	if n := f.ledgerCount(t); n != 1 {
		t.Fatalf("%d entries", n)
	}
}
