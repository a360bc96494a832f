package server_test

import (
	"context"
	"database/sql/driver"
	"fmt"
	"strings"
	"testing"

	"entgo.io/ent/dialect"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
	"github.com/creditd/creditd/server"
)

// TestDatabaseDownAnswers503 shows a database outage is answered 503 unavailable with
// Retry-After, on reads, writes and readiness, never 500.
func TestDatabaseDownAnswers503(t *testing.T) {
	env := credittest.New(t)
	st := env.MustStore(t, "s", "EUR")
	key := env.MustKey(t, st, "k", credit.AllScopes...)
	co := env.MustCompany(t, st, "c", "10")
	if err := env.DB.SQL.Close(); err != nil {
		t.Fatal(err)
	}
	for _, req := range []credittest.Request{
		{Method: "GET", Path: "/v1/companies", Key: key},
		{Method: "POST", Path: "/v1/companies/" + co.ID + "/hold", Key: key},
		{Method: "POST", Path: "/graphql", Key: key, Body: `{"query":"{ companies { edges { node { id } } } }"}`},
		{Method: "GET", Path: "/readyz"},
	} {
		r := env.Do(t, req)
		if r.Status != 503 || r.Header.Get("Retry-After") == "" || !strings.Contains(string(r.Body), `"unavailable"`) {
			t.Fatalf("%s %s: %d %v %s", req.Method, req.Path, r.Status, r.Header, r.Body)
		}
	}
	if r := env.Get(t, "", "/healthz"); r.Status != 200 {
		t.Fatalf("healthz: %d", r.Status)
	}
}

// TestGraphQLReportsAnOutageLikeREST injects a database fault that only statements on the
// companies table meet, so that authentication succeeds and the fault strikes while GraphQL
// executes. A request that failed on it as a whole is 503 unavailable with Retry-After, as in
// REST; a request that still returned data keeps its 200 and says unavailable for the fields
// the outage cost. (Before the one error presenter, GraphQL called this internal_error.)
func TestGraphQLReportsAnOutageLikeREST(t *testing.T) {
	env := credittest.New(t, credittest.Options{ServerConfig: func(cfg *server.Config) {
		db := cfg.DB.WithDriver(func(d dialect.Driver) dialect.Driver { return companiesDown{Driver: d} })
		cfg.Service = credit.New(db, credit.Options{Now: cfg.Now})
	}})
	st := env.MustStore(t, "s", "EUR")
	key := env.MustKey(t, st, "k", credit.AllScopes...)
	co := env.MustCompany(t, st, "c", "10")
	rest := env.Do(t, credittest.Request{Method: "GET", Path: "/v1/companies/" + co.ID, Key: key})
	if rest.Status != 503 || rest.ErrorCode() != "unavailable" {
		t.Fatalf("REST under the fault: %d %s", rest.Status, rest.Body)
	}
	for _, tc := range []struct {
		name, query string
		status      int
	}{
		{"a query that failed as a whole", `{ companies { edges { node { id } } } }`, 503},
		{"a nullable field that failed alone", `{ company(id: "` + co.ID + `") { id } }`, 503},
		{"a mutation", `mutation { placeHold(input: {companyId: "` + co.ID + `"}) { company { id } } }`, 503},
		{"a query that still returned data", `{ company(id: "` + co.ID + `") { id } applications(first: 1) { edges { node { id } } } }`, 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := env.Do(t, credittest.Request{Method: "POST", Path: "/graphql", Key: key, Body: fmt.Sprintf(`{"query":%q}`, tc.query)})
			if r.Status != tc.status {
				t.Fatalf("status %d, want %d: %s", r.Status, tc.status, r.Body)
			}
			if got := r.Header.Get("Retry-After") != ""; got != (tc.status == 503) {
				t.Errorf("Retry-After %q with status %d", r.Header.Get("Retry-After"), r.Status)
			}
			if !strings.Contains(string(r.Body), `"code":"unavailable"`) || strings.Contains(string(r.Body), "internal_error") {
				t.Errorf("want extensions.code unavailable: %s", r.Body)
			}
		})
	}
}

// companiesDown is a driver whose statements on the companies table fail as a dropped
// connection does.
type companiesDown struct{ dialect.Driver }

func down(query string) error {
	if strings.Contains(query, "`companies`") || strings.Contains(query, `"companies"`) {
		return fmt.Errorf("injected fault: %w", driver.ErrBadConn)
	}
	return nil
}

func (d companiesDown) Query(ctx context.Context, query string, args, v any) error {
	if err := down(query); err != nil {
		return err
	}
	return d.Driver.Query(ctx, query, args, v)
}

func (d companiesDown) Exec(ctx context.Context, query string, args, v any) error {
	if err := down(query); err != nil {
		return err
	}
	return d.Driver.Exec(ctx, query, args, v)
}

func (d companiesDown) Tx(ctx context.Context) (dialect.Tx, error) {
	tx, err := d.Driver.Tx(ctx)
	return companiesDownTx{tx}, err
}

type companiesDownTx struct{ dialect.Tx }

func (t companiesDownTx) Query(ctx context.Context, query string, args, v any) error {
	if err := down(query); err != nil {
		return err
	}
	return t.Tx.Query(ctx, query, args, v)
}

func (t companiesDownTx) Exec(ctx context.Context, query string, args, v any) error {
	if err := down(query); err != nil {
		return err
	}
	return t.Tx.Exec(ctx, query, args, v)
}
