package delivery_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
	"github.com/creditd/creditd/delivery"
	"github.com/creditd/creditd/webhook"
	"github.com/creditd/creditd/webhook/webhooktest"
)

// TestWorkerRefusesAPrivateAddressAtConnectTime is DNS rebinding end to end: an endpoint
// whose URL names a public-looking host passes the check at creation, but the host resolves
// to loopback when the worker connects. Without --allow-private-webhooks the worker refuses
// to connect, records the refusal, and the receiver listening there gets nothing; with it
// (development), the same worker delivers, which shows the refusal is the address check's.
func TestWorkerRefusesAPrivateAddressAtConnectTime(t *testing.T) {
	for _, allowPrivate := range []bool{false, true} {
		var received atomic.Int32
		recv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			received.Add(1)
		}))
		defer recv.Close()
		_, port, _ := net.SplitHostPort(recv.Listener.Addr().String())
		sealer := credittest.NewSealer(t)
		env := credittest.New(t, credittest.Options{ServiceOptions: func(o *credit.Options) {
			o.WebhookSealer = func() (*webhook.Sealer, error) { return sealer, nil }
		}})
		st := env.MustStore(t, "Rebind", "EUR")
		// example.com is a public name (and the name in httptest's certificate); the test's
		// resolver answers 127.0.0.1 for it, as a rebinding attacker's DNS would.
		we, err := env.Service.Webhooks.CreateEndpoint(credittest.Staff(st), credit.WebhookEndpointInput{URL: "https://example.com:" + port + "/hooks"})
		if err != nil {
			t.Fatal(err)
		}
		env.MustCompany(t, st, "Buyer", "100.00")

		roots := x509.NewCertPool()
		roots.AddCert(recv.Certificate())
		client := webhook.NewClient(webhook.Options{
			AllowPrivate: allowPrivate,
			TLSConfig:    &tls.Config{RootCAs: roots},
			Resolver:     webhooktest.FakeDNS(t, map[string][]netip.Addr{"example.com.": {netip.MustParseAddr("127.0.0.1")}}),
			Now:          env.Clock.Now,
		})
		w := delivery.New(delivery.Config{Queue: env.Service.WebhookQueue, Lock: env.DB.TryLock, Client: client, PollInterval: 10 * time.Millisecond,
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); w.Run(ctx) }()
		var report credit.WebhookDeliveryReport
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			report, err = env.Service.Webhooks.Deliveries(credittest.Staff(st), we.ID, 10)
			if err != nil {
				t.Fatal(err)
			}
			if len(report.Attempts) > 0 {
				break
			}
		}
		cancel()
		<-done
		if len(report.Attempts) == 0 {
			t.Fatalf("allowPrivate=%v: no attempt was recorded", allowPrivate)
		}
		a := report.Attempts[0]
		if allowPrivate {
			if a.Outcome != webhook.OutcomeSuccess || received.Load() != 1 {
				t.Errorf("with private destinations allowed: outcome %s (%s), %d received", a.Outcome, a.Error, received.Load())
			}
			continue
		}
		if a.Outcome != webhook.OutcomeRefusedPrivateAddress || received.Load() != 0 || !strings.Contains(a.Error, "127.0.0.1") || !strings.Contains(a.Error, "--allow-private-webhooks") {
			t.Errorf("rebinding to loopback: outcome %s (%s), %d received; want refused_private_address and nothing sent", a.Outcome, a.Error, received.Load())
		}
		if a.NextAttemptAt == nil || len(report.Pending) != 1 {
			t.Errorf("a refused attempt is retried like any failure: %+v", report)
		}
	}
}
