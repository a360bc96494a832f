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

// TestExportMirrorFollowsTheFeed: writers on two instances append adjustments, orders,
// payments and holds while an export streams slowly; a mirror loaded from the export and
// then the feed from as_of_event equals GET for every company and every ledger, with no entry
// missed or applied twice. Some exports are cut at a random point and started again, and the
// lock across the two instances refuses a second export while one runs.
func TestExportMirrorFollowsTheFeed(t *testing.T) {
	t.Parallel()
	// Batches of 3 rows, so that the writers' commits land between the export's reads.
	env := credittest.New(t, credittest.Options{
		ServiceOptions: func(o *credit.Options) { o.ExportBatch = 3 },
		ServerConfig:   func(c *server.Config) { c.RateLimit = 1 << 20 },
	})
	other := exportInstance(t, env, 0, 3)
	st := env.MustStore(t, "Mirror", "EUR")
	key := env.MustKey(t, st, "erp", credit.ScopeReadCredit, credit.ScopeWriteCredit)
	var companies []credit.Company
	for i := range 8 {
		companies = append(companies, env.MustCompany(t, st, fmt.Sprintf("Company %d", i), "100000.00"))
	}
	for i, c := range companies {
		env.MustRecord(t, order(c.ID, fmt.Sprintf("gid://platform/Order/%d", i+1), "10.00"))
	}

	// writers runs writers on both instances until the returned function is called.
	var orders atomic.Int64
	orders.Store(1000)
	writers := func() (stop func()) {
		var done atomic.Bool
		var wg sync.WaitGroup
		for w, inst := range []*credittest.Env{env, other} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; !done.Load(); i++ {
					c := companies[(i*3+w)%len(companies)]
					switch i % 4 {
					case 0:
						inst.Do(t, credittest.Request{Method: "POST", Path: "/v1/companies/" + c.ID + "/adjustments", Key: key,
							Body: map[string]any{"amount": "-1.50", "note": "goodwill"}})
					case 1:
						n := orders.Add(1)
						gid := fmt.Sprintf("gid://platform/Order/%d", n)
						inst.MustRecord(t, order(c.ID, gid, "7.25"))
						inst.MustRecord(t, credit.LedgerEntryInput{CompanyID: c.ID, Kind: credit.KindPayment, Amount: "-7.25", OrderGID: gid})
					case 2:
						inst.Do(t, credittest.Request{Method: "POST", Path: "/v1/companies/" + c.ID + "/hold", Key: key, Body: map[string]any{"note": "check"}})
					case 3:
						inst.Do(t, credittest.Request{Method: "DELETE", Path: "/v1/companies/" + c.ID + "/hold", Key: key})
					}
				}
			}()
		}
		return func() { done.Store(true); wg.Wait() }
	}

	for round := range 3 {
		stop := writers()
		// A slow client with small buffers: the server's writes wait for it between batches.
		req, _ := http.NewRequest(http.MethodGet, other.Server.URL+"/v1/export", nil)
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := slowClient().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != 200 {
			t.Fatalf("export: %d", resp.StatusCode)
		}
		lines := readExport(t, resp.Body, func() { time.Sleep(2 * time.Millisecond) })
		resp.Body.Close()
		if round == 1 {
			// Cut at a random point: the client goes away; the lock and the snapshot are
			// released at once, so the next export (on the other instance) starts.
			resp := openExport(t, other.Server.URL, key, "", nil)
			r := bufio.NewReader(resp.Body)
			for range 1 + time.Now().Nanosecond()%5 {
				if _, err := r.ReadBytes('\n'); err != nil {
					t.Fatal(err)
				}
			}
			resp.Body.Close()
			waitFor(t, func() bool {
				resp := openExport(t, env.Server.URL, key, "", nil)
				defer resp.Body.Close()
				_, _ = io.Copy(io.Discard, resp.Body)
				return resp.StatusCode == 200
			})
		}
		m := mirrorOf(t, env, key, lines)
		stop()
		m.check(t, env, key)
	}
}

// exportMirror is a mirror loaded from an export and kept by the feed.
type exportMirror struct {
	feed    *feedMirror
	entries map[string][]string // company ID -> entry IDs, oldest first
	seen    map[string]bool
}

func mirrorOf(t *testing.T, env *credittest.Env, key string, lines []exportLine) *exportMirror {
	t.Helper()
	if lines[len(lines)-1].Type != "export_end" {
		t.Fatal("export cut")
	}
	m := &exportMirror{feed: &feedMirror{env: env, key: key, companies: map[string]map[string]any{}, buffer: decimal.RequireFromString("0.05")},
		entries: map[string][]string{}, seen: map[string]bool{}}
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

// check follows the feed from the export's position, then compares the mirror with GET.
func (m *exportMirror) check(t *testing.T, env *credittest.Env, key string) {
	t.Helper()
	events, _ := mustFeed(t, env, key, "?after="+m.feed.after+"&type=ledger_entry.created", 250)
	for _, e := range events {
		var entry credit.LedgerEntry
		mustUnmarshal(t, e.Data.Object, &entry)
		m.add(t, entry)
	}
	m.feed.follow(t)
	for id, mirrored := range m.feed.companies {
		var served map[string]any
		env.Get(t, key, "/v1/companies/"+id).WantStatus(t, 200).Decode(t, &served)
		if !reflect.DeepEqual(served, mirrored) {
			t.Errorf("company %s: mirror %v, GET %v", id, mirrored, served)
		}
		var ids []string
		for _, p := range env.WalkPages(t, key, "/v1/companies/"+id+"/ledger?limit=250", nil) {
			for _, item := range p.Data {
				var e credit.LedgerEntry
				mustUnmarshal(t, item, &e)
				ids = append([]string{e.ID}, ids...)
			}
		}
		if !reflect.DeepEqual(ids, m.entries[id]) {
			t.Errorf("company %s: mirrored entries %v, served %v", id, m.entries[id], ids)
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
