package bench

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/creditd/creditd/credit"
)

// Scenario is one kind of request the harness sends, again and again.
type Scenario struct {
	// Name identifies the scenario on the command line and in results; Title describes it.
	Name, Title string
	// Status is the only status that counts as success.
	Status int
	// Write marks a scenario that changes the database.
	Write bool
	// request returns the n-th request's method, path (with query), header and body.
	request func(n uint64) (method, path string, header http.Header, body []byte)
}

// DashboardQuery is scenario 4's GraphQL query: a page of companies with their hold, their
// credit figures and their last entries, as a credit dashboard polls it.
const DashboardQuery = `query Dashboard($first: Int!, $entries: Int!) {
  companies(first: $first) {
    edges {
      node {
        id
        name
        status
        paymentTerms
        creditLimit { amount currency }
        outstanding { amount currency }
        availableCredit { amount currency }
        hold { kind note placedAt placedBy platformOrderGid dueAt }
        updatedAt
        ledger(first: $entries) {
          edges { node { id kind amount { amount currency } platformOrderGid note occurredAt } }
        }
      }
    }
    pageInfo { hasNextPage endCursor }
  }
}`

// DashboardBody is the JSON body of the dashboard query for first companies with entries
// entries each.
func DashboardBody(first, entries int) []byte {
	b, _ := json.Marshal(map[string]any{
		"query":         DashboardQuery,
		"operationName": "Dashboard",
		"variables":     map[string]int{"first": first, "entries": entries},
	})
	return b
}

// BehaviourQuery is scenario 9's GraphQL query: a page of companies with their payment
// behaviour (contract §17), as a collections dashboard polls it.
const BehaviourQuery = `query Behaviour($first: Int!) {
  companies(first: $first) {
    edges {
      node {
        id
        name
        paymentBehaviour {
          invoicesPaid
          averageDaysToPay
          averageDaysBeyondTerms
          paidOnTimeShare
          openOverdue { count amount { amount currency } oldestDaysOverdue }
          dsoDays
          rating
        }
      }
    }
    pageInfo { hasNextPage endCursor }
  }
}`

// BehaviourBody is the JSON body of the behaviour query for first companies.
func BehaviourBody(first int) []byte {
	b, _ := json.Marshal(map[string]any{"query": BehaviourQuery, "operationName": "Behaviour", "variables": map[string]int{"first": first}})
	return b
}

// StoreBehaviourQuery is scenario 10's GraphQL query: the receivables of scenario 6 with the
// store's payment figures (contract §17), which the database computes over every invoice.
const StoreBehaviourQuery = `query StoreBehaviour {
  receivables {
    aging { total { amount currency } }
    outstanding { amount currency }
    overdue { amount }
    companiesOverdue
    dsoDays
    averageDaysBeyondTerms
    paidOnTimeShare
  }
}`

// ReceivablesQuery is scenario 6's GraphQL query: the store's aging and totals (contract §15),
// which the database sums over every open invoice of the store.
const ReceivablesQuery = `query Receivables {
  receivables {
    aging {
      current { amount currency }
      days1To30 { amount }
      days31To60 { amount }
      days61To90 { amount }
      over90 { amount }
      total { amount }
    }
    outstanding { amount currency }
    overdue { amount }
    companiesOverdue
  }
}`

// pick spreads request numbers over n items: consecutive requests land far apart, so they do
// not hit the same database pages, yet every run asks for the same sequence.
func pick(i uint64, n int) int { return int((i * 2654435761) % uint64(n)) }

// Scenarios returns the scenarios of issue #8 on ds, in the order they run. runID makes the
// Idempotency-Keys of the write scenario unique across runs on one database.
func Scenarios(ds Dataset, runID string) []Scenario {
	auth := func() http.Header {
		return http.Header{"Authorization": {"Bearer " + ds.Secret}}
	}
	get := func(path func(n uint64) string) func(n uint64) (string, string, http.Header, []byte) {
		return func(n uint64) (string, string, http.Header, []byte) { return http.MethodGet, path(n), auth(), nil }
	}
	dashboard := DashboardBody(50, 5)
	receivables, _ := json.Marshal(map[string]any{"query": ReceivablesQuery, "operationName": "Receivables"})
	behaviour := BehaviourBody(50)
	storeBehaviour, _ := json.Marshal(map[string]any{"query": StoreBehaviourQuery, "operationName": "StoreBehaviour"})
	graphql := func(body []byte) func(uint64) (string, string, http.Header, []byte) {
		return func(uint64) (string, string, http.Header, []byte) {
			h := auth()
			h.Set("Content-Type", "application/json")
			return http.MethodPost, "/graphql", h, body
		}
	}
	// Platform order numbers of this run: unique across runs on one database, so every
	// delivery is a new order (19 digits at most).
	orderBase := uint64(time.Now().UnixMilli()) * 1_000_000
	platform := func(path string, header http.Header, body []byte) (string, string, http.Header, []byte) {
		header.Set("Content-Type", "application/json")
		header.Set("X-Platform-Shop-Domain", ds.ShopDomain)
		header.Set("X-Platform-Hmac-Sha256", credit.SignPlatformBody(ds.PlatformSecret, body))
		return http.MethodPost, path, header, body
	}
	platformCompany := func(n uint64) string {
		if len(ds.PlatformCompanies) == 0 {
			return "gid://platform/Company/0"
		}
		return ds.PlatformCompanies[pick(n, len(ds.PlatformCompanies))]
	}
	return []Scenario{
		{Name: "company", Title: "1. GET /v1/companies/{id}", Status: http.StatusOK,
			request: get(func(n uint64) string { return "/v1/companies/" + ds.Companies[pick(n, len(ds.Companies))] })},
		{Name: "ledger-big", Title: fmt.Sprintf("2. GET /v1/companies/{id}/ledger?after=… (%s entries)", count(ds.Size.BigLedger)), Status: http.StatusOK,
			request: get(func(n uint64) string {
				return "/v1/companies/" + ds.BigCompany + "/ledger?after=" + ds.BigAfter[pick(n, len(ds.BigAfter))]
			})},
		{Name: "ledger-medium", Title: fmt.Sprintf("2. GET /v1/companies/{id}/ledger?after=… (%s entries)", count(ds.Size.MediumLedger)), Status: http.StatusOK,
			request: get(func(n uint64) string {
				return "/v1/companies/" + ds.MediumLedger + "/ledger?after=" + ds.MediumAfter[pick(n, len(ds.MediumAfter))]
			})},
		{Name: "companies", Title: "3. GET /v1/companies?limit=250", Status: http.StatusOK,
			request: get(func(uint64) string { return "/v1/companies?limit=250" })},
		{Name: "dashboard", Title: "4. POST /graphql dashboard (50 companies, hold, figures, last 5 entries)", Status: http.StatusOK,
			request: func(uint64) (string, string, http.Header, []byte) {
				h := auth()
				h.Set("Content-Type", "application/json")
				return http.MethodPost, "/graphql", h, dashboard
			}},
		{Name: "adjustments", Title: "5. POST /v1/companies/{id}/adjustments (distinct Idempotency-Keys)", Status: http.StatusCreated, Write: true,
			request: func(n uint64) (string, string, http.Header, []byte) {
				h := auth()
				h.Set("Content-Type", "application/json")
				h.Set("Idempotency-Key", "creditbench-"+runID+"-"+strconv.FormatUint(n, 10))
				return http.MethodPost, "/v1/companies/" + ds.Companies[pick(n, len(ds.Companies))] + "/adjustments", h,
					[]byte(`{"amount":"1.00","note":"creditbench"}`)
			}},
		{Name: "receivables", Title: fmt.Sprintf("6. POST /graphql receivables (aging of the store's %s companies)", count(len(ds.Companies))), Status: http.StatusOK,
			request: func(uint64) (string, string, http.Header, []byte) {
				h := auth()
				h.Set("Content-Type", "application/json")
				return http.MethodPost, "/graphql", h, receivables
			}},
		{Name: "platform-deliveries", Title: "7. POST /platform/webhooks orders/create (signed, a new order each)", Status: http.StatusOK, Write: true,
			request: func(n uint64) (string, string, http.Header, []byte) {
				body := fmt.Appendf(nil, `{"id":"gid://platform/Order/%d","company_id":%q,"payment_terms":{"type":"NET","due_in_days":30},"total":{"amount":"1.00","currency":"EUR"},"created_at":%q}`,
					orderBase+n, platformCompany(n), time.Now().UTC().Format(time.RFC3339))
				h := http.Header{"X-Platform-Topic": {"orders/create"}, "X-Platform-Webhook-Id": {"creditbench-" + runID + "-" + strconv.FormatUint(n, 10)}}
				return platform("/platform/webhooks", h, body)
			}},
		{Name: "credit-check", Title: "8. POST /platform/credit-checks (signed)", Status: http.StatusOK,
			request: func(n uint64) (string, string, http.Header, []byte) {
				body := fmt.Appendf(nil, `{"company_id":%q,"amount":{"amount":"1.00","currency":"EUR"}}`, platformCompany(n))
				return platform("/platform/credit-checks", http.Header{}, body)
			}},
		{Name: "behaviour", Title: "9. POST /graphql payment behaviour (50 companies)", Status: http.StatusOK, request: graphql(behaviour)},
		{Name: "store-behaviour", Title: fmt.Sprintf("10. POST /graphql receivables with the store's DSO, days beyond terms, paid on time (%s companies)", count(len(ds.Companies))),
			Status: http.StatusOK, request: graphql(storeBehaviour)},
	}
}

func count(n int) string {
	switch {
	case n >= 1_000_000 && n%1_000_000 == 0:
		return fmt.Sprintf("%dM", n/1_000_000)
	case n >= 1000 && n%1000 == 0:
		return fmt.Sprintf("%dk", n/1000)
	}
	return strconv.Itoa(n)
}

// targeter turns a scenario into vegeta targets against base (http://host:port), numbering
// requests from start. With baselinePath set, every request goes to that path instead, with
// the same method, headers and body.
func (s Scenario) targeter(base string, start *atomic.Uint64, baselinePath string) vegeta.Targeter {
	return func(t *vegeta.Target) error {
		n := start.Add(1)
		method, path, header, body := s.request(n)
		if baselinePath != "" {
			path = baselinePath
		}
		t.Method, t.URL, t.Header, t.Body = method, base+path, header, body
		return nil
	}
}

// Measurement is one load run's outcome.
type Measurement struct {
	// Rate is the requested rate (0 for as fast as the workers go).
	Rate float64 `json:"rate"`
	// Requests counts responses, Errors those without the scenario's status (or failed).
	Requests uint64 `json:"requests"`
	Errors   uint64 `json:"errors"`
	// Throughput is successful responses per second.
	Throughput float64 `json:"throughput"`
	// Latencies over all responses.
	P50 time.Duration `json:"p50"`
	P90 time.Duration `json:"p90"`
	P99 time.Duration `json:"p99"`
	Max time.Duration `json:"max"`
	// CPUPerRequest is the server's CPU time (user and system) divided by the responses: a
	// cost that other load on the machine skews much less than throughput. On PostgreSQL it
	// includes the CPU time of the server's backends, which BackendCPUPerRequest is alone.
	CPUPerRequest        time.Duration `json:"cpu_per_request"`
	BackendCPUPerRequest time.Duration `json:"backend_cpu_per_request,omitempty"`
	// BackendsGone counts the server's PostgreSQL backends that disconnected during the run,
	// whose CPU time since its start could not be read (the pools keep their connections, so
	// it should be 0).
	BackendsGone int `json:"backends_gone,omitempty"`
	// FirstError describes one failure, if any.
	FirstError string `json:"first_error,omitempty"`
}
