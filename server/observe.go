package server

import (
	"context"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/creditd/creditd/httpapi"
	"github.com/creditd/creditd/tenant"
)

type metrics struct {
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec

	platformDeliveries *prometheus.CounterVec
	creditChecks       *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "creditd_http_requests_total",
			Help: "HTTP requests by route pattern, method and status.",
		}, []string{"route", "method", "status"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "creditd_http_request_duration_seconds",
			Help:    "HTTP request latency by route pattern.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5},
		}, []string{"route", "method"}),
		platformDeliveries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "creditd_platform_deliveries_total",
			Help: "Platform deliveries answered, by topic and inbox status (applied, ignored, waiting, failed, duplicate).",
		}, []string{"topic", "outcome"}),
		creditChecks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "creditd_platform_credit_checks_total",
			Help: "Checkout credit checks by decision and reason.",
		}, []string{"decision", "reason"}),
	}
	reg.MustRegister(m.requests, m.latency, m.platformDeliveries, m.creditChecks)
	return m
}

// requestInfo collects what inner handlers learn about a request (the key and its store)
// for the access log and metrics written by the outer middleware.
type requestInfo struct {
	storeID string
	keyID   string
	// client is the client address of a request whose authentication failed, so an operator
	// can find the client still sending a revoked key; other lines carry no address (contract
	// §1: no personal data in logs).
	client string
}

type infoKey struct{}

func infoFrom(ctx context.Context) *requestInfo {
	info, _ := ctx.Value(infoKey{}).(*requestInfo)
	return info
}

func (i *requestInfo) keyContext(ctx context.Context) {
	if v, ok := tenant.FromContext(ctx); ok {
		i.storeID, i.keyID = v.StoreID, v.KeyID
	}
}

// statusWriter remembers the status written.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// observe counts and times every request by route pattern (never by raw path, which would
// put IDs in label values) and writes one access log line without secrets, query strings or
// personal data.
func (s *Server) observe(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		info := &requestInfo{}
		sw := &statusWriter{ResponseWriter: w}
		r = r.WithContext(httpapi.WithLogger(context.WithValue(r.Context(), infoKey{}, info), s.log))
		next.ServeHTTP(sw, r)
		route := r.Pattern
		if route == "" {
			route = "unmatched"
		}
		if sw.status == 0 {
			sw.status = http.StatusOK
		}
		elapsed := time.Since(start)
		s.metrics.requests.WithLabelValues(route, r.Method, strconv.Itoa(sw.status)).Inc()
		s.metrics.latency.WithLabelValues(route, r.Method).Observe(elapsed.Seconds())
		s.log.LogAttrs(r.Context(), levelFor(sw.status), "request",
			slog.String("request_id", httpapi.RequestID(r.Context())),
			slog.String("method", r.Method),
			slog.String("path", r.URL.Path),
			slog.String("route", route),
			slog.Int("status", sw.status),
			slog.Duration("duration", elapsed),
			slog.String("store_id", info.storeID),
			slog.String("key_id", info.keyID),
			slog.String("client", info.client),
		)
	})
}

// levelFor logs server faults as errors and everything else as information.
func levelFor(status int) slog.Level {
	if status >= 500 {
		return slog.LevelError
	}
	return slog.LevelInfo
}
