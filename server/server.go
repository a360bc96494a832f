// Package server assembles creditd's HTTP surface: the /v1 REST API, GraphQL, the playground
// and the operational endpoints, behind request ids, logging, metrics, authentication and
// panic recovery.
package server

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/database"
	"github.com/creditd/creditd/httpapi"
	"github.com/creditd/creditd/openapi"
	"github.com/creditd/creditd/ratelimit"
	"github.com/creditd/creditd/rest"
)

// Config configures a Server.
type Config struct {
	Service *credit.Service
	DB      *database.DB
	Logger  *slog.Logger
	// Now is the clock of the rate limiters; nil means time.Now.
	Now func() time.Time
	// RateLimit is requests per minute per store; zero means 120.
	RateLimit int
	// Limiter, when set, replaces the in-memory per-store limiter (a Redis one shared by
	// several instances).
	Limiter ratelimit.Limiter
	// AuthFailureLimit is failed authentications per minute per client address; zero means 30.
	AuthFailureLimit int
	// Collectors are more metrics for /metrics, such as the webhook worker's.
	Collectors []prometheus.Collector
	// CORSOrigins are the browser origins allowed to call the API (serve --cors-origin); none
	// turns CORS off. Each must pass CheckCORSOrigin.
	CORSOrigins []string
	// PlatformRateLimit is the platform door's requests per minute per store; zero means 600.
	PlatformRateLimit int
}

// Server is creditd's HTTP handler with its dependencies.
type Server struct {
	svc     *credit.Service
	db      *database.DB
	log     *slog.Logger
	handler http.Handler
	metrics *metrics

	limiter         ratelimit.Limiter
	authLimiter     ratelimit.Limiter
	platformLimiter ratelimit.Limiter
}

// New builds the server's handler.
func New(cfg Config) *Server {
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	s := &Server{svc: cfg.Service, db: cfg.DB, log: log}
	s.limiter, s.authLimiter = newLimiters(cfg, now)
	s.platformLimiter = newPlatformLimiter(cfg, now)
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	s.metrics = newMetrics(reg)
	reg.MustRegister(cfg.Collectors...)
	reg.MustRegister(newInboxCollector(cfg.Service))

	mux := http.NewServeMux()
	api := rest.New(cfg.Service)
	for _, rt := range api.Routes() {
		var h http.Handler = rt.Handler
		if strings.HasPrefix(rt.Pattern, http.MethodGet+" ") {
			h = conditional(h)
		}
		mux.Handle(rt.Pattern, s.authenticate(s.limitStore(h, httpapi.WriteError), httpapi.WriteError))
	}
	s.mountGraphQL(mux)
	s.mountPlatform(mux)
	// The OpenAPI document: unauthenticated and not rate limited, so tools can fetch it first.
	docJSON, docYAML := openapi.MustHandlers()
	mux.Handle("GET /v1/openapi.json", conditional(docJSON))
	mux.Handle("GET /v1/openapi.yaml", conditional(docYAML))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		httpapi.WriteJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	mux.HandleFunc("GET /readyz", s.ready)
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))

	// Outside in: a request id for everything; gzip for every body; logs and metrics; CORS, whose
	// preflights are answered here, before authentication and the rate limit.
	s.handler = httpapi.WithRequestID(compress(s.observe(withCORS(cfg.CORSOrigins, s.recoverPanics(jsonFallbacks(mux))))))
	return s
}

// ServeHTTP serves a request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// ready answers whether the database is reachable.
func (s *Server) ready(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	if err := s.db.Ping(ctx); err != nil {
		httpapi.WriteError(w, r, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, map[string]string{"status": "ready"})
}

// authenticate resolves the bearer key into the request's viewer, or answers 401 through
// writeErr, which renders errors in the transport's own form.
func (s *Server) authenticate(next http.Handler, writeErr func(http.ResponseWriter, *http.Request, error)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.authFailuresExhausted(w, r, writeErr) {
			return
		}
		secret, ok := bearerToken(r.Header.Get("Authorization"))
		if !ok {
			s.chargeAuthFailure(r)
			writeErr(w, r, credit.ErrUnauthenticated())
			return
		}
		ctx, err := s.svc.Authenticate(r.Context(), secret)
		if err != nil {
			if credit.CodeOf(err) == credit.CodeUnauthenticated {
				s.chargeAuthFailure(r)
			}
			writeErr(w, r, err)
			return
		}
		if info := infoFrom(ctx); info != nil {
			info.keyContext(ctx)
		}
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// bearerToken reads "Bearer <token>"; the scheme is case-insensitive (RFC 6750).
func bearerToken(h string) (string, bool) {
	scheme, token, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}

// recoverPanics answers a panic with 500 internal_error, logging it once with its value.
func (s *Server) recoverPanics(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				httpapi.WriteError(w, r, fmt.Errorf("panic: %v", p))
			}
		}()
		next.ServeHTTP(w, r)
	})
}

// Serve serves on l until ctx is cancelled, then shuts down gracefully, letting requests in
// flight finish for up to 10 seconds.
func (s *Server) Serve(ctx context.Context, l net.Listener) error { return httpapi.Serve(ctx, l, s) }
