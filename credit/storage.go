package credit

import (
	"context"
	"time"

	"entgo.io/ent/dialect/sql"
	"github.com/shopspring/decimal"

	"github.com/creditd/creditd/ent"
)

// What the domain asks of the database besides ent's generated client, one interface per
// concept. The domain states each by what it means (a transaction, a row lock, an exact sum
// of money, the rows above a sequence number per key) and package database says how each
// database does it: no dialect is named here. Storage is all of them, the one thing New
// takes; a part of the domain that needs less can take the capability it uses.

// condition is what a query's Where takes: the type of ent's predicates, which the
// capabilities below return for the domain to add to its queries.
type condition = func(*sql.Selector)

// noCondition is the condition that keeps every row.
func noCondition(*sql.Selector) {}

// doNothingOnConflict is the option of ent's OnConflict that makes a one-row insert an
// INSERT … ON CONFLICT DO NOTHING, whose answer UniqueIndexes.InsertSkipped reads.
func doNothingOnConflict() sql.ConflictOption { return sql.DoNothing() }

// Transactions is the core: the ent client, write transactions, and the client a read uses.
type Transactions interface {
	// Ent returns the database's ent client.
	Ent() *ent.Client
	// InTx runs fn in a write transaction, joining ctx's transaction when it carries one (fn's
	// failure then undoes fn's writes only), and returns once fn's changes are durable or
	// rolled back.
	InTx(ctx context.Context, fn func(tx *ent.Tx) error) error
	// Join returns ctx carrying tx, a transaction of InTx that has written nothing yet, for
	// operations to join with InTx: each one that fails undoes its own writes only.
	Join(ctx context.Context, tx *ent.Tx) context.Context
	// WriteOne runs fn, which makes a single write statement, as its own transaction, in
	// as few round trips as the database allows.
	WriteOne(ctx context.Context, fn func(client *ent.Client) error) error
	// Reader returns the client to read with: ctx's transaction's, else the database's.
	Reader(ctx context.Context) *ent.Client
	// WritersTakeTurns reports whether the database runs one write transaction at a time
	// (in every process on it): what a write transaction reads then stays true until it
	// commits, and nothing needs claiming ahead of it.
	WritersTakeTurns() bool
	// PlanForArguments returns ctx for reads whose best plan depends on their arguments'
	// values (a page of one store's companies: the large store has 10,000, most have ten):
	// the database plans each read made with it, outside a transaction, for its own
	// arguments every time, never with a plan made for average arguments and kept.
	PlanForArguments(ctx context.Context) context.Context
	// CompaniesByKey, given to a query of companies whose Where names their keys, makes the
	// database look them up by key, not walk the store's companies for them.
	CompaniesByKey() func(*sql.Selector)
}

// RowLocks is how writers of the same rows take turns. Where the database runs writers
// concurrently these lock rows; where writers take turns anyway they add nothing and cost no
// statement.
type RowLocks interface {
	// ForUpdate, given to a query's Where, locks the rows the query reads until the
	// transaction ends.
	ForUpdate(s *sql.Selector)
	// TakeStoreTurn makes tx wait for the turn of the store's writers that may lock several
	// companies, before it locks any, and keeps it until tx ends; writers of one company pass
	// beside it. Errors: database.ErrLockOrder (tx locked a company already).
	TakeStoreTurn(ctx context.Context, tx *ent.Tx, storeID string) error
	// BeforeCompanyLock is said before tx locks a company's row: where writers run
	// concurrently, a transaction locks one company, or several only under its store's turn,
	// so that no two writers wait for each other's companies. Errors: database.ErrLockOrder.
	BeforeCompanyLock(tx *ent.Tx, companyID string) error
}

// NumberedRows writes the rows numbered without gaps by a counter.
type NumberedRows interface {
	// InsertNumbered inserts a row of a table numbered by a counter (events: the store's
	// event_seq; timeline_events: the company's timeline_seq) with the counter's next value as
	// its seq, and returns that value. The row must name its store, which the viewer must be
	// allowed to write in (the rule ent's hook applies to every other new row).
	InsertNumbered(ctx context.Context, tx *ent.Tx, table string, columns []string, values []any) (int64, error)
	// InsertNumberedAtCommit is InsertNumbered for a row whose number nothing in tx reads:
	// where writers run concurrently, it is inserted just before tx commits, so that its
	// counter's row (the store's, which every writer of the store takes turns on) is locked
	// for that statement and the commit only.
	InsertNumberedAtCommit(ctx context.Context, tx *ent.Tx, table string, columns []string, values []any) error
}

// UniqueIndexes says what a write ran into: uniqueness is decided by the index and each
// violation mapped by name, never checked by a read before the write.
type UniqueIndexes interface {
	// ViolatedIndex names the unique index (as ent/schema names it) that err, a failed
	// write's error, violated, or "" when it is no unique violation.
	ViolatedIndex(err error) string
	// InsertSkipped reports whether err is a one-row INSERT … ON CONFLICT DO NOTHING's answer
	// when it inserted nothing; where the database does not say (err is nil), the caller reads
	// the row to know.
	InsertSkipped(err error) bool
}

// KeyChangeCount is the clock of the authentication cache (see Authenticate): a count that
// every change able to end an authentication increases.
type KeyChangeCount interface {
	// KeyChanges returns a count that every change able to end an authentication (a key
	// revoked, a secret's expiry set or moved), by any process, increases before its
	// transaction commits.
	KeyChanges(ctx context.Context) (int64, error)
	// KeyChangesAre, given to a query's Where, keeps its rows only while the count of key
	// changes is n, so that the query confirms a key cached under n in its own statement.
	KeyChangesAre(n int64) func(*sql.Selector)
}

// MoneySums computes with money columns in SQL, exactly: a decimal is never a float.
type MoneySums interface {
	// SumMoney is the SQL expression of the exact sum of the decimal column col (qualified by
	// the query's selector) over the rows where cond holds, as text that ParseMoneySum reads.
	SumMoney(col string, cond func(*sql.Builder)) sql.Querier
	// ParseMoneySum reads SumMoney's text; the empty text is zero. Its error is a defect.
	ParseMoneySum(text string) (decimal.Decimal, error)
	// MoneyIsNotZero is the condition that the decimal column col is not zero.
	MoneyIsNotZero(col string) *sql.Predicate
}

// PackedReads reads the rows of the lists the API serves most (pages of companies, ledger
// pages) in one column per row, which costs a fraction of the plain read's calls into the
// driver. The columns are named (any of the table's, in any order) and should be a
// package-level slice, whose address keys the remembered statement text; the structs'
// other fields stay zero. The result is the plain read's, row for row. The query is handed
// over: it is run as it is, without a copy, and must not be used again.
type PackedReads interface {
	// ReadCompanies runs q and returns its companies with columns.
	ReadCompanies(ctx context.Context, q *ent.CompanyQuery, columns []string) ([]*ent.Company, error)
	// ReadLedgerEntries runs q and returns its ledger entries with columns.
	ReadLedgerEntries(ctx context.Context, q *ent.LedgerEntryQuery, columns []string) ([]*ent.LedgerEntry, error)
}

// SeqRanges selects, in one statement, a range of sequence numbers per key.
type SeqRanges interface {
	// SeqAbove, given to a query's Where, keeps the rows whose keyColumn is keys[i] and whose
	// seqColumn is above above[i], for some i, in a statement whose text is the same for any
	// number of keys.
	SeqAbove(keyColumn, seqColumn string, keys []string, above []int64) func(*sql.Selector)
	// RowsAfter, given to a query's Where, keeps the rows after (key, seq) in the order of
	// (keyColumn, seqColumn), in a form that starts an index's range scan there (an export
	// reads the ledger in batches this way).
	RowsAfter(keyColumn, seqColumn, key string, seq int64) func(*sql.Selector)
	// FirstOfEach, given to a query's Where, keeps the first n rows by orderColumn of each
	// value of keyColumn in keys, among the rows where holds (nil: all), in one statement.
	FirstOfEach(keyColumn, orderColumn string, keys []string, n int, where func(*sql.Selector)) func(*sql.Selector)
}

// Keysets orders a list by a column and reads it from a cursor on, for the keys ent's
// generated orders cannot state.
type Keysets interface {
	// AfterKey, given to a query's Where, keeps the rows after (key, id) in the order of
	// column then idColumn, descending with desc; with emptyLast the empty key comes after
	// all others.
	AfterKey(column, key, idColumn, id string, desc, emptyLast bool) func(*sql.Selector)
	// EmptyLast, given to a query's Order before the column's own order, puts the rows whose
	// column is empty after all others.
	EmptyLast(column string) func(*sql.Selector)
}

// ReceivableSums reads the receivables' figures, each in one statement whatever the number of
// companies and invoices. Each is given to the Aggregate of a grouped query and selects
// columns by the names given here, which the caller scans.
type ReceivableSums interface {
	// AgingSums, for a query of invoices grouped by the invoice column groupBy, selects per
	// group: its key as "k"; as "b0" to "b4" the exact sums (SumMoney's text) of open_amount
	// of the invoices due on or after bounds[0], before bounds[i-1] and on or after bounds[i]
	// (i = 1, 2, 3), and before bounds[3]; and as "n" the number of distinct companies with an
	// invoice due before bounds[0].
	AgingSums(groupBy string, bounds [4]time.Time) func(*sql.Selector) string
	// OutstandingSums, for a query of companies grouped by store_id, selects per store its
	// ID as "k" and as "s" the exact sum (SumMoney's text) of the companies' outstanding
	// balances.
	OutstandingSums() func(*sql.Selector) string
}

// PaymentFigures reads what payment behaviour is computed from (contract §17): a page of
// companies' invoices with what the invoice table does not hold, and the store's figures
// summed by the database. Each is one statement whatever the number of companies and
// invoices.
type PaymentFigures interface {
	// InvoicesSinceOldestOpen, given to a query of invoices' Where, keeps the invoices whose
	// seq is at least that of their company's oldest open invoice.
	InvoicesSinceOldestOpen() func(*sql.Selector)
	// IssueAndCancellation, given to the Aggregate of a Select of invoices, selects as
	// "occurred_at" the issue time of each invoice (its order entry's) and as "cancelled"
	// whether it is closed and its order has a cancellation entry.
	IssueAndCancellation() func(*sql.Selector) string
	// PaidSums runs q, a query of invoices, and returns over those not cancelled that have
	// settled_at: their number, the sum of their amounts, that of the amounts settled by their
	// due date, and the sum of amount × the microseconds from due_at to settled_at, exactly.
	PaidSums(ctx context.Context, q *ent.InvoiceQuery) (n int, paid, onTime, weighted decimal.Decimal, err error)
	// IssuedByDay runs q, a query of store storeID's invoices, and returns, over the invoices
	// issued since its oldest open one was, the amounts invoiced per day back from now (day k
	// is [now − k days, now − (k−1) days), day 1 also holding now; cancelled invoices are not
	// sales), the earliest day with any, and the open amounts' total.
	IssuedByDay(ctx context.Context, q *ent.InvoiceQuery, storeID string, now time.Time) (byDay map[int64]decimal.Decimal, last int64, open decimal.Decimal, err error)
}

// IndexedConditions are conditions on a query's own columns written so that the database
// seeks its indexes by them.
type IndexedConditions interface {
	// InvoicesOpen, given to a query of invoices' Where, keeps the invoices whose open column
	// is open, so that an index led by (company_id, open) or by open is sought through it.
	// ent writes a boolean equality as the bare column ("open", "NOT open"), which SQLite does
	// not take as an equality: a company's open invoices were found by reading all its
	// invoices (invoice_company_id_open_seq used for company_id only), once per adjustment and
	// once per invoice in a page's payment behaviour, and a store's open invoices (collections,
	// overview, receivables, the sweeps) by reading every invoice of every store, where the
	// index on (open, due_at) holds the open ones (issue 40: the large store's open invoices
	// by due date, 40 → 3 ms in a dataset where few are open). Every read of open invoices uses it (database's
	// TestOpenInvoicesAreSought). A read of a store's closed invoices, most of them, keeps
	// ent's: there a scan is faster than the index (store_behaviour.go).
	InvoicesOpen(open bool) func(*sql.Selector)
}

// Filters are the conditions that read another table than the query's own (a subquery),
// each given to a query's Where; the query's own conditions, the tenant's among them, still
// apply.
type Filters interface {
	// KeysWithLiveSecret keeps the API keys with a secret of hash that has not expired by now,
	// looking the hash up once.
	KeysWithLiveSecret(hash string, now time.Time) func(*sql.Selector)
	// WebhookEndpointsDue keeps the webhook endpoints that may have a delivery due: their
	// store has events past their cursor, or they have a pending delivery whose time has come
	// by now.
	WebhookEndpointsDue(now time.Time) func(*sql.Selector)
	// RemindersOfOpenInvoices keeps the invoice reminders of store storeID's invoices that are
	// still open.
	RemindersOfOpenInvoices(storeID string) func(*sql.Selector)
	// InvoicesOfOverdueCompanies keeps the invoices of the companies with an open invoice due
	// before now.
	InvoicesOfOverdueCompanies(now time.Time) func(*sql.Selector)
	// ReceivableCompanies keeps the companies with a balance that is not zero or an open
	// invoice.
	ReceivableCompanies() func(*sql.Selector)
}

// Search finds text inside a column through an index.
type Search interface {
	// Contains, given to a query's Where, keeps the rows whose column contains key. scope is
	// the value of scopeColumn the query's rows all have (the viewer's store), which an index
	// on (scopeColumn, column) needs to be read by range; it filters nothing the query does
	// not.
	Contains(column, key, scopeColumn, scope string) func(*sql.Selector)
}

// Erasure makes erased data unrecoverable.
type Erasure interface {
	// PurgeErased makes values overwritten by an erasure unrecoverable from the files.
	PurgeErased(ctx context.Context) error
}

// Snapshots reads the database as of one moment, and keeps work that must not overlap from
// running twice at once, across every process on the database.
type Snapshots interface {
	// ReadSnapshot runs fn with a context whose reads (Reader) all see the database as of one
	// moment, in one read-only transaction that ends when fn returns or ctx ends.
	ReadSnapshot(ctx context.Context, fn func(ctx context.Context) error) error
	// TryLock takes the lock named name across every process on the database, without
	// waiting: ok is false when another holds it. release gives it back; the lock also ends
	// with the process that holds it.
	TryLock(ctx context.Context, name string) (release func(), ok bool, err error)
}
