package credit

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"entgo.io/ent/dialect"

	"github.com/creditd/creditd/ent"
	"github.com/creditd/creditd/tenant"
)

// Scopes an API key may carry (specification, Authentication).
const (
	ScopeReadCredit       = "read_credit"
	ScopeReadApplications = "read_applications"
	ScopeWriteCredit      = "write_credit"
)

// AllScopes lists the scopes in the order they are documented.
var AllScopes = []string{ScopeReadCredit, ScopeReadApplications, ScopeWriteCredit}

// Options configure a Service.
type Options struct {
	// Now is the clock; nil means time.Now. Tests inject one to move time without sleeping.
	Now func() time.Time
	// AfterErase runs after an erasure committed, to purge the erased bytes from the database
	// files (SQLite checkpoints its write-ahead log); nil for none.
	AfterErase func(ctx context.Context) error
	// IdempotencyTTL is how long Idempotency-Key results are remembered; zero means 24 hours.
	IdempotencyTTL time.Duration
}

// Service carries out every operation of the domain on one database.
type Service struct {
	client  *ent.Client
	dialect string
	now     func() time.Time

	afterErase     func(ctx context.Context) error
	idempotencyTTL time.Duration

	// commits runs this process's write transactions on SQLite, which admits one writer at a
	// time anyway: waiting for it is cheaper and fairer than SQLite's busy-retry sleeps, and
	// writes that wait together commit together (group commit, see groupcommit.go).
	commits groupCommit

	// stores caches store rows by ID. A store is never updated or deleted once created (no
	// operation changes one; adding one must drop it from here), so a cached row cannot go
	// stale, and reads of a company need one statement instead of two.
	stores sync.Map // string -> *ent.Store

	// lastUsedWritten remembers when each key's last_used_at was last written by this process,
	// so a busy key costs at most one write a minute.
	lastUsedMu      sync.Mutex
	lastUsedWritten map[string]time.Time
}

// NewService returns a Service over client, whose database speaks dialectName
// (entgo.io/ent/dialect.SQLite or dialect.Postgres).
func NewService(client *ent.Client, dialectName string, opts Options) *Service {
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	ttl := opts.IdempotencyTTL
	if ttl <= 0 {
		ttl = DefaultIdempotencyTTL
	}
	return &Service{client: client, dialect: dialectName, now: now, afterErase: opts.AfterErase, idempotencyTTL: ttl,
		lastUsedWritten: map[string]time.Time{}, commits: groupCommit{client: client}}
}

// Client returns the ent client, for tests and for the server's readiness check.
func (s *Service) Client() *ent.Client { return s.client }

// Now returns the service clock's current time in UTC with microsecond precision, the
// precision every stored timestamp has.
func (s *Service) Now() time.Time { return s.now().UTC().Truncate(time.Microsecond) }

// inTx runs fn in one transaction and commits it when fn returns nil. When ctx already carries
// a transaction (an idempotent write's), fn joins it and the owner commits.
func (s *Service) inTx(ctx context.Context, fn func(tx *ent.Tx) error) (err error) {
	if tx := ent.TxFromContext(ctx); tx != nil {
		return inSavepoint(ctx, tx, fn)
	}
	if s.dialect == dialect.SQLite {
		return s.commits.run(ctx, fn)
	}
	tx, err := s.client.Tx(ctx)
	if err != nil {
		return fmt.Errorf("begin transaction: %w", err)
	}
	defer func() {
		if p := recover(); p != nil {
			_ = tx.Rollback()
			panic(p)
		}
	}()
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// reader is the client for a read: the transaction in ctx when there is one, so that what a
// GraphQL mutation returns under an Idempotency-Key (which runs the whole request in one
// transaction) includes its own writes, else the service's client.
func (s *Service) reader(ctx context.Context) *ent.Client {
	if tx := ent.TxFromContext(ctx); tx != nil {
		return tx.Client()
	}
	return s.client
}

// inSavepoint runs fn inside a savepoint of an enclosing transaction, so that an operation
// joining an idempotent request's transaction is still all-or-nothing: when fn fails, its own
// writes are undone and the request's other operations are kept.
func inSavepoint(ctx context.Context, tx *ent.Tx, fn func(tx *ent.Tx) error) error {
	if _, err := tx.ExecContext(ctx, "SAVEPOINT credit_operation"); err != nil {
		return fmt.Errorf("savepoint: %w", err)
	}
	if err := fn(tx); err != nil {
		if _, rerr := tx.ExecContext(ctx, "ROLLBACK TO SAVEPOINT credit_operation"); rerr != nil {
			return fmt.Errorf("%w (and rolling back to the savepoint failed: %v)", err, rerr)
		}
		_, _ = tx.ExecContext(ctx, "RELEASE SAVEPOINT credit_operation")
		return err
	}
	if _, err := tx.ExecContext(ctx, "RELEASE SAVEPOINT credit_operation"); err != nil {
		return fmt.Errorf("release savepoint: %w", err)
	}
	return nil
}

// requireScope checks that the viewer may use an operation needing scope.
//
// Errors: unauthenticated without a viewer, insufficient_scope without the scope.
func requireScope(ctx context.Context, scope string) error {
	v, ok := tenant.FromContext(ctx)
	if !ok {
		return Errorf(CodeUnauthenticated, "authentication required")
	}
	if !v.HasScope(scope) {
		return Errorf(CodeInsufficientScope, "this call needs scope %s", scope)
	}
	return nil
}

// RequireScope is requireScope for transports that gate a field rather than an operation,
// like GraphQL's contact field.
func RequireScope(ctx context.Context, scope string) error { return requireScope(ctx, scope) }

// viewerStore loads the store of the request's viewer.
func (s *Service) viewerStore(ctx context.Context) (*ent.Store, error) {
	v, ok := tenant.FromContext(ctx)
	if !ok || v.StoreID == "" {
		return nil, Errorf(CodeUnauthenticated, "authentication required")
	}
	st, err := s.storeByID(ctx, s.client, v.StoreID)
	if err != nil {
		return nil, fmt.Errorf("load viewer's store: %w", err)
	}
	return st, nil
}

// storeByID returns a store row, from the cache when it was read before. client is the
// service's client or a transaction's: committed rows are read outside it and cached, and a
// store only the transaction sees (it created it) is read through it and not cached, since the
// transaction may yet roll back. Callers pass the ID of the viewer's store or of a row already
// scoped to it, so the cache never crosses tenants.
func (s *Service) storeByID(ctx context.Context, client *ent.Client, id string) (*ent.Store, error) {
	if st, ok := s.stores.Load(id); ok {
		return st.(*ent.Store), nil
	}
	st, err := s.client.Store.Get(ctx, id)
	if ent.IsNotFound(err) && client != s.client {
		return client.Store.Get(ctx, id)
	}
	if err != nil {
		return nil, err
	}
	s.stores.Store(id, st)
	return st, nil
}

// notFoundOr turns ent's not-found into the contract's not_found for what, and passes other
// errors through.
func notFoundOr(err error, what string) error {
	if ent.IsNotFound(err) {
		return errNotFound(what)
	}
	return err
}

// IsNotFound reports whether err is the contract's not_found.
func IsNotFound(err error) bool { return errors.Is(err, &Error{Code: CodeNotFound}) }

// ListParams are the paging inputs every list takes.
type ListParams struct {
	// Limit is the page size; nil means the default.
	Limit *int
	// Cursor resumes after the last item of a previous page; empty starts at the beginning.
	Cursor string
	// LimitName and CursorName name those inputs in errors; they default to REST's names
	// ("limit", "cursor") and GraphQL sets its own ("first", "after").
	LimitName, CursorName string
}

func (p ListParams) limitName() string {
	if p.LimitName != "" {
		return p.LimitName
	}
	return "limit"
}

// renameCursorErr reports a bad cursor under the transport's name for it.
func (p ListParams) renameCursorErr(err error) error {
	var e *Error
	if p.CursorName != "" && errors.As(err, &e) && e.Param == "cursor" {
		return ParamErrorf(e.Code, p.CursorName, "%s is not a valid cursor for this list", p.CursorName)
	}
	return err
}
