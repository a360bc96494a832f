package rest

import (
	"net/http"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/httpapi"
)

// The invoices over REST (contract §17): the same reads GraphQL's Company.invoices and
// node(id:) make, so an ERP on REST can see what is owed, invoice by invoice.

// listInvoices serves GET /v1/companies/{id}/invoices.
func (a *API) listInvoices(w http.ResponseWriter, r *http.Request) {
	q, err := queryParams(r.URL.RawQuery, "limit", "cursor", "status")
	if err != nil {
		httpapi.WriteError(w, r, err)
		return
	}
	p := credit.InvoiceListParams{}
	if p.ListParams, err = listParams(q); err != nil {
		httpapi.WriteError(w, r, err)
		return
	}
	if p.Status, err = nonEmpty(q, "status"); err != nil {
		httpapi.WriteError(w, r, err)
		return
	}
	page, err := a.svc.Invoices.List(r.Context(), r.PathValue("id"), p)
	if err != nil {
		httpapi.WriteError(w, r, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, page)
}

// getInvoice serves GET /v1/invoices/{id}.
func (a *API) getInvoice(w http.ResponseWriter, r *http.Request) {
	if _, err := queryParams(r.URL.RawQuery); err != nil {
		httpapi.WriteError(w, r, err)
		return
	}
	inv, err := a.svc.Invoices.Get(r.Context(), r.PathValue("id"))
	if err != nil {
		httpapi.WriteError(w, r, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, inv)
}
