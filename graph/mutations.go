package graph

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/rest"
)

// Mutation requests: rate limiting of extra mutation fields and Idempotency-Key, both for the
// whole HTTP request (contract §7, §8, §9).
//
// With an Idempotency-Key, the request's mutation fields run in one transaction (the domain's
// writes join it through the context) and the response is stored with the key when any
// mutation field succeeded, or when every error is one REST would store too (not_found,
// hold_exists, ...). Otherwise the transaction rolls back and the key is released, so a
// corrected retry runs: that is the case for invalid input and for server faults. A retry of a
// stored request gets the first response again, with Idempotent-Replayed: true.

// aroundMutation is the operation middleware; queries pass straight through.
func (h *Handler) aroundMutation(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	oc := graphql.GetOperationContext(ctx)
	req := requestFrom(ctx)
	if req == nil || oc.Operation == nil || oc.Operation.Operation != ast.Mutation {
		return next(ctx)
	}
	if n := mutationFields(oc); n > 1 && h.chargeExtra != nil {
		if err := h.chargeExtra(ctx, n-1); err != nil {
			return h.refuse(ctx, req, err)
		}
	}
	// A key without write_credit runs the mutations plainly: each field answers
	// insufficient_scope, and nothing is stored.
	if req.key == "" || credit.RequireScope(ctx, credit.ScopeWriteCredit) != nil {
		return next(ctx)
	}
	respond := next(ctx)
	return func(ctx context.Context) *graphql.Response {
		var resp *graphql.Response
		out, replayed, err := h.svc.Idempotent(ctx, credit.ScopeWriteCredit, req.key, req.fingerprint, func(ctx context.Context) (credit.Outcome, error) {
			req.inTx.Store(true)
			defer req.inTx.Store(false)
			resp = respond(ctx)
			body, err := json.Marshal(resp)
			if err != nil {
				return credit.Outcome{}, err
			}
			store := req.mutationsSucceeded.Load() > 0 || allStored(resp.Errors)
			return credit.Outcome{Status: http.StatusOK, Body: body, Store: store}, nil
		})
		if err != nil {
			return h.refuse(ctx, req, err)(ctx)
		}
		if replayed {
			var stored graphql.Response
			if err := json.Unmarshal(out.Body, &stored); err != nil {
				return h.refuse(ctx, req, err)(ctx)
			}
			req.w.Header().Set("Idempotent-Replayed", "true")
			req.w.force(out.Status)
			return &stored
		}
		return resp
	}
}

// refuse answers the whole request with err, with the status REST gives its code.
func (h *Handler) refuse(ctx context.Context, req *request, err error) graphql.ResponseHandler {
	e := h.present.presentError(ctx, err)
	if code, ok := e.Extensions["code"].(credit.Code); ok {
		req.w.force(rest.Status(code))
	}
	return graphql.OneShot(&graphql.Response{Errors: gqlerror.List{e}})
}

// mutationFields counts the mutation fields an operation runs.
func mutationFields(oc *graphql.OperationContext) int {
	n := 0
	for _, f := range graphql.CollectFields(oc, oc.Operation.SelectionSet, []string{"Mutation"}) {
		if f.Name != "__typename" {
			n++
		}
	}
	return n
}

// allStored reports whether every error of a response is one that is stored with its key.
func allStored(errs gqlerror.List) bool {
	for _, e := range errs {
		if e.Err == nil || !credit.Stored(e.Err) {
			return false
		}
	}
	return true
}

// aroundFields is field middleware. It counts the mutation fields that succeeded, and while the
// request runs in a transaction it lets one resolver at a time use it: gqlgen resolves sibling
// fields concurrently, and a transaction is one database connection, which PostgreSQL's
// driver cannot share between queries in flight.
func aroundFields(ctx context.Context, next graphql.Resolver) (any, error) {
	req := requestFrom(ctx)
	if req != nil && req.inTx.Load() {
		req.txMu.Lock()
		defer req.txMu.Unlock()
	}
	res, err := next(ctx)
	if err == nil {
		if fc := graphql.GetFieldContext(ctx); req != nil && fc != nil && fc.Object == "Mutation" {
			req.mutationsSucceeded.Add(1)
		}
	}
	return res, err
}
