// Package credittest runs creditd for tests: a fresh SQLite file per test, the real domain
// service with a controllable clock, and the real HTTP handler behind httptest. Helpers follow
// the mustXxx(tb, ...) convention and fail the test on error.
package credittest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/database"
	"github.com/creditd/creditd/ids"
	"github.com/creditd/creditd/server"
	"github.com/creditd/creditd/tenant"
	"github.com/creditd/creditd/webhook"
)

// Clock is a settable clock for the service; safe for concurrent use.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// NewClock returns a clock stopped at t.
func NewClock(t time.Time) *Clock { return &Clock{now: t.UTC()} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// Set moves the clock to t.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t.UTC()
}

// Backend is the database the suite runs on: "sqlite" (default), or "postgres" when
// CREDITD_TEST_BACKEND=postgres, in which case every test gets its own schema in the database
// at CREDITD_TEST_POSTGRES.
func Backend() string {
	if os.Getenv("CREDITD_TEST_BACKEND") == "postgres" {
		return "postgres"
	}
	return "sqlite"
}

// PostgresURL returns CREDITD_TEST_POSTGRES. Without it the test is skipped with a clear
// message, except under CI, where the database is required and the test fails.
func PostgresURL(tb testing.TB) string {
	tb.Helper()
	return requireService(tb, "CREDITD_TEST_POSTGRES", "PostgreSQL")
}

// RedisURL returns CREDITD_TEST_REDIS, skipping or failing like PostgresURL.
func RedisURL(tb testing.TB) string {
	tb.Helper()
	return requireService(tb, "CREDITD_TEST_REDIS", "Redis")
}

func requireService(tb testing.TB, env, what string) string {
	tb.Helper()
	v := os.Getenv(env)
	if v == "" {
		if os.Getenv("CI") != "" {
			tb.Fatalf("%s is required under CI: set %s", what, env)
		}
		tb.Skipf("skipping: set %s to run this test against %s", env, what)
	}
	return v
}

// RequireSQLite skips a test that inspects SQLite's files when the suite runs on PostgreSQL.
func RequireSQLite(tb testing.TB) {
	tb.Helper()
	if Backend() != "sqlite" {
		tb.Skip("inspects SQLite database files; the suite runs on PostgreSQL")
	}
}

// ServiceEnv is the domain on a real database, without HTTP: what a test of credit/'s rules
// needs (NewService). Env adds the server in front of it.
type ServiceEnv struct {
	// DBPath is the SQLite file, or "" on PostgreSQL.
	DBPath string
	// DSN opens the same database (the SQLite file, or the PostgreSQL schema's URL), for a
	// second instance.
	DSN     string
	DB      *database.DB
	Service *credit.Service
	Clock   *Clock
}

// Env is one running creditd: database, service, HTTP server.
type Env struct {
	*ServiceEnv
	Server  *httptest.Server
	Handler *server.Server
}

// Options tune New and NewService.
type Options struct {
	// Start is the clock's initial time; zero means 2026-03-02T09:00:00Z.
	Start time.Time
	// ServerConfig, if set, adjusts the server configuration before the server is built
	// (New only).
	ServerConfig func(*server.Config)
	// ServiceOptions, if set, adjusts the service options.
	ServiceOptions func(*credit.Options)
}

// NewService opens a fresh, migrated database (a SQLite file in the test's temp directory,
// or a schema of its own on PostgreSQL under CREDITD_TEST_BACKEND=postgres) and the domain
// service over it, with a clock of the test's.
func NewService(tb testing.TB, opts ...Options) *ServiceEnv {
	tb.Helper()
	var o Options
	if len(opts) > 0 {
		o = opts[0]
	}
	if o.Start.IsZero() {
		o.Start = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	}
	path := filepath.Join(tb.TempDir(), "creditd.db")
	ctx := context.Background()
	dsn := path
	if Backend() == "postgres" {
		var drop func()
		var err error
		dsn, drop, err = database.ScratchSchema(ctx, PostgresURL(tb), "t_"+strings.ToLower(ids.Random(12)))
		if err != nil {
			tb.Fatalf("postgres schema: %v", err)
		}
		tb.Cleanup(drop)
		path = ""
	}
	db, err := database.Open(ctx, dsn)
	if err != nil {
		tb.Fatalf("open database: %v", err)
	}
	tb.Cleanup(func() { db.Close() })
	if err := db.Migrate(ctx); err != nil {
		tb.Fatalf("migrate: %v", err)
	}
	clock := NewClock(o.Start)
	so := credit.Options{Now: clock.Now}
	if o.ServiceOptions != nil {
		o.ServiceOptions(&so)
	}
	return &ServiceEnv{DBPath: path, DSN: dsn, DB: db, Service: credit.New(db, so), Clock: clock}
}

// New starts creditd, the service of NewService behind its HTTP server.
func New(tb testing.TB, opts ...Options) *Env {
	tb.Helper()
	se := NewService(tb, opts...)
	cfg := server.Config{Service: se.Service, DB: se.DB, Logger: slog.New(slog.NewJSONHandler(io.Discard, nil)), Now: se.Clock.Now}
	if len(opts) > 0 && opts[0].ServerConfig != nil {
		opts[0].ServerConfig(&cfg)
	}
	h := server.New(cfg)
	ts := httptest.NewServer(h)
	// Cleanups run last first: the server closes before the database.
	tb.Cleanup(ts.Close)
	return &Env{ServiceEnv: se, Server: ts, Handler: h}
}

// NewSealer returns a webhook.Sealer under a fresh master key, for a service that seals
// webhook and platform secrets (Options.ServiceOptions: o.WebhookSealer).
func NewSealer(tb testing.TB) *webhook.Sealer {
	tb.Helper()
	key, err := webhook.ParseMasterKey(1, webhook.GenerateMasterKey())
	if err != nil {
		tb.Fatal(err)
	}
	s, err := webhook.NewSealer(key)
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// Admin returns a context for cross-store system work.
func Admin() context.Context { return tenant.System(context.Background()) }

// Staff returns a context for a member of storeID's staff ("test staff"), who does the
// admin side's work in that store: keys, companies, applications, ledger entries.
func Staff(storeID string) context.Context {
	return tenant.Staff(context.Background(), storeID, "test staff")
}

// StaffOf returns Staff for the store that owns a record (a company, application, key ...).
func (e *ServiceEnv) StaffOf(tb testing.TB, id string) context.Context {
	tb.Helper()
	st, err := e.Service.Stores.OwnerOf(context.Background(), id)
	if err != nil {
		tb.Fatalf("store of %s: %v", id, err)
	}
	return Staff(st)
}

// WritesOnTimeline returns the first page of a company's timeline, newest first, as its store's
// staff read it, without the entries recorded by hand (ledger_entry_recorded): those a test's
// set-up records with MustRecord, so that a test sees what the writes under test added.
func (e *ServiceEnv) WritesOnTimeline(tb testing.TB, companyID string) []credit.TimelineEvent {
	tb.Helper()
	page, err := e.Service.Timeline.List(e.StaffOf(tb, companyID), companyID, credit.ListParams{})
	if err != nil {
		tb.Fatalf("timeline of %s: %v", companyID, err)
	}
	var out []credit.TimelineEvent
	for _, ev := range page.Data {
		if ev.Type != credit.TimelineLedgerEntryRecorded {
			out = append(out, ev)
		}
	}
	return out
}

// MustStore creates a store.
func (e *ServiceEnv) MustStore(tb testing.TB, name, currency string) string {
	tb.Helper()
	st, err := e.Service.Stores.Create(Admin(), name, currency, credit.DefaultBufferPercent)
	if err != nil {
		tb.Fatalf("create store: %v", err)
	}
	return st.ID
}

// MustKey creates an API key with scopes and returns its secret.
func (e *ServiceEnv) MustKey(tb testing.TB, storeID, label string, scopes ...string) string {
	tb.Helper()
	k, err := e.Service.Keys.Create(Staff(storeID), label, scopes)
	if err != nil {
		tb.Fatalf("create key: %v", err)
	}
	return k.Secret
}

// MustIssuedKey is MustKey returning the key's ID too.
func (e *ServiceEnv) MustIssuedKey(tb testing.TB, storeID, label string, scopes ...string) credit.IssuedKey {
	tb.Helper()
	k, err := e.Service.Keys.Create(Staff(storeID), label, scopes)
	if err != nil {
		tb.Fatalf("create key: %v", err)
	}
	return k
}

// companyGIDs numbers the platform company GIDs of MustCompany's companies after a store's first.
var companyGIDs atomic.Int64

// MustCompany creates a company with NET_30 terms unless terms is given. The store's first
// company has platform company GID gid://platform/Company/42, the others GIDs of their own.
func (e *ServiceEnv) MustCompany(tb testing.TB, storeID, name, limit string, terms ...string) credit.Company {
	tb.Helper()
	pt := "NET_30"
	if len(terms) > 0 {
		pt = terms[0]
	}
	in := credit.CompanyInput{Name: name, PlatformCompanyGID: "gid://platform/Company/42", PaymentTerms: pt, CreditLimit: limit}
	c, err := e.Service.Companies.Create(Staff(storeID), in)
	if credit.CodeOf(err) == credit.CodeValidationFailed && strings.Contains(err.Error(), "platform_company_gid") {
		// The store's first company is Company/42; a GID names one company of a store.
		in.PlatformCompanyGID = fmt.Sprintf("gid://platform/Company/%d", 1000+companyGIDs.Add(1))
		c, err = e.Service.Companies.Create(Staff(storeID), in)
	}
	if err != nil {
		tb.Fatalf("create company: %v", err)
	}
	return c
}

// MustRecord appends a ledger entry from the platform side.
func (e *ServiceEnv) MustRecord(tb testing.TB, in credit.LedgerEntryInput) credit.LedgerEntry {
	tb.Helper()
	le, _, err := e.Service.Ledger.Record(e.StaffOf(tb, in.CompanyID), in)
	if err != nil {
		tb.Fatalf("record ledger entry: %v", err)
	}
	return le
}

// MustOrderEntry appends a ledger entry of kind for amount from the platform side, for order
// gid://platform/Order/<order>, or for no order when order is "".
func (e *ServiceEnv) MustOrderEntry(tb testing.TB, companyID, kind, amount, order string) credit.LedgerEntry {
	tb.Helper()
	in := credit.LedgerEntryInput{CompanyID: companyID, Kind: kind, Amount: amount}
	if order != "" {
		in.OrderGID = "gid://platform/Order/" + order
	}
	return e.MustRecord(tb, in)
}

// MustPaymentHistory gives companyID, on NET 30 terms, a payment history worked out by hand,
// for the tests of each surface that shows payment behaviour (the domain's own figures are
// tested on richer histories in credit/): orders of 100 and 300 placed at the clock's time t0,
// the 100 paid 10 days early (day 20) and the 300 10 days late (day 40), an order of 200 placed
// on day 45 and open; the clock is left at day 50, and t0 is returned. Over a window of 365
// days: 35.0 days to pay, 5.0 days beyond terms, 0.250 paid on time; DSO 5.0 days (the 200
// open, issued 5 days back); no rating with two invoices paid; the open invoice is expected at
// its due date (day 75) plus 5.0 days. Over 15 days: the 300 alone, 10 days late.
func (e *ServiceEnv) MustPaymentHistory(tb testing.TB, companyID string) time.Time {
	tb.Helper()
	day := 24 * time.Hour
	t0 := e.Clock.Now()
	e.MustOrderEntry(tb, companyID, credit.KindOrderPlaced, "100", "1")
	e.MustOrderEntry(tb, companyID, credit.KindOrderPlaced, "300", "2")
	e.Clock.Set(t0.Add(20 * day))
	e.MustOrderEntry(tb, companyID, credit.KindPayment, "-100", "1")
	e.Clock.Set(t0.Add(40 * day))
	e.MustOrderEntry(tb, companyID, credit.KindPayment, "-300", "2")
	e.Clock.Set(t0.Add(45 * day))
	e.MustOrderEntry(tb, companyID, credit.KindOrderPlaced, "200", "3")
	e.Clock.Set(t0.Add(50 * day))
	return t0
}

// MustApplication creates an application in storeID.
func (e *ServiceEnv) MustApplication(tb testing.TB, storeID string, in credit.ApplicationInput) credit.Application {
	tb.Helper()
	if in.VATNumber == "" {
		in.VATNumber = "DE123456789"
	}
	if in.ContactName == "" {
		in.ContactName = "Ada Buyer"
	}
	if in.ContactEmail == "" {
		in.ContactEmail = "ada@example.com"
	}
	a, err := e.Service.Applications.Create(Staff(storeID), in)
	if err != nil {
		tb.Fatalf("create application: %v", err)
	}
	return a
}

// MustStaff creates a staff account in storeID that signs in with email and password.
func (e *ServiceEnv) MustStaff(tb testing.TB, storeID, name, email, password string) credit.StaffMember {
	tb.Helper()
	m, err := e.Service.Staff.Create(Staff(storeID), credit.StaffInput{Name: name, Email: email, Password: password})
	if err != nil {
		tb.Fatalf("create staff member: %v", err)
	}
	return m
}

// Response is an HTTP response with its body read.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON decodes the body into a generic value.
func (r *Response) JSON(tb testing.TB) map[string]any {
	tb.Helper()
	var v map[string]any
	if err := json.Unmarshal(r.Body, &v); err != nil {
		tb.Fatalf("response is not a JSON object: %v\n%s", err, r.Body)
	}
	return v
}

// Decode decodes the body into v.
func (r *Response) Decode(tb testing.TB, v any) {
	tb.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		tb.Fatalf("decode response: %v\n%s", err, r.Body)
	}
}

// ErrorCode returns error.code of an error response, or "".
func (r *Response) ErrorCode() string {
	var e struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	_ = json.Unmarshal(r.Body, &e)
	return e.Error.Code
}

// Request describes a request for Do.
type Request struct {
	Method string
	Path   string
	Key    string
	// Body is sent as is when it is a string or []byte, else encoded as JSON.
	Body   any
	Header map[string]string
}

// Do sends a request to the server. A JSON body gets Content-Type: application/json unless
// Header sets one; an empty string is no body, with no Content-Type.
func (e *Env) Do(tb testing.TB, req Request) *Response {
	tb.Helper()
	var body io.Reader
	switch b := req.Body.(type) {
	case nil:
	case string:
		if b != "" { // "" is no body, sent without a Content-Type
			body = strings.NewReader(b)
		}
	case []byte:
		body = bytes.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			tb.Fatalf("encode body: %v", err)
		}
		body = bytes.NewReader(raw)
	}
	hr, err := http.NewRequest(req.Method, e.Server.URL+req.Path, body)
	if err != nil {
		tb.Fatalf("new request: %v", err)
	}
	if req.Key != "" {
		hr.Header.Set("Authorization", "Bearer "+req.Key)
	}
	if body != nil {
		hr.Header.Set("Content-Type", "application/json")
	}
	for k, v := range req.Header {
		hr.Header.Set(k, v)
	}
	resp, err := e.Server.Client().Do(hr)
	if err != nil {
		tb.Fatalf("%s %s: %v", req.Method, req.Path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatalf("read response: %v", err)
	}
	out := &Response{Status: resp.StatusCode, Header: resp.Header, Body: raw}
	if Observe != nil {
		Observe(tb, hr, out)
	}
	return out
}

// Get is Do for a GET.
func (e *Env) Get(tb testing.TB, key, path string) *Response {
	tb.Helper()
	return e.Do(tb, Request{Method: http.MethodGet, Path: path, Key: key})
}

// Observe, when set, sees every request and response that Do sends, with the request's body
// readable again through GetBody. The OpenAPI conformance check hooks in here, so every test
// that talks to the REST API also checks the document.
var Observe func(tb testing.TB, req *http.Request, resp *Response)
