package rest

import (
	"net/http"
	"strconv"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/httpapi"
)

// getPaymentBehaviour serves GET /v1/companies/{id}/payment-behaviour (contract §17).
func (a *API) getPaymentBehaviour(w http.ResponseWriter, r *http.Request) {
	q, err := queryParams(r.URL.RawQuery, "window_days")
	if err != nil {
		httpapi.WriteError(w, r, err)
		return
	}
	window := credit.BehaviourWindowDays
	if v, ok := q["window_days"]; ok {
		if window, err = strconv.Atoi(v); err != nil {
			httpapi.WriteError(w, r, credit.ParamErrorf(credit.CodeInvalidParameter, "window_days", "window_days must be a whole number from 1 to %d", credit.MaxBehaviourWindowDays))
			return
		}
	}
	b, err := a.svc.Reports.CompanyPaymentBehaviour(r.Context(), r.PathValue("id"), window)
	if err != nil {
		httpapi.WriteError(w, r, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, b)
}
