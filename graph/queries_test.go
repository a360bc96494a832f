package graph_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/creditd/creditd/credit"
)

const companyFields = `id name platformCompanyGid status paymentTerms updatedAt
  creditLimit { amount currency } outstanding { amount currency } availableCredit { amount currency }
  hold { kind note placedAt placedBy platformOrderGid dueAt }`

// TestCompanyMatchesREST reads one company through both APIs: the same data, in GraphQL's
// names (camelCase, enum values in upper case).
func TestCompanyMatchesREST(t *testing.T) {
	f := newFixture(t)
	note := "credit check pending"
	if _, err := f.env.Service.Companies.PlaceHold(viewerOf(f.store), credit.HoldInput{CompanyID: f.alpen.ID, Note: &note}); err != nil {
		t.Fatal(err)
	}
	gql := query(t, f.env, f.readCredit, `query($id: ID!) { company(id: $id) { `+companyFields+` } }`, map[string]any{"id": f.alpen.ID})["company"]
	var rest map[string]any
	f.env.Get(t, f.readCredit, "/v1/companies/"+f.alpen.ID).WantStatus(t, http.StatusOK).Decode(t, &rest)

	want := map[string]any{
		"id":                 rest["id"],
		"name":               rest["name"],
		"platformCompanyGid": rest["platform_company_gid"],
		"status":             strings.ToUpper(rest["status"].(string)),
		"paymentTerms":       rest["payment_terms"],
		"updatedAt":          rest["updated_at"],
		"creditLimit":        rest["credit_limit"],
		"outstanding":        rest["outstanding"],
		"availableCredit":    rest["available_credit"],
	}
	hold := rest["hold"].(map[string]any)
	want["hold"] = map[string]any{
		"kind": strings.ToUpper(hold["kind"].(string)), "note": hold["note"], "placedAt": hold["placed_at"],
		"placedBy": hold["placed_by"], "platformOrderGid": hold["platform_order_gid"], "dueAt": hold["due_at"],
	}
	if g, w := mustJSON(t, gql), mustJSON(t, want); g != w {
		t.Fatalf("GraphQL company\n%s\nREST company\n%s", g, w)
	}
	if at(t, gql, "status") != "ON_HOLD" || at(t, gql, "hold", "placedBy") != "test" {
		t.Fatalf("hold not shown: %v", gql)
	}
}

func TestCompaniesFiltersAndPaging(t *testing.T) {
	f := newFixture(t)
	f.env.Clock.Advance(3600e9)
	later := f.env.MustCompany(t, f.store, "Café Morgenrot", "5000.00")
	f.env.Clock.Advance(60e9)
	if _, err := f.env.Service.Companies.PlaceHold(viewerOf(f.store), credit.HoldInput{CompanyID: f.brau.ID}); err != nil {
		t.Fatal(err)
	}
	ids := func(data map[string]any) []string {
		var out []string
		for _, e := range at(t, data, "companies", "edges").([]any) {
			out = append(out, at(t, e, "node", "id").(string))
		}
		return out
	}
	const q = `query($first: Int, $after: String, $status: CompanyStatus, $since: DateTime) {
	  companies(first: $first, after: $after, status: $status, updatedSince: $since) {
	    edges { cursor node { id } } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } } }`

	all := query(t, f.env, f.readCredit, q, nil)
	if got := ids(all); strings.Join(got, ",") != strings.Join([]string{f.alpen.ID, later.ID, f.brau.ID}, ",") {
		t.Fatalf("companies %v: want Alpenblick, Café, Brauhaus (updatedAt order), never the other store's", got)
	}
	if got := ids(query(t, f.env, f.readCredit, q, map[string]any{"status": "ON_HOLD"})); len(got) != 1 || got[0] != f.brau.ID {
		t.Errorf("ON_HOLD: %v", got)
	}
	if got := ids(query(t, f.env, f.readCredit, q, map[string]any{"status": "APPROVED"})); len(got) != 2 {
		t.Errorf("APPROVED: %v", got)
	}
	if got := ids(query(t, f.env, f.readCredit, q, map[string]any{"since": "2026-03-02T10:00:00+01:00"})); len(got) != 3 {
		t.Errorf("updatedSince with an offset, inclusive: %v", got)
	}
	if got := ids(query(t, f.env, f.readCredit, q, map[string]any{"since": "2026-03-02T09:30:00Z"})); len(got) != 2 || got[0] != later.ID {
		t.Errorf("updatedSince 09:30: %v", got)
	}
	// A malformed updatedSince names the form; an offset's + sent raw in a GET URL, which
	// arrives as a space, says to send %2B.
	bad := doGQL(t, f.env, gqlRequest{Key: f.readCredit, Query: q, Variables: map[string]any{"since": "yesterday"}})
	if bad.wantCodes(t, "invalid_parameter"); bad.Errors[0].Message != "updatedSince must be an RFC 3339 timestamp such as 2026-01-31T09:30:00Z or 2026-01-31T10:30:00+01:00" {
		t.Errorf("a malformed updatedSince: %q", bad.Errors[0].Message)
	}
	get := decodeGQL(t, f.env.Get(t, f.readCredit, "/graphql?query="+urlQuery(q)+"&variables="+url.QueryEscape(`{"since":"2026-03-02T10:00:00`)+"+01:00%22%7D"))
	if get.wantCodes(t, "invalid_parameter"); get.Errors[0].Message != "updatedSince has a space where its offset's + should be: in a GET /graphql URL, a raw + means a space, so send it as %2B" {
		t.Errorf("a raw + in a GET URL: %q", get.Errors[0].Message)
	}

	// Page through one company at a time with endCursor.
	var seen []string
	var after any
	for page := 0; ; page++ {
		data := query(t, f.env, f.readCredit, q, map[string]any{"first": 1, "after": after})
		seen = append(seen, ids(data)...)
		info := at(t, data, "companies", "pageInfo").(map[string]any)
		if info["hasPreviousPage"] != false || info["startCursor"] != info["endCursor"] {
			t.Fatalf("pageInfo %v", info)
		}
		if info["hasNextPage"] == false {
			break
		}
		if page > 5 {
			t.Fatal("paging does not end")
		}
		after = info["endCursor"]
	}
	if strings.Join(seen, ",") != strings.Join(ids(all), ",") {
		t.Fatalf("paged %v, want %v", seen, ids(all))
	}
}

func TestLedgerQuery(t *testing.T) {
	f := newFixture(t)
	const q = `query($id: ID!, $first: Int, $after: String, $afterEntry: ID) { company(id: $id) {
	  ledger(first: $first, after: $after, afterEntry: $afterEntry) {
	    edges { cursor node { id kind amount { amount currency } platformOrderGid note occurredAt } }
	    pageInfo { hasNextPage endCursor } } } }`
	vars := func(kv ...any) map[string]any {
		m := map[string]any{"id": f.alpen.ID}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	entryIDs := func(data map[string]any) []string {
		var out []string
		for _, e := range at(t, data, "company", "ledger", "edges").([]any) {
			out = append(out, at(t, e, "node", "id").(string))
		}
		return out
	}
	newest := query(t, f.env, f.readCredit, q, vars())
	if got := entryIDs(newest); strings.Join(got, ",") != strings.Join([]string{f.entries[2].ID, f.entries[1].ID, f.entries[0].ID}, ",") {
		t.Fatalf("ledger %v, want newest first", got)
	}
	order := at(t, newest, "company", "ledger", "edges", 1, "node").(map[string]any)
	if order["kind"] != "ORDER_PLACED" || order["platformOrderGid"] != "gid://platform/Order/5001" || at(t, order, "amount", "amount") != "4800.00" {
		t.Errorf("order entry %v", order)
	}
	if got := entryIDs(query(t, f.env, f.readCredit, q, vars("afterEntry", f.entries[0].ID))); strings.Join(got, ",") != f.entries[2].ID+","+f.entries[1].ID {
		t.Errorf("afterEntry: %v", got)
	}
	page1 := query(t, f.env, f.readCredit, q, vars("first", 2, "afterEntry", f.entries[0].ID))
	if got := entryIDs(page1); len(got) != 2 || at(t, page1, "company", "ledger", "pageInfo", "hasNextPage") != false {
		t.Errorf("afterEntry page: %v", page1)
	}
	page1 = query(t, f.env, f.readCredit, q, vars("first", 1))
	page2 := query(t, f.env, f.readCredit, q, vars("first", 1, "after", at(t, page1, "company", "ledger", "pageInfo", "endCursor")))
	if got := entryIDs(page2); len(got) != 1 || got[0] != f.entries[1].ID {
		t.Errorf("second page %v", got)
	}
}

func TestTimelineQuery(t *testing.T) {
	f := newFixture(t)
	mutate(t, f, f.full, `mutation($id: ID!) { setCreditLimit(input: {companyId: $id, amount: "30000.00", reason: "annual review"}) { company { id } } }`, map[string]any{"id": f.alpen.ID})
	mutate(t, f, f.full, `mutation($id: ID!) { placeHold(input: {companyId: $id, note: "audit"}) { company { id } } }`, map[string]any{"id": f.alpen.ID})
	data := query(t, f.env, f.readCredit, `query($id: ID!) { company(id: $id) { timeline(first: 5) {
	  edges { node { id type actor { type label } occurredAt data } } pageInfo { hasNextPage } } } }`, map[string]any{"id": f.alpen.ID})
	// The fixture's ledger entries, recorded as staff, are on the timeline too (issue 31).
	var edges []any
	for _, e := range at(t, data, "company", "timeline", "edges").([]any) {
		if at(t, e, "node", "type") != string(credit.TimelineLedgerEntryRecorded) {
			edges = append(edges, e)
		}
	}
	if len(edges) != 2 {
		t.Fatalf("timeline %v", edges)
	}
	hold, limit := at(t, edges[0], "node"), at(t, edges[1], "node")
	if at(t, hold, "type") != string(credit.TimelineHoldPlaced) || at(t, limit, "type") != string(credit.TimelineCreditLimitChanged) {
		t.Fatalf("timeline not newest first: %v", edges)
	}
	if at(t, hold, "actor", "type") != "API_KEY" || at(t, hold, "actor", "label") != "erp" {
		t.Errorf("actor %v, want the key's label", at(t, hold, "actor"))
	}
	if at(t, hold, "data", "note") != "audit" || at(t, limit, "data", "credit_limit", "amount") != "30000.00" || at(t, limit, "data", "reason") != "annual review" {
		t.Errorf("data %v / %v", at(t, hold, "data"), at(t, limit, "data"))
	}
	// Each event can be refetched by its ID.
	id := at(t, hold, "id").(string)
	node := query(t, f.env, f.readCredit, `query($id: ID!) { node(id: $id) { __typename id ... on TimelineEvent { type } } }`, map[string]any{"id": id})
	if at(t, node, "node", "type") != string(credit.TimelineHoldPlaced) {
		t.Errorf("node(%s) = %v", id, node)
	}
}

func TestApplicationQueries(t *testing.T) {
	f := newFixture(t)
	f.env.Clock.Advance(60e9)
	second := f.env.MustApplication(t, f.store, credit.ApplicationInput{BusinessName: "Seeblick Catering", ContactName: "Bo Chef", ContactEmail: "bo@example.com"})
	if _, _, err := f.env.Service.Applications.SetStatus(viewerOf(f.store), credit.StatusChange{ApplicationID: second.ID, Status: credit.AppInReview}); err != nil {
		t.Fatal(err)
	}
	const fields = `id status businessName submittedAt vat { number status registry checkedAt } contact { name email redacted }`
	one := query(t, f.env, f.readApps, `query($id: ID!) { application(id: $id) { `+fields+` } }`, map[string]any{"id": f.app.ID})["application"]
	var rest map[string]any
	f.env.Get(t, f.readApps, "/v1/applications/"+f.app.ID).WantStatus(t, http.StatusOK).Decode(t, &rest)
	vat := rest["vat"].(map[string]any)
	want := map[string]any{
		"id": rest["id"], "status": strings.ToUpper(rest["status"].(string)), "businessName": rest["business_name"],
		"submittedAt": rest["submitted_at"], "contact": rest["contact"],
		"vat": map[string]any{"number": vat["number"], "status": vat["status"], "registry": vat["registry"], "checkedAt": vat["checked_at"]},
	}
	if g, w := mustJSON(t, one), mustJSON(t, want); g != w {
		t.Fatalf("GraphQL application\n%s\nREST application\n%s", g, w)
	}

	list := func(vars map[string]any) []string {
		data := query(t, f.env, f.readApps, `query($status: ApplicationStatus, $first: Int) { applications(status: $status, first: $first) { edges { node { id status } } pageInfo { hasNextPage } } }`, vars)
		var out []string
		for _, e := range at(t, data, "applications", "edges").([]any) {
			out = append(out, at(t, e, "node", "id").(string))
		}
		return out
	}
	if got := list(nil); strings.Join(got, ",") != second.ID+","+f.app.ID {
		t.Errorf("applications %v, want newest first and only this store's", got)
	}
	if got := list(map[string]any{"status": "IN_REVIEW"}); len(got) != 1 || got[0] != second.ID {
		t.Errorf("IN_REVIEW: %v", got)
	}
	if got := list(map[string]any{"first": 1}); len(got) != 1 {
		t.Errorf("first 1: %v", got)
	}
}

func mustJSON(tb testing.TB, v any) string {
	tb.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}
