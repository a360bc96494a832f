package database

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
)

// ErrBackupPostgres is Backup's answer to a PostgreSQL URL: its own tools copy it.
var ErrBackupPostgres = errors.New("creditd backup copies a SQLite file; back up PostgreSQL with pg_dump (a logical copy) or pg_basebackup (a base backup, with WAL archiving for point-in-time recovery)")

// Backup writes a consistent copy of the SQLite database dsn names to out while other
// processes (serve) keep writing to it. It uses VACUUM INTO, which reads the database in one
// read transaction: in WAL mode that never blocks a writer, and a writer never restarts it
// (the online backup API, stepped page by page, starts over whenever the source changes, so
// a busy serve can starve it). The copy is written to a temporary name beside out,
// integrity-checked, synced and only then renamed to out, so out is never a half file.
func Backup(ctx context.Context, dsn, out string) error {
	if IsPostgres(dsn) {
		return ErrBackupPostgres
	}
	path := SQLitePath(dsn)
	if path == "" {
		return fmt.Errorf("database path is empty")
	}
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("%w: %s", ErrNoDatabase, path)
	}
	if st, err := os.Stat(out); err == nil && st.IsDir() {
		return fmt.Errorf("backup: %s is a directory; --to names the file to write", out)
	}
	tmp, err := os.CreateTemp(filepath.Dir(out), "."+filepath.Base(out)+".tmp-*")
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	tmpName := tmp.Name()
	tmp.Close()
	// VACUUM INTO refuses an existing file, even an empty one.
	os.Remove(tmpName)
	done := false
	defer func() {
		if !done {
			os.Remove(tmpName)
		}
	}()
	src, err := sql.Open("sqlite3", "file:"+(&url.URL{Path: path}).EscapedPath()+"?mode=rw&_busy_timeout=10000")
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	defer src.Close()
	if _, err := src.ExecContext(ctx, "VACUUM INTO ?", tmpName); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	if err := IntegrityCheck(ctx, tmpName); err != nil {
		return fmt.Errorf("backup: the copy failed its check: %w", err)
	}
	if err := syncFile(tmpName); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	if err := os.Rename(tmpName, out); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	done = true
	return syncFile(filepath.Dir(out))
}

// IntegrityCheck runs PRAGMA integrity_check on the SQLite file at path, read-only.
func IntegrityCheck(ctx context.Context, path string) error {
	db, err := sql.Open("sqlite3", "file:"+(&url.URL{Path: path}).EscapedPath()+"?mode=ro")
	if err != nil {
		return err
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, "PRAGMA integrity_check")
	if err != nil {
		return fmt.Errorf("%s is not a readable SQLite database: %w", path, err)
	}
	defer rows.Close()
	var problems []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return err
		}
		if s != "ok" {
			problems = append(problems, s)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("%s is not a readable SQLite database: %w", path, err)
	}
	if len(problems) > 0 {
		return fmt.Errorf("%s fails PRAGMA integrity_check: %v", path, problems)
	}
	return nil
}

func syncFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}
