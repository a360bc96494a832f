package database

import (
	"database/sql"
	"errors"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/mattn/go-sqlite3"

	"github.com/creditd/creditd/ent/migrate"
)

// ViolatedIndex is the package's ViolatedIndex, for credit.UniqueIndexes.
func (db *DB) ViolatedIndex(err error) string { return ViolatedIndex(err) }

// InsertSkipped reports whether err is what ent returns from a one-row INSERT … ON CONFLICT
// DO NOTHING that inserted nothing, where it asks for the inserted row back (PostgreSQL's
// RETURNING finds no row). A nil err is false: the row was inserted, or the database does not
// say (SQLite), and the caller reads the row to know.
func (db *DB) InsertSkipped(err error) bool { return errors.Is(err, sql.ErrNoRows) }

// ViolatedIndex names the unique index that err violated (its name in ent/schema's indexes,
// such as "platformconnection_shop_domain"), or "" when err is not a unique violation or names
// no index of the schema. It lets the domain say which uniqueness a failed INSERT ran into,
// rather than checking first with a read that a concurrent transaction can outdate.
//
// PostgreSQL names the index in the error (SQLSTATE 23505, constraint_name). SQLite names the
// table and columns ("UNIQUE constraint failed: t.a, t.b"), which this maps back to the index
// on exactly those columns.
func ViolatedIndex(err error) string {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		if pgErr.Code != "23505" {
			return ""
		}
		return pgErr.ConstraintName
	}
	var sqliteErr sqlite3.Error
	if !errors.As(err, &sqliteErr) || sqliteErr.ExtendedCode != sqlite3.ErrConstraintUnique {
		return ""
	}
	const prefix = "UNIQUE constraint failed: "
	msg := sqliteErr.Error()
	at := strings.Index(msg, prefix)
	if at < 0 {
		return ""
	}
	var table string
	var columns []string
	for _, qualified := range strings.Split(msg[at+len(prefix):], ", ") {
		t, column, ok := strings.Cut(strings.TrimSpace(qualified), ".")
		if !ok || (table != "" && t != table) {
			return ""
		}
		table, columns = t, append(columns, column)
	}
	for _, t := range migrate.Tables {
		if t.Name != table {
			continue
		}
		for _, idx := range t.Indexes {
			if !idx.Unique || len(idx.Columns) != len(columns) {
				continue
			}
			names := make([]string, len(idx.Columns))
			for i, c := range idx.Columns {
				names[i] = c.Name
			}
			if slices.Equal(names, columns) {
				return idx.Name
			}
		}
	}
	return ""
}
