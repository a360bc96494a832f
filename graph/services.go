package graph

import (
	"context"

	"github.com/shopspring/decimal"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/httpapi"
)

// Services are what GraphQL asks of the domain, one interface per service and only the
// operations its resolvers, argument checks, batched loads and streams call (as rest.Services
// for /v1). NewHandler takes them from a *credit.Service; a test of the transport alone (a
// query reaching the domain with its arguments, an error presented with its code) may give
// fakes (NewHandlerWith).
type Services struct {
	Companies    Companies
	Ledger       Ledger
	Timeline     Timeline
	Invoices     Invoices
	Reports      Reports
	Applications Applications
	Events       Events
	// Lists checks the connections' paging arguments before any resolver runs.
	Lists Lists
	// Idempotency keeps the mutations' idempotency records (contract §7).
	Idempotency httpapi.IdempotencyRecords
}

// Companies are the company fields and mutations, and the companies of ledger entries and
// events.
type Companies interface {
	List(ctx context.Context, p credit.CompanyListParams) (credit.Page[credit.Company], error)
	Get(ctx context.Context, id string) (credit.Company, error)
	GetMany(ctx context.Context, companyIDs []string) (map[string]credit.Company, error)
	SetCreditLimit(ctx context.Context, in credit.CreditLimitInput) (credit.CreditLimitResult, error)
	PlaceHold(ctx context.Context, in credit.HoldInput) (credit.CompanyResult, error)
	LiftHold(ctx context.Context, companyID string) (credit.CompanyResult, error)
}

// Ledger is a company's ledger, one company's or a page's at once, and the adjustment.
type Ledger interface {
	List(ctx context.Context, companyID string, p credit.LedgerListParams) (credit.Page[credit.LedgerEntry], error)
	Get(ctx context.Context, id string) (credit.LedgerEntry, error)
	FirstPages(ctx context.Context, companyIDs []string, limit *int) (map[string]credit.Page[credit.LedgerEntry], error)
	FirstPagesOf(ctx context.Context, companies []*credit.Company, limit *int) (map[string]credit.Page[credit.LedgerEntry], error)
	CreateAdjustment(ctx context.Context, in credit.AdjustmentInput) (credit.AdjustmentResult, error)
}

// Timeline is a company's timeline, one company's or a page's at once.
type Timeline interface {
	List(ctx context.Context, companyID string, p credit.ListParams) (credit.Page[credit.TimelineEvent], error)
	Get(ctx context.Context, id string) (credit.TimelineEvent, error)
	FirstPages(ctx context.Context, companyIDs []string, limit *int) (map[string]credit.Page[credit.TimelineEvent], error)
}

// Invoices are the invoice reads and the collection mutations (promises, disputes).
type Invoices interface {
	List(ctx context.Context, companyID string, p credit.InvoiceListParams) (credit.Page[credit.Invoice], error)
	Get(ctx context.Context, id string) (credit.Invoice, error)
	FirstPages(ctx context.Context, companyIDs []string, status string, limit *int) (map[string]credit.Page[credit.Invoice], error)
	RecordPromise(ctx context.Context, in credit.PromiseInput) (credit.InvoiceResult, error)
	WithdrawPromise(ctx context.Context, invoiceID string) (credit.InvoiceResult, error)
	OpenDispute(ctx context.Context, in credit.DisputeInput) (credit.InvoiceResult, error)
	ResolveDispute(ctx context.Context, invoiceID string) (credit.InvoiceResult, error)
}

// Reports are the companies' and the store's figures.
type Reports interface {
	Statement(ctx context.Context, companyID, from, to string) (credit.Statement, error)
	CompanyAging(ctx context.Context, companyIDs []string) (map[string]credit.Aging, error)
	PaymentBehaviour(ctx context.Context, companyIDs []string, windowDays int) (map[string]credit.PaymentBehaviour, error)
	Receivables(ctx context.Context) (credit.Receivables, error)
	StoreDSO(ctx context.Context) (decimal.Decimal, error)
	StoreBehaviour(ctx context.Context, windowDays int) (credit.StoreBehaviour, error)
}

// Applications are the wholesale applications' reads.
type Applications interface {
	List(ctx context.Context, p credit.ApplicationListParams) (credit.Page[credit.Application], error)
	Get(ctx context.Context, id string) (credit.Application, error)
}

// Events are the event feed: its reads, the checks of its arguments, and its subscriptions
// with the count of those cut off.
type Events interface {
	List(ctx context.Context, p credit.EventListParams) (credit.Page[credit.Event], error)
	Get(ctx context.Context, id string) (credit.Event, error)
	CheckListParams(p credit.EventListParams) error
	Subscribe(ctx context.Context, p credit.EventSubscriptionParams) (*credit.EventSubscription, error)
	NoteCutOff(reason string)
}

// Lists checks a list's paging arguments (credit.Service.CheckListParams).
type Lists interface {
	CheckListParams(ctx context.Context, kind string, p credit.ListParams) error
}

// servicesOf takes GraphQL's services from the domain's.
func servicesOf(svc *credit.Service) Services {
	return Services{
		Companies:    svc.Companies,
		Ledger:       svc.Ledger,
		Timeline:     svc.Timeline,
		Invoices:     svc.Invoices,
		Reports:      svc.Reports,
		Applications: svc.Applications,
		Events:       svc.Events,
		Lists:        svc,
		Idempotency:  svc.Idempotency,
	}
}
