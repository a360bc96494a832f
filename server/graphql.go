package server

import (
	"net/http"

	"github.com/creditd/creditd/graph"
	"github.com/creditd/creditd/graph/playground"
)

// mountGraphQL registers POST/GET /graphql and GET /playground; subscription streams on
// /graphql are routed before the mux (see streams).
//
// GraphQL requests are authenticated and counted against the store's rate limit like REST
// ones, with refusals in GraphQL's error form; the handler charges each mutation field beyond
// the first through ChargeExtra. The playground is a static page with its assets, served
// without authentication: the key is typed into it and sent only to /graphql.
func (s *Server) mountGraphQL(mux *http.ServeMux) {
	h := graph.NewHandler(graph.Options{Service: s.svc, ChargeExtra: ChargeExtra, Streams: graph.StreamOptions{
		Authenticate: s.streamAuthenticate,
		Charge:       s.chargeSubscription,
		KeepAlive:    s.streamKeepAlive,
		WriteTimeout: s.streamWriteTimeout,
	}})
	s.graph = h
	api := s.authenticate(s.limitStore(h, graph.WriteError), graph.WriteError)
	mux.Handle("POST /graphql", api)
	mux.Handle("GET /graphql", api)
	pg := playground.Handler()
	mux.Handle("GET /playground", pg)
	mux.Handle("GET /playground/", pg)
}
