package client_test

import (
	"bytes"
	"context"
	"github.com/creditd/creditd/demo"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/oapi-codegen/oapi-codegen/v2/pkg/codegen"
	"github.com/oapi-codegen/oapi-codegen/v2/pkg/util"
	"go.yaml.in/yaml/v3"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
	"github.com/creditd/creditd/openapi/client"
	"github.com/creditd/creditd/openapi/conformance"
	"github.com/creditd/creditd/server"
)

// checkedDoer sends the generated client's requests and checks each exchange against the
// document, like credittest does for Env.Do.
type checkedDoer struct {
	tb testing.TB
	hc *http.Client
}

func (d checkedDoer) Do(req *http.Request) (*http.Response, error) {
	resp, err := d.hc.Do(req)
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	conformance.Observe(d.tb, req, resp.StatusCode, resp.Header, body)
	return resp, nil
}

// demoClient starts creditd with the demo data and returns a generated client authenticated
// with the demo's full-access key.
func demoClient(t *testing.T) (*client.ClientWithResponses, demo.Demo) {
	t.Helper()
	env := credittest.New(t, credittest.Options{ServerConfig: func(c *server.Config) { c.RateLimit = 10_000 }})
	d, seeded, err := demo.Seed(context.Background(), env.Service)
	if err != nil || !seeded {
		t.Fatalf("seed demo: %v (seeded %v)", err, seeded)
	}
	var full string
	for _, k := range d.Keys {
		if slices.Contains(k.Scopes, credit.ScopeWriteCredit) {
			full = k.Secret
		}
	}
	c, err := client.NewClientWithResponses(env.Server.URL,
		client.WithHTTPClient(checkedDoer{tb: t, hc: env.Server.Client()}),
		client.WithRequestEditorFn(func(_ context.Context, req *http.Request) error {
			req.Header.Set("Authorization", "Bearer "+full)
			return nil
		}))
	if err != nil {
		t.Fatal(err)
	}
	return c, d
}

// TestGeneratedClientListsCompanies uses the client generated from the document against a
// running server with the demo data: it pages through companies, filters, follows a company's
// ledger and makes an idempotent write.
func TestGeneratedClientListsCompanies(t *testing.T) {
	c, _ := demoClient(t)
	ctx := context.Background()

	var names []string
	var onHold []string
	var cursor *string
	limit := 2
	for page := 0; ; page++ {
		if page > 10 {
			t.Fatal("pagination does not end")
		}
		r, err := c.ListCompaniesWithResponse(ctx, &client.ListCompaniesParams{Limit: &limit, Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		if r.JSON200 == nil {
			t.Fatalf("list companies: %d %s", r.StatusCode(), r.Body)
		}
		if r.Headers200 == nil || r.Headers200.XRateLimitLimit == 0 || r.Headers200.XRequestId == "" {
			t.Errorf("headers not parsed: %+v", r.Headers200)
		}
		for _, co := range r.JSON200.Data {
			names = append(names, co.Name)
			if co.Status == "on_hold" {
				onHold = append(onHold, co.Id)
				if co.Hold == nil || co.Hold.PlacedAt.IsZero() {
					t.Errorf("%s is on hold without a hold", co.Id)
				}
			}
		}
		if !r.JSON200.HasMore {
			break
		}
		cursor = r.JSON200.NextCursor
	}
	slices.Sort(names)
	want := []string{"Alpenblick Hotels AG", "Brauhaus Kessler KG", "Café Morgenrot", "Nordlicht Feinkost GmbH", "Seeblick Catering"}
	if !slices.Equal(names, want) {
		t.Fatalf("companies %q, want %q", names, want)
	}

	status := client.ListCompaniesParamsStatus("on_hold")
	since := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	held, err := c.ListCompaniesWithResponse(ctx, &client.ListCompaniesParams{Status: &status, UpdatedSince: &since})
	if err != nil || held.JSON200 == nil {
		t.Fatalf("filtered list: %v %s", err, held.Body)
	}
	var heldIDs []string
	for _, co := range held.JSON200.Data {
		heldIDs = append(heldIDs, co.Id)
	}
	slices.Sort(heldIDs)
	slices.Sort(onHold)
	if len(onHold) == 0 || !slices.Equal(heldIDs, onHold) {
		t.Fatalf("status=on_hold gave %v, paging saw %v on hold", heldIDs, onHold)
	}

	all, err := c.ListCompaniesWithResponse(ctx, nil)
	if err != nil || all.JSON200 == nil {
		t.Fatalf("list: %v", err)
	}
	var first client.Company
	for _, co := range all.JSON200.Data {
		if co.Name == "Alpenblick Hotels AG" {
			first = co
		}
	}
	ledger, err := c.ListLedgerEntriesWithResponse(ctx, first.Id, nil)
	if err != nil || ledger.JSON200 == nil || len(ledger.JSON200.Data) == 0 {
		t.Fatalf("ledger of %s: %v %s", first.Id, err, ledger.Body)
	}

	key := "client-test-1"
	body := client.CreateAdjustmentRequest{Amount: "-10.00", Note: "goodwill"}
	for attempt := 0; attempt < 2; attempt++ {
		adj, err := c.CreateAdjustmentWithResponse(ctx, first.Id, &client.CreateAdjustmentParams{IdempotencyKey: &key}, body)
		if err != nil || adj.JSON201 == nil {
			t.Fatalf("adjustment: %v %d %s", err, adj.StatusCode(), adj.Body)
		}
		replayed := adj.Headers201.IdempotentReplayed != nil
		if replayed != (attempt == 1) || adj.JSON201.LedgerEntry.Kind != "adjustment" {
			t.Fatalf("attempt %d: replayed=%v entry %+v", attempt, replayed, adj.JSON201.LedgerEntry)
		}
	}
	after := ledger.JSON200.Data[0].Id
	newer, err := c.ListLedgerEntriesWithResponse(ctx, first.Id, &client.ListLedgerEntriesParams{After: &after})
	if err != nil || newer.JSON200 == nil || len(newer.JSON200.Data) != 1 || newer.JSON200.Data[0].Amount.Amount != "-10.00" {
		t.Fatalf("after=%s: %v %s", after, err, newer.Body)
	}

	missing, err := c.GetCompanyWithResponse(ctx, "co_doesnotexist", nil)
	if err != nil || missing.JSON404 == nil || missing.JSON404.Error.Code != "not_found" {
		t.Fatalf("unknown company: %v %d %s", err, missing.StatusCode(), missing.Body)
	}
}

// TestGeneratedClientIsUpToDate regenerates the client in-process with the committed
// configuration and compares it with client.gen.go, so an edit of the document without
// `go generate ./...` fails.
func TestGeneratedClientIsUpToDate(t *testing.T) {
	raw, err := os.ReadFile("oapi-codegen.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		codegen.Configuration `yaml:",inline"`
		Output                string `yaml:"output"`
	}
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	if err := dec.Decode(&cfg); err != nil {
		t.Fatal(err)
	}
	cfg.Configuration = cfg.Configuration.UpdateDefaults()
	if err := cfg.Configuration.Validate(); err != nil {
		t.Fatal(err)
	}
	spec, err := util.LoadSwagger(filepath.Join("..", "..", "docs", "openapi.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	code, err := codegen.Generate(spec, cfg.Configuration)
	if err != nil {
		t.Fatal(err)
	}
	committed, err := os.ReadFile(cfg.Output)
	if err != nil {
		t.Fatal(err)
	}
	// The header names the generator's version as its binary knows it; the test binary does not.
	if withoutVersion(code) != withoutVersion(string(committed)) {
		t.Fatal("openapi/client/client.gen.go is stale: run go generate ./openapi/client")
	}
}

func withoutVersion(code string) string {
	var out []string
	for _, line := range strings.Split(code, "\n") {
		if !strings.HasPrefix(line, "// Code generated by ") {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}
