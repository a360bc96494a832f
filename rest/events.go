package rest

import (
	"net/http"
	"strings"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/httpapi"
)

// listEvents serves GET /v1/events.
func (a *API) listEvents(w http.ResponseWriter, r *http.Request) {
	q, err := queryParams(r.URL.RawQuery, "limit", "cursor", "after", "type")
	if err != nil {
		httpapi.WriteError(w, r, err)
		return
	}
	p := credit.EventListParams{}
	if p.ListParams, err = listParams(q); err != nil {
		httpapi.WriteError(w, r, err)
		return
	}
	if p.After, err = nonEmpty(q, "after"); err != nil {
		httpapi.WriteError(w, r, err)
		return
	}
	types, err := nonEmpty(q, "type")
	if err != nil {
		httpapi.WriteError(w, r, err)
		return
	}
	if types != "" {
		p.Types = strings.Split(types, ",")
	}
	page, err := a.svc.Events.List(r.Context(), p)
	if err != nil {
		httpapi.WriteError(w, r, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, page)
}

// getEvent serves GET /v1/events/{id}.
func (a *API) getEvent(w http.ResponseWriter, r *http.Request) {
	if _, err := queryParams(r.URL.RawQuery); err != nil {
		httpapi.WriteError(w, r, err)
		return
	}
	e, err := a.svc.Events.Get(r.Context(), r.PathValue("id"))
	if err != nil {
		httpapi.WriteError(w, r, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, e)
}
