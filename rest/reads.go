package rest

import (
	"net/http"
	"strings"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/httpapi"
)

// listCompanies serves GET /v1/companies.
func (a *API) listCompanies(w http.ResponseWriter, r *http.Request) {
	q, err := queryParams(r.URL.RawQuery, "limit", "cursor", "status", "updated_since", "order", "q")
	if err != nil {
		httpapi.WriteError(w, r, err)
		return
	}
	p := credit.CompanyListParams{}
	if p.ListParams, err = listParams(q); err != nil {
		httpapi.WriteError(w, r, err)
		return
	}
	if p.Status, err = nonEmpty(q, "status"); err != nil {
		httpapi.WriteError(w, r, err)
		return
	}
	if v, ok := q["updated_since"]; ok {
		ts, err := credit.ParseTimestamp(v)
		if err != nil {
			httpapi.WriteError(w, r, credit.ParamErrorf(credit.CodeInvalidParameter, "updated_since", "%s", updatedSinceMessage(v)))
			return
		}
		p.UpdatedSince = &ts
	}
	if v, ok := q["order"]; ok {
		if p.Order, err = credit.ParseCompanyOrder(v); err != nil {
			httpapi.WriteError(w, r, err)
			return
		}
	}
	if v, ok := q["q"]; ok {
		p.Search = &v
	}
	page, err := a.svc.Companies.List(r.Context(), p)
	if err != nil {
		httpapi.WriteError(w, r, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, page)
}

// getCompany serves GET /v1/companies/{id}.
func (a *API) getCompany(w http.ResponseWriter, r *http.Request) {
	if _, err := queryParams(r.URL.RawQuery); err != nil {
		httpapi.WriteError(w, r, err)
		return
	}
	c, err := a.svc.Companies.Get(r.Context(), r.PathValue("id"))
	if err != nil {
		httpapi.WriteError(w, r, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, c)
}

// listLedger serves GET /v1/companies/{id}/ledger.
func (a *API) listLedger(w http.ResponseWriter, r *http.Request) {
	q, err := queryParams(r.URL.RawQuery, "limit", "cursor", "after")
	if err != nil {
		httpapi.WriteError(w, r, err)
		return
	}
	p := credit.LedgerListParams{}
	if p.ListParams, err = listParams(q); err != nil {
		httpapi.WriteError(w, r, err)
		return
	}
	if p.After, err = nonEmpty(q, "after"); err != nil {
		httpapi.WriteError(w, r, err)
		return
	}
	page, err := a.svc.Ledger.List(r.Context(), r.PathValue("id"), p)
	if err != nil {
		httpapi.WriteError(w, r, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, page)
}

// listApplications serves GET /v1/applications.
func (a *API) listApplications(w http.ResponseWriter, r *http.Request) {
	q, err := queryParams(r.URL.RawQuery, "limit", "cursor", "status")
	if err != nil {
		httpapi.WriteError(w, r, err)
		return
	}
	p := credit.ApplicationListParams{}
	if p.ListParams, err = listParams(q); err != nil {
		httpapi.WriteError(w, r, err)
		return
	}
	if p.Status, err = nonEmpty(q, "status"); err != nil {
		httpapi.WriteError(w, r, err)
		return
	}
	page, err := a.svc.Applications.List(r.Context(), p)
	if err != nil {
		httpapi.WriteError(w, r, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, page)
}

// getApplication serves GET /v1/applications/{id}.
func (a *API) getApplication(w http.ResponseWriter, r *http.Request) {
	if _, err := queryParams(r.URL.RawQuery); err != nil {
		httpapi.WriteError(w, r, err)
		return
	}
	app, err := a.svc.Applications.Get(r.Context(), r.PathValue("id"))
	if err != nil {
		httpapi.WriteError(w, r, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, app)
}

// updatedSinceMessage explains a refused updated_since. The most common mistake gets its own
// answer: an offset's + sent raw, which a query string reads as a space.
func updatedSinceMessage(v string) string {
	if _, err := credit.ParseTimestamp(strings.Replace(v, " ", "+", 1)); err == nil {
		return "updated_since has a space where its offset's + should be: a raw + in a URL means a space, so send it as %2B (2026-01-31T10:30:00%2B01:00)"
	}
	return "updated_since must be an RFC 3339 timestamp such as 2026-01-31T09:30:00Z; in a URL, send an offset's + as %2B (2026-01-31T10:30:00%2B01:00)"
}
