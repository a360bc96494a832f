package rest

import (
	"context"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/httpapi"
)

// Services are what /v1 asks of the domain, one interface per service and only the operations
// its handlers call. New takes them from a *credit.Service; a test of the transport alone (how a
// request is read, how an answer or an error is written) may give fakes (NewWith).
type Services struct {
	Companies    Companies
	Ledger       Ledger
	Invoices     Invoices
	Reports      Reports
	Exports      Exports
	Events       Events
	Applications Applications
	// Idempotency keeps the writes' idempotency records (contract §7).
	Idempotency httpapi.IdempotencyRecords
}

// Companies are the company operations of /v1.
type Companies interface {
	List(ctx context.Context, p credit.CompanyListParams) (credit.Page[credit.Company], error)
	Get(ctx context.Context, id string) (credit.Company, error)
	SetCreditLimit(ctx context.Context, in credit.CreditLimitInput) (credit.CreditLimitResult, error)
	PlaceHold(ctx context.Context, in credit.HoldInput) (credit.CompanyResult, error)
	LiftHold(ctx context.Context, companyID string) (credit.CompanyResult, error)
}

// Ledger is the ledger's part of /v1: a company's entries and the adjustment.
type Ledger interface {
	List(ctx context.Context, companyID string, p credit.LedgerListParams) (credit.Page[credit.LedgerEntry], error)
	CreateAdjustment(ctx context.Context, in credit.AdjustmentInput) (credit.AdjustmentResult, error)
}

// Invoices are the invoice reads and the collection writes (promises, disputes) of /v1.
type Invoices interface {
	List(ctx context.Context, companyID string, p credit.InvoiceListParams) (credit.Page[credit.Invoice], error)
	Get(ctx context.Context, id string) (credit.Invoice, error)
	RecordPromise(ctx context.Context, in credit.PromiseInput) (credit.InvoiceResult, error)
	WithdrawPromise(ctx context.Context, invoiceID string) (credit.InvoiceResult, error)
	OpenDispute(ctx context.Context, in credit.DisputeInput) (credit.InvoiceResult, error)
	ResolveDispute(ctx context.Context, invoiceID string) (credit.InvoiceResult, error)
}

// Reports are a company's statement of account and payment behaviour.
type Reports interface {
	Statement(ctx context.Context, companyID, from, to string) (credit.Statement, error)
	CompanyPaymentBehaviour(ctx context.Context, companyID string, windowDays int) (credit.PaymentBehaviour, error)
}

// Exports is the store's export (contract §18).
type Exports interface {
	Export(ctx context.Context, p credit.ExportParams, open func() (credit.ExportSink, error)) (credit.ExportCounts, error)
}

// Events are the event feed's reads.
type Events interface {
	List(ctx context.Context, p credit.EventListParams) (credit.Page[credit.Event], error)
	Get(ctx context.Context, id string) (credit.Event, error)
}

// Applications are the wholesale applications' reads.
type Applications interface {
	List(ctx context.Context, p credit.ApplicationListParams) (credit.Page[credit.Application], error)
	Get(ctx context.Context, id string) (credit.Application, error)
}

// servicesOf takes /v1's services from the domain's.
func servicesOf(svc *credit.Service) Services {
	return Services{
		Companies:    svc.Companies,
		Ledger:       svc.Ledger,
		Invoices:     svc.Invoices,
		Reports:      svc.Reports,
		Exports:      svc.Exports,
		Events:       svc.Events,
		Applications: svc.Applications,
		Idempotency:  svc.Idempotency,
	}
}
