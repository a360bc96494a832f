package rest

import (
	"context"
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

// recordPromise serves POST /v1/invoices/{id}/promise.
func (a *API) recordPromise(w http.ResponseWriter, r *http.Request) {
	in := credit.PromiseInput{InvoiceID: r.PathValue("id")}
	var day *string
	a.write(w, r, func(body []byte) error {
		err := httpapi.DecodeObject(body,
			httpapi.StringField("promised_for", &day),
			httpapi.StringField("note", &in.Note))
		if day != nil {
			in.PromisedFor = *day
		}
		return err
	}, func(ctx context.Context) (int, any, error) {
		res, err := a.svc.Invoices.RecordPromise(ctx, in)
		return http.StatusOK, res, err
	})
}

// withdrawPromise serves DELETE /v1/invoices/{id}/promise.
func (a *API) withdrawPromise(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	a.write(w, r, func(body []byte) error {
		return httpapi.DecodeObject(body)
	}, func(ctx context.Context) (int, any, error) {
		res, err := a.svc.Invoices.WithdrawPromise(ctx, id)
		return http.StatusOK, res, err
	})
}

// openDispute serves POST /v1/invoices/{id}/dispute.
func (a *API) openDispute(w http.ResponseWriter, r *http.Request) {
	in := credit.DisputeInput{InvoiceID: r.PathValue("id")}
	var reason *string
	a.write(w, r, func(body []byte) error {
		err := httpapi.DecodeObject(body, httpapi.StringField("reason", &reason))
		if reason != nil {
			in.Reason = *reason
		}
		return err
	}, func(ctx context.Context) (int, any, error) {
		res, err := a.svc.Invoices.OpenDispute(ctx, in)
		return http.StatusOK, res, err
	})
}

// resolveDispute serves DELETE /v1/invoices/{id}/dispute.
func (a *API) resolveDispute(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	a.write(w, r, func(body []byte) error {
		return httpapi.DecodeObject(body)
	}, func(ctx context.Context) (int, any, error) {
		res, err := a.svc.Invoices.ResolveDispute(ctx, id)
		return http.StatusOK, res, err
	})
}
