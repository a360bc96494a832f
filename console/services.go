package console

import (
	"context"
	"time"

	"github.com/shopspring/decimal"

	"github.com/creditd/creditd/credit"
)

// Services are what the console asks of the domain, one interface per service and only the
// operations its pages and forms call (as rest.Services for /v1). New takes them from
// Config.Service; a test of the console alone (a page rendered from the domain's answer, a
// refusal shown as the contract words it) may give fakes (NewWith).
type Services struct {
	Companies    Companies
	Ledger       Ledger
	Timeline     Timeline
	Invoices     Invoices
	Reports      Reports
	Applications Applications
	Keys         Keys
	Staff        Staff
	Stores       Stores
	Platform     Platform
	Inbox        Inbox
	Webhooks     Webhooks
	// Now is the service's clock (credit.Service.Now): the day a page's forms start from and
	// the moment a report is as of. Nil means time.Now.
	Now func() time.Time
}

// Companies are the companies' list, page and forms.
type Companies interface {
	List(ctx context.Context, p credit.CompanyListParams) (credit.Page[credit.Company], error)
	Get(ctx context.Context, id string) (credit.Company, error)
	Create(ctx context.Context, in credit.CompanyInput) (credit.Company, error)
	SetCreditLimit(ctx context.Context, in credit.CreditLimitInput) (credit.CreditLimitResult, error)
	SetPlatformCompanyGID(ctx context.Context, companyID, gid string) (credit.Company, error)
	PlaceHold(ctx context.Context, in credit.HoldInput) (credit.CompanyResult, error)
	LiftHold(ctx context.Context, companyID string) (credit.CompanyResult, error)
}

// Ledger is a company's ledger on its page, who recorded its entries, and the entries staff
// record.
type Ledger interface {
	List(ctx context.Context, companyID string, p credit.LedgerListParams) (credit.Page[credit.LedgerEntry], error)
	Recorders(ctx context.Context, companyID string, entryIDs []string) (map[string]credit.Actor, error)
	CreateAdjustment(ctx context.Context, in credit.AdjustmentInput) (credit.AdjustmentResult, error)
	Record(ctx context.Context, in credit.LedgerEntryInput) (credit.LedgerEntry, credit.Company, error)
}

// Timeline is a company's timeline on its page.
type Timeline interface {
	List(ctx context.Context, companyID string, p credit.ListParams) (credit.Page[credit.TimelineEvent], error)
}

// Invoices are a company's open invoices and an invoice's collection forms.
type Invoices interface {
	List(ctx context.Context, companyID string, p credit.InvoiceListParams) (credit.Page[credit.Invoice], error)
	Get(ctx context.Context, id string) (credit.Invoice, error)
	RecordPromise(ctx context.Context, in credit.PromiseInput) (credit.InvoiceResult, error)
	WithdrawPromise(ctx context.Context, invoiceID string) (credit.InvoiceResult, error)
	OpenDispute(ctx context.Context, in credit.DisputeInput) (credit.InvoiceResult, error)
	ResolveDispute(ctx context.Context, invoiceID string) (credit.InvoiceResult, error)
}

// Reports are the figures of the overview, the receivables, the collections and a company's
// page, and its statement.
type Reports interface {
	Overview(ctx context.Context) (credit.Overview, error)
	Receivables(ctx context.Context) (credit.Receivables, error)
	ReceivablesByCompany(ctx context.Context, overdueOnly bool) ([]credit.CompanyReceivables, error)
	StoreDSO(ctx context.Context) (decimal.Decimal, error)
	StoreBehaviour(ctx context.Context, windowDays int) (credit.StoreBehaviour, error)
	Collections(ctx context.Context) (credit.Collections, error)
	CompanyAging(ctx context.Context, companyIDs []string) (map[string]credit.Aging, error)
	CompanyPaymentBehaviour(ctx context.Context, companyID string, windowDays int) (credit.PaymentBehaviour, error)
	Statement(ctx context.Context, companyID, from, to string) (credit.Statement, error)
}

// Applications are the applications' list, page and decision, a company's application, and
// the erasure of a person's data.
type Applications interface {
	List(ctx context.Context, p credit.ApplicationListParams) (credit.Page[credit.Application], error)
	Get(ctx context.Context, id string) (credit.Application, error)
	History(ctx context.Context, id string) ([]credit.ApplicationChange, error)
	SetStatus(ctx context.Context, in credit.StatusChange) (credit.Application, *credit.Company, error)
	OfCompany(ctx context.Context, companyID string) (string, error)
	ErasePerson(ctx context.Context, email string) (int, error)
}

// Keys are the API settings: the store's keys, made, rotated and revoked.
type Keys interface {
	List(ctx context.Context, staleAfter time.Duration) ([]credit.KeyInfo, error)
	Create(ctx context.Context, label string, scopes []string) (credit.IssuedKey, error)
	Rotate(ctx context.Context, keyID string, grace time.Duration) (credit.IssuedKey, error)
	Revoke(ctx context.Context, keyID string) error
}

// Staff are sign-in, sessions and the notice a session shows once.
type Staff interface {
	SignIn(ctx context.Context, email, password string, policy credit.SessionPolicy) (string, credit.StaffSession, error)
	ResumeSession(ctx context.Context, token string, policy credit.SessionPolicy) (context.Context, credit.StaffSession, error)
	SignOut(ctx context.Context, token string) error
	SetSessionNotice(ctx context.Context, sessionID, notice string) error
}

// Stores are the signed-in member's store and its reminder schedule.
type Stores interface {
	Current(ctx context.Context) (credit.StoreInfo, error)
	ReminderSchedule(ctx context.Context) (credit.ReminderSchedule, error)
	SetReminderSchedule(ctx context.Context, days []int) (credit.ReminderSchedule, error)
}

// Platform is the commerce platform's connection and its secret.
type Platform interface {
	Status(ctx context.Context) (credit.PlatformConnection, error)
	RotateSecret(ctx context.Context, secret string, grace time.Duration) (credit.PlatformConnection, error)
}

// Inbox is the platform's deliveries: listed, a company's failed ones, and a retry.
type Inbox interface {
	List(ctx context.Context, p credit.InboxListParams) (credit.Page[credit.InboxDelivery], error)
	FailedFor(ctx context.Context, companyID string) ([]credit.InboxDelivery, error)
	Retry(ctx context.Context, id string) (credit.InboxDelivery, error)
}

// Webhooks are the webhook endpoints' pages and forms.
type Webhooks interface {
	ListEndpoints(ctx context.Context) ([]credit.WebhookEndpoint, error)
	EndpointErrors(in credit.WebhookEndpointInput) []error
	CreateEndpoint(ctx context.Context, in credit.WebhookEndpointInput) (credit.IssuedWebhookSecret, error)
	SetEndpointEnabled(ctx context.Context, id string, enabled bool) (credit.WebhookEndpoint, error)
	RotateSecret(ctx context.Context, id string, grace time.Duration) (credit.IssuedWebhookSecret, error)
	Deliveries(ctx context.Context, id string, limit int) (credit.WebhookDeliveryReport, error)
	Redeliver(ctx context.Context, eventID, endpointID string) (credit.WebhookDelivery, error)
	Ping(ctx context.Context, endpointID string) (*credit.WebhookDue, error)
}

// servicesOf takes the console's services from the domain's.
func servicesOf(svc *credit.Service) Services {
	return Services{
		Companies:    svc.Companies,
		Ledger:       svc.Ledger,
		Timeline:     svc.Timeline,
		Invoices:     svc.Invoices,
		Reports:      svc.Reports,
		Applications: svc.Applications,
		Keys:         svc.Keys,
		Staff:        svc.Staff,
		Stores:       svc.Stores,
		Platform:     svc.Platform,
		Inbox:        svc.Inbox,
		Webhooks:     svc.Webhooks,
		Now:          svc.Now,
	}
}
