package database

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"time"

	"entgo.io/ent/dialect"
	"github.com/jackc/pgx/v5/stdlib"
)

// feedChannel is the PostgreSQL channel of migration 0011's triggers.
const feedChannel = "creditd_feed"

// DefaultFeedPoll is how often WatchFeed looks at a SQLite file for commits of other
// processes: the bound on a SQLite subscriber's wake-up, beside the time the read takes.
const DefaultFeedPoll = 25 * time.Millisecond

// WatchFeed reports committed changes to the stores' event feeds and to API keys, made by
// any process on the database, until ctx ends; it returns ctx's error, or an error only when
// it cannot watch at all. changed is given the stores whose feed moved, or all: a key or a
// secret changed (key_changes), or anything may have changed unseen. It is called with all
// first, once the watch runs (so nothing committed before then is missed by a caller who read
// before), and again after a reconnection. A report is a wake-up, never data: what changed is
// read from the tables.
//
// PostgreSQL: a connection of the pool LISTENs on creditd_feed, whose notifications the
// triggers of migration 0011 send from the writing transactions (delivered on commit); the
// payload names the store. It holds that connection while it runs and reconnects after a
// second when it is lost.
//
// SQLite: a connection of its own, outside the pool, reads PRAGMA data_version every poll
// (which moves when any other connection, of this process or another, commits to the file),
// and on a move reads stores.event_seq and key_changes to report what changed. poll <= 0
// means DefaultFeedPoll.
func (db *DB) WatchFeed(ctx context.Context, poll time.Duration, changed func(stores []string, all bool)) error {
	if poll <= 0 {
		poll = DefaultFeedPoll
	}
	for {
		var err error
		if db.Dialect == dialect.Postgres {
			err = db.listenFeed(ctx, changed)
		} else {
			err = db.pollFeed(ctx, poll, changed)
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if errors.Is(err, errCannotWatch) {
			return err
		}
		// Lost the connection (a restart, an outage): try again shortly; the next start
		// reports All.
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

var errCannotWatch = errors.New("database: cannot watch the feed")

func (db *DB) listenFeed(ctx context.Context, changed func(stores []string, all bool)) error {
	conn, err := db.SQL.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	return conn.Raw(func(dc any) error {
		sc, ok := dc.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("%w: not a pgx connection (%T)", errCannotWatch, dc)
		}
		pc := sc.Conn()
		if _, err := pc.Exec(ctx, "LISTEN "+feedChannel); err != nil {
			return driver.ErrBadConn
		}
		changed(nil, true)
		for {
			n, err := pc.WaitForNotification(ctx)
			if err != nil {
				// The connection is left listening or broken: never hand it back to the pool.
				return driver.ErrBadConn
			}
			if n.Payload == "" {
				changed(nil, true)
			} else {
				changed([]string{n.Payload}, false)
			}
		}
	})
}

func (db *DB) pollFeed(ctx context.Context, poll time.Duration, changed func(stores []string, all bool)) error {
	if db.connector == nil {
		return fmt.Errorf("%w: no SQLite connector", errCannotWatch)
	}
	raw := sql.OpenDB(db.connector)
	defer raw.Close()
	raw.SetMaxOpenConns(1)
	conn, err := raw.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	var version int64
	seqs := map[string]int64{}
	var keys int64
	first := true
	tick := time.NewTicker(poll)
	defer tick.Stop()
	for {
		var v int64
		if err := conn.QueryRowContext(ctx, "PRAGMA data_version").Scan(&v); err != nil {
			return err
		}
		if first || v != version {
			version = v
			stores, keysMoved, err := readFeedHeads(ctx, conn, seqs, &keys)
			if err != nil {
				return err
			}
			if first || keysMoved {
				changed(nil, true)
			} else if len(stores) > 0 {
				changed(stores, false)
			}
			first = false
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// readFeedHeads reads every store's event_seq and the count of key changes, updates seqs and
// keys, and returns the stores whose feed moved and whether the count moved.
func readFeedHeads(ctx context.Context, conn *sql.Conn, seqs map[string]int64, keys *int64) (stores []string, keysMoved bool, err error) {
	var n int64
	if err := conn.QueryRowContext(ctx, keyChangesQuery).Scan(&n); err != nil {
		return nil, false, err
	}
	if n != *keys {
		keysMoved = true
		*keys = n
	}
	rows, err := conn.QueryContext(ctx, `SELECT "id", "event_seq" FROM "stores"`)
	if err != nil {
		return nil, false, err
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var seq int64
		if err := rows.Scan(&id, &seq); err != nil {
			return nil, false, err
		}
		if seqs[id] != seq {
			seqs[id] = seq
			stores = append(stores, id)
		}
	}
	return stores, keysMoved, rows.Err()
}
