// Package bench measures creditd under load: it seeds a large dataset straight into a SQLite
// file, runs `creditd serve` on it as a separate process, loads it over loopback with vegeta,
// and compares every scenario with a bare net/http server that returns the same bytes.
package bench

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/database"
	"github.com/creditd/creditd/ent/company"
	"github.com/creditd/creditd/ids"
	"github.com/creditd/creditd/tenant"
)

// Size says how much data Seed writes.
type Size struct {
	// Stores is the number of stores, the large one included.
	Stores int `json:"stores"`
	// LargeCompanies is the number of companies in the large store, the two with long ledgers
	// included.
	LargeCompanies int `json:"large_companies"`
	// BigLedger and MediumLedger are the ledger lengths of the large store's two long ledgers.
	BigLedger    int `json:"big_ledger"`
	MediumLedger int `json:"medium_ledger"`
	// EntriesPerCompany is the ledger length of the large store's other companies.
	EntriesPerCompany int `json:"entries_per_company"`
	// SmallCompanies and SmallEntries shape each of the other stores.
	SmallCompanies int `json:"small_companies"`
	SmallEntries   int `json:"small_entries"`
	// HoldEvery puts a manual hold on every HoldEvery-th company of the large store.
	HoldEvery int `json:"hold_every"`
}

// FullSize is the dataset of issue #8: 1,000 stores, one with 10,000 companies, one company with
// 1,000,000 ledger entries and one with 10,000.
var FullSize = Size{Stores: 1000, LargeCompanies: 10000, BigLedger: 1_000_000, MediumLedger: 10_000,
	EntriesPerCompany: 12, SmallCompanies: 10, SmallEntries: 6, HoldEvery: 10}

// TinySize is a dataset small enough for the test suite.
var TinySize = Size{Stores: 3, LargeCompanies: 60, BigLedger: 2000, MediumLedger: 200,
	EntriesPerCompany: 6, SmallCompanies: 2, SmallEntries: 3, HoldEvery: 10}

// Dataset is what the scenarios need to know about a seeded database: the large store, a key
// for it, and IDs to ask for. It is saved beside the database so a later run can reuse it.
type Dataset struct {
	Size Size `json:"size"`
	// Format is the seeder's seedFormat when it seeded: a dataset of an older seeder is
	// seeded again.
	Format       int    `json:"format"`
	StoreID      string `json:"store_id"`
	Secret       string `json:"secret"`
	BigCompany   string `json:"big_company"`
	MediumLedger string `json:"medium_company"`
	// Companies are the large store's company IDs.
	Companies []string `json:"companies"`
	// BigAfter and MediumAfter are entry IDs spread evenly over the two long ledgers, for
	// after= requests.
	BigAfter    []string `json:"big_after"`
	MediumAfter []string `json:"medium_after"`
	// SeedSeconds is how long seeding took.
	SeedSeconds float64 `json:"seed_seconds"`
	// ShopDomain and PlatformSecret connect the large store to its shop (contract §13), for
	// the platform scenarios; PlatformCompanies are platform company GIDs of its companies.
	ShopDomain        string   `json:"shop_domain"`
	PlatformSecret    string   `json:"platform_secret"`
	PlatformCompanies []string `json:"platform_companies"`
	// PlatformKey is the master key the secret is sealed with on PostgreSQL, where serve reads
	// it from CREDITD_WEBHOOK_KEY (a SQLite database keeps it in the file beside it).
	PlatformKey string `json:"platform_key,omitempty"`
}

// seedFormat numbers the seeder's output; it grows when the rows it writes change (2: paid
// invoices carry settled_at, which payment behaviour reads).
const seedFormat = 2

// datasetPath is where a database's Dataset is kept.
func datasetPath(dbPath string) string { return dbPath + ".bench.json" }

// LoadDataset returns the dataset saved beside dbPath when it was seeded with size, or
// ok=false when there is none (or a different one) and the database must be seeded afresh.
func LoadDataset(dbPath string, size Size) (Dataset, bool) {
	b, err := os.ReadFile(datasetPath(dbPath))
	if err != nil {
		return Dataset{}, false
	}
	var ds Dataset
	if json.Unmarshal(b, &ds) != nil || ds.Size != size || ds.Format != seedFormat {
		return Dataset{}, false
	}
	if _, err := os.Stat(dbPath); err != nil {
		return Dataset{}, false
	}
	return ds, true
}

// afterSamples is how many entry IDs of each long ledger are kept for after= requests.
const afterSamples = 2000

// Seed creates a fresh database at dbPath (removing any file there) with the schema of this
// binary and size's data, and returns the dataset. Rows are written with multi-row INSERTs in
// large transactions with durability off (the file is synced once at the end), and they keep
// the model's invariants: each company's outstanding is the sum of its ledger, ledger_seq is
// the number of its entries, sequence numbers are gapless from 1, every order has its invoice,
// and no invoice is overdue, so the server's sweep has nothing to do.
func Seed(ctx context.Context, dbPath string, size Size) (Dataset, error) {
	start := time.Now()
	for _, suffix := range []string{"", "-wal", "-shm", ".bench.json"} {
		if err := os.Remove(dbPath + suffix); err != nil && !os.IsNotExist(err) {
			return Dataset{}, err
		}
	}
	if err := migrate(ctx, dbPath); err != nil {
		return Dataset{}, err
	}

	raw, err := sql.Open("sqlite3", "file:"+dbPath+"?_journal_mode=WAL&_synchronous=OFF&_foreign_keys=off&_txlock=immediate")
	if err != nil {
		return Dataset{}, err
	}
	raw.SetMaxOpenConns(1)
	defer raw.Close()
	if _, err := raw.ExecContext(ctx, "PRAGMA cache_size = -262144"); err != nil {
		return Dataset{}, err
	}
	ds, err := newSeeder(ctx, &sqliteWriter{ctx: ctx, db: raw}, size).run()
	if err != nil {
		return Dataset{}, err
	}
	if _, err := raw.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		return Dataset{}, err
	}
	raw.Close()

	if err := createKey(ctx, dbPath, &ds); err != nil {
		return Dataset{}, err
	}
	ds.Size, ds.Format = size, seedFormat
	ds.SeedSeconds = time.Since(start).Seconds()
	b, err := json.MarshalIndent(ds, "", " ")
	if err != nil {
		return Dataset{}, err
	}
	return ds, os.WriteFile(datasetPath(dbPath), b, 0o600)
}

// migrate gives the database at dsn this binary's schema, as `creditd migrate` does.
func migrate(ctx context.Context, dsn string) error {
	db, err := database.Open(ctx, dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	return db.Migrate(ctx)
}

// createKey makes the large store's API key through the service, so its secret and hash are
// made exactly as in production, and keeps the secret in ds.
func createKey(ctx context.Context, dsn string, ds *Dataset) error {
	db, err := database.Open(ctx, dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	svc := newService(db, dsn)
	staff := tenant.Staff(ctx, ds.StoreID, "creditbench")
	key, err := svc.Keys.Create(staff, "bench", credit.AllScopes)
	if err != nil {
		return err
	}
	ds.Secret = key.Secret
	// The platform connector's scenarios: the store connected to its shop, and companies the
	// platform's orders and credit checks name.
	ds.ShopDomain, ds.PlatformSecret = "bench.myplatform.com", "shpss_"+ids.Random(32)
	if _, err := svc.Platform.Connect(staff, ds.ShopDomain, ds.PlatformSecret); err != nil {
		return fmt.Errorf("connect the platform: %w", err)
	}
	if database.IsPostgres(dsn) {
		ds.PlatformKey = os.Getenv("CREDITD_WEBHOOK_KEY")
	}
	ds.PlatformCompanies, err = db.Ent().Company.Query().Where(company.StoreID(ds.StoreID)).Limit(1000).
		Select(company.FieldPlatformCompanyGid).Strings(staff)
	return err
}

// rowWriter writes the rows a seeder buffers into one database.
type rowWriter interface {
	// batch is how many rows of a table are buffered before write is called.
	batch() int
	// write writes t's buffered rows; the seeder empties the buffer afterwards.
	write(t *table) error
	// finish makes everything written visible.
	finish() error
}

// sqliteWriter writes rows with multi-row INSERTs in transactions of about 200,000 rows.
type sqliteWriter struct {
	ctx  context.Context
	db   *sql.DB
	tx   *sql.Tx
	rows int // rows written in the current transaction
}

// batch keeps a statement under SQLite's limit of 32,766 bound parameters.
func (w *sqliteWriter) batch() int { return 500 }

func (w *sqliteWriter) write(t *table) error {
	row := "(" + strings.TrimSuffix(strings.Repeat("?,", len(t.columns)), ",") + ")"
	q := "INSERT INTO " + t.name + " (" + strings.Join(t.columns, ",") + ") VALUES " +
		strings.TrimSuffix(strings.Repeat(row+",", t.n), ",")
	if w.tx == nil {
		tx, err := w.db.BeginTx(w.ctx, nil)
		if err != nil {
			return err
		}
		w.tx = tx
	}
	if _, err := w.tx.ExecContext(w.ctx, q, t.args...); err != nil {
		return fmt.Errorf("insert into %s: %w", t.name, err)
	}
	w.rows += t.n
	if w.rows >= 200_000 {
		return w.finish()
	}
	return nil
}

func (w *sqliteWriter) finish() error {
	if w.tx == nil {
		return nil
	}
	err := w.tx.Commit()
	w.tx, w.rows = nil, 0
	return err
}

type seeder struct {
	ctx  context.Context
	w    rowWriter
	rng  *rand.Rand
	now  time.Time
	size Size

	orderNo   int64
	companyNo int64
	tables    map[string]*table
}

// newSeeder returns a seeder of size's data into w. Its generator has a fixed seed, so every
// database seeded with one size holds the same rows, IDs included.
func newSeeder(ctx context.Context, w rowWriter, size Size) *seeder {
	return &seeder{ctx: ctx, w: w, rng: rand.New(rand.NewPCG(1, 2)), now: time.Now().UTC().Truncate(time.Microsecond), size: size}
}

// table buffers rows of one table.
type table struct {
	name    string
	columns []string
	args    []any
	n       int
}

func (s *seeder) table(name string, columns ...string) *table {
	if s.tables == nil {
		s.tables = map[string]*table{}
	}
	t, ok := s.tables[name]
	if !ok {
		t = &table{name: name, columns: columns}
		s.tables[name] = t
	}
	return t
}

func (s *seeder) insert(t *table, values ...any) error {
	if len(values) != len(t.columns) {
		return fmt.Errorf("bench: %s takes %d values, got %d", t.name, len(t.columns), len(values))
	}
	t.args = append(t.args, values...)
	t.n++
	if t.n == s.w.batch() {
		return s.flush(t)
	}
	return nil
}

func (s *seeder) flush(t *table) error {
	if t.n == 0 {
		return nil
	}
	if err := s.w.write(t); err != nil {
		return err
	}
	t.args, t.n = t.args[:0], 0
	return nil
}

func (s *seeder) flushAll() error {
	for _, t := range s.tables {
		if err := s.flush(t); err != nil {
			return err
		}
	}
	return s.w.finish()
}

// id mints an ID of the production form (prefix, underscore, 22 base62 characters) from the
// seeder's deterministic generator, much faster than crypto/rand.
func (s *seeder) id(prefix string) string {
	var b [22]byte
	for i := range b {
		b[i] = ids.Base62[s.rng.IntN(len(ids.Base62))]
	}
	return prefix + "_" + string(b[:])
}

func (s *seeder) run() (Dataset, error) {
	var ds Dataset
	stores := s.table("stores", "id", "name", "currency", "buffer_percent", "cursor_secret", "created_at")
	for i := 0; i < s.size.Stores; i++ {
		id := s.id("st")
		secret := make([]byte, 32)
		for j := range secret {
			secret[j] = byte(s.rng.Uint32())
		}
		if err := s.insert(stores, id, fmt.Sprintf("Bench store %d", i), "EUR", credit.DefaultBufferPercent, secret, s.now.Add(-3*365*24*time.Hour)); err != nil {
			return ds, err
		}
		if i == 0 {
			ds.StoreID = id
			continue
		}
		for c := 0; c < s.size.SmallCompanies; c++ {
			if _, _, err := s.company(id, s.size.SmallEntries, false); err != nil {
				return ds, err
			}
		}
	}
	for c := 0; c < s.size.LargeCompanies; c++ {
		entries := s.size.EntriesPerCompany
		switch c {
		case 0:
			entries = s.size.BigLedger
		case 1:
			entries = s.size.MediumLedger
		}
		hold := s.size.HoldEvery > 0 && c%s.size.HoldEvery == s.size.HoldEvery-1
		id, samples, err := s.company(ds.StoreID, entries, hold)
		if err != nil {
			return ds, err
		}
		ds.Companies = append(ds.Companies, id)
		switch c {
		case 0:
			ds.BigCompany, ds.BigAfter = id, samples
		case 1:
			ds.MediumLedger, ds.MediumAfter = id, samples
		}
	}
	return ds, s.flushAll()
}

// company writes one company with n ledger entries and returns its ID and up to afterSamples
// entry IDs spread evenly over its ledger. The ledger repeats order, payment of that order,
// adjustment; it ends some hours before now, so an order left unpaid at the end is not due yet.
func (s *seeder) company(storeID string, n int, hold bool) (string, []string, error) {
	companies := s.table("companies", "id", "name", "platform_company_gid", "payment_terms_days", "credit_limit",
		"outstanding", "ledger_seq", "unapplied_credit", "timeline_seq", "hold_kind", "hold_note", "hold_placed_at",
		"hold_placed_by", "created_at", "updated_at", "store_id",
		"name_key", "outstanding_key", "credit_limit_key", "available_key", "utilization_key")
	entries := s.table("ledger_entries", "id", "seq", "kind", "amount", "balance_after", "platform_order_gid", "note", "occurred_at",
		"created_at", "company_id", "store_id")
	invoices := s.table("invoices", "id", "company_id", "ledger_entry_id", "seq", "platform_order_gid", "amount",
		"open_amount", "open", "due_at", "settled_at", "store_id")
	events := s.table("timeline_events", "id", "seq", "type", "actor_type", "actor_label", "occurred_at", "data",
		"company_id", "store_id")

	id := s.id("co")
	const terms = 30
	span := 2 * 365 * 24 * time.Hour
	if n < 100 {
		span = 90 * 24 * time.Hour
	}
	end := s.now.Add(-time.Duration(1+s.rng.IntN(72)) * time.Hour)
	step := time.Duration(0)
	if n > 1 {
		step = span / time.Duration(n-1)
	}
	var samples []string
	sampleEvery := max(1, n/afterSamples)
	outstanding := decimal.Zero
	var order struct {
		entryID, gid string
		amount       decimal.Decimal
		seq          int64
		at           time.Time
	}
	// writeInvoice writes the invoice of the last order, paid at settled (nil: open).
	writeInvoice := func(settled any) error {
		open := settled == nil
		openAmount := decimal.Zero
		if open {
			openAmount = order.amount
		}
		return s.insert(invoices, s.id("inv"), id, order.entryID, order.seq, order.gid, order.amount, openAmount,
			open, order.at.Add(terms*24*time.Hour), settled, storeID)
	}
	var last time.Time
	for i := 0; i < n; i++ {
		seq := int64(i + 1)
		at := end.Add(-time.Duration(n-1-i) * step)
		last = at
		entryID := s.id("le")
		var kind string
		var amount decimal.Decimal
		var gid, note any
		switch i % 3 {
		case 0:
			kind = credit.KindOrderPlaced
			amount = decimal.New(int64(10_000+s.rng.IntN(490_000)), -2)
			s.orderNo++
			g := fmt.Sprintf("gid://platform/Order/%d", s.orderNo)
			gid = g
			order.entryID, order.gid, order.amount, order.seq, order.at = entryID, g, amount, seq, at
		case 1:
			kind = credit.KindPayment
			amount = order.amount.Neg()
			gid = order.gid
			if err := writeInvoice(at); err != nil {
				return "", nil, err
			}
			order.entryID = ""
		default:
			kind = credit.KindAdjustment
			amount = decimal.New(int64(s.rng.IntN(20_000)+1), -2)
			note = "bench adjustment"
		}
		outstanding = outstanding.Add(amount)
		if err := s.insert(entries, entryID, seq, kind, amount, outstanding, gid, note, at, at, id, storeID); err != nil {
			return "", nil, err
		}
		if i%sampleEvery == 0 && len(samples) < afterSamples {
			samples = append(samples, entryID)
		}
	}
	if order.entryID != "" {
		if err := writeInvoice(nil); err != nil {
			return "", nil, err
		}
	}
	updated := last
	if n == 0 {
		updated = end
	}
	limit := decimal.New(int64(500_000+s.rng.IntN(5_000_000)), -2)
	var holdKind, holdNote, holdAt, holdBy any
	timelineSeq := 0
	if hold {
		updated = end.Add(time.Minute)
		holdKind, holdNote, holdAt, holdBy = "manual", "credit review", updated, "bench staff"
		timelineSeq = 1
		if err := s.insert(events, s.id("ev"), 1, credit.TimelineHoldPlaced, "staff", "bench staff", updated,
			`{"kind":"manual","note":"credit review"}`, id, storeID); err != nil {
			return "", nil, err
		}
	}
	// Numbered, not drawn: a platform company GID is unique within its store (contract §13).
	s.companyNo++
	name := fmt.Sprintf("Company %s", id[3:11])
	keys := credit.OrderKeysOf(name, limit, outstanding, credit.DefaultBufferPercent, "EUR")
	err := s.insert(companies, id, name, fmt.Sprintf("gid://platform/Company/%d", 100000+s.companyNo),
		terms, limit, outstanding, int64(n), decimal.Zero, int64(timelineSeq), holdKind, holdNote, holdAt, holdBy,
		end.Add(-span-time.Hour), updated, storeID,
		keys.Name, keys.Outstanding, keys.CreditLimit, keys.Available, keys.Utilization)
	return id, samples, err
}
