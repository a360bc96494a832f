package server

import (
	"context"
	"net/http"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/httpapi"
	"github.com/creditd/creditd/ratelimit"
	"github.com/creditd/creditd/tenant"
)

// The platform's door (contract §13): POST /platform/webhooks and POST /platform/credit-checks,
// outside /v1, authenticated by the shop's signature instead of an API key and limited per
// store on their own allowance. The handlers only read the request and call credit/.

// DefaultPlatformRateLimit is the platform's requests per minute per store.
const DefaultPlatformRateLimit = 600

// Headers of the platform's requests.
const (
	HeaderPlatformTopic       = "X-Platform-Topic"
	HeaderPlatformShopDomain  = "X-Platform-Shop-Domain"
	HeaderPlatformWebhookID   = "X-Platform-Webhook-Id"
	HeaderPlatformTriggeredAt = "X-Platform-Triggered-At"
	HeaderPlatformHmac        = "X-Platform-Hmac-Sha256"
)

// platformTopics are the topics metrics name; any other is counted as "other", so label
// values stay few whatever the platform sends.
var platformTopics = []string{credit.TopicOrderCreated, credit.TopicPaymentCreated, credit.TopicRefundCreated, credit.TopicOrderCancelled}

// mountPlatform adds the platform's door to mux.
func (s *Server) mountPlatform(mux *http.ServeMux) {
	mux.Handle("POST /platform/webhooks", s.platformDoor(s.receivePlatformDelivery))
	mux.Handle("POST /platform/credit-checks", s.platformDoor(s.checkCredit))
}

// platformDoor reads the raw body, checks the shop's signature over it before anything parses
// it, charges the store's platform allowance, then runs handle as the platform.
func (s *Server) platformDoor(handle func(ctx context.Context, r *http.Request, body []byte) (any, error)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := httpapi.ReadRaw(w, r)
		if err != nil {
			httpapi.WriteError(w, r, err)
			return
		}
		ctx, err := s.svc.Platform.Authenticate(r.Context(), r.Header.Get(HeaderPlatformShopDomain), r.Header.Get(HeaderPlatformHmac), body)
		if err != nil {
			httpapi.WriteError(w, r, err)
			return
		}
		v, _ := tenant.FromContext(ctx)
		if info := infoFrom(ctx); info != nil {
			info.storeID = v.StoreID
		}
		if d, err := s.platformLimiter.Take(ctx, "platform:"+v.StoreID, 1); err == nil {
			setRateHeaders(w, d)
			if !d.Allowed {
				httpapi.WriteError(w, r, errRateLimited(w, d))
				return
			}
		}
		out, err := handle(ctx, r, body)
		if err != nil {
			httpapi.WriteError(w, r, err)
			return
		}
		httpapi.WriteJSON(w, http.StatusOK, out)
	})
}

// receivePlatformDelivery serves POST /platform/webhooks.
func (s *Server) receivePlatformDelivery(ctx context.Context, r *http.Request, body []byte) (any, error) {
	topic := r.Header.Get(HeaderPlatformTopic)
	d, err := s.svc.Inbox.Receive(ctx, credit.PlatformDeliveryInput{
		Topic: topic, WebhookID: r.Header.Get(HeaderPlatformWebhookID), TriggeredAt: r.Header.Get(HeaderPlatformTriggeredAt), Body: body,
	})
	if err != nil {
		return nil, err
	}
	if !slices.Contains(platformTopics, topic) {
		topic = "other"
	}
	s.metrics.platformDeliveries.WithLabelValues(topic, d.Status).Inc()
	return d, nil
}

// checkCredit serves POST /platform/credit-checks.
func (s *Server) checkCredit(ctx context.Context, r *http.Request, body []byte) (any, error) {
	var in credit.CreditCheckInput
	if err := httpapi.DecodeObject(body, httpapi.StringField("company_id", &in.CompanyGID), httpapi.ObjectField("amount", &in.Amount)); err != nil {
		return nil, err
	}
	check, err := s.svc.Platform.CheckCredit(ctx, in)
	if err != nil {
		return nil, err
	}
	reason := ""
	if check.Reason != nil {
		reason = *check.Reason
	}
	s.metrics.creditChecks.WithLabelValues(check.Decision, reason).Inc()
	return check, nil
}

// newPlatformLimiter is the platform's own per-store allowance.
func newPlatformLimiter(cfg Config, now func() time.Time) ratelimit.Limiter {
	limit := cfg.PlatformRateLimit
	if limit <= 0 {
		limit = DefaultPlatformRateLimit
	}
	return ratelimit.NewMemory(limit, time.Minute, now)
}

// inboxCollector reports the inbox rows waiting for their order and failed, across stores,
// read when /metrics is scraped.
type inboxCollector struct {
	inbox interface {
		Backlog(ctx context.Context) (waiting, failed int, err error)
	}
	waiting, failed *prometheus.Desc
}

func newInboxCollector(inbox *credit.Inbox) *inboxCollector {
	return &inboxCollector{
		inbox:   inbox,
		waiting: prometheus.NewDesc("creditd_platform_inbox_waiting", "Platform deliveries waiting for their order.", nil, nil),
		failed:  prometheus.NewDesc("creditd_platform_inbox_failed", "Platform deliveries kept as failed, for staff to retry.", nil, nil),
	}
}

// Describe implements prometheus.Collector.
func (c *inboxCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.waiting; ch <- c.failed }

// Collect implements prometheus.Collector; a database it cannot read reports nothing.
func (c *inboxCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	waiting, failed, err := c.inbox.Backlog(ctx)
	if err != nil {
		return
	}
	ch <- prometheus.MustNewConstMetric(c.waiting, prometheus.GaugeValue, float64(waiting))
	ch <- prometheus.MustNewConstMetric(c.failed, prometheus.GaugeValue, float64(failed))
}
