package reliability_test

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"github.com/creditd/creditd/httpapi"
	"maps"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/shopspring/decimal"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
	"github.com/creditd/creditd/ent/ledgerentry"
	"github.com/creditd/creditd/rest"
)

// Fuzz targets for every input the API parses, sent through the whole HTTP handler. The
// invariant common to all: no input panics or produces a 5xx (a panic would surface as 500
// internal_error through the server's recovery, or as internal_error inside a GraphQL 200), every
// answer is JSON in the contract's shape, and no answer carries a byte of another store.
// Seeds are the f.Add calls below plus the committed corpora under testdata/fuzz/<FuzzName>/.
// scripts/fuzz.sh runs each target for a bounded time in CI.

// fuzzWorld is the data every fuzz target runs against: the caller's store and another one
// whose canaries must never show.
type fuzzWorld struct {
	env          *credittest.Env
	h            http.Handler
	mine, theirs canaryStore
	// cursorSecret is mine's cursor secret, with which the cursor target signs its payloads.
	cursorSecret []byte
}

func newFuzzWorld(f *testing.F) *fuzzWorld {
	f.Helper()
	env := newEnv(f)
	w := &fuzzWorld{env: env, h: env.Handler, mine: mustCanaryStore(f, env, 0), theirs: mustCanaryStore(f, env, 1)}
	st, err := env.DB.Client.Store.Get(credittest.Admin(), w.mine.id)
	if err != nil {
		f.Fatal(err)
	}
	w.cursorSecret = st.CursorSecret
	return w
}

// expand replaces the placeholders seeds use for IDs that differ in every run.
func (w *fuzzWorld) expand(s string) string {
	return strings.NewReplacer(
		"{co}", w.mine.company, "{co2}", w.mine.company2, "{le}", w.mine.entries[0], "{ev}", w.mine.events[0], "{app}", w.mine.application,
		"{theirco}", w.theirs.company, "{theirle}", w.theirs.entries[0], "{theirev}", w.theirs.events[0], "{theirapp}", w.theirs.application,
	).Replace(s)
}

// checkNoLeak fails when the answer carries a canary of the other store that the request did
// not carry itself (an error may quote the value it refuses).
func (w *fuzzWorld) checkNoLeak(t *testing.T, what string, body []byte, request ...string) {
	t.Helper()
	for _, c := range w.theirs.canaries {
		if !bytes.Contains(body, []byte(c)) || slices.ContainsFunc(request, func(r string) bool { return strings.Contains(r, c) }) {
			continue
		}
		t.Fatalf("%s: answer carries the other store's %q: %s", what, c, body)
	}
}

// writeRoutes lists the /v1 write routes (every method but GET) from the router itself.
func writeRoutes(tb testing.TB) []string {
	tb.Helper()
	var out []string
	for _, rt := range rest.NewWith(rest.Services{}).Routes() {
		if !strings.HasPrefix(rt.Pattern, "GET ") {
			out = append(out, rt.Pattern)
		}
	}
	if len(out) == 0 {
		tb.Fatal("the router lists no write routes")
	}
	return out
}

// notLists are the GET routes not ending in a record ID that return no paged list, and why.
var notLists = map[string]string{
	"GET /v1/export":                           "the store's whole state in one stream, no cursor (contract §18)",
	"GET /v1/companies/{id}/statement":         "one company's statement of account for a period, no cursor (contract §17)",
	"GET /v1/companies/{id}/payment-behaviour": "one company's payment figures over a window, no cursor (contract §17)",
}

// listRoutes lists the /v1 routes that return a list: GET routes not ending in a record ID,
// but those of notLists.
func listRoutes(tb testing.TB) []string {
	tb.Helper()
	var out []string
	for _, rt := range rest.NewWith(rest.Services{}).Routes() {
		if strings.HasPrefix(rt.Pattern, "GET ") && !strings.HasSuffix(rt.Pattern, "{id}") && notLists[rt.Pattern] == "" {
			out = append(out, rt.Pattern)
		}
	}
	if len(out) == 0 {
		tb.Fatal("the router lists no list routes")
	}
	return out
}

// routeTarget splits a pattern into its method and path with {id} replaced.
func routeTarget(pattern, id string) (method, path string) {
	method, path, _ = strings.Cut(pattern, " ")
	return method, strings.ReplaceAll(path, "{id}", id)
}

// writeBodySeeds are bodies for every write: valid ones of each route, and the classic ways a
// JSON body goes wrong.
var writeBodySeeds = []string{
	`{"amount":"10.00","note":"fuzz"}`,
	`{"amount":"-0.01","note":"n","currency":"EUR"}`,
	`{"amount":"99999.00","reason":"r"}`,
	`{"amount":"0","reason":"stop"}`,
	`{"note":"held"}`,
	`{"promised_for":"2026-03-10","note":"after the fair"}`,
	`{"promised_for":"2026-02-30"}`,
	`{"reason":"two crates arrived broken"}`,
	``, `{}`, `null`, `[]`, `""`, `0`, ` `, `{`, `}`, `{"`, `{"amount"`, `{"amount":}`,
	`{"amount":10,"note":"number"}`,
	`{"amount":-1.5e3,"note":"number"}`,
	`{"amount":"1e3","note":"exponent"}`,
	`{"amount":"+1","note":"plus"}`,
	`{"amount":" 1","note":"space"}`,
	`{"amount":"1.","note":"dot"}`,
	`{"amount":".5","note":"dot"}`,
	`{"amount":"-0","note":"minus zero"}`,
	`{"amount":"0.001","note":"too precise"}`,
	`{"amount":"1234567890123456","note":"16 digits"}`,
	`{"amount":"000000000000000000000001.00","note":"zeros"}`,
	`{"amount":"١٢","note":"arabic digits"}`,
	`{"amount":"1","note":"x","amount":"2"}`,
	`{"Amount":"1","note":"x"}`,
	`{"amount":"1","NOTE":"x"}`,
	`{"amount":"1","note":"x","extra":1}`,
	`{"amount":"1","note":"x"} {}`,
	`{"amount":"1","note":"x"}garbage`,
	`{"amount":true,"note":"x"}`,
	`{"amount":{"a":1},"note":"x"}`,
	`{"amount":["1"],"note":"x"}`,
	`{"amount":null,"note":null,"currency":null}`,
	`{"amount":"1","note":"x","currency":"JPY"}`,
	`{"amount":"1","note":"x","currency":"eur"}`,
	`{"amount":"1","note":"x","currency":""}`,
	`{"amount":"1","note":"   "}`,
	`{"amount":"1","note":"\u0000"}`,
	`{"amount":"1","note":"\ud800"}`,
	`{"amount":"1","note":"` + strings.Repeat("é", 501) + `"}`,
	`{"note":"` + strings.Repeat("n", 500) + `"}`,
	"\xef\xbb\xbf{\"note\":\"byte order mark\"}",
	"{\"note\":\"\xff\xfe invalid utf-8\"}",
	`{"note":` + strings.Repeat("[", 200) + strings.Repeat("]", 200) + `}`,
	`{"reason":"r","amount":"-5.00"}`,
	`{"amount":"5","reason":` + strings.Repeat(`"`, 3) + `}`,
}

// FuzzWriteBody sends arbitrary bodies to every write route, on the caller's companies, on
// another store's and on an unknown one. Beyond no 5xx: a success needs a well-formed body and
// echoes exactly the amount sent; another store's company answers exactly like an unknown one
// (never 2xx, never a hold conflict that would reveal it exists).
func FuzzWriteBody(f *testing.F) {
	w := newFuzzWorld(f)
	writes := writeRoutes(f)
	for i := range writes {
		for _, s := range writeBodySeeds {
			f.Add(uint8(i), uint8(0), s)
		}
		f.Add(uint8(i), uint8(4), `{"note":"second company"}`)
		f.Add(uint8(i), uint8(8), `{"amount":"10.00","note":"foreign"}`)
		f.Add(uint8(i), uint8(12), `{"amount":"10.00","reason":"unknown"}`)
		f.Add(uint8(i), uint8(2), `{"note":"no content type"}`)
		f.Add(uint8(i), uint8(3), `{"note":"text/plain"}`)
	}
	unknown := "co_" + strings.Repeat("0", 22)
	f.Fuzz(func(t *testing.T, route, flags uint8, body string) {
		pattern := writes[int(route)%len(writes)]
		target, foreign := w.mine.company, false
		switch flags >> 2 & 3 {
		case 1:
			target = w.mine.company2
		case 2:
			target, foreign = w.theirs.company, true
		case 3:
			target = unknown
		}
		method, path := routeTarget(pattern, target)
		hdr := http.Header{}
		switch flags & 3 {
		case 0:
			hdr.Set("Content-Type", "application/json")
		case 1:
			hdr.Set("Content-Type", "application/json; charset=utf-8")
		case 3:
			hdr.Set("Content-Type", "text/plain")
		}
		rec := serve(w.h, method, path, w.mine.key, hdr, []byte(body))
		what := pattern + " " + strings.ToValidUTF8(body, "?")
		e := checkREST(t, what, rec)
		w.checkNoLeak(t, what, rec.Body.Bytes(), path, body)
		if foreign || target == unknown {
			if rec.Code < 300 || rec.Code == http.StatusConflict || e.Code == string(credit.CodeHoldNotFound) {
				t.Fatalf("%s on a company the key cannot see: %d %s", what, rec.Code, rec.Body)
			}
			return
		}
		if rec.Code >= 300 {
			return
		}
		if trimmed := bytes.TrimSpace([]byte(body)); len(trimmed) > 0 && (!json.Valid(trimmed) || trimmed[0] != '{') {
			t.Fatalf("%s: accepted a body that is not a JSON object: %d %s", what, rec.Code, rec.Body)
		}
		checkAmountEcho(t, what, pattern, body, rec.Body.Bytes())
	})
}

// checkAmountEcho checks that a successful adjustment or limit change applied exactly the
// amount the body sent.
func checkAmountEcho(t *testing.T, what, pattern, body string, resp []byte) {
	t.Helper()
	var in struct {
		Amount *string `json:"amount"`
	}
	if len(strings.TrimSpace(body)) > 0 {
		if err := json.Unmarshal([]byte(body), &in); err != nil {
			t.Fatalf("%s: accepted, but the body does not decode: %v", what, err)
		}
	}
	var out struct {
		LedgerEntry *struct{ Amount credit.Money } `json:"ledger_entry"`
		Company     *struct {
			CreditLimit credit.Money `json:"credit_limit"`
		} `json:"company"`
	}
	if err := json.Unmarshal(resp, &out); err != nil || out.Company == nil {
		t.Fatalf("%s: success without a company: %s", what, resp)
	}
	var got string
	switch {
	case strings.HasSuffix(pattern, "/adjustments"):
		if out.LedgerEntry == nil {
			t.Fatalf("%s: adjustment without its ledger entry: %s", what, resp)
		}
		got = out.LedgerEntry.Amount.Amount
	case strings.HasSuffix(pattern, "/credit-limit"):
		got = out.Company.CreditLimit.Amount
	default:
		return
	}
	if in.Amount == nil {
		t.Fatalf("%s: applied an amount the body did not send: %s", what, resp)
	}
	want, err1 := decimal.NewFromString(*in.Amount)
	have, err2 := decimal.NewFromString(got)
	if err1 != nil || err2 != nil || !want.Equal(have) {
		t.Fatalf("%s: sent amount %q, applied %q", what, *in.Amount, got)
	}
}

// signCursor signs payload as the service signs its cursors (credit/cursor.go), so that the
// fuzzer reaches the code behind the signature check: the payload's decoding and use.
func signCursor(secret []byte, payload string) string {
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte(payload))
	return base64.RawURLEncoding.EncodeToString([]byte(payload)) + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil)[:16])
}

// cursorLists names the list each list route's cursors are signed for (credit/cursor.go), as
// a prefix: filters follow it.
var cursorLists = map[string]string{
	"GET /v1/companies":               "companies|",
	"GET /v1/companies/{id}/ledger":   "ledger|{co}",
	"GET /v1/companies/{id}/invoices": "invoices|{co}|",
	"GET /v1/applications":            "applications|",
	"GET /v1/events":                  "events|",
}

// FuzzListCursor sends arbitrary cursors, and arbitrary other query parameters, to every list
// route. With sign set, the input is a cursor payload that the test signs with the store's
// secret: it reaches past the signature to the payload's fields; tweak then changes one
// character of the signed cursor, which must make it invalid. Unsigned or tweaked cursors must
// all be refused with 400 invalid_parameter naming cursor; nothing may be 5xx; a page lists
// only the store's own records.
func FuzzListCursor(f *testing.F) {
	w := newFuzzWorld(f)
	lists := listRoutes(f)
	payloads := []string{
		`{"l":"companies|","t":1772442000000000,"i":"{co}"}`,
		`{"l":"companies|on_hold","t":1,"i":"co_"}`,
		`{"l":"companies|","t":-9223372036854775808,"i":""}`,
		`{"l":"companies|","t":9223372036854775807,"i":"zzzz"}`,
		`{"l":"companies|","t":1e300}`,
		`{"l":"companies|||2026-03-02T09:00:00.000000Z","t":0}`,
		`{"l":"ledger|{co}","s":2}`,
		`{"l":"invoices|{co}|","s":1}`,
		`{"l":"invoices|{co}|open","s":-1}`,
		`{"l":"ledger|{co}","s":-1}`,
		`{"l":"ledger|{co}","s":9223372036854775807}`,
		`{"l":"ledger|{co}|{le}","s":3}`,
		`{"l":"ledger|{theirco}","s":2}`,
		`{"l":"applications|","t":1772442000000000,"i":"{app}"}`,
		`{"l":"applications|submitted","t":0,"i":"app_"}`,
		`{"l":"applications|","t":"x"}`,
		`{"l":1}`, `{}`, `null`, `[]`, `"s"`, ``, `{"l":"companies|","l":"ledger|{co}"}`,
	}
	cursors := []string{"", "x", ".", "a.b", "eyJsIjoiY29tcGFuaWVzfCJ9.AAAAAAAAAAAAAAAAAAAAAA", strings.Repeat("A", 1100), "=.=", "%00", "eyJsIjoiY29tcGFuaWVzfCJ9"}
	queries := []string{"", "limit=1", "limit=250", "limit=0", "limit=251", "limit=-1", "limit=1e2", "limit=99999999999999999999", "status=on_hold", "status=approved",
		"status=submitted", "status=", "status=ON_HOLD", "updated_since=2026-03-02T09:00:00Z", "updated_since=2026-03-02T09:00:00.123456789%2B14:00",
		"updated_since=0000-01-01T00:00:00Z", "updated_since=9999-12-31T23:59:59Z", "updated_since=yesterday", "after={le}", "after={theirle}", "after=le_",
		"after=", "cursor=x", "limit=1&limit=2", "unknown=1", "limit=1;status=on_hold", "status=%zz", "cursor=%", "a=b=c&&"}
	for i := range lists {
		for _, p := range payloads {
			f.Add(uint8(i), true, p, "", uint16(0))
		}
		for _, c := range cursors {
			f.Add(uint8(i), false, c, "", uint16(0))
		}
		for _, q := range queries {
			f.Add(uint8(i), false, "", q, uint16(0))
			f.Add(uint8(i), true, payloads[0], q, uint16(0))
		}
		for _, tweak := range []uint16{1, 63, 64*5 + 1, 0xffff, 0xffc0, 0xffc1} {
			f.Add(uint8(i), true, payloads[6], "", tweak)
		}
	}
	for _, l := range lists {
		if cursorLists[l] == "" {
			f.Fatalf("list route %q has no entry in cursorLists", l)
		}
	}
	own := map[string]bool{}
	for _, id := range w.mine.allIDs() {
		own[id] = true
	}
	const base64URL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	f.Fuzz(func(t *testing.T, list uint8, sign bool, cursor, query string, tweak uint16) {
		pattern := lists[int(list)%len(lists)]
		_, path := routeTarget(pattern, w.mine.company)
		q, err := url.ParseQuery(w.expand(query))
		if err != nil {
			// Sent as is: a query string that does not parse is refused, never half-read.
			rec, ok := serveRawQuery(w.h, path, w.expand(query), w.mine.key)
			if !ok {
				t.Skip("not a request line net/http accepts")
			}
			what := "GET " + path + "?" + strings.ToValidUTF8(query, "?")
			e := checkREST(t, what, rec)
			w.checkNoLeak(t, what, rec.Body.Bytes(), w.expand(query))
			if rec.Code != http.StatusBadRequest || e.Code != string(credit.CodeInvalidParameter) {
				t.Fatalf("%s: a query string that does not parse gave %d %s", what, rec.Code, rec.Body)
			}
			return
		}
		// With sign and no payload the request is a first page: only the other parameters.
		signed := false
		switch {
		case sign && cursor == "":
		case sign:
			c := signCursor(w.cursorSecret, w.expand(cursor))
			// A tweak changes one character, counted from the end (where the signature is).
			if i := len(c) - 1 - int(tweak>>6)%len(c); tweak != 0 && c[i] != base64URL[tweak&63] {
				c = c[:i] + string(base64URL[tweak&63]) + c[i+1:]
			} else {
				signed = true
			}
			q.Set("cursor", c)
		case cursor != "" || !q.Has("cursor"):
			q.Set("cursor", cursor)
		}
		target := path + "?" + q.Encode()
		rec := serve(w.h, http.MethodGet, target, w.mine.key, nil, nil)
		what := "GET " + strings.ToValidUTF8(target, "?")
		e := checkREST(t, what, rec)
		w.checkNoLeak(t, what, rec.Body.Bytes(), target, w.expand(cursor))
		if rec.Code >= 400 {
			if rec.Code != http.StatusBadRequest || e.Code != string(credit.CodeInvalidParameter) {
				t.Fatalf("%s: want 200 or 400 invalid_parameter, got %d %s", what, rec.Code, rec.Body)
			}
			return
		}
		if q.Has("cursor") && !signed {
			t.Fatalf("%s: an unsigned cursor was accepted: %s", what, rec.Body)
		}
		if signed {
			// A signed cursor is still refused unless it was made for this list.
			var p struct {
				L string `json:"l"`
			}
			want := w.expand(cursorLists[pattern])
			if err := json.Unmarshal([]byte(w.expand(cursor)), &p); err != nil || !strings.HasPrefix(p.L, want) {
				t.Fatalf("%s: a cursor for list %q accepted by %s: %s", what, p.L, path, rec.Body)
			}
		}
		var page struct {
			Data []struct {
				ID string `json:"id"`
			} `json:"data"`
			HasMore    *bool   `json:"has_more"`
			NextCursor *string `json:"next_cursor"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &page); err != nil || page.Data == nil || page.HasMore == nil || *page.HasMore != (page.NextCursor != nil) {
			t.Fatalf("%s: not a list envelope: %s", what, rec.Body)
		}
		for _, item := range page.Data {
			if !own[item.ID] {
				t.Fatalf("%s: lists %s, not one of the store's records: %s", what, item.ID, rec.Body)
			}
		}
	})
}

// contractKey is contract §7's rule for an Idempotency-Key, written out again rather than
// calling the code under test: 1 to 255 printable ASCII characters.
func contractKey(k string) bool {
	if len(k) < 1 || len(k) > 255 {
		return false
	}
	for _, c := range []byte(k) {
		if c < 0x20 || c > 0x7e {
			return false
		}
	}
	return true
}

// FuzzIdempotencyKey sends every write, and GraphQL requests, twice under an arbitrary
// Idempotency-Key, the second time with the body re-indented (the same request to the contract). A key the contract refuses
// is refused both times with nothing written; otherwise a stored outcome replays byte for byte
// with Idempotent-Replayed, and the ledger grows by at most one entry, exactly when the first
// answer was a fresh 201.
func FuzzIdempotencyKey(f *testing.F) {
	w := newFuzzWorld(f)
	writes := writeRoutes(f)
	keys := []string{"order-77-credit", "a", strings.Repeat("k", 255), strings.Repeat("k", 256), "", " padded ", "tab\tinside", "ünïcödé", "\x7f", "\x00",
		"emoji-🙂", "550e8400-e29b-41d4-a716-446655440000", `{"json":"key"}`, "key with spaces", "~!@#$%^&*()_+`-={}|[]\\:\";'<>?,./"}
	bodies := []string{`{"amount":"1.00","note":"idempotent"}`, `{"amount":"250.00","reason":"idem"}`, `{"note":"idem hold"}`, ``, `{"amount":"0","note":"invalid"}`, `{bad json`}
	for i := range writes {
		for _, k := range keys {
			for _, b := range bodies {
				f.Add(uint8(i), k, b)
			}
		}
	}
	// GraphQL applies the header to the whole request (contract §9).
	writes = append(writes, "POST /graphql")
	gqlBodies := []string{
		`{"query":"mutation { createAdjustment(input: {companyId: \"{co}\", amount: \"1.00\", note: \"gql idem\"}) { ledgerEntry { id } } }"}`,
		`{"query":"mutation { a: createAdjustment(input: {companyId: \"{co}\", amount: \"1.00\", note: \"a\"}) { ledgerEntry { id } } b: createAdjustment(input: {companyId: \"{co2}\", amount: \"0\", note: \"b\"}) { ledgerEntry { id } } }"}`,
		`{"query":"mutation { placeHold(input: {companyId: \"{co2}\"}) { company { id } } liftHold(input: {companyId: \"{co2}\"}) { company { id } } }"}`,
		`{"query":"mutation { createAdjustment(input: {companyId: \"{theirco}\", amount: \"1.00\", note: \"x\"}) { ledgerEntry { id } } }"}`,
		`{"query":"mutation M($in: CreateAdjustmentInput!) { createAdjustment(input: $in) { ledgerEntry { id } } }","variables":{"in":{"companyId":"{co}","amount":"2.00","note":"v"}}}`,
		`{"query":"{ __typename }"}`, `{"query":"mutation {"}`, ``,
	}
	for _, k := range keys {
		for _, b := range gqlBodies {
			f.Add(uint8(len(writes)-1), k, b)
		}
	}
	count := func(t *testing.T) int {
		n, err := w.env.DB.Client.LedgerEntry.Query().Where(ledgerentry.CompanyIDIn(w.mine.company, w.mine.company2)).Count(credittest.Admin())
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	f.Fuzz(func(t *testing.T, route uint8, key, body string) {
		if !validHeaderValue(key) {
			t.Skip("net/http refuses this header value before any handler")
		}
		key = strings.Trim(key, " \t") // as net/http's server reads header values
		pattern := writes[int(route)%len(writes)]
		method, path := routeTarget(pattern, w.mine.company)
		hdr := http.Header{"Content-Type": {"application/json"}, "Idempotency-Key": {key}}
		body = w.expand(body)
		again := []byte(body)
		var indented bytes.Buffer
		if json.Indent(&indented, again, "", "\t") == nil {
			again = indented.Bytes()
		}
		before := count(t)
		what := pattern + " key " + strings.ToValidUTF8(key, "?") + " body " + strings.ToValidUTF8(body, "?")
		if path == "/graphql" {
			w.checkGraphQLIdempotency(t, what, key, []byte(body), again, hdr, count)
			return
		}
		first := serve(w.h, method, path, w.mine.key, hdr, []byte(body))
		e1 := checkREST(t, what, first)
		second := serve(w.h, method, path, w.mine.key, hdr, again)
		e2 := checkREST(t, what+" (retry)", second)
		delta := count(t) - before
		if !contractKey(key) {
			if e1.Param != "Idempotency-Key" || e2.Param != "Idempotency-Key" || delta != 0 {
				t.Fatalf("%s: a key the contract refuses gave %d %s then %d %s; ledger +%d", what, first.Code, first.Body, second.Code, second.Body, delta)
			}
			return
		}
		if e1.Code == string(credit.CodeIdempotencyKeyInUse) || e2.Code == string(credit.CodeIdempotencyKeyInUse) {
			t.Fatalf("%s: key in use with no concurrent request: %s / %s", what, first.Body, second.Body)
		}
		freshCreate := first.Code == http.StatusCreated && first.Header().Get("Idempotent-Replayed") == ""
		if want := map[bool]int{true: 1, false: 0}[freshCreate]; delta != want {
			t.Fatalf("%s: ledger grew by %d, want %d (first %d replayed=%q)", what, delta, want, first.Code, first.Header().Get("Idempotent-Replayed"))
		}
		stored := first.Code < 300 || slices.Contains([]string{"not_found", "hold_exists", "hold_not_found", "hold_not_liftable"}, e1.Code)
		if stored {
			if second.Code != first.Code || !bytes.Equal(second.Body.Bytes(), first.Body.Bytes()) || second.Header().Get("Idempotent-Replayed") != "true" {
				t.Fatalf("%s: retry is not a replay:\nfirst  %d %s\nretry  %d %q %s", what, first.Code, first.Body, second.Code, second.Header().Get("Idempotent-Replayed"), second.Body)
			}
			return
		}
		// Not stored (refused input, reused key): the retry is judged again, the same way.
		if second.Code != first.Code || e2.Code != e1.Code || second.Header().Get("Idempotent-Replayed") != "" {
			t.Fatalf("%s: an outcome that is not stored changed on retry:\nfirst  %d %s\nretry  %d %s", what, first.Code, first.Body, second.Code, second.Body)
		}
	})
}

// checkGraphQLIdempotency sends a GraphQL request twice under key and checks that the ledger
// moved exactly by the entries the answers report as created, never on a replay, and that a
// request that created entries is replayed byte for byte.
func (w *fuzzWorld) checkGraphQLIdempotency(t *testing.T, what, key string, body, again []byte, hdr http.Header, count func(*testing.T) int) {
	created := func(g gqlResponse) int {
		n := 0
		for _, v := range g.Data {
			var p struct {
				LedgerEntry *struct{ ID string } `json:"ledgerEntry"`
			}
			if json.Unmarshal(v, &p) == nil && p.LedgerEntry != nil {
				n++
			}
		}
		return n
	}
	before := count(t)
	first := serve(w.h, http.MethodPost, "/graphql", w.mine.key, hdr, body)
	g1 := checkGraphQL(t, what, first)
	mid := count(t)
	second := serve(w.h, http.MethodPost, "/graphql", w.mine.key, hdr, again)
	g2 := checkGraphQL(t, what+" (retry)", second)
	after := count(t)
	w.checkNoLeak(t, what, first.Body.Bytes(), string(body))
	replayed1, replayed2 := first.Header().Get("Idempotent-Replayed") == "true", second.Header().Get("Idempotent-Replayed") == "true"
	if !contractKey(key) {
		if after != before || replayed1 || replayed2 || !slices.Contains(g1.codes(), string(httpapi.CodeInvalidRequest)) {
			t.Fatalf("%s: a key the contract refuses gave %d %s then %d %s; ledger +%d", what, first.Code, first.Body, second.Code, second.Body, after-before)
		}
		return
	}
	for _, c := range append(g1.codes(), g2.codes()...) {
		if c == string(credit.CodeIdempotencyKeyInUse) {
			t.Fatalf("%s: key in use with no concurrent request: %s / %s", what, first.Body, second.Body)
		}
	}
	for i, x := range []struct {
		g        gqlResponse
		raw      []byte
		replayed bool
		delta    int
	}{{g1, first.Body.Bytes(), replayed1, mid - before}, {g2, second.Body.Bytes(), replayed2, after - mid}} {
		nulled, known := nulledSuccesses(x.g, x.raw, body)
		want := created(x.g) + nulled
		if x.replayed {
			want = 0
		}
		if known && x.delta != want {
			t.Fatalf("%s: answer %d reports %d new entries (replayed=%v), the ledger grew by %d: %s", what, i+1, created(x.g), x.replayed, x.delta, []*bytes.Buffer{first.Body, second.Body}[i])
		}
	}
	if (replayed2 || created(g1) > 0) && (!replayed2 || second.Code != first.Code || !bytes.Equal(second.Body.Bytes(), first.Body.Bytes())) {
		t.Fatalf("%s: retry is not a replay:\nfirst  %d %s\nretry  %d %v %s", what, first.Code, first.Body, second.Code, replayed2, second.Body)
	}
}

// nulledSuccesses counts the createAdjustment fields that succeeded in an answer whose data
// GraphQL's null propagation made null: the mutation payloads are non-null, so one refused
// field nulls the whole data, and the fields no error names ran and are kept (graph's
// TestEveryMutationKeepsItsWriteBesideARefusedField). known is false when the request is not
// plain enough to tell (fragments, directives, an error below a field), and the ledger's
// growth is then not judged. An error without a path refused the whole request: nothing ran.
func nulledSuccesses(g gqlResponse, raw, request []byte) (n int, known bool) {
	var top map[string]json.RawMessage
	if json.Unmarshal(raw, &top) != nil || string(top["data"]) != "null" {
		return 0, true // data absent (refused before execution) or present: nothing hidden
	}
	var req struct {
		Query         string `json:"query"`
		OperationName string `json:"operationName"`
	}
	if json.Unmarshal(request, &req) != nil {
		return 0, false
	}
	doc, err := parser.ParseQuery(&ast.Source{Input: req.Query})
	if err != nil {
		return 0, false
	}
	var op *ast.OperationDefinition
	for _, o := range doc.Operations {
		if len(doc.Operations) == 1 || o.Name == req.OperationName {
			op = o
		}
	}
	if op == nil || op.Operation != ast.Mutation {
		return 0, true
	}
	named := map[string]bool{}
	for _, e := range g.Errors {
		if len(e.Path) > 1 {
			return 0, false
		}
		if len(e.Path) == 0 {
			return 0, true // the whole request was refused (a reused key, the rate limit): nothing ran
		}
		if name, ok := e.Path[0].(string); ok {
			named[name] = true
		}
	}
	for _, sel := range op.SelectionSet {
		f, ok := sel.(*ast.Field)
		if !ok || len(f.Directives) > 0 {
			return 0, false
		}
		alias := f.Alias
		if alias == "" {
			alias = f.Name
		}
		if f.Name == "createAdjustment" && !named[alias] {
			n++
		}
	}
	return n, true
}

// graphqlSeeds are queries over every root field and the usual ways a GraphQL document goes
// wrong. {co}, {le}, {ev}, {app} and {theirco}... are replaced with real IDs of this run.
var graphqlSeeds = []string{
	`{ __typename }`,
	`query { __schema { queryType { name fields { name args { name type { name kind ofType { name } } } } } mutationType { name } } }`,
	`{ __type(name: "Company") { fields { name } } }`,
	`{ node(id: "{co}") { id __typename ... on Company { name outstanding { amount currency } hold { kind note placedBy } } } }`,
	`{ node(id: "{le}") { id ... on LedgerEntry { kind amount { amount } note } } }`,
	`{ node(id: "{ev}") { id ... on TimelineEvent { type actor { type label } data } } }`,
	`{ node(id: "{app}") { id ... on Application { businessName contact { name email redacted } vat { number } } } }`,
	`{ node(id: "{theirco}") { id } a: node(id: "{theirapp}") { id } b: node(id: "{theirle}") { id } c: node(id: "{theirev}") { id } }`,
	`{ company(id: "{co}") { id name ledger(first: 2) { edges { cursor node { id amount { amount } } } pageInfo { hasNextPage endCursor } } timeline(first: 2) { edges { node { type data } } } } }`,
	`{ company(id: "{theirco}") { id name } }`,
	`{ company(id: "co_") { id } }`,
	`{ companies(first: 1, status: ON_HOLD, updatedSince: "2026-03-02T09:00:00Z") { edges { cursor node { id } } pageInfo { endCursor hasNextPage } } }`,
	`{ companies(first: 0) { edges { node { id } } } }`,
	`{ companies(first: 251) { edges { node { id } } } }`,
	`{ companies(after: "x.y") { edges { node { id } } } }`,
	`{ companies(updatedSince: "yesterday") { edges { node { id } } } }`,
	`{ applications(status: SUBMITTED) { edges { node { id status contact { email } } } } }`,
	`{ application(id: "{app}") { id vat { number status registry checkedAt } submittedAt } }`,
	`{ company(id: "{co}") { ledger(afterEntry: "{theirle}") { edges { node { id } } } } }`,
	`mutation { createAdjustment(input: {companyId: "{co}", amount: "1.00", note: "gql"}) { ledgerEntry { id amount { amount } } company { outstanding { amount } } } }`,
	`mutation { createAdjustment(input: {companyId: "{co}", amount: 1, note: "number"}) { ledgerEntry { id } } }`,
	`mutation { createAdjustment(input: {companyId: "{theirco}", amount: "1.00", note: "foreign"}) { ledgerEntry { id } } }`,
	`mutation { setCreditLimit(input: {companyId: "{co}", amount: "-1"}) { previousCreditLimit { amount } } }`,
	`mutation { placeHold(input: {companyId: "{co2}", note: "n"}) { company { hold { kind } } } liftHold(input: {companyId: "{co2}"}) { company { status } } }`,
	`mutation M($in: CreateAdjustmentInput!) { createAdjustment(input: $in) { ledgerEntry { id } } }`,
	`query Q($id: ID!) { node(id: $id) { id } }`,
	`query A { __typename } query B { __typename }`,
	`subscription { x }`,
	`{ company(id: "{co}") { ...F } } fragment F on Company { ...F }`,
	`{ company(id: "{co}") { ...F } } fragment F on Company { id ...G } fragment G on Company { name }`,
	`{ a: __typename @skip(if: true) b: __typename @include(if: false) }`,
	`{ companies { edges { node { ledger { edges { node { id } } } timeline { edges { node { id } } } } } } }`,
	`{ node(id: "{co}") { ... on Company { ledger { edges { node { ... on Node { id } } } } } } }`,
	`{ x(` + strings.Repeat("a:1 ", 50) + `) }`,
	strings.Repeat("{ a ", 40) + strings.Repeat("}", 40),
	`{ company(id: "\u0000") { id } }`,
	`{ company(id: """block""") { id } }`,
	`# only a comment`,
	``, `{`, `}`, `{}`, `query`, `mutation`, `{ __typename`, `"string"`, `{ ... }`, `{ company }`,
}

// graphqlVariables pair with the seeds that declare variables, and include wrong types.
var graphqlVariables = []string{
	``, `{}`, `null`, `{"id":"{co}"}`, `{"id":"{theirco}"}`, `{"id":1}`, `{"id":null}`,
	`{"in":{"companyId":"{co}","amount":"2.00","note":"var"}}`, `{"in":{"companyId":"{co}","amount":2,"note":"var"}}`,
	`{"in":{"companyId":"{theirco}","amount":"2.00","note":"var"}}`, `{"in":{"companyId":"{co}","amount":"2.00"}}`,
	`{"in":{"companyId":"{co}","amount":"2.00","note":"var","extra":true}}`, `{"in":"x"}`, `[1]`,
}

// FuzzGraphQL sends arbitrary documents and variables to /graphql as a POST JSON envelope, as
// GET query parameters, as a raw POST body, and as a raw GET query string. Beyond no 5xx and no internal_error: every
// answer is in GraphQL's form and carries nothing of another store.
func FuzzGraphQL(f *testing.F) {
	w := newFuzzWorld(f)
	for i, q := range graphqlSeeds {
		f.Add(uint8(0), q, graphqlVariables[i%len(graphqlVariables)])
		f.Add(uint8(1), q, "")
	}
	for _, v := range graphqlVariables {
		f.Add(uint8(0), graphqlSeeds[len(graphqlSeeds)/2], v)
		f.Add(uint8(0), `mutation M($in: CreateAdjustmentInput!) { createAdjustment(input: $in) { ledgerEntry { id } } }`, v)
		f.Add(uint8(0), `query Q($id: ID!) { node(id: $id) { id } }`, v)
	}
	for _, raw := range []string{`{"query":"{ __typename }"}`, `{"query":"{ __typename }","operationName":"X"}`, `{"query":null}`, `{"query":1}`,
		`{"query":"{ __typename }","variables":[]}`, `{"query":"{ __typename }","extensions":{"persistedQuery":{"version":1,"sha256Hash":"x"}}}`,
		`{"query":"{ __typename }","query":"{ __typename }"}`, `[{"query":"{ __typename }"}]`, ``, `null`} {
		f.Add(uint8(2), raw, "")
	}
	for _, raw := range []string{"query=%7B__typename%7D", "query={__typename}&variables=%7B%7D", "query=%zz", "query=x;y", "variables=1&query=%7B__typename%7D",
		"extensions=[]&query=%7B__typename%7D", "query=mutation%7BliftHold(input:%7BcompanyId:%22{co}%22%7D)%7Bcompany%7Bid%7D%7D%7D", "query=a&query=b", ""} {
		f.Add(uint8(3), raw, "")
	}
	f.Fuzz(func(t *testing.T, mode uint8, query, variables string) {
		query, variables = w.expand(query), w.expand(variables)
		var rec *httptest.ResponseRecorder
		switch mode % 4 {
		case 0:
			env := map[string]any{"query": query}
			if v := json.RawMessage(variables); json.Valid(v) {
				env["variables"] = v
			}
			body, err := json.Marshal(env)
			if err != nil {
				t.Skip("not encodable")
			}
			rec = serve(w.h, http.MethodPost, "/graphql", w.mine.key, http.Header{"Content-Type": {"application/json"}}, body)
		case 1:
			q := url.Values{"query": {query}}
			if variables != "" {
				q.Set("variables", variables)
			}
			rec = serve(w.h, http.MethodGet, "/graphql?"+q.Encode(), w.mine.key, nil, nil)
		case 2:
			rec = serve(w.h, http.MethodPost, "/graphql", w.mine.key, http.Header{"Content-Type": {"application/json"}}, []byte(query))
		case 3:
			var ok bool
			if rec, ok = serveRawQuery(w.h, "/graphql", query, w.mine.key); !ok {
				t.Skip("not a request line net/http accepts")
			}
		}
		what := "graphql " + strings.ToValidUTF8(query, "?") + " variables " + strings.ToValidUTF8(variables, "?")
		checkGraphQL(t, what, rec)
		w.checkNoLeak(t, what, rec.Body.Bytes(), query, variables)
	})
}

// gqlField is a GraphQL field with arguments, and how a document reaches it.
type gqlField struct {
	name string // Parent.field
	def  *ast.FieldDefinition
	// wrap turns the field's call into a document: the root operation, or a node look-up of
	// one of the caller's records for fields of other types.
	wrap func(call string) string
}

// argumentFields lists every field of the served schema that takes arguments.
func argumentFields(w *fuzzWorld) []gqlField {
	s := gqlSchema()
	own := map[string]string{"Company": w.mine.company, "LedgerEntry": w.mine.entries[0], "TimelineEvent": w.mine.events[0], "Application": w.mine.application}
	var out []gqlField
	for _, name := range slices.Sorted(maps.Keys(s.Types)) {
		def := s.Types[name]
		if def.Kind != ast.Object || strings.HasPrefix(name, "__") {
			continue
		}
		for _, f := range def.Fields {
			if len(f.Arguments) == 0 || strings.HasPrefix(f.Name, "__") {
				continue
			}
			var wrap func(string) string
			switch {
			case def == s.Query:
				wrap = func(call string) string { return "query Q%s { " + call + " }" }
			case def == s.Mutation:
				wrap = func(call string) string { return "mutation M%s { " + call + " }" }
			case own[name] != "":
				id := own[name]
				typ := name
				wrap = func(call string) string {
					return "query Q%s { node(id: " + strconv.Quote(id) + ") { ... on " + typ + " { " + call + " } } }"
				}
			default:
				continue
			}
			out = append(out, gqlField{name: name + "." + f.Name, def: f, wrap: wrap})
		}
	}
	return out
}

// FuzzGraphQLArguments calls every GraphQL field that takes arguments with typed values
// drawn from the input: n for every Int, s for every String, ID, Decimal and DateTime (or one
// of the caller's IDs), an enum value picked by n, input objects filled the same way, as
// literals or as variables. Byte-level mutation rarely turns a seed's `first: 0` into
// `first: -1`; here every integer the fuzzer tries reaches every Int argument.
func FuzzGraphQLArguments(f *testing.F) {
	w := newFuzzWorld(f)
	fields := argumentFields(w)
	s := gqlSchema()
	for i := range fields {
		for _, n := range []int64{0, 1, -1, 2, 250, 251, math.MaxInt32, math.MinInt32, math.MaxInt64, math.MinInt64} {
			f.Add(uint8(i), n, "", uint8(0))
			f.Add(uint8(i), n, "1.00", uint8(1))
		}
		for _, str := range []string{"{co}", "{theirco}", "{le}", "{theirle}", "{app}", "co_", "-1.5", "1e3", "2026-03-02T09:00:00Z", "9999-99-99", "\x00", `"\`, strings.Repeat("x", 600)} {
			f.Add(uint8(i), int64(2), str, uint8(0))
			f.Add(uint8(i), int64(2), str, uint8(3))
		}
	}
	f.Fuzz(func(t *testing.T, field uint8, n int64, str string, flags uint8) {
		fd := fields[int(field)%len(fields)]
		str = w.expand(str)
		useVariables := flags&1 == 1
		var decls, args []string
		vars := map[string]any{}
		var value func(typ *ast.Type, path string) (literal string, variable any)
		value = func(typ *ast.Type, path string) (string, any) {
			switch name := typ.Name(); {
			case name == "Int":
				return strconv.FormatInt(n, 10), n
			case name == "Boolean":
				return strconv.FormatBool(n%2 == 0), n%2 == 0
			case name == "Float":
				return strconv.FormatInt(n, 10), n
			case s.Types[name] != nil && s.Types[name].Kind == ast.Enum:
				vals := s.Types[name].EnumValues
				v := vals[int(uint64(n)%uint64(len(vals)))].Name
				if flags&2 == 2 {
					v = str // not a value of the enum, mostly
				}
				return v, v
			case s.Types[name] != nil && s.Types[name].Kind == ast.InputObject:
				var lits []string
				obj := map[string]any{}
				for _, fld := range s.Types[name].Fields {
					if !fld.Type.NonNull && flags&4 == 0 {
						continue
					}
					l, v := value(fld.Type, path+"."+fld.Name)
					lits = append(lits, fld.Name+": "+l)
					obj[fld.Name] = v
				}
				return "{" + strings.Join(lits, ", ") + "}", obj
			default: // String, ID and the string scalars
				lit, _ := json.Marshal(str)
				return string(lit), str
			}
		}
		for _, a := range fd.def.Arguments {
			lit, v := value(a.Type, a.Name)
			if useVariables {
				decls = append(decls, "$"+a.Name+": "+a.Type.String())
				vars[a.Name] = v
				args = append(args, a.Name+": $"+a.Name)
			} else {
				args = append(args, a.Name+": "+lit)
			}
		}
		call := fd.def.Name + "(" + strings.Join(args, ", ") + ")"
		if sel := selection(s, fd.def.Type.Name(), 3); sel != "" {
			call += " " + sel
		}
		doc := fd.wrap(call)
		if len(decls) > 0 {
			doc = fmt.Sprintf(doc, "("+strings.Join(decls, ", ")+")")
		} else {
			doc = fmt.Sprintf(doc, "")
		}
		body, err := json.Marshal(map[string]any{"query": doc, "variables": vars})
		if err != nil {
			t.Skip("not encodable")
		}
		rec := serve(w.h, http.MethodPost, "/graphql", w.mine.key, http.Header{"Content-Type": {"application/json"}}, body)
		what := fd.name + ": " + strings.ToValidUTF8(string(body), "?")
		checkGraphQL(t, what, rec)
		w.checkNoLeak(t, what, rec.Body.Bytes(), string(body))
	})
}
