package rest

import (
	"context"
	"net/http"

	"github.com/creditd/creditd/credit"
)

// write runs one write operation: it checks the Idempotency-Key header, reads and decodes the
// body, then runs op under the key, replaying a stored response when the request is a retry.
// decode fills the operation's input from the body; op calls the domain.
func (a *API) write(w http.ResponseWriter, r *http.Request, decode func(body []byte) error, op func(ctx context.Context) (int, any, error)) {
	// Scope first: a key that may not write learns nothing about bodies or idempotency keys.
	if err := credit.RequireScope(r.Context(), credit.ScopeWriteCredit); err != nil {
		WriteError(w, r, err)
		return
	}
	key := r.Header.Get("Idempotency-Key")
	_, keySent := r.Header["Idempotency-Key"]
	if err := credit.CheckIdempotencyKey(key); keySent && err != nil {
		WriteError(w, r, err)
		return
	}
	body, err := ReadBody(w, r)
	if err != nil {
		WriteError(w, r, err)
		return
	}
	if err := decode(body); err != nil {
		WriteError(w, r, err)
		return
	}
	fingerprint, err := credit.IdempotencyFingerprint(keySent, key, r.Method, r.URL.Path, body)
	if err != nil {
		WriteError(w, r, err)
		return
	}
	out, replayed, err := a.svc.Idempotent(r.Context(), credit.ScopeWriteCredit, key, fingerprint, func(ctx context.Context) (credit.Outcome, error) {
		status, result, err := op(ctx)
		if err != nil {
			if credit.ErrorCode(err) == credit.CodeInternal {
				return credit.Outcome{}, err
			}
			d := Describe(r, err)
			b, _ := Marshal(ErrorBody{Error: d})
			return credit.Outcome{Status: Status(d.Code), Body: b, Store: credit.Stored(err)}, nil
		}
		b, err := Marshal(result)
		if err != nil {
			return credit.Outcome{}, err
		}
		return credit.Outcome{Status: status, Body: b, Store: true}, nil
	})
	if err != nil {
		WriteError(w, r, err)
		return
	}
	if replayed {
		w.Header().Set("Idempotent-Replayed", "true")
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(out.Status)
	_, _ = w.Write(append(out.Body, '\n'))
}

// createAdjustment serves POST /v1/companies/{id}/adjustments.
func (a *API) createAdjustment(w http.ResponseWriter, r *http.Request) {
	in := credit.AdjustmentInput{CompanyID: r.PathValue("id")}
	a.write(w, r, func(body []byte) error {
		return DecodeObject(body,
			AmountField("amount", &in.Amount, &in.AmountNotString),
			StringField("note", &in.Note),
			StringField("currency", &in.Currency))
	}, func(ctx context.Context) (int, any, error) {
		res, err := a.svc.CreateAdjustment(ctx, in)
		return http.StatusCreated, res, err
	})
}

// setCreditLimit serves PUT /v1/companies/{id}/credit-limit.
func (a *API) setCreditLimit(w http.ResponseWriter, r *http.Request) {
	in := credit.CreditLimitInput{CompanyID: r.PathValue("id")}
	a.write(w, r, func(body []byte) error {
		return DecodeObject(body,
			AmountField("amount", &in.Amount, &in.AmountNotString),
			StringField("reason", &in.Reason),
			StringField("currency", &in.Currency))
	}, func(ctx context.Context) (int, any, error) {
		res, err := a.svc.SetCreditLimit(ctx, in)
		return http.StatusOK, res, err
	})
}

// placeHold serves POST /v1/companies/{id}/hold.
func (a *API) placeHold(w http.ResponseWriter, r *http.Request) {
	in := credit.HoldInput{CompanyID: r.PathValue("id")}
	a.write(w, r, func(body []byte) error {
		return DecodeObject(body, StringField("note", &in.Note))
	}, func(ctx context.Context) (int, any, error) {
		res, err := a.svc.PlaceHold(ctx, in)
		return http.StatusOK, res, err
	})
}

// liftHold serves DELETE /v1/companies/{id}/hold.
func (a *API) liftHold(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	a.write(w, r, func(body []byte) error {
		return DecodeObject(body)
	}, func(ctx context.Context) (int, any, error) {
		res, err := a.svc.LiftHold(ctx, id)
		return http.StatusOK, res, err
	})
}
