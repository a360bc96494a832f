package database

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"regexp"
)

var schemaName = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)

// ScratchSchema creates an empty PostgreSQL schema named name in the database at adminURL and
// returns a URL whose connections use it, and a function that drops it. Tests and the
// migration generator use it so that each gets a database of its own.
func ScratchSchema(ctx context.Context, adminURL, name string) (dsn string, drop func(), err error) {
	if !schemaName.MatchString(name) {
		return "", nil, fmt.Errorf("bad schema name %q", name)
	}
	admin, err := sql.Open("pgx", adminURL)
	if err != nil {
		return "", nil, err
	}
	if _, err := admin.ExecContext(ctx, "CREATE SCHEMA "+name); err != nil {
		admin.Close()
		return "", nil, fmt.Errorf("create schema: %w", err)
	}
	u, err := url.Parse(adminURL)
	if err != nil {
		admin.Close()
		return "", nil, err
	}
	q := u.Query()
	q.Set("search_path", name)
	u.RawQuery = q.Encode()
	return u.String(), func() {
		_, _ = admin.ExecContext(context.Background(), "DROP SCHEMA IF EXISTS "+name+" CASCADE")
		admin.Close()
	}, nil
}
