package rest

import (
	"context"
	"net/http"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/httpapi"
)

// write runs one write operation: scope, Idempotency-Key header, body, then op under the key,
// replaying a stored response when the request is a retry. decode fills the operation's input
// from the body; op calls the domain and says which status its success has.
func (a *API) write(w http.ResponseWriter, r *http.Request, decode func(body []byte) error, op func(ctx context.Context) (int, any, error)) {
	// Scope first: a key that may not write learns nothing about bodies or idempotency keys.
	if err := credit.RequireScope(r.Context(), credit.ScopeWriteCredit); err != nil {
		httpapi.WriteError(w, r, err)
		return
	}
	key, err := httpapi.ReadIdempotencyKey(r)
	if err != nil {
		httpapi.WriteError(w, r, err)
		return
	}
	body, err := httpapi.ReadBody(w, r)
	if err == nil {
		err = decode(body)
	}
	if err == nil {
		err = key.Bind(r, body)
	}
	if err != nil {
		httpapi.WriteError(w, r, err)
		return
	}
	resp, replayed, err := key.Run(r.Context(), a.svc.Idempotency, func(ctx context.Context) (httpapi.Response, bool, error) {
		status, result, opErr := op(ctx)
		if opErr != nil {
			p := httpapi.Describe(opErr)
			if p.Status >= 500 {
				return httpapi.Response{}, false, opErr // not stored: a retry runs again
			}
			// The domain refused: the refusal is the response, kept when credit.Stored says so.
			status, result = p.Status, httpapi.ErrorBody{Error: p}
		}
		b, err := httpapi.Marshal(result)
		return httpapi.Response{Status: status, Body: b}, credit.Stored(opErr), err
	})
	if err != nil {
		httpapi.WriteError(w, r, err)
		return
	}
	if replayed {
		httpapi.MarkReplayed(w)
	}
	httpapi.WriteBody(w, resp.Status, resp.Body)
}

// createAdjustment serves POST /v1/companies/{id}/adjustments.
func (a *API) createAdjustment(w http.ResponseWriter, r *http.Request) {
	in := credit.AdjustmentInput{CompanyID: r.PathValue("id")}
	a.write(w, r, func(body []byte) error {
		return httpapi.DecodeObject(body,
			httpapi.AmountField("amount", &in.Amount),
			httpapi.StringField("note", &in.Note),
			httpapi.StringField("currency", &in.Currency))
	}, func(ctx context.Context) (int, any, error) {
		res, err := a.svc.Ledger.CreateAdjustment(ctx, in)
		return http.StatusCreated, res, err
	})
}

// setCreditLimit serves PUT /v1/companies/{id}/credit-limit.
func (a *API) setCreditLimit(w http.ResponseWriter, r *http.Request) {
	in := credit.CreditLimitInput{CompanyID: r.PathValue("id")}
	a.write(w, r, func(body []byte) error {
		return httpapi.DecodeObject(body,
			httpapi.AmountField("amount", &in.Amount),
			httpapi.StringField("reason", &in.Reason),
			httpapi.StringField("currency", &in.Currency))
	}, func(ctx context.Context) (int, any, error) {
		res, err := a.svc.Companies.SetCreditLimit(ctx, in)
		return http.StatusOK, res, err
	})
}

// placeHold serves POST /v1/companies/{id}/hold.
func (a *API) placeHold(w http.ResponseWriter, r *http.Request) {
	in := credit.HoldInput{CompanyID: r.PathValue("id")}
	a.write(w, r, func(body []byte) error {
		return httpapi.DecodeObject(body, httpapi.StringField("note", &in.Note))
	}, func(ctx context.Context) (int, any, error) {
		res, err := a.svc.Companies.PlaceHold(ctx, in)
		return http.StatusOK, res, err
	})
}

// liftHold serves DELETE /v1/companies/{id}/hold.
func (a *API) liftHold(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	a.write(w, r, func(body []byte) error {
		return httpapi.DecodeObject(body)
	}, func(ctx context.Context) (int, any, error) {
		res, err := a.svc.Companies.LiftHold(ctx, id)
		return http.StatusOK, res, err
	})
}
