package rest

import (
	"bytes"
	"net/http"
	"strconv"

	"github.com/creditd/creditd/httpapi"
	"github.com/creditd/creditd/statementpdf"
)

// The statement of account over REST (contract §17): the domain's statement as JSON, or as a
// PDF for a client whose Accept prefers application/pdf.

// getStatement serves GET /v1/companies/{id}/statement?from=&to=.
func (a *API) getStatement(w http.ResponseWriter, r *http.Request) {
	w.Header().Add("Vary", "Accept")
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
	// After the statement, so that the scope, the period and the company are answered for
	// first, as on every route.
	media, err := httpapi.Negotiate(r, "application/json", statementpdf.ContentType)
	if err != nil {
		httpapi.WriteError(w, r, err)
		return
	}
	if media != statementpdf.ContentType {
		httpapi.WriteJSON(w, http.StatusOK, s)
		return
	}
	// Rendered whole before the status is written, so that a failure is still an error answer.
	var buf bytes.Buffer
	if err := statementpdf.Write(&buf, s); err != nil {
		httpapi.WriteError(w, r, err)
		return
	}
	w.Header().Set("Content-Type", statementpdf.ContentType)
	w.Header().Set("Content-Length", strconv.Itoa(buf.Len()))
	w.Header().Set("Content-Disposition", `inline; filename="statement-`+s.Company.ID+`-`+s.From+`-`+s.To+`.pdf"`)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(buf.Bytes())
}
