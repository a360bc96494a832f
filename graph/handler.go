package graph

import (
	"context"

	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/creditd/creditd/credit"
)

// Options configure the GraphQL handler. Internal errors and panics are logged once each, with
// the request id, on the request's logger (httpapi.WithLogger).
type Options struct {
	Service *credit.Service
	// ChargeExtra takes n more requests from the caller's store allowance, returning the
	// rate_limited error when it is spent (server.ChargeExtra). Nil charges nothing.
	ChargeExtra func(ctx context.Context, n int) error
}

// Handler serves POST and GET /graphql. Requests reach it authenticated and already counted
// once against the store's rate limit; see server.mountGraphQL.
type Handler struct {
	svc         *credit.Service
	srv         *handler.Server
	chargeExtra func(ctx context.Context, n int) error
}

// NewHandler builds the GraphQL handler: gqlgen's server with only the POST and GET
// transports, the query limits and connection argument checks, introspection (the schema is public and documented), the
// contract's error presenter, and the mutation middleware that charges extra mutation fields
// and applies Idempotency-Key to the whole request. There is no field middleware: what it
// would do for mutations is done in their resolvers (see serialize), and generated.go's plain
// leaves would skip it (graph/internal/rewrite; TestNoFieldMiddleware keeps it out).
func NewHandler(opts Options) *Handler {
	h := &Handler{svc: opts.Service, chargeExtra: opts.ChargeExtra}
	srv := handler.New(NewExecutableSchema(Config{
		Resolvers:  &Resolver{svc: opts.Service},
		Complexity: complexityRoot(),
	}))
	// The incremental transport first: it takes the requests ServeHTTP found incremental,
	// GET or POST (graph/incremental.go).
	srv.AddTransport(incrementalTransport{transport.MultipartMixed{Boundary: "-"}})
	srv.AddTransport(shapedTransport{transport.GET{}})
	srv.AddTransport(shapedTransport{transport.POST{}})
	srv.SetQueryCache(lru.New[*ast.QueryDocument](1000))
	srv.SetParserTokenLimit(MaxTokens)
	srv.Use(extension.Introspection{})
	srv.Use(documentLimits{})
	srv.Use(&queryLimits{})
	srv.Use(argumentChecks{svc: opts.Service})
	srv.Use(deferExtension{})
	srv.SetErrorPresenter(presentError)
	srv.SetRecoverFunc(recoverPanic)
	srv.AroundOperations(h.aroundMutation)
	srv.AroundResponses(aroundResponse)
	h.srv = srv
	return h
}
