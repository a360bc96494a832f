package credittest

import (
	"context"
	stdsql "database/sql"
	"fmt"
	"sync"
	"time"

	"entgo.io/ent/dialect"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/database"
	"github.com/creditd/creditd/server"
)

// SQLHooks are told of the SQL that the HTTP server's service sends (WithSQLHooks): to record
// statements, count them, or make one fail. A nil hook is skipped.
type SQLHooks struct {
	// Statement is called before each statement, in a transaction or not, including those a
	// transaction sends as raw SQL (savepoints, the numbering of events); an error is returned
	// instead of running it.
	Statement func(query string) error
	// Begin is called once a transaction has begun.
	Begin func()
	// Commit is called before a transaction commits; an error rolls it back and is returned.
	Commit func() error
}

// WithSQLHooks makes the HTTP server's service send its SQL through hooks; the Env's own
// Service (used to set data up) is left alone, so only requests are seen. adjust may change
// the server's configuration further.
func WithSQLHooks(hooks SQLHooks, adjust ...func(*server.Config)) Options {
	return Options{ServerConfig: func(cfg *server.Config) {
		cfg.Service = hookedService(cfg.DB, cfg.Now, hooks)
		for _, a := range adjust {
			a(cfg)
		}
	}}
}

// Hooked returns a second service over the env's database, on its clock, that sends its SQL
// through hooks: to count the statements of the operations a test calls on it (the env's own
// Service, used to set data up, is left alone).
func (e *ServiceEnv) Hooked(hooks SQLHooks) *credit.Service {
	return hookedService(e.DB, e.Clock.Now, hooks)
}

func hookedService(db *database.DB, now func() time.Time, hooks SQLHooks) *credit.Service {
	hooked := db.WithDriver(func(d dialect.Driver) dialect.Driver { return hookedDriver{Driver: d, hooks: hooks} })
	return credit.New(hooked, credit.Options{Now: now})
}

// SQLLog records the statements that the HTTP server's service sends (its Options), and can
// make some of them fail. Safe for concurrent use.
type SQLLog struct {
	// Transactions also records BEGIN and COMMIT as statements.
	Transactions bool
	// Fail, when set, is asked before each statement and before each COMMIT; a non-nil
	// error is returned instead of running it. Set it only while no request runs.
	Fail func(statement string) error

	mu         sync.Mutex
	statements []string
}

// Options are WithSQLHooks with the log's hooks.
func (l *SQLLog) Options(adjust ...func(*server.Config)) Options {
	hooks := SQLHooks{Statement: l.record, Commit: l.commit}
	if l.Transactions {
		hooks.Begin = func() { l.append("BEGIN") }
	}
	return WithSQLHooks(hooks, adjust...)
}

func (l *SQLLog) record(statement string) error {
	l.append(statement)
	if l.Fail != nil {
		return l.Fail(statement)
	}
	return nil
}

func (l *SQLLog) commit() error {
	if l.Transactions {
		l.append("COMMIT")
	}
	if l.Fail != nil {
		return l.Fail("COMMIT")
	}
	return nil
}

func (l *SQLLog) append(statement string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.statements = append(l.statements, statement)
}

// Reset forgets what was recorded.
func (l *SQLLog) Reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.statements = nil
}

// Snapshot returns what was recorded since the last Reset.
func (l *SQLLog) Snapshot() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.statements...)
}

func (h SQLHooks) statement(query string) error {
	if h.Statement == nil {
		return nil
	}
	return h.Statement(query)
}

type hookedDriver struct {
	dialect.Driver
	hooks SQLHooks
}

func (d hookedDriver) Exec(ctx context.Context, query string, args, v any) error {
	if err := d.hooks.statement(query); err != nil {
		return err
	}
	return d.Driver.Exec(ctx, query, args, v)
}

func (d hookedDriver) Query(ctx context.Context, query string, args, v any) error {
	if err := d.hooks.statement(query); err != nil {
		return err
	}
	return d.Driver.Query(ctx, query, args, v)
}

func (d hookedDriver) Tx(ctx context.Context) (dialect.Tx, error) {
	tx, err := d.Driver.Tx(ctx)
	if err != nil {
		return nil, err
	}
	if d.hooks.Begin != nil {
		d.hooks.Begin()
	}
	return hookedTx{Tx: tx, hooks: d.hooks}, nil
}

type hookedTx struct {
	dialect.Tx
	hooks SQLHooks
}

func (t hookedTx) Exec(ctx context.Context, query string, args, v any) error {
	if err := t.hooks.statement(query); err != nil {
		return err
	}
	return t.Tx.Exec(ctx, query, args, v)
}

func (t hookedTx) Query(ctx context.Context, query string, args, v any) error {
	if err := t.hooks.statement(query); err != nil {
		return err
	}
	return t.Tx.Query(ctx, query, args, v)
}

// ExecContext passes on a statement sent as raw SQL in a transaction (savepoints).
func (t hookedTx) ExecContext(ctx context.Context, query string, args ...any) (stdsql.Result, error) {
	if err := t.hooks.statement(query); err != nil {
		return nil, err
	}
	ex, ok := t.Tx.(interface {
		ExecContext(context.Context, string, ...any) (stdsql.Result, error)
	})
	if !ok {
		return nil, fmt.Errorf("the transaction's driver has no ExecContext")
	}
	return ex.ExecContext(ctx, query, args...)
}

// QueryContext passes on a query sent as raw SQL in a transaction (the numbering of events).
func (t hookedTx) QueryContext(ctx context.Context, query string, args ...any) (*stdsql.Rows, error) {
	if err := t.hooks.statement(query); err != nil {
		return nil, err
	}
	q, ok := t.Tx.(interface {
		QueryContext(context.Context, string, ...any) (*stdsql.Rows, error)
	})
	if !ok {
		return nil, fmt.Errorf("the transaction's driver has no QueryContext")
	}
	return q.QueryContext(ctx, query, args...)
}

func (t hookedTx) Commit() error {
	if t.hooks.Commit != nil {
		if err := t.hooks.Commit(); err != nil {
			_ = t.Tx.Rollback()
			return err
		}
	}
	return t.Tx.Commit()
}
