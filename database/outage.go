package database

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/mattn/go-sqlite3"
)

// Outages (contract §3 and §7): every way a driver says that the database is gone, or cannot
// take a write, is classified here, once, so that every transport answers it 503 unavailable
// with Retry-After and never 500. tests: outage_test.go produces each of them from a real
// database (a terminated backend, a link closed by toxiproxy, a size-limited or read-only
// SQLite file, a statement timeout).

// ErrUnavailable marks an error as a database outage: wrap it (fmt.Errorf("...: %w: %v",
// ErrUnavailable, err)) where a failure is known to be one, such as a failed readiness ping.
var ErrUnavailable = errors.New("the database is unavailable")

// IsUnavailable reports whether err means the database could not be reached, lost the
// connection, could not take the write (a full disk, an I/O error, a read-only file) or did
// not answer before the work's deadline, as opposed to refusing a statement: the request may
// succeed if retried. It is the one place that knows the drivers' error types.
func IsUnavailable(err error) bool {
	if err == nil {
		return false
	}
	var opErr *net.OpError
	var connectErr *pgconn.ConnectError
	var sqliteErr sqlite3.Error
	var pgErr *pgconn.PgError
	switch {
	case errors.Is(err, ErrUnavailable):
		return true
	case errors.Is(err, driver.ErrBadConn), errors.Is(err, sql.ErrConnDone):
		// database/sql's own words for a connection it found broken.
		return true
	case errors.Is(err, context.DeadlineExceeded):
		// The work's deadline (serve --db-timeout) passed while the database held it.
		return true
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, syscall.EPIPE), errors.Is(err, syscall.ECONNREFUSED):
		// The link closed mid-message: pgx's "unexpected EOF" when the server or a proxy
		// drops the connection without a word.
		return true
	case errors.As(err, &opErr), errors.As(err, &connectErr):
		return true
	case pgconn.SafeToRetry(err), pgconn.Timeout(err):
		// pgx's "conn closed" (a connection that died earlier in the transaction) and its
		// timeouts: nothing reached the server, or the answer never came.
		return true
	case errors.As(err, &sqliteErr):
		return sqliteUnavailable(sqliteErr.Code)
	case errors.As(err, &pgErr):
		return pgUnavailable(pgErr.Code)
	}
	return strings.Contains(err.Error(), "database is closed")
}

// sqliteUnavailable: the database is busy past the busy timeout, or the file cannot take the
// write (a full disk, an I/O error, a file opened or made read-only, a file that cannot be
// opened). Constraint and schema errors are not outages.
func sqliteUnavailable(code sqlite3.ErrNo) bool {
	switch code {
	case sqlite3.ErrBusy, sqlite3.ErrLocked, sqlite3.ErrFull, sqlite3.ErrIoErr,
		sqlite3.ErrReadonly, sqlite3.ErrCantOpen, sqlite3.ErrNoLFS:
		return true
	}
	return false
}

// pgUnavailable: class 08, connection exception; 57P01-03, the server is shutting down or
// starting (a terminated backend is 57P01 too); 57014, a statement cancelled by the statement
// timeout or the request's deadline; class 53, insufficient resources (53100 is a full disk);
// class 58, system and I/O errors; 25006, a read-only transaction (a standby); 40P01, a
// deadlock's victim, which a retry resolves. creditd's own writes lock in one order
// (txstate.go: the store's turn, companies, the store's event counter last), so none should
// deadlock; one that does anyway is told to retry (503, Retry-After), and its Idempotency-Key
// is not spent.
func pgUnavailable(code string) bool {
	switch {
	case strings.HasPrefix(code, "08"), strings.HasPrefix(code, "57P0"), strings.HasPrefix(code, "53"), strings.HasPrefix(code, "58"):
		return true
	}
	switch code {
	case "57014", "25006", "40P01":
		return true
	}
	return false
}

// IsDiskFull reports whether err is the database's disk being full: SQLite's SQLITE_FULL,
// PostgreSQL's disk_full. It is an outage (IsUnavailable) that reads survive and that only
// freeing space ends, which the answer's message and /readyz say.
func IsDiskFull(err error) bool {
	var sqliteErr sqlite3.Error
	var pgErr *pgconn.PgError
	switch {
	case errors.As(err, &sqliteErr):
		return sqliteErr.Code == sqlite3.ErrFull
	case errors.As(err, &pgErr):
		return pgErr.Code == "53100"
	}
	return false
}
