package server_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
	"github.com/creditd/creditd/database"
	"github.com/creditd/creditd/server"
)

// exportLine is one line of GET /v1/export.
type exportLine struct {
	Type        string          `json:"type"`
	AsOfEvent   *string         `json:"as_of_event"`
	StoreID     string          `json:"store_id"`
	Company     json.RawMessage `json:"company"`
	LedgerEntry json.RawMessage `json:"ledger_entry"`
	Invoice     json.RawMessage `json:"invoice"`
	Application json.RawMessage `json:"application"`
	Counts      map[string]int  `json:"counts"`
}

// openExport starts GET /v1/export on the server at url and returns the response, its body
// not yet read.
func openExport(t *testing.T, url, key, query string, header map[string]string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url+"/v1/export"+query, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// readExport reads an export's lines to the end; pause runs after each line read.
func readExport(t *testing.T, body io.Reader, pause func()) []exportLine {
	t.Helper()
	var out []exportLine
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var l exportLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		out = append(out, l)
		if pause != nil {
			pause()
		}
	}
	return out
}

// mustExport runs GET /v1/export through Env.Do (so the OpenAPI conformance check sees every
// line) and returns its lines, which must run from the header to export_end.
func mustExport(t *testing.T, env *credittest.Env, key, query string) []exportLine {
	t.Helper()
	resp := env.Get(t, key, "/v1/export"+query).WantStatus(t, 200)
	if ct := resp.Header.Get("Content-Type"); ct != "application/x-ndjson" {
		t.Fatalf("export: Content-Type %q", ct)
	}
	lines := readExport(t, bytes.NewReader(resp.Body), nil)
	if len(lines) < 2 || lines[0].Type != "export" || lines[len(lines)-1].Type != "export_end" {
		t.Fatalf("export: no header or no export_end: %+v", lines)
	}
	return lines
}

// TestExportIsEachRecordsGET: every line is its record exactly as its own GET returns it, in
// the contract's order, and the counts count them.
func TestExportIsEachRecordsGET(t *testing.T) {
	t.Parallel()
	env := credittest.New(t)
	st := env.MustStore(t, "Export", "EUR")
	key := env.MustKey(t, st, "erp", credit.ScopeReadCredit, credit.ScopeReadApplications)
	a := env.MustCompany(t, st, "A & <B>", "1000.00")
	b := env.MustCompany(t, st, "B", "500.00")
	env.MustRecord(t, order(a.ID, "gid://platform/Order/1", "100.00"))
	env.MustRecord(t, order(a.ID, "gid://platform/Order/2", "200.00"))
	env.MustRecord(t, credit.LedgerEntryInput{CompanyID: a.ID, Kind: credit.KindPayment, Amount: "-100.00", OrderGID: "gid://platform/Order/1"})
	env.MustRecord(t, order(b.ID, "gid://platform/Order/3", "50.00"))
	app := env.MustApplication(t, st, credit.ApplicationInput{BusinessName: "Applicant GmbH"})

	lines := mustExport(t, env, key, "?include=applications")
	if lines[0].StoreID != st || lines[0].AsOfEvent == nil {
		t.Fatalf("header %+v", lines[0])
	}
	var order []string
	entries := map[string][]json.RawMessage{}
	invoices := 0
	for _, l := range lines[1 : len(lines)-1] {
		if len(order) == 0 || order[len(order)-1] != l.Type {
			order = append(order, l.Type)
		}
		switch l.Type {
		case "company":
			var c credit.Company
			mustUnmarshal(t, l.Company, &c)
			got := env.Get(t, key, "/v1/companies/"+c.ID).WantStatus(t, 200).Body
			if string(got) != string(l.Company)+"\n" {
				t.Errorf("company line %s, GET %s", l.Company, got)
			}
		case "ledger_entry":
			var e credit.LedgerEntry
			mustUnmarshal(t, l.LedgerEntry, &e)
			entries[e.CompanyID] = append(entries[e.CompanyID], l.LedgerEntry)
		case "invoice":
			invoices++
			var inv credit.Invoice
			mustUnmarshal(t, l.Invoice, &inv)
			want, err := env.Service.Invoices.Get(credittest.Staff(st), inv.ID)
			if err != nil {
				t.Fatal(err)
			}
			wantJSON, _ := json.Marshal(want)
			if string(wantJSON) != string(l.Invoice) {
				t.Errorf("invoice line %s, view %s", l.Invoice, wantJSON)
			}
		case "application":
			got := env.Get(t, key, "/v1/applications/"+app.ID).WantStatus(t, 200).Body
			if string(got) != string(l.Application)+"\n" {
				t.Errorf("application line %s, GET %s", l.Application, got)
			}
		}
	}
	if !reflect.DeepEqual(order, []string{"company", "ledger_entry", "invoice", "application"}) {
		t.Errorf("order of the lines %v", order)
	}
	for _, c := range []string{a.ID, b.ID} {
		var page struct{ Data []json.RawMessage }
		env.Get(t, key, "/v1/companies/"+c+"/ledger?limit=250").WantStatus(t, 200).Decode(t, &page)
		if len(page.Data) != len(entries[c]) {
			t.Fatalf("company %s: %d entries exported, %d served", c, len(entries[c]), len(page.Data))
		}
		for i, e := range entries[c] { // the ledger serves newest first, the export oldest first
			if string(e) != string(page.Data[len(page.Data)-1-i]) {
				t.Errorf("entry %d of %s: %s, served %s", i, c, e, page.Data[len(page.Data)-1-i])
			}
		}
	}
	// gzip when accepted: the same lines, compressed.
	resp := openExport(t, env.Server.URL, key, "?include=applications", map[string]string{"Accept-Encoding": "gzip"})
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("export with Accept-Encoding gzip: %d, Content-Encoding %q", resp.StatusCode, resp.Header.Get("Content-Encoding"))
	}
	zr, err := gzip.NewReader(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if unzipped := readExport(t, zr, nil); len(unzipped) != len(lines) || unzipped[len(unzipped)-1].Type != "export_end" {
		t.Fatalf("gzip export: %d lines, want %d", len(unzipped), len(lines))
	}

	want := map[string]int{"companies": 2, "ledger_entries": 4, "invoices": 3, "applications": 1}
	if got := lines[len(lines)-1].Counts; !reflect.DeepEqual(got, want) || invoices != 3 {
		t.Errorf("counts %v, want %v", got, want)
	}
}

// TestExportRefusals: each bad input is an error answer with nothing streamed; an empty store
// is the header and export_end with zero counts.
func TestExportRefusals(t *testing.T) {
	t.Parallel()
	env := credittest.New(t)
	st := env.MustStore(t, "Export", "EUR")
	credits := env.MustKey(t, st, "erp", credit.ScopeReadCredit)
	apps := env.MustKey(t, st, "apps", credit.ScopeReadApplications)

	// A store with no company: the header, at the feed's newest event (the keys' creation),
	// and export_end with zero counts.
	lines := mustExport(t, env, credits, "")
	events, _ := mustFeed(t, env, credits, "", 250)
	if len(lines) != 2 || lines[0].AsOfEvent == nil || *lines[0].AsOfEvent != events[len(events)-1].ID {
		t.Fatalf("empty store: %+v", lines)
	}
	if want := map[string]int{"companies": 0, "ledger_entries": 0, "invoices": 0}; !reflect.DeepEqual(lines[1].Counts, want) {
		t.Fatalf("empty store's counts %v", lines[1].Counts)
	}

	env.Get(t, credits, "/v1/export?include=timeline").WantError(t, 400, "invalid_parameter", "include")
	env.Get(t, credits, "/v1/export?cursor=x").WantError(t, 400, "invalid_parameter", "cursor")
	env.Get(t, credits, "/v1/export?include=applications").WantError(t, 403, "insufficient_scope", "")
	env.Get(t, apps, "/v1/export").WantError(t, 403, "insufficient_scope", "")

	// Another export of the store holds the lock (here taken as the export takes it).
	release, ok, err := env.DB.TryLock(context.Background(), "creditd export "+st)
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	env.Get(t, credits, "/v1/export").WantError(t, 409, "export_in_progress", "")
	release()
	mustExport(t, env, credits, "")
}

// exportInstance is another creditd on env's database: its own service and server, as a
// second process would have (the lock of an export is the database's, not the process's).
func exportInstance(t *testing.T, env *credittest.Env, writeTimeout time.Duration, batch int) *credittest.Env {
	t.Helper()
	db, err := database.Open(context.Background(), env.DSN)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	svc := credit.New(db, credit.Options{Now: env.Clock.Now, ExportBatch: batch})
	h := server.New(server.Config{Service: svc, DB: db, Logger: slog.New(slog.NewJSONHandler(io.Discard, nil)), Now: env.Clock.Now, StreamWriteTimeout: writeTimeout, RateLimit: 1 << 20})
	ts := httptest.NewUnstartedServer(h)
	// Small send buffers (no autotuning), so that a client that stops reading stalls the
	// server's writes after a few kilobytes (TestExportSlowReaderAndLockAcrossInstances).
	ts.Listener = smallSendBuffers{ts.Listener}
	ts.Start()
	t.Cleanup(ts.Close)
	return &credittest.Env{ServiceEnv: &credittest.ServiceEnv{DBPath: env.DBPath, DSN: env.DSN, DB: db, Service: svc, Clock: env.Clock}, Server: ts, Handler: h}
}

// mirrorStore is a store with companies and orders on two instances of one database, and
// writers that keep both busy, for the mirror tests.
type mirrorStore struct {
	env, other *credittest.Env
	key        string
	companies  []credit.Company
	orders     atomic.Int64
}

func newMirrorStore(t *testing.T) *mirrorStore {
	t.Helper()
	// Batches of 3 rows, so that the writers' commits land between the export's reads.
	env := credittest.New(t, credittest.Options{
		ServiceOptions: func(o *credit.Options) { o.ExportBatch = 3 },
		ServerConfig:   func(c *server.Config) { c.RateLimit = 1 << 20 },
	})
	s := &mirrorStore{env: env, other: exportInstance(t, env, 0, 3)}
	st := env.MustStore(t, "Mirror", "EUR")
	s.key = env.MustKey(t, st, "erp", credit.ScopeReadCredit, credit.ScopeWriteCredit)
	for i := range 8 {
		s.companies = append(s.companies, env.MustCompany(t, st, fmt.Sprintf("Company %d", i), "100000.00"))
	}
	for i, c := range s.companies {
		env.MustRecord(t, order(c.ID, fmt.Sprintf("gid://platform/Order/%d", i+1), "10.00"))
	}
	s.orders.Store(1000)
	return s
}

// writers runs writers on both instances until the returned function is called: adjustments
// (which the allocation rule applies to open invoices), orders (each an invoice), payments of
// earlier orders, partial and then in full, and holds placed and lifted. A payment is a write
// of its own, so that a mirror sees it apart from its order.
func (s *mirrorStore) writers(t *testing.T) (stop func()) {
	var done atomic.Bool
	var wg sync.WaitGroup
	var mu sync.Mutex
	unpaid := map[string][]string{} // company ID -> orders not yet paid in full, oldest first
	paid := map[string]bool{}       // orders paid in part
	for w, inst := range []*credittest.Env{s.env, s.other} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; !done.Load(); i++ {
				c := s.companies[(i*3+w)%len(s.companies)]
				switch i % 5 {
				case 0:
					inst.Do(t, credittest.Request{Method: "POST", Path: "/v1/companies/" + c.ID + "/adjustments", Key: s.key,
						Body: map[string]any{"amount": "-1.50", "note": "goodwill"}})
				case 1:
					gid := fmt.Sprintf("gid://platform/Order/%d", s.orders.Add(1))
					inst.MustRecord(t, order(c.ID, gid, "7.25"))
					mu.Lock()
					unpaid[c.ID] = append(unpaid[c.ID], gid)
					mu.Unlock()
				case 2:
					mu.Lock()
					if len(unpaid[c.ID]) == 0 {
						mu.Unlock()
						continue
					}
					gid, amount := unpaid[c.ID][0], "-4.00"
					if paid[gid] {
						amount, unpaid[c.ID] = "-3.25", unpaid[c.ID][1:]
					}
					paid[gid] = true
					// Under the lock, so that the two payments of an order are in order.
					inst.MustRecord(t, credit.LedgerEntryInput{CompanyID: c.ID, Kind: credit.KindPayment, Amount: amount, OrderGID: gid})
					mu.Unlock()
				case 3:
					inst.Do(t, credittest.Request{Method: "POST", Path: "/v1/companies/" + c.ID + "/hold", Key: s.key, Body: map[string]any{"note": "check"}})
				case 4:
					inst.Do(t, credittest.Request{Method: "DELETE", Path: "/v1/companies/" + c.ID + "/hold", Key: s.key})
				}
			}
		}()
	}
	return func() { done.Store(true); wg.Wait() }
}

// slowExport reads a whole export from inst as a slow client with small buffers, so that the
// server's writes wait for it between batches; an export refused because the last one (cut)
// has not ended yet is tried again.
func (s *mirrorStore) slowExport(t *testing.T, inst *credittest.Env) []exportLine {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		req, _ := http.NewRequest(http.MethodGet, inst.Server.URL+"/v1/export", nil)
		req.Header.Set("Authorization", "Bearer "+s.key)
		resp, err := slowClient().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode == http.StatusConflict && time.Now().Before(deadline) {
			resp.Body.Close()
			time.Sleep(20 * time.Millisecond)
			continue
		}
		if resp.StatusCode != 200 {
			t.Fatalf("export: %d", resp.StatusCode)
		}
		defer resp.Body.Close()
		return readExport(t, resp.Body, func() { time.Sleep(time.Millisecond) })
	}
}

// cutExport starts an export on inst and goes away after reading n lines, as a client that
// crashed or lost its link does.
func (s *mirrorStore) cutExport(t *testing.T, inst *credittest.Env, n int) {
	t.Helper()
	resp := openExport(t, inst.Server.URL, s.key, "", nil)
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("export: %d", resp.StatusCode)
	}
	r := bufio.NewReader(resp.Body)
	for range n {
		if _, err := r.ReadBytes('\n'); err != nil {
			t.Fatal(err)
		}
	}
}

// TestExportMirrorFollowsTheFeed: writers on two instances append adjustments, orders,
// payments and holds while an export streams slowly; a mirror loaded from the export follows
// the feed from as_of_event, while the writers run and after, re-reading a company's invoices
// whenever one of its ledger entries arrives (the pattern of docs/sync.md). Once the writers
// stopped it equals GET for every company, every ledger and every invoice, with no entry
// missed or applied twice. In two rounds of three an export is first cut at a random point (the
// client goes away), and the mirror is loaded from the next one, on the other instance: the
// lock across the two instances refuses it only until the cut export has ended.
func TestExportMirrorFollowsTheFeed(t *testing.T) {
	t.Parallel()
	s := newMirrorStore(t)
	exported := 0
	for round := range 3 {
		stop := s.writers(t)
		from := s.other
		if round > 0 {
			// Cut anywhere from the header to the last line of the last export.
			s.cutExport(t, s.other, 1+rand.IntN(exported))
			from = s.env
		}
		lines := s.slowExport(t, from)
		exported = len(lines)
		m := mirrorOf(t, s.env, s.key, lines)
		for range 10 {
			time.Sleep(5 * time.Millisecond)
			m.follow(t)
		}
		stop()
		m.check(t)
	}
}

// TestExportMirrorFollowsASubscription: the same mirror, kept by a subscription that starts
// at the export's position (events(afterEvent: as_of_event), opened as soon as the export's
// header is read) instead of the feed: it receives every event after the export's snapshot, in
// the feed's order, none twice, and the mirror equals GET for every company, ledger and invoice.
func TestExportMirrorFollowsASubscription(t *testing.T) {
	t.Parallel()
	s := newMirrorStore(t)
	stop := s.writers(t)
	req, _ := http.NewRequest(http.MethodGet, s.other.Server.URL+"/v1/export", nil)
	req.Header.Set("Authorization", "Bearer "+s.key)
	resp, err := slowClient().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("export: %d", resp.StatusCode)
	}
	r := bufio.NewReader(resp.Body)
	header, err := r.ReadBytes('\n')
	if err != nil {
		t.Fatal(err)
	}
	var head exportLine
	mustUnmarshal(t, header, &head)

	ws := credittest.MustDialWS(t, s.env.Server.URL, s.key, credittest.WSOptions{})
	ws.Subscribe(t, "1", `subscription($after: ID) { events(afterEvent: $after) { id type occurredAt data } }`, map[string]any{"after": *head.AsOfEvent})
	received := make(chan feedEvent, 1<<16)
	defer func() {
		// The reader ends once its connection is closed, before the test does.
		ws.Close()
		for range received {
		}
	}()
	go func() {
		defer close(received)
		for {
			msg := ws.Read(t, 30*time.Second)
			if msg == nil || msg.Type != "next" {
				return
			}
			var p struct {
				Data struct {
					Events struct {
						ID, Type, OccurredAt string
						Data                 json.RawMessage
					}
				}
			}
			if err := json.Unmarshal(msg.Payload, &p); err != nil {
				t.Errorf("next %s: %v", msg.Payload, err)
				return
			}
			e := feedEvent{ID: p.Data.Events.ID, Type: p.Data.Events.Type, OccurredAt: p.Data.Events.OccurredAt}
			if err := json.Unmarshal(p.Data.Events.Data, &e.Data); err != nil {
				t.Errorf("event data %s: %v", p.Data.Events.Data, err)
				return
			}
			received <- e
		}
	}()

	lines := append([]exportLine{head}, readExport(t, r, func() { time.Sleep(time.Millisecond) })...)
	m := mirrorOf(t, s.env, s.key, lines)
	stop()
	// Everything the feed holds after the export's position arrives, in its order, once.
	want, _ := mustFeed(t, s.env, s.key, "?after="+*head.AsOfEvent, 250)
	for i, w := range want {
		var e feedEvent
		select {
		case got, ok := <-received:
			if !ok {
				t.Fatalf("the subscription ended after %d events of %d", i, len(want))
			}
			e = got
		case <-time.After(10 * time.Second):
			t.Fatalf("the subscription delivered %d events of %d in 10 s", i, len(want))
		}
		if e.ID != w.ID {
			t.Fatalf("event %d: the subscription sent %s (%s), the feed has %s (%s)", i, e.ID, e.Type, w.ID, w.Type)
		}
		m.apply(t, e)
	}
	m.refreshInvoices(t)
	m.check(t)
	if len(want) == 0 {
		t.Fatal("no write landed after the export's snapshot")
	}
}

// exportMirror is a mirror loaded from an export and kept by the feed: companies and ledgers
// from the events, and each company's invoices re-read (GET /v1/companies/{id}/invoices) when a
// ledger entry of the company arrives, since every change of an invoice comes with one (an
// order, a payment, a credit, an adjustment that the allocation rule applies) until invoice
// events exist.
type exportMirror struct {
	env     *credittest.Env
	key     string
	feed    *feedMirror
	entries map[string][]string // company ID -> entry IDs, oldest first
	seen    map[string]bool
	// invoices are by ID, as GET shows them; stale names the companies whose invoices are to
	// be re-read.
	invoices map[string]map[string]any
	stale    map[string]bool
}

func mirrorOf(t *testing.T, env *credittest.Env, key string, lines []exportLine) *exportMirror {
	t.Helper()
	if lines[len(lines)-1].Type != "export_end" {
		t.Fatal("export cut")
	}
	m := &exportMirror{env: env, key: key,
		feed:    &feedMirror{env: env, key: key, companies: map[string]map[string]any{}, buffer: decimal.RequireFromString("0.05")},
		entries: map[string][]string{}, seen: map[string]bool{}, invoices: map[string]map[string]any{}, stale: map[string]bool{}}
	if lines[0].AsOfEvent != nil {
		m.feed.after = *lines[0].AsOfEvent
	}
	for _, l := range lines {
		switch l.Type {
		case "company":
			var c map[string]any
			mustUnmarshal(t, l.Company, &c)
			m.feed.companies[c["id"].(string)] = c
		case "ledger_entry":
			var e credit.LedgerEntry
			mustUnmarshal(t, l.LedgerEntry, &e)
			m.add(t, e)
		case "invoice":
			var inv map[string]any
			mustUnmarshal(t, l.Invoice, &inv)
			m.invoices[inv["id"].(string)] = inv
		}
	}
	return m
}

func (m *exportMirror) add(t *testing.T, e credit.LedgerEntry) {
	t.Helper()
	if m.seen[e.ID] {
		t.Fatalf("entry %s applied twice", e.ID)
	}
	m.seen[e.ID] = true
	m.entries[e.CompanyID] = append(m.entries[e.CompanyID], e.ID)
}

// apply applies one event, the next after the mirror's position.
func (m *exportMirror) apply(t *testing.T, e feedEvent) {
	t.Helper()
	m.feed.apply(t, e)
	if e.Type == string(credit.EventTypeLedgerEntryCreated) {
		var entry credit.LedgerEntry
		mustUnmarshal(t, e.Data.Object, &entry)
		m.add(t, entry)
		m.stale[entry.CompanyID] = true
	}
}

// refreshInvoices re-reads the invoices of every company that had a ledger entry since the
// last refresh.
func (m *exportMirror) refreshInvoices(t *testing.T) {
	t.Helper()
	for company := range m.stale {
		for id, inv := range m.invoices {
			if inv["company_id"] == company {
				delete(m.invoices, id)
			}
		}
		for id, inv := range m.servedInvoices(t, company) {
			m.invoices[id] = inv
		}
	}
	clear(m.stale)
}

// servedInvoices returns a company's invoices as GET /v1/companies/{id}/invoices lists them.
func (m *exportMirror) servedInvoices(t *testing.T, company string) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	for _, p := range m.env.WalkPages(t, m.key, "/v1/companies/"+company+"/invoices?limit=250", nil) {
		for _, item := range p.Data {
			var inv map[string]any
			mustUnmarshal(t, item, &inv)
			out[inv["id"].(string)] = inv
		}
	}
	return out
}

// follow applies the feed's events after the mirror's position, then re-reads the invoices of
// the companies they touched.
func (m *exportMirror) follow(t *testing.T) {
	t.Helper()
	events, _ := mustFeed(t, m.env, m.key, "?after="+m.feed.after, 250)
	for _, e := range events {
		m.apply(t, e)
	}
	m.refreshInvoices(t)
}

// check follows the feed to its end, then compares the mirror with GET: every company, its
// ledger, its invoices (the list), and every invoice (GET /v1/invoices/{id}).
func (m *exportMirror) check(t *testing.T) {
	t.Helper()
	m.follow(t)
	mirroredInvoices := map[string]map[string]map[string]any{} // company -> ID -> invoice
	for id, inv := range m.invoices {
		company := inv["company_id"].(string)
		if mirroredInvoices[company] == nil {
			mirroredInvoices[company] = map[string]map[string]any{}
		}
		mirroredInvoices[company][id] = inv
		var served map[string]any
		m.env.Get(t, m.key, "/v1/invoices/"+id).WantStatus(t, 200).Decode(t, &served)
		if !reflect.DeepEqual(served, inv) {
			t.Errorf("invoice %s: mirror %v, GET %v", id, inv, served)
		}
	}
	for id, mirrored := range m.feed.companies {
		var served map[string]any
		m.env.Get(t, m.key, "/v1/companies/"+id).WantStatus(t, 200).Decode(t, &served)
		if !reflect.DeepEqual(served, mirrored) {
			t.Errorf("company %s: mirror %v, GET %v", id, mirrored, served)
		}
		var ids []string
		for _, p := range m.env.WalkPages(t, m.key, "/v1/companies/"+id+"/ledger?limit=250", nil) {
			for _, item := range p.Data {
				var e credit.LedgerEntry
				mustUnmarshal(t, item, &e)
				ids = append([]string{e.ID}, ids...)
			}
		}
		if !reflect.DeepEqual(ids, m.entries[id]) {
			t.Errorf("company %s: mirrored entries %v, served %v", id, m.entries[id], ids)
		}
		served2 := m.servedInvoices(t, id)
		if len(served2) == 0 {
			t.Errorf("company %s: no invoice served", id)
		}
		if mine := mirroredInvoices[id]; !(len(mine) == 0 && len(served2) == 0) && !reflect.DeepEqual(mine, served2) {
			t.Errorf("company %s: mirrored invoices %v, served %v", id, mine, served2)
		}
	}
}

// TestExportSlowReaderAndLockAcrossInstances: while a client that reads nothing holds an
// export, another instance refuses a second export of the store (the lock is the
// database's); once the write deadline passes, the stalled export is cut off and its lock
// and snapshot are released, so the next export runs.
func TestExportSlowReaderAndLockAcrossInstances(t *testing.T) {
	t.Parallel()
	env := credittest.New(t)
	other := exportInstance(t, env, 300*time.Millisecond, 0)
	st := env.MustStore(t, "Slow", "EUR")
	key := env.MustKey(t, st, "erp", credit.ScopeReadCredit)
	// Enough lines to fill the sockets' buffers between a server and a client that reads
	// nothing (the client's receive buffer is made small).
	for i := range 200 {
		c := env.MustCompany(t, st, fmt.Sprintf("A company with a rather long name to fill the buffers, number %d", i), "1000.00")
		_ = c
	}
	stalled := slowClient()
	req, _ := http.NewRequest(http.MethodGet, other.Server.URL+"/v1/export", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := stalled.Do(req)
	_ = env
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("export: %d", resp.StatusCode)
	}
	// The export is stuck writing: the other instance refuses a second one.
	env.Get(t, key, "/v1/export").WantError(t, 409, "export_in_progress", "")
	// Past the write deadline the stalled export ends, and the next one runs to its end.
	waitFor(t, func() bool {
		r := openExport(t, env.Server.URL, key, "", nil)
		defer r.Body.Close()
		_, _ = io.Copy(io.Discard, r.Body)
		return r.StatusCode == 200
	})
	lines := mustExport(t, env, key, "")
	if got := lines[len(lines)-1].Counts["companies"]; got != 200 {
		t.Fatalf("companies %d", got)
	}
	// The stalled client, reading now, finds its stream cut: no export_end.
	body, _ := io.ReadAll(resp.Body)
	if bytes.Contains(body, []byte(`"export_end"`)) {
		t.Fatal("the stalled export was not cut off")
	}
}

// smallSendBuffers gives each accepted connection a 4 KiB send buffer.
type smallSendBuffers struct{ net.Listener }

func (l smallSendBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetWriteBuffer(4096)
	}
	return c, err
}

// slowClient is an HTTP client whose connections have a 4 KiB receive buffer and no gzip, so
// that a server writing to it waits as soon as it stops reading.
func slowClient() *http.Client {
	dialer := &net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		return c.Control(func(fd uintptr) { _ = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
	}}
	return &http.Client{Transport: &http.Transport{DialContext: dialer.DialContext, DisableCompression: true}}
}
