// Package delivery is the webhook delivery worker that `creditd serve` runs: it walks every
// enabled endpoint's cursor through its store's events, posts each event with package webhook
// (signed, SSRF-safe, one attempt at a time), and has package credit record every attempt and
// decide the retry, the cursor and the endpoint's state.
//
// # One attempt at a time per endpoint
//
// Per endpoint, events go out in order: the next one is not attempted before the previous one
// succeeded or was given up, so an endpoint is worked on by one goroutine of one instance at a
// time. Instances sharing a PostgreSQL database take a session advisory lock per endpoint
// (pg_try_advisory_lock, through database.DB.TryLock) for the whole of its work, and skip an
// endpoint another instance holds. A lock rather than SELECT ... FOR UPDATE SKIP LOCKED because
// the work includes an HTTP request of up to 15 seconds: a row lock would keep a transaction
// (and its snapshot) open across it, and on SQLite a write transaction would stop every other
// write of the service for that long. The advisory lock lives on its own connection, so it is
// released when that connection ends, including when the instance dies. SQLite has one instance.
//
// # At least once, in batches
//
// The worker reads up to 50 events past an endpoint's cursor at once, sends them one after
// the other (stopping at the first failure), and records the batch's attempts in one
// transaction, which moves the cursor past what succeeded: a backlog costs one read and one
// write per batch, not per event, so deliveries barely slow the writes they report. A crash
// before the record loses the record, not the events: the next start sends them again, with
// the same webhook-id, which receivers use to de-duplicate. An attempt cut short by shutdown is
// not recorded at all and does not count against the receiver.
package delivery

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/webhook"
)

// DefaultPollInterval is how often the worker looks for due deliveries when idle: new events
// reach their endpoints within about this long.
const DefaultPollInterval = time.Second

// DefaultConcurrency is how many endpoints one instance works on at once.
const DefaultConcurrency = 8

// batchSize is how many events are read, sent (one after the other) and recorded together:
// a backlog costs one read and one write transaction per batch rather than per event.
const batchSize = 50

// batchesPerTurn bounds how many batches one endpoint gets before the others have their turn.
const batchesPerTurn = 4

// Queue is what the worker needs of the domain; *credit.WebhookQueue implements it.
type Queue interface {
	DueWebhookEndpoints(ctx context.Context) ([]credit.WebhookTarget, error)
	NextWebhookDeliveries(ctx context.Context, endpointID string, max int) ([]*credit.WebhookDue, error)
	RecordWebhookAttempts(ctx context.Context, made []credit.WebhookAttemptMade) ([]credit.WebhookAttemptRecord, error)
	OldestPendingWebhookEvent(ctx context.Context) (time.Time, bool, error)
}

// Locker takes a lock shared by every instance on the database without waiting; ok is false
// when another holds it. *database.DB's TryLock is one.
type Locker func(ctx context.Context, name string) (release func(), ok bool, err error)

// Config configures a Worker.
type Config struct {
	Queue  Queue
	Lock   Locker
	Client *webhook.Client
	Logger *slog.Logger
	// PollInterval is the idle wait between looks for due work; zero means DefaultPollInterval.
	PollInterval time.Duration
	// Concurrency is how many endpoints are worked on at once; zero means DefaultConcurrency.
	Concurrency int
	// Now is the clock of the queue-age metric; nil means time.Now.
	Now func() time.Time
}

// Worker delivers webhooks until its context ends.
type Worker struct {
	cfg      Config
	log      *slog.Logger
	outcomes *prometheus.CounterVec
	queueAge prometheus.GaugeFunc

	mu   sync.Mutex
	busy map[string]bool
}

// New returns a Worker; Run starts it.
func New(cfg Config) *Worker {
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = DefaultPollInterval
	}
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = DefaultConcurrency
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	w := &Worker{cfg: cfg, log: log, busy: map[string]bool{}}
	w.outcomes = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "creditd_webhook_deliveries_total",
		Help: "Webhook delivery attempts by outcome (success, http_<status>, timeout, connection_refused, ...).",
	}, []string{"outcome"})
	w.queueAge = prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "creditd_webhook_oldest_pending_event_age_seconds",
		Help: "Age of the oldest event not yet delivered to an enabled endpoint that wants it, across stores; 0 when none waits.",
	}, w.oldestPendingAge)
	return w
}

// Collectors are the worker's metrics, for the server's registry.
func (w *Worker) Collectors() []prometheus.Collector {
	return []prometheus.Collector{w.outcomes, w.queueAge}
}

func (w *Worker) oldestPendingAge() float64 {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	at, ok, err := w.cfg.Queue.OldestPendingWebhookEvent(ctx)
	if err != nil || !ok {
		return 0
	}
	return max(0, w.cfg.Now().Sub(at).Seconds())
}

// Run delivers until ctx ends, then waits for the attempts under way (which ctx's end cuts
// short) and returns.
func (w *Worker) Run(ctx context.Context) {
	var wg sync.WaitGroup
	defer wg.Wait()
	sem := make(chan struct{}, w.cfg.Concurrency)
	t := time.NewTicker(w.cfg.PollInterval)
	defer t.Stop()
	for {
		targets, err := w.cfg.Queue.DueWebhookEndpoints(ctx)
		if err != nil && ctx.Err() == nil {
			w.log.Error("webhook worker: listing endpoints failed", "error", err.Error())
		}
		for _, target := range targets {
			if !w.claim(target.ID) {
				continue
			}
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				w.release(target.ID)
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer func() { <-sem }()
				defer w.release(target.ID)
				w.work(ctx, target)
			}()
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// claim marks an endpoint as worked on by this process; false when it already is.
func (w *Worker) claim(id string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.busy[id] {
		return false
	}
	w.busy[id] = true
	return true
}

func (w *Worker) release(id string) {
	w.mu.Lock()
	delete(w.busy, id)
	w.mu.Unlock()
}

// lockName names the lock, shared by every instance, under which an endpoint is worked on.
func lockName(endpointID string) string { return "creditd webhook endpoint " + endpointID }

// WithEndpointLock runs fn holding the endpoint's lock, as the worker does while it works on
// the endpoint (`creditd webhook redeliver` sends under it). It returns false without running
// fn when another process holds the lock (on PostgreSQL, a serve instance working on the
// endpoint right now).
func (w *Worker) WithEndpointLock(ctx context.Context, endpointID string, fn func() error) (bool, error) {
	unlock, ok, err := w.cfg.Lock(ctx, lockName(endpointID))
	if err != nil || !ok {
		return false, err
	}
	defer unlock()
	return true, fn()
}

// SendNow makes one attempt of due at once and records it, as the worker records its own.
// It is for the attempts an operator asks for: a ping (credit.Webhooks.Ping), which goes
// beside the endpoint's ordered stream and so needs no lock, and a redelivery that
// credit.Webhooks.RedeliverNow claimed, sent under WithEndpointLock.
func (w *Worker) SendNow(ctx context.Context, due *credit.WebhookDue) (credit.WebhookAttemptRecord, error) {
	made, _ := w.deliver(ctx, []*credit.WebhookDue{due})
	if len(made) == 0 {
		return credit.WebhookAttemptRecord{}, errors.New("the attempt was cut short by a shutdown and not recorded")
	}
	recs, err := w.cfg.Queue.RecordWebhookAttempts(context.WithoutCancel(credit.WebhookViewer(ctx, due.StoreID)), made)
	if err != nil {
		return credit.WebhookAttemptRecord{}, err
	}
	if len(recs) == 0 {
		return credit.WebhookAttemptRecord{}, errors.New("the endpoint was deleted while the attempt was made")
	}
	return recs[0], nil
}

// work makes an endpoint's due attempts, in order, under the endpoint's lock.
func (w *Worker) work(ctx context.Context, target credit.WebhookTarget) {
	_, err := w.WithEndpointLock(ctx, target.ID, func() error {
		w.workLocked(ctx, target)
		return nil
	})
	if err != nil && ctx.Err() == nil {
		w.log.Error("webhook worker: locking an endpoint failed", "endpoint", target.ID, "error", err.Error())
	}
}

// workLocked is work once the lock is held.
func (w *Worker) workLocked(ctx context.Context, target credit.WebhookTarget) {
	vctx := credit.WebhookViewer(ctx, target.StoreID)
	for range batchesPerTurn {
		if ctx.Err() != nil {
			return
		}
		batch, err := w.cfg.Queue.NextWebhookDeliveries(vctx, target.ID, batchSize)
		if err != nil {
			if ctx.Err() == nil {
				w.log.Error("webhook worker: reading the next deliveries failed", "endpoint", target.ID, "error", err.Error())
			}
			return
		}
		if len(batch) == 0 {
			return
		}
		made, stop := w.deliver(ctx, batch)
		if len(made) == 0 {
			return
		}
		// Recording must not be cut short by a shutdown that starts now: the attempts were made.
		recs, err := w.cfg.Queue.RecordWebhookAttempts(context.WithoutCancel(vctx), made)
		if err != nil {
			w.log.Error("webhook worker: recording attempts failed; their events will be sent again", "endpoint", target.ID, "attempts", len(made), "error", err.Error())
			return
		}
		for i, rec := range recs {
			m := made[i]
			if !m.Result.Success {
				attrs := []any{"endpoint", target.ID, "store", target.StoreID, "event", m.Due.EventID, "attempt", m.Due.Attempt, "outcome", m.Result.Outcome}
				if rec.NextAttemptAt != nil {
					attrs = append(attrs, "next_attempt_at", rec.NextAttemptAt.Format(time.RFC3339))
				}
				if rec.GaveUp {
					w.log.Warn("webhook delivery given up after the whole retry schedule", attrs...)
				} else {
					w.log.Info("webhook delivery failed; retry scheduled", attrs...)
				}
			}
			if rec.Disabled != "" {
				w.log.Warn("webhook endpoint disabled", "endpoint", target.ID, "store", target.StoreID, "reason", rec.Disabled)
				return
			}
		}
		if stop {
			return
		}
	}
}

// deliver sends a batch one attempt after the other, stopping after the first failure of an
// in-order event (the events behind it wait for its retry) and when shutdown begins; stop
// says the endpoint has nothing more to do now.
func (w *Worker) deliver(ctx context.Context, batch []*credit.WebhookDue) (made []credit.WebhookAttemptMade, stop bool) {
	for _, due := range batch {
		res := w.cfg.Client.Deliver(ctx, webhook.Request{URL: due.URL, MessageID: due.EventID, Body: due.Body, Secrets: due.Secrets})
		if res.Outcome == webhook.OutcomeCanceled || ctx.Err() != nil {
			return made, true // shutting down: not the receiver's fault, and the next start sends it again
		}
		w.outcomes.WithLabelValues(res.Outcome).Inc()
		errText := ""
		if res.Err != nil {
			errText = res.Err.Error()
		}
		made = append(made, credit.WebhookAttemptMade{Due: due, Result: credit.WebhookAttemptResult{
			Success: res.Success, Outcome: res.Outcome, StatusCode: res.StatusCode, Duration: res.Duration,
			Snippet: res.ResponseSnippet, Error: errText, RetryAfter: res.RetryAfter,
		}})
		if !res.Success && due.InOrder {
			return made, true
		}
	}
	return made, len(batch) < batchSize
}
