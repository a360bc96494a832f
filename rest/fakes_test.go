package rest_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/rest"
	"github.com/creditd/creditd/tenant"
)

// fakeCompanies answers Get with company, or with err, and counts the calls of each operation.
type fakeCompanies struct {
	rest.Companies
	company credit.Company
	err     error
	gets    []string
	limits  []credit.CreditLimitInput
}

func (f *fakeCompanies) Get(_ context.Context, id string) (credit.Company, error) {
	f.gets = append(f.gets, id)
	return f.company, f.err
}

func (f *fakeCompanies) SetCreditLimit(_ context.Context, in credit.CreditLimitInput) (credit.CreditLimitResult, error) {
	f.limits = append(f.limits, in)
	return credit.CreditLimitResult{}, f.err
}

// fakeRecords runs every write once, keeping nothing: what a write without Idempotency-Key gets.
type fakeRecords struct{}

func (fakeRecords) Run(ctx context.Context, _, _ string, run func(ctx context.Context) ([]byte, bool, error)) ([]byte, bool, error) {
	b, _, err := run(ctx)
	return b, false, err
}

// serveFake serves one request through /v1's routes over fakes, as the key's viewer.
func serveFake(t *testing.T, s rest.Services, scopes []string, method, target, body string) *httptest.ResponseRecorder {
	t.Helper()
	mux := http.NewServeMux()
	for _, r := range rest.NewWith(s).Routes() {
		mux.HandleFunc(r.Pattern, r.Handler)
	}
	req := httptest.NewRequest(method, target, strings.NewReader(body))
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	req = req.WithContext(tenant.APIKey(req.Context(), "st_fake", "key_fake", "erp", scopes))
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, req)
	return rec
}

func errorCode(t *testing.T, rec *httptest.ResponseRecorder) string {
	t.Helper()
	var body struct{ Error struct{ Code, Param string } }
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatalf("%d %s: %v", rec.Code, rec.Body, err)
	}
	return body.Error.Code
}

// TestTransportOverFakes: what /v1 itself does, with no database behind it: the path's ID
// reaches the domain, the domain's answer is written as JSON and its refusals with the status
// of contract §3 (an internal error without its text); a request /v1 refuses (an unknown parameter, a body that is not JSON, a key
// without the write scope) never reaches the domain.
func TestTransportOverFakes(t *testing.T) {
	read := []string{credit.ScopeReadCredit}
	write := []string{credit.ScopeReadCredit, credit.ScopeWriteCredit}
	companies := &fakeCompanies{company: credit.Company{ID: "co_fake", Name: "Hotel Adler"}}
	s := rest.Services{Companies: companies, Idempotency: fakeRecords{}}

	rec := serveFake(t, s, read, http.MethodGet, "/v1/companies/co_fake", "")
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"name":"Hotel Adler"`) {
		t.Fatalf("GET a company: %d %s", rec.Code, rec.Body)
	}
	if len(companies.gets) != 1 || companies.gets[0] != "co_fake" {
		t.Fatalf("the domain was asked for %v, want [co_fake]", companies.gets)
	}

	if rec := serveFake(t, s, read, http.MethodGet, "/v1/companies/co_fake?expand=ledger", ""); rec.Code != http.StatusBadRequest || errorCode(t, rec) != "invalid_parameter" {
		t.Fatalf("an unknown parameter: %d %s", rec.Code, rec.Body)
	}
	if len(companies.gets) != 1 {
		t.Fatalf("a refused request reached the domain")
	}

	for _, tc := range []struct {
		err    error
		status int
		code   string
	}{
		{credit.Errorf(credit.CodeNotFound, "no company co_gone"), http.StatusNotFound, "not_found"},
		{credit.Errorf(credit.CodeHoldExists, "co_gone is on hold"), http.StatusConflict, "hold_exists"},
		{errors.New("disk on fire"), http.StatusInternalServerError, "internal_error"},
	} {
		companies.err = tc.err
		rec := serveFake(t, s, read, http.MethodGet, "/v1/companies/co_gone", "")
		if rec.Code != tc.status || errorCode(t, rec) != tc.code || strings.Contains(rec.Body.String(), "disk on fire") {
			t.Errorf("the domain's %v: %d %s, want %d %s", tc.err, rec.Code, rec.Body, tc.status, tc.code)
		}
	}
	companies.err = nil

	for name, tc := range map[string]struct {
		scopes []string
		body   string
		status int
		code   string
	}{
		"a body that is not JSON":  {write, `{"amount": 12`, http.StatusBadRequest, "invalid_request"},
		"a key that may only read": {read, `{"amount": "12.00", "reason": "x"}`, http.StatusForbidden, "insufficient_scope"},
	} {
		rec := serveFake(t, s, tc.scopes, http.MethodPut, "/v1/companies/co_fake/credit-limit", tc.body)
		if rec.Code != tc.status || errorCode(t, rec) != tc.code {
			t.Errorf("%s: %d %s, want %d %s", name, rec.Code, rec.Body, tc.status, tc.code)
		}
	}
	if len(companies.limits) != 0 {
		t.Fatalf("refused writes reached the domain: %+v", companies.limits)
	}
	rec = serveFake(t, s, write, http.MethodPut, "/v1/companies/co_fake/credit-limit", `{"amount": "2500.00", "reason": "good payer"}`)
	if rec.Code != http.StatusOK || len(companies.limits) != 1 || *companies.limits[0].Amount.Text != "2500.00" ||
		companies.limits[0].CompanyID != "co_fake" || *companies.limits[0].Reason != "good payer" {
		t.Fatalf("a credit limit: %d %s, the domain got %+v", rec.Code, rec.Body, companies.limits)
	}
}
