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
	"sync"
	"time"

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
	Keysets
	ReceivableSums
	PaymentFigures
	IndexedConditions
	Filters
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
// services, one per kind of client, each holding as named fields the components it uses (the
// database, the clock, the caches and the writers below): a transport or worker takes the
// service it needs, or an interface of its own over it.
type Service struct {
	clock  clock
	stores *storeCache

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

// The services. Each holds, by name, only the components its methods use, so a reader sees
// from its fields what it may touch.
type (
	// Companies is the part of the domain about companies on credit terms (Service.Companies).
	Companies struct {
		db        Storage
		clock     clock
		stores    *storeCache
		auth      *keyAuth
		companies *companyStore
		events    *eventWriter
		ledger    *ledgerWriter
	}
	// Ledger is the part of the domain about ledger entries (Service.Ledger).
	Ledger struct {
		db        Storage
		clock     clock
		stores    *storeCache
		companies *companyStore
		events    *eventWriter
		ledger    *ledgerWriter
	}
	// Invoices is the part of the domain about invoices (Service.Invoices).
	Invoices struct {
		db        Storage
		clock     clock
		stores    *storeCache
		companies *companyStore
		events    *eventWriter
		invoices  *invoiceReader
	}
	// Timeline is the part of the domain about companies' timelines (Service.Timeline).
	Timeline struct {
		db        Storage
		companies *companyStore
	}
	// Applications is the part of the domain about wholesale applications (Service.Applications).
	Applications struct {
		db        Storage
		clock     clock
		stores    *storeCache
		companies *companyStore
		events    *eventWriter
	}
	// Reports is the part of the domain that sums up a store (Service.Reports).
	Reports struct {
		db        Storage
		clock     clock
		stores    *storeCache
		companies *companyStore
		invoices  *invoiceReader
	}
	// Keys is the part of the domain about API keys (Service.Keys).
	Keys struct {
		db     Storage
		clock  clock
		stores *storeCache
		auth   *keyAuth
		events *eventWriter
	}
	// Staff is the part of the domain about the console's staff (Service.Staff).
	Staff struct {
		db     Storage
		clock  clock
		stores *storeCache
	}
	// Stores is the part of the domain about stores (Service.Stores).
	Stores struct {
		db     Storage
		clock  clock
		stores *storeCache
	}
	// Events is the part of the domain about the event feed (Service.Events).
	Events struct {
		db     Storage
		clock  clock
		stores *storeCache
		auth   *keyAuth
		// feed holds the process's live subscriptions to the event feed (see Subscribe).
		feed *feedHub
		// eventRetention is how long events are kept (Options.EventRetention): an older
		// position is refused.
		eventRetention time.Duration
		// subscriptionRead bounds each database read of a subscription (Options.DBTimeout).
		subscriptionRead time.Duration
	}
	// Platform is the part of the domain about the commerce platform's connection (Service.Platform).
	Platform struct {
		db      Storage
		clock   clock
		stores  *storeCache
		secrets *secretSealer
	}
	// Inbox is the part of the domain about the platform's deliveries (Service.Inbox).
	Inbox struct {
		db        Storage
		clock     clock
		stores    *storeCache
		companies *companyStore
		events    *eventWriter
		ledger    *ledgerWriter
	}
	// Webhooks is the part of the domain about webhook endpoints, for staff (Service.Webhooks).
	Webhooks struct {
		db      Storage
		clock   clock
		stores  *storeCache
		secrets *secretSealer
		// allowPrivateWebhooks accepts private endpoint URLs (Options.AllowPrivateWebhooks).
		allowPrivateWebhooks bool
	}
	// WebhookQueue is the part of the domain the webhook delivery worker uses (Service.WebhookQueue).
	WebhookQueue struct {
		db      Storage
		clock   clock
		secrets *secretSealer
	}
	// Idempotency is the part of the domain about Idempotency-Key records (Service.Idempotency).
	Idempotency struct {
		db       Storage
		recorder *idempotencyRecorder
	}
	// Maintenance is declared in maintenance.go, with its methods.
	// Exports is the part of the domain about exports of a store's state (Service.Exports).
	Exports struct {
		db       Storage
		clock    clock
		stores   *storeCache
		auth     *keyAuth
		invoices *invoiceReader
		// exportBatch is how many rows each read of an export returns (Options.ExportBatch).
		exportBatch int
	}
)

// The components. Each owns one piece of shared state or one kind of write, and is held by
// name by the services that use it; New builds one of each.
type (
	// clock is the service's clock (Options.Now).
	clock func() time.Time

	// storeCache reads stores, and caches store rows by ID for the fields no operation changes
	// once the store exists (name, currency, locale, buffer), so reads of a company need one
	// statement instead of two (stores.go). The one field staff change, the reminder schedule
	// (reminder_days), is always read from the database, never from here: other processes keep
	// their own copies, so a field that an operation may change must never be read from here.
	storeCache struct {
		db     Storage
		stores sync.Map // string -> *ent.Store
	}

	// keyAuth authenticates requests by API key (keys.go): it remembers authentications
	// until a key changes, and writes a key's last use at most once a minute.
	keyAuth struct {
		db    Storage
		clock clock
		// keys remembers authentications until a key changes (see Keys.Authenticate).
		keys keyCache
		// lastUsedWritten remembers when each key's last_used_at was last written by this
		// process, so a busy key costs at most one write a minute.
		lastUsedMu      sync.Mutex
		lastUsedWritten map[string]time.Time
	}

	// eventWriter appends what happened, in the transaction of the change it describes: the
	// store's events (the feed and webhooks, events.go) and companies' timelines (timeline.go).
	eventWriter struct {
		db    Storage
		clock clock
	}

	// companyStore reads, creates and locks companies, each by way of its store (companies.go,
	// company_writes.go).
	companyStore struct {
		db     Storage
		clock  clock
		stores *storeCache
		auth   *keyAuth
	}

	// invoiceReader turns invoice rows into their views, with settlements and the state as of
	// the clock (invoice_reads.go).
	invoiceReader struct {
		clock clock
		// conds writes the invoices' open condition so that their indexes are sought.
		conds IndexedConditions
	}

	// ledgerWriter appends ledger entries and what follows from them: the allocation of
	// payments to invoices and the overdue reconciliation (ledger.go, allocation.go).
	ledgerWriter struct {
		clock    clock
		events   *eventWriter
		invoices *invoiceReader
		// conds writes the invoices' open condition so that their indexes are sought.
		conds IndexedConditions
	}

	// idempotencyRecorder claims, records and releases Idempotency-Key records (idempotency.go).
	idempotencyRecorder struct {
		db    Storage
		clock clock
		// idempotencyTTL is how long a result is remembered (Options.IdempotencyTTL).
		idempotencyTTL time.Duration
	}

	// secretSealer seals and opens webhook and platform secrets under the master key
	// (webhooks.go, webhook_queue.go, platform.go).
	secretSealer struct {
		webhookSealer func() (*webhook.Sealer, error)
	}
)

// New returns the Service over db. It is the one constructor: the server, the command line,
// the tests and the benchmarks all build the service here, and it is the one place that wires
// the components into the services.
func New(db Storage, opts Options) *Service {
	now := clock(opts.Now)
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
	stores := &storeCache{db: db}
	auth := &keyAuth{db: db, clock: now, lastUsedWritten: map[string]time.Time{}}
	events := &eventWriter{db: db, clock: now}
	companies := &companyStore{db: db, clock: now, stores: stores, auth: auth}
	invoices := &invoiceReader{clock: now, conds: db}
	ledger := &ledgerWriter{clock: now, events: events, invoices: invoices, conds: db}
	recorder := &idempotencyRecorder{db: db, clock: now, idempotencyTTL: ttl}
	secrets := &secretSealer{webhookSealer: opts.WebhookSealer}
	return &Service{clock: now, stores: stores,
		Companies:    &Companies{db: db, clock: now, stores: stores, auth: auth, companies: companies, events: events, ledger: ledger},
		Ledger:       &Ledger{db: db, clock: now, stores: stores, companies: companies, events: events, ledger: ledger},
		Invoices:     &Invoices{db: db, clock: now, stores: stores, companies: companies, events: events, invoices: invoices},
		Timeline:     &Timeline{db: db, companies: companies},
		Applications: &Applications{db: db, clock: now, stores: stores, companies: companies, events: events},
		Reports:      &Reports{db: db, clock: now, stores: stores, companies: companies, invoices: invoices},
		Keys:         &Keys{db: db, clock: now, stores: stores, auth: auth, events: events},
		Staff:        &Staff{db: db, clock: now, stores: stores},
		Stores:       &Stores{db: db, clock: now, stores: stores},
		Events: &Events{db: db, clock: now, stores: stores, auth: auth, feed: &feedHub{},
			eventRetention: retention, subscriptionRead: read},
		Platform:     &Platform{db: db, clock: now, stores: stores, secrets: secrets},
		Inbox:        &Inbox{db: db, clock: now, stores: stores, companies: companies, events: events, ledger: ledger},
		Webhooks:     &Webhooks{db: db, clock: now, stores: stores, secrets: secrets, allowPrivateWebhooks: opts.AllowPrivateWebhooks},
		WebhookQueue: &WebhookQueue{db: db, clock: now, secrets: secrets},
		Idempotency:  &Idempotency{db: db, recorder: recorder},
		Maintenance: &Maintenance{db: db, clock: now, companies: companies, events: events, invoices: invoices, ledger: ledger,
			eventRetention: retention},
		Exports: &Exports{db: db, clock: now, stores: stores, auth: auth, invoices: invoices, exportBatch: batch},
	}
}

// Now returns the service clock's current time in UTC with microsecond precision, the
// precision every stored timestamp has.
func (s *Service) Now() time.Time { return s.clock.Now() }

// Now returns the clock's current time in UTC with microsecond precision, the precision every
// stored timestamp has.
func (c clock) Now() time.Time { return c().UTC().Truncate(time.Microsecond) }

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
