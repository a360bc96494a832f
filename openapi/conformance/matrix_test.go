package conformance_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
	"github.com/creditd/creditd/openapi/conformance"
	"github.com/creditd/creditd/server"
	"github.com/creditd/creditd/tenant"
)

// matrixEnv is a running creditd with a store, keys of every scope, and records to act on.
type matrixEnv struct {
	env     *credittest.Env
	storeID string
	full    string            // every scope
	without map[string]string // scope → a key with every scope but that one
	// writeOnly has neither read scope, for the event feed, which either read scope opens.
	writeOnly string
	appID     string
	// companies counts the companies made, to name them apart.
	companies int
}

func newMatrixEnv(t *testing.T, rateLimit int) *matrixEnv {
	t.Helper()
	env := credittest.New(t, credittest.Options{ServerConfig: func(c *server.Config) { c.RateLimit = rateLimit }})
	m := &matrixEnv{env: env, storeID: env.MustStore(t, "Acme", "EUR"), without: map[string]string{}}
	m.full = env.MustKey(t, m.storeID, "erp", credit.AllScopes...)
	for _, s := range credit.AllScopes {
		var others []string
		for _, o := range credit.AllScopes {
			if o != s {
				others = append(others, o)
			}
		}
		m.without[s] = env.MustKey(t, m.storeID, "without "+s, others...)
	}
	m.writeOnly = env.MustKey(t, m.storeID, "write only", credit.ScopeWriteCredit)
	m.appID = env.MustApplication(t, m.storeID, credit.ApplicationInput{BusinessName: "Gasthof"}).ID
	return m
}

// request builds a valid request for an operation: {id} names a fresh company (with a hold
// when lifting one), an invoice of a fresh company, the application or an event, and the body is the document's first example.
func (m *matrixEnv) request(t *testing.T, method, path string, op *openapi3.Operation) credittest.Request {
	t.Helper()
	id := ""
	if strings.HasPrefix(path, "/v1/applications/") {
		id = m.appID
	} else if strings.HasPrefix(path, "/v1/events/") {
		events, err := m.env.Service.Events.List(credittest.Staff(m.storeID), credit.EventListParams{})
		if err != nil || len(events.Data) == 0 {
			t.Fatalf("the store's events: %v %v", events.Data, err)
		}
		id = events.Data[0].ID
	} else if strings.HasPrefix(path, "/v1/invoices/") {
		m.companies++
		co := m.env.MustCompany(t, m.storeID, "Buyer "+strconv.Itoa(m.companies), "1000.00").ID
		m.env.MustRecord(t, credit.LedgerEntryInput{CompanyID: co, Kind: credit.KindOrderPlaced, Amount: "10", OrderGID: "gid://platform/Order/" + strconv.Itoa(m.companies)})
		invoices, err := m.env.Service.Invoices.List(credittest.Staff(m.storeID), co, credit.InvoiceListParams{})
		if err != nil || len(invoices.Data) != 1 {
			t.Fatalf("the company's invoices: %v %v", invoices.Data, err)
		}
		id = invoices.Data[0].ID
	} else if strings.Contains(path, "{id}") {
		m.companies++
		id = m.env.MustCompany(t, m.storeID, "Buyer "+strconv.Itoa(m.companies), "1000.00").ID
		if method == http.MethodDelete {
			note := "dispute"
			if _, err := m.env.Service.Companies.PlaceHold(tenant.Staff(credittest.Admin(), m.storeID, "Olga Ops"), credit.HoldInput{CompanyID: id, Note: &note}); err != nil {
				t.Fatal(err)
			}
		}
	}
	req := credittest.Request{Method: method, Path: strings.ReplaceAll(path, "{id}", id), Key: m.full}
	// The required query parameters, with the document's examples.
	sep := "?"
	for _, p := range op.Parameters {
		if p.Value.In == "query" && p.Value.Required {
			req.Path += sep + p.Value.Name + "=" + url.QueryEscape(fmt.Sprint(p.Value.Example))
			sep = "&"
		}
	}
	if op.RequestBody != nil {
		for _, ex := range op.RequestBody.Value.Content.Get("application/json").Examples {
			b, err := json.Marshal(ex.Value.Value)
			if err != nil {
				t.Fatal(err)
			}
			req.Body = string(b)
			break
		}
	}
	return req
}

// overdueCompany makes a company with an invoice past due, which puts an automatic overdue
// hold on it.
func (m *matrixEnv) overdueCompany(t *testing.T) string {
	t.Helper()
	m.companies++
	id := m.env.MustCompany(t, m.storeID, "Late payer "+strconv.Itoa(m.companies), "1000.00").ID
	at := credit.At(m.env.Clock.Now().Add(-60 * 24 * time.Hour))
	m.env.MustRecord(t, credit.LedgerEntryInput{CompanyID: id, Kind: "order_placed", Amount: "100.00", OrderGID: "gid://platform/Order/" + strconv.Itoa(9000+m.companies), OccurredAt: &at})
	return id
}

// TestEveryDocumentedStatusHappens provokes, for every operation of the document, every status
// the document lists for it, through the real server, so each documented response is checked
// against a real one by the conformance hook, and a status the document lists but the server
// can no longer produce shows up.
func TestEveryDocumentedStatusHappens(t *testing.T) {
	v, err := conformance.Default()
	if err != nil {
		t.Fatal(err)
	}
	m := newMatrixEnv(t, 1_000_000)
	limited := newMatrixEnv(t, 1)
	broken := newMatrixEnv(t, 1_000_000)

	seen := map[string]map[int]bool{}
	expect := func(t *testing.T, name string, r *credittest.Response, status int, codes ...string) {
		t.Helper()
		if r.Status != status || (len(codes) > 0 && !slices.Contains(codes, r.ErrorCode())) {
			t.Errorf("want %d %v, got %d %s", status, codes, r.Status, r.Body)
			return
		}
		seen[name][status] = true
	}

	type operation struct {
		name, method, path string
		op                 *openapi3.Operation
	}
	var ops []operation
	for path, item := range v.Doc().Paths.Map() {
		if strings.HasPrefix(path, "/v1/openapi.") {
			continue
		}
		for method, op := range item.Operations() {
			ops = append(ops, operation{method + " " + path, method, path, op})
		}
	}
	slices.SortFunc(ops, func(a, b operation) int { return strings.Compare(a.name, b.name) })

	for _, o := range ops {
		seen[o.name] = map[int]bool{}
		t.Run(o.name, func(t *testing.T) {
			write := o.method != http.MethodGet
			scope := conformance.Scopes(o.op)[0]
			valid := func() credittest.Request { return m.request(t, o.method, o.path, o.op) }

			ok := valid()
			r := m.env.Do(t, ok)
			for code := range o.op.Responses.Map() {
				if s, _ := strconv.Atoi(code); s >= 200 && s < 300 {
					expect(t, o.name, r, s)
				}
			}
			// The same GET with the tag it answered: 304.
			if !write && o.name != "GET /v1/export" { // a stream has no tag
				again := ok
				again.Header = map[string]string{"If-None-Match": r.Header.Get("ETag")}
				expect(t, o.name, m.env.Do(t, again), 304)
			}
			// The company's state refuses the same write again.
			switch o.name {
			case "GET /v1/export":
				// Another export of the store running (here its lock, as the export takes it).
				release, ok2, err := m.env.DB.TryLock(context.Background(), "creditd export "+m.storeID)
				if err != nil || !ok2 {
					t.Fatal(ok2, err)
				}
				expect(t, o.name, m.env.Do(t, ok), 409, "export_in_progress")
				release()
			case "GET /v1/companies/{id}/statement":
				csv := valid()
				csv.Header = map[string]string{"Accept": "text/csv"}
				expect(t, o.name, m.env.Do(t, csv), 406, "not_acceptable")
				pdf := valid()
				pdf.Header = map[string]string{"Accept": "application/pdf"}
				expect(t, o.name, m.env.Do(t, pdf), 200)
			case "POST /v1/companies/{id}/hold":
				expect(t, o.name, m.env.Do(t, ok), 409, "hold_exists")
			case "DELETE /v1/companies/{id}/hold":
				expect(t, o.name, m.env.Do(t, ok), 404, "hold_not_found")
				overdue := valid()
				overdue.Path = "/v1/companies/" + m.overdueCompany(t) + "/hold"
				expect(t, o.name, m.env.Do(t, overdue), 409, "hold_not_liftable")
			}

			noKey := valid()
			noKey.Key = ""
			expect(t, o.name, m.env.Do(t, noKey), 401, "unauthenticated")

			wrongScope := valid()
			wrongScope.Key = m.without[scope]
			if len(conformance.Scopes(o.op)) > 1 {
				// Either read scope opens the event feed.
				wrongScope.Key = m.writeOnly
			}
			expect(t, o.name, m.env.Do(t, wrongScope), 403, "insufficient_scope")

			bad := valid()
			if write {
				bad.Header = map[string]string{"Idempotency-Key": strings.Repeat("k", 256)}
				expect(t, o.name, m.env.Do(t, bad), 400, "invalid_request")
			} else {
				if strings.Contains(bad.Path, "?") {
					bad.Path += "&limit=0"
				} else {
					bad.Path += "?limit=0"
				}
				expect(t, o.name, m.env.Do(t, bad), 400, "invalid_parameter")
			}

			if strings.Contains(o.path, "{id}") {
				unknown := valid()
				prefix := "co_"
				if strings.HasPrefix(o.path, "/v1/applications/") {
					prefix = "app_"
				}
				if strings.HasPrefix(o.path, "/v1/events/") {
					prefix = "ev_"
				}
				if strings.HasPrefix(o.path, "/v1/invoices/") {
					prefix = "inv_"
				}
				_, query, _ := strings.Cut(unknown.Path, "?")
				unknown.Path = strings.ReplaceAll(o.path, "{id}", prefix+"Unknown0000000000000000")
				if query != "" {
					unknown.Path += "?" + query
				}
				expect(t, o.name, m.env.Do(t, unknown), 404, "not_found")
			}

			if write {
				tooLarge := valid()
				tooLarge.Body = `{"note":"` + strings.Repeat("x", 70<<10) + `"}`
				expect(t, o.name, m.env.Do(t, tooLarge), 413, "request_too_large")

				wrongType := valid()
				wrongType.Body = `{}`
				wrongType.Header = map[string]string{"Content-Type": "text/plain"}
				expect(t, o.name, m.env.Do(t, wrongType), 415, "unsupported_media_type")

				// The same key for another request: another company's path.
				first := valid()
				first.Header = map[string]string{"Idempotency-Key": "matrix-" + o.name}
				m.env.Do(t, first)
				second := valid()
				second.Header = first.Header
				expect(t, o.name, m.env.Do(t, second), 422, "idempotency_key_reused")

				// A key claimed by a request still running.
				inFlight := valid()
				inFlight.Header = map[string]string{"Idempotency-Key": "in-flight-" + o.name}
				claimKey(t, m, inFlight)
				expect(t, o.name, m.env.Do(t, inFlight), 409, "idempotency_key_in_use")
			}

			limited.env.Clock.Advance(time.Minute)
			spend := limited.request(t, o.method, o.path, o.op)
			limited.env.Do(t, spend)
			over := limited.request(t, o.method, o.path, o.op)
			expect(t, o.name, limited.env.Do(t, over), 429, "rate_limited")
		})
	}

	// A database that went away: 503 unavailable (or 500 internal_error where the driver's
	// error is not recognised as an outage). Both are documented for every operation.
	requests := map[string]credittest.Request{}
	for _, o := range ops {
		requests[o.name] = broken.request(t, o.method, o.path, o.op)
	}
	broken.env.DB.Close()
	for _, o := range ops {
		r := broken.env.Do(t, requests[o.name])
		if r.Status != 500 && r.Status != 503 {
			t.Errorf("%s with the database closed: %d %s", o.name, r.Status, r.Body)
			continue
		}
		seen[o.name][r.Status] = true
	}

	// Every documented status was seen, except the one of 500 and 503 the outage did not give.
	for _, o := range ops {
		var missing []string
		for code := range o.op.Responses.Map() {
			s, _ := strconv.Atoi(code)
			if !seen[o.name][s] && !(s == 500 && seen[o.name][503]) && !(s == 503 && seen[o.name][500]) {
				missing = append(missing, code)
			}
		}
		if len(missing) > 0 {
			t.Errorf("%s: documented statuses never produced here: %v (provoke them in this test, or drop them from the document)", o.name, missing)
		}
	}
}

// claimKey records req's Idempotency-Key as claimed by a request that has not finished, as an
// instance that died mid-write leaves it.
func claimKey(t *testing.T, m *matrixEnv, req credittest.Request) {
	t.Helper()
	body, _ := req.Body.(string)
	var canonical []byte
	if body != "" {
		var v any
		if err := json.Unmarshal([]byte(body), &v); err != nil {
			t.Fatal(err)
		}
		canonical, _ = json.Marshal(v)
	} else {
		canonical = []byte("{}")
	}
	// SHA-256 of method, path and canonical body, NUL-separated: written here independently
	// of httpapi, as a second check that the fingerprint never changes.
	sum := sha256.Sum256([]byte(req.Method + "\x00" + req.Path + "\x00" + string(canonical)))
	now := m.env.Clock.Now()
	if err := m.env.DB.Client.IdempotencyRecord.Create().
		SetStoreID(m.storeID).SetKey(req.Header["Idempotency-Key"]).
		SetFingerprint(hex.EncodeToString(sum[:])).
		SetClaim("instance-that-died").SetLockedUntil(now.Add(time.Minute)).
		SetCreatedAt(now).SetExpiresAt(now.Add(24 * time.Hour)).
		Exec(credittest.Admin()); err != nil {
		t.Fatal(fmt.Errorf("claim idempotency key: %w", err))
	}
}
