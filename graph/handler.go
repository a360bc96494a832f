package graph

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/executor"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/httpapi"
)

// Options configure the GraphQL handler. Internal errors and panics are logged once each, with
// the request id, on the request's logger (httpapi.WithLogger).
type Options struct {
	// Service is the domain NewHandler serves; NewHandlerWith takes its Services instead.
	Service *credit.Service
	// ChargeExtra takes n more requests from the caller's store allowance, returning the
	// rate_limited error when it is spent (server.ChargeExtra). Nil charges nothing.
	ChargeExtra func(ctx context.Context, n int) error
	// Streams configure subscriptions (ServeWebSocket, ServeSSE).
	Streams StreamOptions
}

// Handler serves POST and GET /graphql. Requests reach it authenticated and already counted
// once against the store's rate limit; see server.mountGraphQL. Subscriptions are served by
// ServeWebSocket and ServeSSE.
type Handler struct {
	svc         Services
	srv         *handler.Server
	chargeExtra func(ctx context.Context, n int) error

	// streams executes subscriptions, configured as srv is, for the streaming transports.
	streams    *executor.Executor
	streamOpts StreamOptions
	// payloads are the groups of subscriptions that share their messages' payloads
	// (payloads.go).
	payloads payloadGroups
}

// NewHandler builds the GraphQL handler: gqlgen's server with only the POST and GET
// transports, the query limits and connection argument checks, introspection (the schema is public and documented), the
// contract's error presenter, and the mutation middleware that charges extra mutation fields
// and applies Idempotency-Key to the whole request. There is no field middleware: what it
// would do for mutations is done in their resolvers (see serialize), and generated.go's plain
// leaves would skip it (graph/internal/rewrite; TestNoFieldMiddleware keeps it out).
// Subscriptions run on an executor of their own with the same limits and presenter, which
// runs nothing but subscriptions.
func NewHandler(opts Options) *Handler { return NewHandlerWith(servicesOf(opts.Service), opts) }

// NewHandlerWith builds the GraphQL handler as NewHandler does, over the given services
// (opts.Service is not used).
func NewHandlerWith(s Services, opts Options) *Handler {
	h := &Handler{svc: s, chargeExtra: opts.ChargeExtra, streamOpts: opts.Streams}
	if h.streamOpts.KeepAlive <= 0 {
		h.streamOpts.KeepAlive = DefaultKeepAlive
	}
	if h.streamOpts.WriteTimeout <= 0 {
		h.streamOpts.WriteTimeout = DefaultWriteTimeout
	}
	schema := NewExecutableSchema(Config{
		Resolvers:  &Resolver{svc: s},
		Complexity: complexityRoot(),
	})
	srv := handler.New(schema)
	// The incremental transport first: it takes the requests ServeHTTP found incremental,
	// GET or POST (graph/incremental.go).
	srv.AddTransport(incrementalTransport{transport.MultipartMixed{Boundary: "-"}})
	srv.AddTransport(shapedTransport{transport.GET{}})
	srv.AddTransport(shapedTransport{transport.POST{}})
	h.configure(srv)
	srv.Use(deferExtension{})
	srv.AroundOperations(h.aroundMutation)
	srv.AroundResponses(aroundResponse)
	h.srv = srv
	h.streams = executor.New(schema)
	h.configure(h.streams)
	h.streams.AroundOperations(onlySubscriptions)
	return h
}

// configurable is what handler.Server and executor.Executor share.
type configurable interface {
	SetQueryCache(graphql.Cache[*ast.QueryDocument])
	SetParserTokenLimit(int)
	Use(graphql.HandlerExtension)
	SetErrorPresenter(graphql.ErrorPresenterFunc)
	SetRecoverFunc(graphql.RecoverFunc)
}

func (h *Handler) configure(c configurable) {
	c.SetQueryCache(lru.New[*ast.QueryDocument](1000))
	c.SetParserTokenLimit(MaxTokens)
	c.Use(extension.Introspection{})
	c.Use(documentLimits{})
	c.Use(&queryLimits{})
	c.Use(argumentChecks{svc: h.svc})
	c.SetErrorPresenter(presentError)
	c.SetRecoverFunc(recoverPanic)
}

// onlySubscriptions refuses queries and mutations on a stream: they are POST /graphql's, where
// each is counted and a mutation can carry an Idempotency-Key.
func onlySubscriptions(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	oc := graphql.GetOperationContext(ctx)
	if oc.Operation != nil && oc.Operation.Operation != ast.Subscription {
		return graphql.OneShot(&graphql.Response{Errors: gqlerror.List{presentError(ctx,
			credit.Errorf(httpapi.CodeInvalidRequest, "a WebSocket or an event stream runs subscriptions only: send queries and mutations with POST /graphql"))}})
	}
	return next(ctx)
}
