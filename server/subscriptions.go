package server

import (
	"context"
	"net/http"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/graph"
	"github.com/creditd/creditd/httpapi"
	"github.com/creditd/creditd/tenant"
)

// Subscriptions (contract §16) are served on /graphql: a WebSocket handshake (GET with
// Upgrade) or a POST that accepts text/event-stream. They are routed here before compression
// (a stream is written message by message, never buffered) and before the request metrics (a
// stream lasts for hours); request ids, CORS and panic recovery still apply.

// isStream reports whether r opens a subscription stream.
func isStream(r *http.Request) bool {
	if r.URL.Path != "/graphql" {
		return false
	}
	if r.Method == http.MethodGet && strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
		return true
	}
	return r.Method == http.MethodPost && graph.PrefersEventStream(r)
}

// streams routes subscription streams to stream, everything else to next.
func streams(stream, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if isStream(r) {
			stream.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// streamHandler serves subscription streams: a WebSocket from a browser origin that is
// neither the API's own nor a --cors-origin is refused (cross-site WebSocket hijacking); its
// key is checked in connection_init. An SSE request is authenticated and counted like any
// request.
func (s *Server) streamHandler(h *graph.Handler, origins []string) http.Handler {
	sse := s.authenticate(s.limitStore(http.HandlerFunc(h.ServeSSE), graph.WriteError), graph.WriteError)
	return withCORS(origins, s.recoverPanics(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			sse.ServeHTTP(w, r)
			return
		}
		if !originAllowed(r, origins) {
			graph.WriteError(w, r, errForbiddenOrigin)
			return
		}
		r, done, ok := s.webSockets.open(r)
		if !ok {
			graph.WriteError(w, r, errShuttingDown)
			return
		}
		// The handler returns once the handshake is answered; done, once the WebSocket has
		// closed.
		h.ServeWebSocket(w, r, done)
	})))
}

// webSockets are the WebSockets the server serves subscriptions on. http.Server hands them
// over (hijacked), so its Shutdown neither waits for them nor closes them: Serve does, through
// close, once their streams are completed. A WebSocket outlives its handshake's handler (which
// returns once the connection is upgraded): it is open from open until its done.
type webSockets struct {
	mu      sync.Mutex
	closing context.Context // ends when close begins; each WebSocket's context ends with it
	end     context.CancelFunc
	closed  bool
	serving sync.WaitGroup
}

// open registers the WebSocket r asks for and returns r with a context that ends when close
// is called, with the cause graph.ErrServiceRestart (the connection then closes with 1012),
// and not when the handler returns, and done, which graph.Handler.ServeWebSocket calls once the
// WebSocket has closed. ok is false once close has begun: the handshake is refused.
func (ws *webSockets) open(r *http.Request) (_ *http.Request, done func(), ok bool) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if ws.closed {
		return r, nil, false
	}
	if ws.closing == nil {
		ws.closing, ws.end = context.WithCancel(context.Background())
	}
	ws.serving.Add(1)
	ctx, cancel := context.WithCancelCause(context.WithoutCancel(r.Context()))
	// The shutdown's cause closes the WebSocket with 1012 and no complete (graph).
	stop := context.AfterFunc(ws.closing, func() { cancel(graph.ErrServiceRestart) })
	var once sync.Once
	return r.WithContext(ctx), func() {
		once.Do(func() {
			stop()
			cancel(nil)
			ws.serving.Done()
		})
	}, true
}

// close closes every WebSocket open, refuses new ones, and returns once their handlers have.
func (ws *webSockets) close() {
	ws.mu.Lock()
	ws.closed = true
	if ws.end != nil {
		ws.end()
	}
	ws.mu.Unlock()
	ws.serving.Wait()
}

// errShuttingDown refuses a WebSocket handshake that arrives while the server closes its
// WebSockets: the client connects again, to another instance.
var errShuttingDown = credit.Errorf(httpapi.CodeUnavailable, "this instance is shutting down; connect again")

// errForbiddenOrigin is the refusal of a WebSocket from a foreign origin: 403, with the code
// of a key that may not do what it asks.
var errForbiddenOrigin = credit.Errorf(credit.CodeInsufficientScope, "WebSocket connections are accepted only from this API's own origin and the --cors-origin origins")

// originAllowed reports whether a WebSocket handshake's Origin may connect: none (not a
// browser), the API's own, or a --cors-origin.
func originAllowed(r *http.Request, origins []string) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	scheme := "http://"
	if r.TLS != nil {
		scheme = "https://"
	}
	if strings.EqualFold(origin, scheme+r.Host) {
		return true
	}
	for _, o := range origins {
		if strings.EqualFold(origin, o) {
			return true
		}
	}
	return false
}

// streamAuthenticate checks a WebSocket's key (connection_init's Authorization, else the
// handshake's) by the rules of authenticate: a failure counts against the failed-authentication
// limit of the client's address, which refuses failures only (contract §2).
func (s *Server) streamAuthenticate(ctx context.Context, r *http.Request, authorization string) (context.Context, error) {
	err := credit.ErrUnauthenticated()
	if secret, ok := bearerToken(authorization); ok {
		ctx, err = s.svc.Keys.Authenticate(ctx, secret)
	}
	if err != nil && credit.CodeOf(err) == credit.CodeUnauthenticated {
		if d, limited := s.authFailures.fail(r); limited {
			// The handshake is answered already: no Retry-After header to set.
			return nil, errAuthFailuresLimited(nil, d)
		}
	}
	return ctx, err
}

// chargeSubscription counts a WebSocket subscription's start as one request of its store.
func (s *Server) chargeSubscription(ctx context.Context) error {
	v, _ := tenant.FromContext(ctx)
	d, err := s.limiter.Take(ctx, "store:"+v.StoreID, 1)
	if err != nil || d.Allowed {
		return nil // a limiter outage never fails a request
	}
	return errRateLimited(nil, d) // the stream has begun: no Retry-After header to set
}

// subscriptionCollector exposes the process's subscription figures.
type subscriptionCollector struct {
	svc interface {
		SubscriptionStats() credit.SubscriptionStats
	}
	// executed counts the payloads of subscription messages executed (graph's shared
	// payloads: the others reused one).
	executed func() int64

	open, sent, reads, executedDs, cutOffDs *prometheus.Desc
}

func newSubscriptionCollector(svc *credit.Events, executed func() int64) *subscriptionCollector {
	return &subscriptionCollector{
		svc:        svc,
		executed:   executed,
		executedDs: prometheus.NewDesc("creditd_subscription_payloads_executed_total", "Subscription messages whose selection was executed; the others reused the payload a subscriber of the same store, document, variables and scopes executed for the same event.", nil, nil),
		open:       prometheus.NewDesc("creditd_subscriptions_open", "Open GraphQL subscriptions on this instance.", nil, nil),
		sent:       prometheus.NewDesc("creditd_subscription_messages_sent_total", "Events handed to subscription streams.", nil, nil),
		reads:      prometheus.NewDesc("creditd_subscription_feed_reads_total", "Reads of the event feed by subscriptions: one per store and wake-up for those that keep up, one per subscription for those reading alone.", nil, nil),
		cutOffDs:   prometheus.NewDesc("creditd_subscriptions_cut_off_total", "Subscriptions ended by the server, by reason (slow_consumer, unauthenticated).", []string{"reason"}, nil),
	}
}

func (c *subscriptionCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.open
	ch <- c.sent
	ch <- c.reads
	ch <- c.executedDs
	ch <- c.cutOffDs
}

func (c *subscriptionCollector) Collect(ch chan<- prometheus.Metric) {
	st := c.svc.SubscriptionStats()
	ch <- prometheus.MustNewConstMetric(c.open, prometheus.GaugeValue, float64(st.Open))
	ch <- prometheus.MustNewConstMetric(c.sent, prometheus.CounterValue, float64(st.Sent))
	ch <- prometheus.MustNewConstMetric(c.reads, prometheus.CounterValue, float64(st.FeedReads))
	ch <- prometheus.MustNewConstMetric(c.executedDs, prometheus.CounterValue, float64(c.executed()))
	for _, reason := range []string{"slow_consumer", "unauthenticated"} {
		ch <- prometheus.MustNewConstMetric(c.cutOffDs, prometheus.CounterValue, float64(st.CutOff[reason]), reason)
	}
}
