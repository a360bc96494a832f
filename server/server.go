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
	"github.com/creditd/creditd/graph"
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
	// AuthLimiter, when set, replaces the in-memory failed-authentication limiter, with its own
	// limit instead of AuthFailureLimit: a Redis one shared by several instances, so an address
	// gets its failures a minute across all of them rather than on each.
	AuthLimiter ratelimit.Limiter
	// TrustedProxies are the reverse proxies whose X-Forwarded-For or Forwarded header names
	// the client (serve --trusted-proxy); none means the TCP peer is always the client.
	TrustedProxies httpapi.TrustedProxies
	// Collectors are more metrics for /metrics, such as the webhook worker's.
	Collectors []prometheus.Collector
	// CORSOrigins are the browser origins allowed to call the API (serve --cors-origin); none
	// turns CORS off. Each must pass CheckCORSOrigin.
	CORSOrigins []string
	// PlatformRateLimit is the platform door's requests per minute per store; zero means 600.
	PlatformRateLimit int
	// StreamKeepAlive is the keep-alive interval of subscription streams; zero means
	// graph.DefaultKeepAlive.
	StreamKeepAlive time.Duration
	// StreamWriteTimeout is how long a write to a subscription stream may wait for its client
	// to read before the client is cut off as a slow consumer; zero means
	// graph.DefaultWriteTimeout.
	StreamWriteTimeout time.Duration
	// DBTimeout is the deadline of each request's database work (serve --db-timeout); zero
	// means DefaultDBTimeout. See withDeadline.
	DBTimeout time.Duration
}

// Server is creditd's HTTP handler with its dependencies.
type Server struct {
	svc     *credit.Service
	db      *database.DB
	log     *slog.Logger
	handler http.Handler
	metrics *metrics

	limiter         ratelimit.Limiter
	authFailures    *authFailures
	platformLimiter ratelimit.Limiter

	// graph serves GraphQL, its subscription streams too.
	graph              *graph.Handler
	streamKeepAlive    time.Duration
	streamWriteTimeout time.Duration
	// webSockets are the subscription WebSockets being served, which Serve closes.
	webSockets webSockets
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
	s := &Server{svc: cfg.Service, db: cfg.DB, log: log, streamKeepAlive: cfg.StreamKeepAlive, streamWriteTimeout: cfg.StreamWriteTimeout}
	var authLimiter ratelimit.Limiter
	s.limiter, authLimiter = newLimiters(cfg, now)
	s.platformLimiter = newPlatformLimiter(cfg, now)
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	s.metrics = newMetrics(reg)
	s.authFailures = newAuthFailures(authLimiter, now, reg)
	reg.MustRegister(cfg.Collectors...)
	reg.MustRegister(newInboxCollector(cfg.Service.Inbox))
	reg.MustRegister(newSubscriptionCollector(cfg.Service.Events, func() int64 {
		if s.graph == nil {
			return 0
		}
		return s.graph.SubscriptionPayloadsExecuted()
	}))

	mux := http.NewServeMux()
	api := rest.New(cfg.Service)
	api.ExportWriteTimeout = cfg.StreamWriteTimeout
	for _, rt := range api.Routes() {
		var h http.Handler = rt.Handler
		if rt.Pattern == rest.ExportPattern {
			// A stream: no conditional answer, which would hold the whole body.
			mux.Handle(rt.Pattern, s.readAuthenticated(s.limitStore(h, httpapi.WriteError), httpapi.WriteError))
			continue
		}
		if strings.HasPrefix(rt.Pattern, http.MethodGet+" ") {
			// A GET changes nothing, so it may run on a cached key whose confirmation its
			// answer waits for (readAuthenticated).
			mux.Handle(rt.Pattern, s.readAuthenticated(s.limitStore(conditional(h), httpapi.WriteError), httpapi.WriteError))
			continue
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
	// preflights are answered here, before authentication and the rate limit. The client address
	// (behind --trusted-proxy, the one the proxies report) is resolved first, for the access log
	// and the per-address limits alike. Subscription streams branch off before compression and
	// the request metrics (see streams). Inside them all, the deadline of the request's database
	// work (a stream's reads have deadlines of their own).
	dbTimeout := cfg.DBTimeout
	if dbTimeout <= 0 {
		dbTimeout = DefaultDBTimeout
	}
	s.handler = httpapi.WithClientAddress(cfg.TrustedProxies, httpapi.WithRequestID(streams(s.streamHandler(s.graph, cfg.CORSOrigins),
		compress(s.observe(withCORS(cfg.CORSOrigins, s.recoverPanics(withDeadline(dbTimeout, jsonFallbacks(mux)))))))))
	return s
}

// ServeHTTP serves a request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// ready answers whether the database is reachable and takes writes (a full disk is 503 with
// the reason in its message).
func (s *Server) ready(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	if err := s.db.Ready(ctx); err != nil {
		httpapi.WriteError(w, r, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, map[string]string{"status": "ready"})
}

// authenticate resolves the bearer key into the request's viewer, or answers 401 through
// writeErr, which renders errors in the transport's own form.
func (s *Server) authenticate(next http.Handler, writeErr func(http.ResponseWriter, *http.Request, error)) http.Handler {
	return s.authenticateWith(false, next, writeErr)
}

// readAuthenticated is authenticate for a request that only reads: a key from the cache is
// confirmed by the read's own statement where the read can (credit.Keys.AuthenticateRead), and the
// answer is held until it is: before its first byte, the key is confirmed if no statement did
// (credit.Keys.Confirm), and a key refused then gets the 401 that authenticate would have given,
// whatever the handler wrote.
func (s *Server) readAuthenticated(next http.Handler, writeErr func(http.ResponseWriter, *http.Request, error)) http.Handler {
	return s.authenticateWith(true, next, writeErr)
}

func (s *Server) authenticateWith(read bool, next http.Handler, writeErr func(http.ResponseWriter, *http.Request, error)) http.Handler {
	auth := s.svc.Keys.Authenticate
	if read {
		auth = s.svc.Keys.AuthenticateRead
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The failed-authentication limit is consulted only once the key has failed: a valid
		// key is never refused by it (contract §2).
		secret, ok := bearerToken(r.Header.Get("Authorization"))
		if !ok {
			s.authFailures.refuse(w, r, credit.ErrUnauthenticated(), writeErr)
			return
		}
		ctx, err := auth(r.Context(), secret)
		if err != nil {
			s.authFailures.refuse(w, r, err, writeErr)
			return
		}
		if info := infoFrom(ctx); info != nil {
			info.keyContext(ctx)
		}
		r = r.WithContext(ctx)
		if !read {
			next.ServeHTTP(w, r)
			return
		}
		cw := &confirmingWriter{ResponseWriter: w, s: s, r: r, writeErr: writeErr, header: w.Header().Clone()}
		next.ServeHTTP(cw, r)
		// A handler that wrote nothing would leave net/http to send an empty 200 on a key
		// never confirmed: confirm it now, so a refused key still gets its 401.
		cw.confirm()
	})
}

// confirmingWriter holds a response until the request's key is confirmed (see
// readAuthenticated).
//
// Why it exists: a GET may run on a key from the cache (credit.Keys.AuthenticateRead) so that the
// key is confirmed by the read's own statement instead of a statement of its own before it,
// one database round trip fewer on every read; a revocation must still be instant (contract
// §2), so nothing of the answer leaves before the key is confirmed. It was measured (issue 23,
// "The key confirmed by the read" in BENCHMARKS.md); it is tied to credit.Keys.AuthenticateRead and
// credit.ConfirmKey, and TestCachedKeyIsConfirmedByTheRead holds the revocation instant. It
// wraps every GET, so it costs one small struct and a copy of the header, and no work before
// the first write.
type confirmingWriter struct {
	http.ResponseWriter
	s        *Server
	r        *http.Request
	writeErr func(http.ResponseWriter, *http.Request, error)
	// header is the response's header before the handler ran, which a refusal restores.
	header http.Header
	state  confirmation
}

// confirmation is where a confirmingWriter's answer stands.
type confirmation uint8

const (
	// unconfirmed: nothing of the answer has been written; the first write (or the end of
	// the handler) confirms the key first.
	unconfirmed confirmation = iota
	// confirmed: the key still authenticates; the handler's answer is written through.
	confirmed
	// refused: the key no longer authenticates; its 401 was written instead, and whatever
	// the handler writes is dropped.
	refused
)

// confirm reports whether the handler's answer may be written, writing the refusal if not.
func (w *confirmingWriter) confirm() bool {
	if w.state == unconfirmed {
		w.state = confirmed
		if err := w.s.svc.Keys.Confirm(w.r.Context()); err != nil {
			w.state = refused
			h := w.ResponseWriter.Header()
			clear(h)
			for k, v := range w.header {
				h[k] = v
			}
			w.s.authFailures.refuse(w.ResponseWriter, w.r, err, w.writeErr)
		}
	}
	return w.state == confirmed
}

func (w *confirmingWriter) WriteHeader(status int) {
	if w.confirm() {
		w.ResponseWriter.WriteHeader(status)
	}
}

func (w *confirmingWriter) Write(b []byte) (int, error) {
	if !w.confirm() {
		return len(b), nil
	}
	return w.ResponseWriter.Write(b)
}

func (w *confirmingWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

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
// flight finish for up to 10 seconds. Subscription streams end at once without their complete
// (a WebSocket closed with 1012, an SSE response ended), so their clients' own retry resumes
// them from the connection's position, here or on another instance (contract §16, amended
// 2026-11-28); once every stream has ended (for up to 10 seconds more), the WebSockets left
// are closed, with 1012 too. Serve returns
// once every handler has returned, those of the WebSockets too, and the service's feed
// watcher has stopped (for up to 10 seconds more: a stream's writes have their own deadline,
// StreamWriteTimeout, so only a fault would hold one longer).
func (s *Server) Serve(ctx context.Context, l net.Listener) error {
	stop := context.AfterFunc(ctx, s.svc.Events.EndSubscriptions)
	defer stop()
	err := httpapi.Serve(ctx, l, s)
	s.svc.Events.EndSubscriptions() // also when the listener failed rather than ctx ending
	completed, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = s.svc.Events.WaitSubscriptions(completed)
	s.webSockets.close()
	// A subscriber cut short by its WebSocket's close closes its subscription at once.
	closed, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = s.svc.Events.WaitSubscriptions(closed)
	return err
}
