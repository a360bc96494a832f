// Package credit is the domain of creditd: money, companies and their ledgers, invoices and
// overdue holds, applications, API keys, idempotency and the rules that govern them. The REST
// API, the GraphQL API and the command line all call it, so each rule is written once, here.
//
// The package knows neither HTTP nor GraphQL nor a database driver: transports turn its
// errors into their own forms (package httpapi), and the database is reached through ent's
// client and Storage, capabilities named by what they do (storage.go), which package database
// implements for each database: no SQL dialect is named here.
package credit

import (
	"context"
	"sync"
	"time"

	"github.com/creditd/creditd/ent"
	"github.com/creditd/creditd/webhook"
)

// Storage is what the domain needs of the database besides ent's generated client: each of
// the capabilities in storage.go, from transactions to exact sums of money. *database.DB
// implements it, and says there how each database does what the domain names.
type Storage interface {
	Transactions
	RowLocks
	NumberedRows
	UniqueIndexes
	KeyChangeCount
	MoneySums
	PackedReads
	SeqRanges
	Search
	Erasure
	Snapshots
}

// Options configure a Service.
type Options struct {
	// Now is the clock; nil means time.Now. Tests inject one to move time without sleeping,
	// and `creditd holds sweep --now` sweeps as of another moment.
	Now func() time.Time
	// IdempotencyTTL is how long Idempotency-Key results are remembered; zero means 24 hours.
	IdempotencyTTL time.Duration
	// WebhookSealer returns the Sealer that seals and opens webhook signing secrets under the
	// master key; it is called only when a secret is sealed or opened, so a command that needs
	// none never needs the key. Nil means webhooks are unavailable (ErrNoWebhookKey).
	WebhookSealer func() (*webhook.Sealer, error)
	// AllowPrivateWebhooks accepts http:// and private, loopback and link-local endpoint URLs,
	// for development and tests (serve --allow-private-webhooks).
	AllowPrivateWebhooks bool
	// EventRetention is how long events are kept before the sweep purges them; zero, or
	// anything shorter than the 30 days contract §11 promises, means 30 days.
	EventRetention time.Duration
	// ExportBatch is how many rows each read of an export returns (Exports.Export); zero
	// means 1,000. Tests make it small, so that writes land between an export's reads.
	ExportBatch int
	// DBTimeout bounds each database read of a subscription (the feed, the key), which has no
	// request deadline of its own (serve --db-timeout); zero means 10 seconds.
	DBTimeout time.Duration
}

// Service carries out every operation of the domain on one database. It is a set of small
// services, one per kind of client, over one shared core (the database, the clock, the
// caches): a transport or worker takes the one it needs, or an interface of its own over it.
type Service struct {
	*core

	// Companies: the companies on credit terms, their limits, holds and platform company GIDs.
	Companies *Companies
	// Ledger: each company's append-only ledger, adjustments and platform entries.
	Ledger *Ledger
	// Invoices: the invoices the ledger's charges open, read by their own IDs and per company.
	Invoices *Invoices
	// Timeline: each company's timeline of what happened to it, and who did it.
	Timeline *Timeline
	// Applications: wholesale applications, their approval, and erasing a person's data.
	Applications *Applications
	// Reports: the receivables and their aging, and the console's morning overview.
	Reports *Reports
	// Keys: API keys, and authenticating a request by one.
	Keys *Keys
	// Staff: staff accounts, sign-in and sessions of the console.
	Staff *Staff
	// Stores: creating and finding stores, the system's work.
	Stores *Stores
	// Events: the store's event feed, read by page or subscribed to.
	Events *Events
	// Platform: the commerce platform's connection, its secret and the credit checks it asks.
	Platform *Platform
	// Inbox: the platform's deliveries received, applied, listed and retried.
	Inbox *Inbox
	// Webhooks: the staff's webhook endpoints and their delivery reports.
	Webhooks *Webhooks
	// WebhookQueue: what the delivery worker takes and records (delivery.Queue).
	WebhookQueue *WebhookQueue
	// Idempotency: Idempotency-Key records, which make a retried write apply once.
	Idempotency *Idempotency
	// Maintenance: the periodic sweeps: overdue holds, expired events and idempotency records.
	Maintenance *Maintenance
	// Exports: the store's whole state in one stream, as of one feed position.
	Exports *Exports
}

// The services. Each is the shared core seen through the methods of one kind of client.
type (
	// Companies is the part of the domain about companies on credit terms (Service.Companies).
	Companies struct{ *core }
	// Ledger is the part of the domain about ledger entries (Service.Ledger).
	Ledger struct{ *core }
	// Invoices is the part of the domain about invoices (Service.Invoices).
	Invoices struct{ *core }
	// Timeline is the part of the domain about companies' timelines (Service.Timeline).
	Timeline struct{ *core }
	// Applications is the part of the domain about wholesale applications (Service.Applications).
	Applications struct{ *core }
	// Reports is the part of the domain that sums up a store (Service.Reports).
	Reports struct{ *core }
	// Keys is the part of the domain about API keys (Service.Keys).
	Keys struct{ *core }
	// Staff is the part of the domain about the console's staff (Service.Staff).
	Staff struct{ *core }
	// Stores is the part of the domain about stores (Service.Stores).
	Stores struct{ *core }
	// Events is the part of the domain about the event feed (Service.Events).
	Events struct{ *core }
	// Platform is the part of the domain about the commerce platform's connection (Service.Platform).
	Platform struct{ *core }
	// Inbox is the part of the domain about the platform's deliveries (Service.Inbox).
	Inbox struct{ *core }
	// Webhooks is the part of the domain about webhook endpoints, for staff (Service.Webhooks).
	Webhooks struct{ *core }
	// WebhookQueue is the part of the domain the webhook delivery worker uses (Service.WebhookQueue).
	WebhookQueue struct{ *core }
	// Idempotency is the part of the domain about Idempotency-Key records (Service.Idempotency).
	Idempotency struct{ *core }
	// Maintenance is the part of the domain the periodic sweeps use (Service.Maintenance).
	Maintenance struct{ *core }
	// Exports is the part of the domain about exports of a store's state (Service.Exports).
	Exports struct{ *core }
)

// core is what every service shares: the database, the clock, the options and the caches.
type core struct {
	db     Storage
	client *ent.Client
	now    func() time.Time

	idempotencyTTL time.Duration
	eventRetention time.Duration
	// subscriptionRead bounds each database read of a subscription (Options.DBTimeout).
	subscriptionRead time.Duration
	// exportBatch is how many rows each read of an export returns (Options.ExportBatch).
	exportBatch int

	webhookSealer        func() (*webhook.Sealer, error)
	allowPrivateWebhooks bool

	// stores caches store rows by ID, for the fields no operation changes once the store
	// exists (name, currency, locale, buffer), so reads of a company need one statement instead
	// of two. The one field staff change, the reminder schedule (reminder_days), is always read
	// from the database, never from here: other processes keep their own copies, so a field
	// that an operation may change must never be read from here.
	stores sync.Map // string -> *ent.Store

	// lastUsedWritten remembers when each key's last_used_at was last written by this process,
	// so a busy key costs at most one write a minute.
	lastUsedMu      sync.Mutex
	lastUsedWritten map[string]time.Time

	// keys remembers authentications until a key changes (see Authenticate).
	keys keyCache

	// feed holds the process's live subscriptions to the event feed (see Events.Subscribe).
	feed feedHub
}

// New returns the Service over db. It is the one constructor: the server, the command line,
// the tests and the benchmarks all build the service here.
func New(db Storage, opts Options) *Service {
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	ttl := opts.IdempotencyTTL
	if ttl <= 0 {
		ttl = DefaultIdempotencyTTL
	}
	retention := max(opts.EventRetention, DefaultEventRetention)
	read := opts.DBTimeout
	if read <= 0 {
		read = defaultSubscriptionRead
	}
	batch := opts.ExportBatch
	if batch <= 0 {
		batch = defaultExportBatch
	}
	c := &core{db: db, client: db.Ent(), now: now, idempotencyTTL: ttl, eventRetention: retention, subscriptionRead: read, exportBatch: batch, lastUsedWritten: map[string]time.Time{},
		webhookSealer: opts.WebhookSealer, allowPrivateWebhooks: opts.AllowPrivateWebhooks}
	return &Service{core: c,
		Companies: &Companies{c}, Ledger: &Ledger{c}, Invoices: &Invoices{c}, Timeline: &Timeline{c},
		Applications: &Applications{c}, Reports: &Reports{c}, Keys: &Keys{c}, Staff: &Staff{c},
		Stores: &Stores{c}, Events: &Events{c}, Platform: &Platform{c}, Inbox: &Inbox{c},
		Webhooks: &Webhooks{c}, WebhookQueue: &WebhookQueue{c}, Idempotency: &Idempotency{c},
		Maintenance: &Maintenance{c}, Exports: &Exports{c}}
}

// Now returns the service clock's current time in UTC with microsecond precision, the
// precision every stored timestamp has.
func (s *core) Now() time.Time { return s.now().UTC().Truncate(time.Microsecond) }

// inTx runs fn in one write transaction; see Storage.InTx.
func (s *core) inTx(ctx context.Context, fn func(tx *ent.Tx) error) error {
	return s.db.InTx(ctx, fn)
}

// reader is the client for a read: the transaction in ctx when there is one, so that what a
// GraphQL mutation returns under an Idempotency-Key (which runs the whole request in one
// transaction) includes its own writes, else the service's client.
func (s *core) reader(ctx context.Context) *ent.Client { return s.db.Reader(ctx) }

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
