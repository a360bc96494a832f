package graph

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/httpapi"
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
	n := mutationFields(oc)
	if n > 1 && h.chargeExtra != nil {
		if err := h.chargeExtra(ctx, n-1); err != nil {
			return h.refuse(ctx, req, err)
		}
	}
	// A key without write_credit runs the mutations plainly: each field answers
	// insufficient_scope, and nothing is stored.
	if req.key.Key == "" || credit.RequireScope(ctx, credit.ScopeWriteCredit) != nil {
		return next(ctx)
	}
	respond := next(ctx)
	return func(ctx context.Context) *graphql.Response {
		if n > 1 {
			// The fields run in one transaction and may write to different companies.
			ctx = credit.SeveralWrites(ctx)
		}
		var resp *graphql.Response
		stored, replayed, err := req.key.Run(ctx, h.svc.Idempotency, func(ctx context.Context) (httpapi.Response, bool, error) {
			req.inTx.Store(true)
			defer req.inTx.Store(false)
			resp = respond(ctx)
			body, err := json.Marshal(resp)
			keep := req.mutationsSucceeded.Load() > 0 || allStored(resp.Errors)
			return httpapi.Response{Status: http.StatusOK, Body: body}, keep, err
		})
		if err != nil {
			return h.refuse(ctx, req, err)(ctx)
		}
		if !replayed {
			return resp
		}
		var replay graphql.Response
		if err := json.Unmarshal(stored.Body, &replay); err != nil {
			return h.refuse(ctx, req, err)(ctx)
		}
		httpapi.MarkReplayed(req.w)
		req.w.force(stored.Status)
		return &replay
	}
}

// refuse answers the whole request with err, with the status and headers REST gives its code
// and, as for any request error, no data member (contract §14): nothing of it ran or was kept.
func (h *Handler) refuse(ctx context.Context, req *request, err error) graphql.ResponseHandler {
	req.refused.Store(true)
	e := presentError(ctx, err)
	httpapi.SetErrorHeaders(req.w, codeOf(e))
	req.w.force(httpapi.Status(codeOf(e)))
	return graphql.OneShot(&graphql.Response{Errors: gqlerror.List{e}})
}

// aroundResponse answers 503 with Retry-After, as REST does, when the whole request failed on
// a database outage: an error says unavailable and no top-level field has a value. A response
// with data keeps its 200, its errors saying which fields the outage cost.
func aroundResponse(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	resp := next(ctx)
	req := requestFrom(ctx)
	// Only the first response chooses the status: an incremental response's later parts
	// follow it on the wire.
	if resp == nil || req == nil || req.responded.Swap(true) || !failedOnOutage(resp) {
		return resp
	}
	httpapi.SetErrorHeaders(req.w, httpapi.CodeUnavailable)
	req.w.force(httpapi.Status(httpapi.CodeUnavailable))
	return resp
}

func failedOnOutage(resp *graphql.Response) bool {
	outage := false
	for _, e := range resp.Errors {
		outage = outage || codeOf(e) == httpapi.CodeUnavailable
	}
	if !outage {
		return false
	}
	var fields map[string]json.RawMessage
	if len(resp.Data) == 0 || json.Unmarshal(resp.Data, &fields) != nil {
		return true // no data at all ("data": null)
	}
	for _, v := range fields {
		if string(v) != "null" {
			return false
		}
	}
	return true
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

// serialize lets one resolver at a time use the request's transaction while the request runs
// in one (an Idempotency-Key's): gqlgen may resolve sibling fields concurrently, and a
// transaction is one database connection, which PostgreSQL's driver cannot share between
// queries in flight. Every resolver that reads or writes the database through the request's
// context calls it (the mutations, and the ledger and timeline of a payload's company); the
// fields bound to the views' struct fields touch no database. It returns the unlock.
//
// This is done in those resolvers rather than as field middleware: middleware would run on
// each of the thousands of fields of a dashboard query.
func serialize(ctx context.Context) func() {
	req := requestFrom(ctx)
	if req == nil || !req.inTx.Load() {
		return func() {}
	}
	req.txMu.Lock()
	return req.txMu.Unlock
}

// mutated counts a mutation field whose resolver returned without error, for aroundMutation.
func mutated(ctx context.Context, err error) {
	if req := requestFrom(ctx); err == nil && req != nil {
		req.mutationsSucceeded.Add(1)
	}
}
