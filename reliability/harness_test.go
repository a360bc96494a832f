package reliability_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/creditd/creditd/httpapi"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
	"github.com/creditd/creditd/ids"
	"github.com/creditd/creditd/server"
)

// newEnv starts creditd with a rate limit no test here reaches: these tests send thousands of
// requests for one store on purpose.
func newEnv(tb testing.TB) *credittest.Env {
	tb.Helper()
	return credittest.New(tb, credittest.Options{ServerConfig: func(c *server.Config) { c.RateLimit = 1 << 30 }})
}

// canaryStore is a store whose every record carries values found nowhere else: a tag inside
// each name, note, label and address, distinctive GID and VAT digits, and the records' IDs.
// Another store's key must never see one of these bytes.
type canaryStore struct {
	n        int
	tag      string
	id       string
	key      string // secret with every scope
	keyID    string
	keyLabel string
	// company has ledger entries (an order, a payment, an API adjustment), an API limit change
	// and an API hold; company2 has no hold, so hold routes meet both states.
	company, company2 string
	entries           []string
	events            []string // timeline events
	// feedEvents are the store's event feed (GET /v1/events), oldest first.
	feedEvents []string
	// application and application2 are two applications, so application lists have pages.
	application, application2 string
	// invoice is the invoice company's order opened.
	invoice string
	// canaries are every distinctive string of the store, IDs and secret included.
	canaries []string
}

// idsByKind returns the store's record IDs by kind: what a foreign caller may try to name.
func (s canaryStore) idsByKind() map[string][]string {
	return map[string][]string{
		"company":     {s.company, s.company2},
		"entry":       s.entries,
		"event":       s.events,
		"feed_event":  s.feedEvents,
		"application": {s.application, s.application2},
		"invoice":     {s.invoice},
		"store":       {s.id},
		"key":         {s.keyID},
	}
}

// allIDs returns every record ID of the store.
func (s canaryStore) allIDs() []string {
	var out []string
	for _, kind := range []string{"company", "entry", "event", "feed_event", "application", "invoice", "store", "key"} {
		out = append(out, s.idsByKind()[kind]...)
	}
	return out
}

// mustCanaryStore creates store number n (0-99) with its canary data, writing through the HTTP
// API where the API writes (so key labels reach holds and timelines) and through the admin side
// for the rest.
func mustCanaryStore(tb testing.TB, env *credittest.Env, n int) canaryStore {
	tb.Helper()
	s := canaryStore{n: n, tag: fmt.Sprintf("CNRY%02d%s", n, ids.Random(10))}
	gidNum := fmt.Sprintf("77%02d%09d", n, 424242424)
	orderNum := fmt.Sprintf("88%02d%09d", n, 535353535)
	vatNum := fmt.Sprintf("DE99%02d%07d", n, 6464646)
	email := strings.ToLower(s.tag) + "@canary.example"
	s.id = env.MustStore(tb, "Store "+s.tag, "EUR")
	s.keyLabel = "key " + s.tag
	k := env.MustIssuedKey(tb, s.id, s.keyLabel, credit.AllScopes...)
	s.key, s.keyID = k.Secret, k.ID
	for i, name := range []string{"Company ", "Second "} {
		c, err := env.Service.Companies.Create(credittest.Staff(s.id), credit.CompanyInput{
			Name: name + s.tag, PlatformCompanyGID: fmt.Sprintf("gid://platform/Company/%s%d", gidNum, i),
			PaymentTerms: "NET_30", CreditLimit: "5000.00",
		})
		if err != nil {
			tb.Fatalf("create company: %v", err)
		}
		if i == 0 {
			s.company = c.ID
		} else {
			s.company2 = c.ID
		}
	}
	order := "gid://platform/Order/" + orderNum
	s.entries = append(s.entries,
		env.MustRecord(tb, credit.LedgerEntryInput{CompanyID: s.company, Kind: credit.KindOrderPlaced, Amount: "120.00", OrderGID: order, Note: "order " + s.tag}).ID,
		env.MustRecord(tb, credit.LedgerEntryInput{CompanyID: s.company, Kind: credit.KindPayment, Amount: "-20.00", OrderGID: order, Note: "payment " + s.tag}).ID)
	invoices, err := env.Service.Invoices.List(credittest.Staff(s.id), s.company, credit.InvoiceListParams{})
	if err != nil || len(invoices.Data) != 1 {
		tb.Fatalf("invoices: %v %v", invoices, err)
	}
	s.invoice = invoices.Data[0].ID
	co := "/v1/companies/" + s.company
	var adj credit.AdjustmentResult
	env.Do(tb, credittest.Request{Method: "POST", Path: co + "/adjustments", Key: s.key, Body: map[string]string{"amount": "-7.00", "note": "adjustment " + s.tag}}).WantStatus(tb, 201).Decode(tb, &adj)
	s.entries = append(s.entries, adj.LedgerEntry.ID)
	env.Do(tb, credittest.Request{Method: "PUT", Path: co + "/credit-limit", Key: s.key, Body: map[string]string{"amount": "6000.00", "reason": "reason " + s.tag}}).WantStatus(tb, 200)
	env.Do(tb, credittest.Request{Method: "POST", Path: co + "/hold", Key: s.key, Body: map[string]string{"note": "hold " + s.tag}}).WantStatus(tb, 200)
	for i, prefix := range []string{"", "other-"} {
		app, err := env.Service.Applications.Create(credittest.Staff(s.id), credit.ApplicationInput{
			BusinessName: prefix + "Business " + s.tag, VATNumber: vatNum, VATStatus: "valid", VATRegistry: "REG" + s.tag,
			ContactName: prefix + "Contact " + s.tag, ContactEmail: prefix + email,
		})
		if err != nil {
			tb.Fatalf("create application: %v", err)
		}
		if i == 0 {
			s.application = app.ID
		} else {
			s.application2 = app.ID
		}
	}
	timeline, err := env.Service.Timeline.List(credittest.Admin(), s.company, credit.ListParams{})
	if err != nil {
		tb.Fatalf("timeline: %v", err)
	}
	for _, ev := range timeline.Data {
		s.events = append(s.events, ev.ID)
	}
	if len(s.events) != 5 {
		tb.Fatalf("store %d has %d timeline events, want 5 (the order and the payment recorded as staff, adjustment, limit, hold)", n, len(s.events))
	}
	feed, err := env.Service.Events.List(credittest.Staff(s.id), credit.EventListParams{})
	if err != nil {
		tb.Fatalf("events: %v", err)
	}
	for _, ev := range feed.Data {
		s.feedEvents = append(s.feedEvents, ev.ID)
	}
	s.canaries = append([]string{s.tag, strings.ToLower(s.tag), gidNum, orderNum, vatNum, email, s.key}, s.allIDs()...)
	return s
}

// leaks returns the canaries of others found in body.
func leaks(body []byte, others ...canaryStore) []string {
	var found []string
	for _, o := range others {
		for _, c := range o.canaries {
			if bytes.Contains(body, []byte(c)) {
				found = append(found, fmt.Sprintf("store %d's %q", o.n, c))
			}
		}
	}
	return found
}

// serve sends one request straight to the handler: the whole server (request ids, auth, rate
// limit, routing, REST and GraphQL) without a socket, so fuzzing spends its time on parsing
// rather than on TCP.
func serve(h http.Handler, method, target, key string, header http.Header, body []byte) *httptest.ResponseRecorder {
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req := httptest.NewRequest(method, target, r)
	for k, v := range header {
		req.Header[k] = v
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// serveRawQuery is serve for a GET whose query string is sent exactly as given, as a client
// that does not encode it would. It reports false for a query string that cannot stand in an
// HTTP request line (spaces, control characters, a fragment): net/http refuses those itself.
func serveRawQuery(h http.Handler, path, rawQuery, key string) (*httptest.ResponseRecorder, bool) {
	for i := 0; i < len(rawQuery); i++ {
		if c := rawQuery[i]; c <= ' ' || c == 0x7f || c == '#' {
			return nil, false
		}
	}
	req := httptest.NewRequest(http.MethodGet, path, nil)
	req.URL.RawQuery = rawQuery
	req.RequestURI = path + "?" + rawQuery
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec, true
}

// validHeaderValue reports whether net/http's server would accept v as a header value (it
// refuses control characters other than tab with 400 before any handler runs). Fuzzed header
// values it would refuse are skipped: the handler never sees them.
func validHeaderValue(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; (c < 0x20 && c != '\t') || c == 0x7f {
			return false
		}
	}
	return true
}

// apiError is the REST error object.
type apiError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Param   string `json:"param"`
}

// checkREST fails unless rec is a well-formed REST answer that is not a server fault: status
// below 500, a JSON body, and for an error the contract's shape with a code whose status is the
// one answered. It returns the error (zero for a success).
func checkREST(t testing.TB, what string, rec *httptest.ResponseRecorder) apiError {
	t.Helper()
	body := rec.Body.Bytes()
	if rec.Code >= 500 {
		t.Fatalf("%s: status %d: %s", what, rec.Code, body)
	}
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Fatalf("%s: Content-Type %q", what, ct)
	}
	if !json.Valid(body) {
		t.Fatalf("%s: body is not JSON: %q", what, body)
	}
	if rec.Code < 400 {
		return apiError{}
	}
	var e struct {
		Error *apiError `json:"error"`
	}
	if err := json.Unmarshal(body, &e); err != nil || e.Error == nil || e.Error.Code == "" || e.Error.Message == "" {
		t.Fatalf("%s: error body not in the contract's shape: %s", what, body)
	}
	if got := httpapi.Status(credit.Code(e.Error.Code)); got != rec.Code || e.Error.Code == string(httpapi.CodeInternal) {
		t.Fatalf("%s: status %d with code %s (whose status is %d): %s", what, rec.Code, e.Error.Code, got, body)
	}
	return *e.Error
}

// gqlResponse is a GraphQL response body.
type gqlResponse struct {
	Data   map[string]json.RawMessage `json:"data"`
	Errors []struct {
		Message    string         `json:"message"`
		Path       []any          `json:"path"`
		Extensions map[string]any `json:"extensions"`
	} `json:"errors"`
}

// codes returns the extensions.code of each error.
func (g gqlResponse) codes() []string {
	var out []string
	for _, e := range g.Errors {
		c, _ := e.Extensions["code"].(string)
		out = append(out, c)
	}
	return out
}

// checkGraphQL fails unless rec is a well-formed GraphQL answer that is not a server fault:
// status below 500, a JSON body in GraphQL's form (requests refused before GraphQL runs are
// answered in it too), and every error with a contract code other than internal_error (a
// resolver's panic becomes internal_error inside a 200, so the status alone would miss it).
func checkGraphQL(t testing.TB, what string, rec *httptest.ResponseRecorder) gqlResponse {
	t.Helper()
	body := rec.Body.Bytes()
	if rec.Code >= 500 {
		t.Fatalf("%s: status %d: %s", what, rec.Code, body)
	}
	if !json.Valid(body) {
		t.Fatalf("%s: body is not JSON: %q", what, body)
	}
	var g gqlResponse
	if err := json.Unmarshal(body, &g); err != nil {
		t.Fatalf("%s: not a GraphQL response: %v: %s", what, err, body)
	}
	if g.Data == nil && len(g.Errors) == 0 {
		t.Fatalf("%s: neither data nor errors: %s", what, body)
	}
	for _, c := range g.codes() {
		if c == "" || c == string(httpapi.CodeInternal) || httpapi.Status(credit.Code(c)) >= 500 {
			t.Fatalf("%s: error code %q: %s", what, c, body)
		}
	}
	return g
}
