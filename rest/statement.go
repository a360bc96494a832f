package rest

import (
	"net/http"

	"github.com/creditd/creditd/httpapi"
)

// The statement of account over REST (contract §17): the domain's statement, as JSON.

// getStatement serves GET /v1/companies/{id}/statement?from=&to=.
func (a *API) getStatement(w http.ResponseWriter, r *http.Request) {
	q, err := queryParams(r.URL.RawQuery, "from", "to")
	if err != nil {
		httpapi.WriteError(w, r, err)
		return
	}
	s, err := a.svc.Reports.Statement(r.Context(), r.PathValue("id"), q["from"], q["to"])
	if err != nil {
		httpapi.WriteError(w, r, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, s)
}
