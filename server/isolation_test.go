package server_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
	"github.com/creditd/creditd/ids"
	"github.com/creditd/creditd/rest"
	"github.com/creditd/creditd/server"
)

// routeCase says how the isolation and scope tests call one /v1 route. Every route of
// rest.API.Routes needs one: a route added without a case fails these tests.
type routeCase struct {
	// idKind is the kind of record {id} names ("company", "application"), or "" for a list.
	idKind string
	// scope is the scope the route needs.
	scope string
	// body is a valid request body, or nil.
	body any
	// alsoScope is a second scope that opens the route on its own (the event feed, where each
	// read scope sees its own event types), or "".
	alsoScope string
	// query is a query string the route needs to answer (the statement's period, in the
	// days of the test clock), or "".
	query string
}

// scopeMessage is the 403 message of a key with neither of the route's scopes.
func (rc routeCase) scopeMessage() string {
	if rc.alsoScope != "" {
		return "this call needs scope " + rc.scope + " or " + rc.alsoScope
	}
	return "this call needs scope " + rc.scope
}

var routeCases = map[string]routeCase{
	"GET /v1/companies":                        {scope: credit.ScopeReadCredit},
	"GET /v1/companies/{id}":                   {idKind: "company", scope: credit.ScopeReadCredit},
	"GET /v1/companies/{id}/ledger":            {idKind: "company", scope: credit.ScopeReadCredit},
	"GET /v1/companies/{id}/invoices":          {idKind: "company", scope: credit.ScopeReadCredit},
	"GET /v1/invoices/{id}":                    {idKind: "invoice", scope: credit.ScopeReadCredit},
	"GET /v1/companies/{id}/statement":         {idKind: "company", scope: credit.ScopeReadCredit, query: "from=2026-03-01&to=2026-03-02"},
	"GET /v1/companies/{id}/payment-behaviour": {idKind: "company", scope: credit.ScopeReadCredit},
	"GET /v1/applications":                     {scope: credit.ScopeReadApplications},
	"GET /v1/applications/{id}":                {idKind: "application", scope: credit.ScopeReadApplications},
	"POST /v1/companies/{id}/adjustments":      {idKind: "company", scope: credit.ScopeWriteCredit, body: map[string]string{"amount": "10.00", "note": "goodwill"}},
	"PUT /v1/companies/{id}/credit-limit":      {idKind: "company", scope: credit.ScopeWriteCredit, body: map[string]string{"amount": "99999.00"}},
	"POST /v1/companies/{id}/hold":             {idKind: "company", scope: credit.ScopeWriteCredit, body: map[string]string{"note": "x"}},
	"DELETE /v1/companies/{id}/hold":           {idKind: "company", scope: credit.ScopeWriteCredit},
	"POST /v1/invoices/{id}/promise":           {idKind: "invoice", scope: credit.ScopeWriteCredit, body: map[string]string{"promised_for": "2026-03-10"}},
	"DELETE /v1/invoices/{id}/promise":         {idKind: "invoice", scope: credit.ScopeWriteCredit},
	"POST /v1/invoices/{id}/dispute":           {idKind: "invoice", scope: credit.ScopeWriteCredit, body: map[string]string{"reason": "x"}},
	"DELETE /v1/invoices/{id}/dispute":         {idKind: "invoice", scope: credit.ScopeWriteCredit},
	"GET /v1/events":                           {scope: credit.ScopeReadCredit, alsoScope: credit.ScopeReadApplications},
	"GET /v1/events/{id}":                      {idKind: "event", scope: credit.ScopeReadCredit, alsoScope: credit.ScopeReadApplications},
	"GET /v1/export":                           {scope: credit.ScopeReadCredit},
}

// routesWithCases returns every /v1 route with its case, failing for a route without one.
func routesWithCases(t *testing.T) []rest.Route {
	t.Helper()
	routes := rest.NewWith(rest.Services{}).Routes()
	if len(routes) == 0 {
		t.Fatal("rest.API lists no routes")
	}
	for _, rt := range routes {
		if _, ok := routeCases[rt.Pattern]; !ok {
			t.Errorf("route %q has no case in routeCases: say how the isolation and scope tests call it", rt.Pattern)
		}
	}
	if t.Failed() {
		t.FailNow()
	}
	return routes
}

// routeRequest builds the request for pattern with {id} replaced.
func routeRequest(pattern, id, key string) credittest.Request {
	method, path, _ := strings.Cut(pattern, " ")
	path = strings.ReplaceAll(path, "{id}", id)
	if q := routeCases[pattern].query; q != "" {
		path += "?" + q
	}
	return credittest.Request{Method: method, Path: path, Key: key, Body: routeCases[pattern].body}
}

// storeWithData is a store with a company (with two adjustments, an order of 50.00, so an
// invoice, and a manual hold) and an application, and a key with every scope.
type storeWithData struct {
	id, key     string
	company     string
	entries     []string
	application string
	invoice     string
	events      []string // every event of the store, oldest first
}

func mustStoreWithData(t *testing.T, env *credittest.Env, name string) storeWithData {
	t.Helper()
	s := storeWithData{id: env.MustStore(t, name, "EUR")}
	s.key = env.MustKey(t, s.id, name+" full", credit.AllScopes...)
	s.company = env.MustCompany(t, s.id, name+" Buyer", "5000").ID
	for _, amount := range []string{"100", "200"} {
		s.entries = append(s.entries, env.MustRecord(t, credit.LedgerEntryInput{CompanyID: s.company, Kind: credit.KindAdjustment, Amount: amount, Note: "n"}).ID)
	}
	env.MustRecord(t, credit.LedgerEntryInput{CompanyID: s.company, Kind: credit.KindOrderPlaced, Amount: "50", OrderGID: "gid://platform/Order/7001"})
	invoices, err := env.Service.Invoices.List(credittest.Staff(s.id), s.company, credit.InvoiceListParams{})
	if err != nil || len(invoices.Data) != 1 {
		t.Fatalf("invoices: %v %v", invoices, err)
	}
	s.invoice = invoices.Data[0].ID
	mustStaffHold(t, env, s.id, s.company, "held")
	s.application = env.MustApplication(t, s.id, credit.ApplicationInput{BusinessName: name + " Applicant", ContactEmail: strings.ToLower(name) + "@example.com"}).ID
	events, err := env.Service.Events.List(credittest.Staff(s.id), credit.EventListParams{})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range events.Data {
		s.events = append(s.events, e.ID)
	}
	return s
}

func (s storeWithData) idOf(kind string) string {
	switch kind {
	case "company":
		return s.company
	case "application":
		return s.application
	case "event":
		return s.events[0]
	case "invoice":
		return s.invoice
	}
	panic("unknown id kind " + kind)
}

// unknownIDOf returns a well-formed ID of kind that no store has.
func unknownIDOf(kind string) string {
	return map[string]string{"company": ids.New("co"), "application": ids.New("app"), "event": ids.New("ev"), "invoice": ids.New("inv")}[kind]
}

func TestForeignIDsAnswerLikeUnknownIDs(t *testing.T) {
	t.Parallel()
	env := credittest.New(t, credittest.Options{ServerConfig: func(c *server.Config) { c.RateLimit = 1_000_000 }})
	mine := mustStoreWithData(t, env, "Mine")
	theirs := mustStoreWithData(t, env, "Theirs")
	before := map[string][]byte{}
	for _, p := range []string{"/v1/companies/" + theirs.company, "/v1/companies/" + theirs.company + "/ledger", "/v1/applications/" + theirs.application} {
		before[p] = env.Get(t, theirs.key, p).WantStatus(t, 200).Body
	}

	for _, rt := range routesWithCases(t) {
		rc := routeCases[rt.Pattern]
		t.Run(rt.Pattern, func(t *testing.T) {
			if rc.idKind == "" {
				// A list shows the key's own store only.
				r := env.Do(t, routeRequest(rt.Pattern, "", mine.key))
				for _, id := range slices.Concat([]string{theirs.company, theirs.application}, theirs.entries, theirs.events) {
					if strings.Contains(string(r.Body), id) {
						t.Errorf("%s lists another store's %s", rt.Pattern, id)
					}
				}
				if rt.Pattern == "GET /v1/export" {
					// The whole store: its company, its two entries, nothing of the other's.
					if !strings.Contains(string(r.Body), mine.company) || !strings.Contains(string(r.Body), mine.entries[1]) {
						t.Errorf("%s misses the store's own records: %s", rt.Pattern, r.Body)
					}
					return
				}
				if rt.Pattern == "GET /v1/events" {
					if got := r.ListPage(t).IDs(t); !slices.Equal(got, mine.events) {
						t.Errorf("%s lists %v, want the store's own events %v", rt.Pattern, got, mine.events)
					}
					return
				}
				if got := r.ListPage(t).IDs(t); len(got) != 1 || (got[0] != mine.company && got[0] != mine.application) {
					t.Errorf("%s lists %v, want only the store's own record", rt.Pattern, got)
				}
				return
			}
			unknown := env.Do(t, routeRequest(rt.Pattern, unknownIDOf(rc.idKind), mine.key))
			unknown.WantError(t, 404, "not_found", "")
			for what, id := range map[string]string{
				"another store's ID":      theirs.idOf(rc.idKind),
				"another unknown ID":      unknownIDOf(rc.idKind),
				"an ID of another kind":   map[string]string{"company": mine.application, "application": mine.company, "event": mine.company, "invoice": mine.company}[rc.idKind],
				"another store's event":   theirs.events[len(theirs.events)-1],
				"a malformed ID":          "co_not-an-id",
				"another store's entry":   theirs.entries[0],
				"an ID with another case": strings.ToUpper(theirs.idOf(rc.idKind)[:2]) + theirs.idOf(rc.idKind)[2:],
			} {
				r := env.Do(t, routeRequest(rt.Pattern, id, mine.key))
				if r.Status != unknown.Status || string(r.Body) != string(unknown.Body) || r.Header.Get("Content-Type") != unknown.Header.Get("Content-Type") {
					t.Errorf("%s with %s answers %d %s; an unknown ID answers %d %s", rt.Pattern, what, r.Status, r.Body, unknown.Status, unknown.Body)
				}
				for _, h := range []string{"WWW-Authenticate", "Allow", "Retry-After", "Idempotent-Replayed"} {
					if r.Header.Get(h) != unknown.Header.Get(h) {
						t.Errorf("%s with %s: header %s %q, unknown ID %q", rt.Pattern, what, h, r.Header.Get(h), unknown.Header.Get(h))
					}
				}
			}
		})
	}

	// Nothing the foreign writes aimed at changed.
	for p, body := range before {
		if got := env.Get(t, theirs.key, p).WantStatus(t, 200).Body; string(got) != string(body) {
			t.Errorf("%s changed after another store's requests:\nbefore %s\nafter  %s", p, body, got)
		}
	}
	timeline, err := env.Service.Timeline.List(credittest.Admin(), theirs.company, credit.ListParams{})
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, e := range timeline.Data {
		types = append(types, string(e.Type))
	}
	// Its own two adjustments and its order (recorded on the admin side) and its hold, newest first.
	if want := []string{string(credit.TimelineHoldPlaced), string(credit.TimelineLedgerEntryRecorded), string(credit.TimelineAdjustmentCreated), string(credit.TimelineAdjustmentCreated)}; !slices.Equal(types, want) {
		t.Errorf("the other store's timeline has %v, want only its own %v: %+v", types, want, timeline.Data)
	}
}

func TestEveryRouteChecksItsScope(t *testing.T) {
	t.Parallel()
	env := credittest.New(t, credittest.Options{ServerConfig: func(c *server.Config) { c.RateLimit = 1_000_000 }})
	s := mustStoreWithData(t, env, "Scoped")
	keys := map[string]string{}
	for _, scope := range credit.AllScopes {
		keys[scope] = env.MustKey(t, s.id, "only "+scope, scope)
	}
	for _, rt := range routesWithCases(t) {
		rc := routeCases[rt.Pattern]
		for scope, key := range keys {
			id := ""
			if rc.idKind != "" {
				id = unknownIDOf(rc.idKind)
			}
			req := routeRequest(rt.Pattern, id, key)
			r := env.Do(t, req)
			if scope != rc.scope && scope != rc.alsoScope {
				e := r.WantError(t, 403, "insufficient_scope", "")
				if want := rc.scopeMessage(); e.Message != want {
					t.Errorf("%s with %s: message %q, want %q", rt.Pattern, scope, e.Message, want)
				}
				if r.Header.Get("WWW-Authenticate") != "" {
					t.Errorf("%s: a 403 carries WWW-Authenticate %q", rt.Pattern, r.Header.Get("WWW-Authenticate"))
				}
				// The scope is checked before anything about the request is looked at.
				if rc.body != nil {
					req.Body = "{not json"
					env.Do(t, req).WantError(t, 403, "insufficient_scope", "")
				}
				env.Do(t, routeRequest(rt.Pattern, "nonsense", key)).WantError(t, 403, "insufficient_scope", "")
				continue
			}
			switch {
			case rc.idKind != "":
				r.WantError(t, 404, "not_found", "")
			case rt.Pattern == "GET /v1/export":
				r.WantStatus(t, 200) // a stream, not a page
			default:
				r.ListPage(t)
			}
		}
	}
}

func TestPersonalDataOnlyInApplications(t *testing.T) {
	t.Parallel()
	env := credittest.New(t, credittest.Options{ServerConfig: func(c *server.Config) { c.RateLimit = 1_000_000 }})
	st := env.MustStore(t, "Store", "EUR")
	app := env.MustApplication(t, st, credit.ApplicationInput{BusinessName: "Gasthof", ContactName: "Maria Huber", ContactEmail: "maria.huber@example.com"})
	for _, s := range []string{credit.AppInReview} {
		if _, _, err := env.Service.Applications.SetStatus(credittest.Staff(st), credit.StatusChange{ApplicationID: app.ID, Status: s}); err != nil {
			t.Fatal(err)
		}
	}
	_, co, err := env.Service.Applications.SetStatus(credittest.Staff(st), credit.StatusChange{ApplicationID: app.ID, Status: credit.AppApproved, CreditLimit: "1000", PaymentTerms: "NET_30"})
	if err != nil {
		t.Fatal(err)
	}
	env.MustRecord(t, credit.LedgerEntryInput{CompanyID: co.ID, Kind: credit.KindOrderPlaced, Amount: "10", OrderGID: "gid://platform/Order/1", Note: "first order"})
	full := env.MustKey(t, st, "full", credit.AllScopes...)

	for _, path := range []string{"/v1/companies", "/v1/companies/" + co.ID, "/v1/companies/" + co.ID + "/ledger"} {
		body := string(env.Get(t, full, path).WantStatus(t, 200).Body)
		for _, personal := range []string{"contact", "Maria", "Huber", "maria.huber", "email"} {
			if strings.Contains(body, personal) {
				t.Errorf("%s contains %q: %s", path, personal, body)
			}
		}
	}
	var got credit.Application
	env.Get(t, full, "/v1/applications/"+app.ID).WantStatus(t, 200).Decode(t, &got)
	if got.Contact.Name == nil || *got.Contact.Name != "Maria Huber" || got.Contact.Email == nil || *got.Contact.Email != "maria.huber@example.com" || got.Contact.Redacted {
		t.Errorf("application contact %+v, want Maria Huber's", got.Contact)
	}
	if got.Status != credit.AppApproved {
		t.Errorf("application status %s, want approved", got.Status)
	}
	// A key that reads credit but not applications sees no personal data anywhere.
	creditOnly := env.MustKey(t, st, "credit only", credit.ScopeReadCredit)
	for _, path := range []string{"/v1/applications", "/v1/applications/" + app.ID} {
		r := env.Get(t, creditOnly, path)
		r.WantError(t, 403, "insufficient_scope", "")
		if strings.Contains(string(r.Body), "maria") {
			t.Errorf("%s refused but leaked: %s", path, r.Body)
		}
	}
}

func TestApprovedApplicationBecomesACompany(t *testing.T) {
	t.Parallel()
	env := credittest.New(t)
	st := env.MustStore(t, "Store", "EUR")
	key := env.MustKey(t, st, "reader", credit.ScopeReadCredit)
	app := env.MustApplication(t, st, credit.ApplicationInput{BusinessName: "Weinkontor Rhein"})
	if got := env.Get(t, key, "/v1/companies").ListPage(t).IDs(t); len(got) != 0 {
		t.Fatalf("companies before approval: %v", got)
	}
	for _, s := range []string{credit.AppInReview, credit.AppNeedsInfo, credit.AppInReview} {
		if _, _, err := env.Service.Applications.SetStatus(credittest.Staff(st), credit.StatusChange{ApplicationID: app.ID, Status: s}); err != nil {
			t.Fatal(err)
		}
	}
	_, co, err := env.Service.Applications.SetStatus(credittest.Staff(st), credit.StatusChange{ApplicationID: app.ID, Status: credit.AppApproved, CreditLimit: "7500.5", PaymentTerms: "NET_45", PlatformCompanyGID: "gid://platform/Company/77"})
	if err != nil {
		t.Fatal(err)
	}
	mustJSONEqual(t, env.Get(t, key, "/v1/companies/"+co.ID).WantStatus(t, 200).Body, fmt.Sprintf(`{
		"id": %q, "name": "Weinkontor Rhein", "platform_company_gid": "gid://platform/Company/77",
		"status": "approved", "payment_terms": "NET_45",
		"credit_limit": {"amount": "7500.50", "currency": "EUR"},
		"outstanding": {"amount": "0.00", "currency": "EUR"},
		"available_credit": {"amount": "7125.47", "currency": "EUR"},
		"hold": null, "updated_at": "2026-03-02T09:00:00.000000Z"}`, co.ID))
	if got := env.Get(t, key, "/v1/companies").ListPage(t).IDs(t); !slices.Equal(got, []string{co.ID}) {
		t.Errorf("companies after approval: %v", got)
	}
}
