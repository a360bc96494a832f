// Package rest is the /v1 REST transport: it parses requests, calls the credit domain and
// writes its results or errors through package httpapi, which it shares with GraphQL. It holds
// no business rule.
package rest

import (
	"net/http"
	"time"

	"github.com/creditd/creditd/credit"
)

// API serves /v1.
type API struct {
	svc Services

	// ExportWriteTimeout is how long one write of an export may wait for its client (serve's
	// stream write timeout); zero means DefaultExportWriteTimeout.
	ExportWriteTimeout time.Duration
}

// New returns the /v1 API over svc.
func New(svc *credit.Service) *API { return NewWith(servicesOf(svc)) }

// NewWith returns the /v1 API over the given services.
func NewWith(s Services) *API { return &API{svc: s} }

// Route is one /v1 operation: its ServeMux pattern and handler. Requests reach it
// authenticated: the server puts the key's viewer in the context first.
type Route struct {
	Pattern string
	Handler http.HandlerFunc
}

// ExportPattern is the export's route: a stream, which the server serves without a
// conditional answer (it would buffer the body) and without the requests' database deadline
// (the export has its own limit, credit.ExportTimeout).
const ExportPattern = "GET /v1/export"

// Routes lists every /v1 operation. Tests derive their isolation and scope matrices from it,
// so a route added here is covered there too.
func (a *API) Routes() []Route {
	return []Route{
		{"GET /v1/companies", a.listCompanies},
		{"GET /v1/companies/{id}", a.getCompany},
		{"GET /v1/companies/{id}/ledger", a.listLedger},
		{"GET /v1/companies/{id}/invoices", a.listInvoices},
		{"GET /v1/companies/{id}/statement", a.getStatement},
		{"GET /v1/companies/{id}/payment-behaviour", a.getPaymentBehaviour},
		{"GET /v1/invoices/{id}", a.getInvoice},
		{"GET /v1/applications", a.listApplications},
		{"GET /v1/applications/{id}", a.getApplication},
		{"GET /v1/events", a.listEvents},
		{"GET /v1/events/{id}", a.getEvent},
		{ExportPattern, a.export},
		{"POST /v1/companies/{id}/adjustments", a.createAdjustment},
		{"PUT /v1/companies/{id}/credit-limit", a.setCreditLimit},
		{"POST /v1/companies/{id}/hold", a.placeHold},
		{"DELETE /v1/companies/{id}/hold", a.liftHold},
		{"POST /v1/invoices/{id}/promise", a.recordPromise},
		{"DELETE /v1/invoices/{id}/promise", a.withdrawPromise},
		{"POST /v1/invoices/{id}/dispute", a.openDispute},
		{"DELETE /v1/invoices/{id}/dispute", a.resolveDispute},
	}
}
