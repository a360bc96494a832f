package server

import (
	"net/http"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/httpapi"
)

// jsonFallbacks answers unknown routes with 404 not_found and known routes called with the
// wrong method with 405 method_not_allowed and an Allow header, in the contract's error JSON
// instead of ServeMux's plain text.
func jsonFallbacks(mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h, pattern := mux.Handler(r)
		if pattern != "" {
			mux.ServeHTTP(w, r)
			return
		}
		probe := &headerProbe{header: http.Header{}}
		h.ServeHTTP(probe, r)
		if probe.status == http.StatusMethodNotAllowed {
			w.Header().Set("Allow", probe.header.Get("Allow"))
			httpapi.WriteError(w, r, credit.Errorf(httpapi.CodeMethodNotAllowed, "%s is not allowed here; allowed: %s", r.Method, probe.header.Get("Allow")))
			return
		}
		httpapi.NotFoundRoute(w, r)
	})
}

// headerProbe records what ServeMux's own fallback handler would answer, writing nothing.
type headerProbe struct {
	header http.Header
	status int
}

func (p *headerProbe) Header() http.Header         { return p.header }
func (p *headerProbe) Write(b []byte) (int, error) { return len(b), nil }
func (p *headerProbe) WriteHeader(status int)      { p.status = status }
