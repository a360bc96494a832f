package graph_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/graph"
	"github.com/creditd/creditd/httpapi"
	"github.com/creditd/creditd/tenant"
)

// fakeCompanies answers Get and List with its company, or with err, and records what each
// operation was asked.
type fakeCompanies struct {
	graph.Companies
	company credit.Company
	err     error
	gets    []string
	lists   []credit.CompanyListParams
	holds   []credit.HoldInput
}

func (f *fakeCompanies) Get(_ context.Context, id string) (credit.Company, error) {
	f.gets = append(f.gets, id)
	return f.company, f.err
}

func (f *fakeCompanies) List(_ context.Context, p credit.CompanyListParams) (credit.Page[credit.Company], error) {
	f.lists = append(f.lists, p)
	return credit.Page[credit.Company]{Data: []credit.Company{f.company}}, f.err
}

func (f *fakeCompanies) PlaceHold(_ context.Context, in credit.HoldInput) (credit.CompanyResult, error) {
	f.holds = append(f.holds, in)
	return credit.CompanyResult{Company: f.company}, f.err
}

// fakeLists refuses a page size over 250 as the domain does, naming the domain's parameter
// (limit), and accepts the rest.
type fakeLists struct{ checked []credit.ListParams }

func (f *fakeLists) CheckListParams(_ context.Context, _ string, p credit.ListParams) error {
	f.checked = append(f.checked, p)
	if p.Limit != nil && *p.Limit > 250 {
		return credit.ParamErrorf(credit.CodeInvalidParameter, "limit", "limit must be between 1 and 250")
	}
	return nil
}

// fakeEvents accepts every event argument.
type fakeEvents struct{ graph.Events }

func (fakeEvents) CheckListParams(credit.EventListParams) error { return nil }

type fakeResponse struct {
	status int
	Data   map[string]any
	Errors []struct {
		Message    string
		Extensions struct{ Code, Param string }
	}
}

// postFake posts one GraphQL request to the handler over fakes, as the key's viewer.
func postFake(t *testing.T, s graph.Services, scopes []string, query string) fakeResponse {
	t.Helper()
	h := graph.NewHandlerWith(s, graph.Options{})
	body, _ := json.Marshal(map[string]string{"query": query})
	req := httptest.NewRequest(http.MethodPost, "/graphql", strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	ctx := tenant.APIKey(req.Context(), "st_fake", "key_fake", "dashboard", scopes)
	req = req.WithContext(httpapi.WithLogger(ctx, slog.New(slog.NewTextHandler(io.Discard, nil))))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	out := fakeResponse{status: rec.Code}
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		t.Fatalf("%d %s: %v", rec.Code, rec.Body, err)
	}
	return out
}

// TestTransportOverFakes: what GraphQL itself does, with no database behind it: a field's
// arguments reach the domain as its parameters, the domain's answer is the field's data, a
// domain error becomes the field's error with the contract's code (an internal error without its
// text), the domain's refusal of a connection argument refuses the request before any resolver
// runs, under the argument's GraphQL name, and a mutation's input reaches the domain.
func TestTransportOverFakes(t *testing.T) {
	read := []string{credit.ScopeReadCredit}
	companies := &fakeCompanies{company: credit.Company{ID: "co_fake", Name: "Hotel Adler", Status: "on_hold", PaymentTerms: "NET_30"}}
	lists := &fakeLists{}
	s := graph.Services{Companies: companies, Lists: lists, Events: fakeEvents{}}

	res := postFake(t, s, read, `{ company(id: "co_fake") { id name status paymentTerms } }`)
	if res.status != http.StatusOK || len(res.Errors) != 0 {
		t.Fatalf("a company: %d %+v", res.status, res.Errors)
	}
	if got := res.Data["company"].(map[string]any); got["name"] != "Hotel Adler" || got["status"] != "ON_HOLD" || got["paymentTerms"] != "NET_30" {
		t.Errorf("a company's data: %v", got)
	}
	if len(companies.gets) != 1 || companies.gets[0] != "co_fake" {
		t.Errorf("the domain was asked for %v, want [co_fake]", companies.gets)
	}

	res = postFake(t, s, read, `{ companies(first: 2, status: ON_HOLD, search: "adler") { edges { node { id } } } }`)
	if res.status != http.StatusOK || len(res.Errors) != 0 || len(companies.lists) != 1 {
		t.Fatalf("companies: %d %+v, the domain was asked %d times", res.status, res.Errors, len(companies.lists))
	}
	if p := companies.lists[0]; p.Limit == nil || *p.Limit != 2 || p.Status != "on_hold" || p.Search == nil || *p.Search != "adler" {
		t.Errorf("companies' arguments reached the domain as %+v", p)
	}
	if len(lists.checked) != 1 || lists.checked[0].Limit == nil || *lists.checked[0].Limit != 2 {
		t.Errorf("the paging arguments were checked as %+v", lists.checked)
	}

	res = postFake(t, s, read, `{ companies(first: 300) { edges { node { id } } } }`)
	if res.status != http.StatusBadRequest || res.Data != nil || len(res.Errors) != 1 ||
		res.Errors[0].Extensions.Code != "invalid_parameter" || res.Errors[0].Extensions.Param != "first" ||
		!strings.HasPrefix(res.Errors[0].Message, "first ") {
		t.Errorf("a page size the domain refuses: %d %+v", res.status, res)
	}
	if len(companies.lists) != 1 {
		t.Errorf("a refused request reached the resolver")
	}

	for _, tc := range []struct {
		err  error
		code string
	}{
		{credit.Errorf(credit.CodeNotFound, "no company co_gone"), "not_found"},
		{errors.New("disk on fire"), "internal_error"},
	} {
		companies.err = tc.err
		res := postFake(t, s, read, `{ company(id: "co_gone") { id } }`)
		if res.status != http.StatusOK || len(res.Errors) != 1 || res.Errors[0].Extensions.Code != tc.code ||
			strings.Contains(res.Errors[0].Message, "disk on fire") || res.Data["company"] != nil {
			t.Errorf("the domain's %v: %d %+v", tc.err, res.status, res)
		}
	}
	companies.err = nil

	write := []string{credit.ScopeReadCredit, credit.ScopeWriteCredit}
	res = postFake(t, s, write, `mutation { placeHold(input: {companyId: "co_fake", note: "call first"}) { company { id } } }`)
	if res.status != http.StatusOK || len(res.Errors) != 0 || len(companies.holds) != 1 ||
		companies.holds[0].CompanyID != "co_fake" || companies.holds[0].Note == nil || *companies.holds[0].Note != "call first" {
		t.Errorf("placeHold: %d %+v, the domain got %+v", res.status, res.Errors, companies.holds)
	}
}
