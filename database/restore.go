package database

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"syscall"

	"entgo.io/ent/dialect"
)

// ErrInUse is Restore's answer while another process (serve, a command) has the database open.
var ErrInUse = errors.New("the database is open in another process (serve, or a creditd command): stop it, then restore")

// inUseLock is the lock file, beside the database in <database>-locks/ (as TryLock's), that
// every handle on a SQLite file holds shared and Restore takes exclusive.
func inUseLock(path string) string { return filepath.Join(path+"-locks", "open") }

// holdInUse takes the shared lock that says this process has the SQLite file at path open, and
// returns its release. A flock belongs to the open file: the kernel releases it when the process
// ends, however it ends, so a crashed serve never blocks a restore.
//
// Errors: ErrInUse-like refusal while a restore holds the file.
func holdInUse(path string) (release func(), err error) {
	if path == ":memory:" {
		return func() {}, nil
	}
	f, err := openLockFile(path)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("open %s: a creditd restore is replacing it; try again when it has finished", path)
		}
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return func() { f.Close() }, nil
}

func openLockFile(path string) (*os.File, error) {
	if err := os.MkdirAll(path+"-locks", 0o700); err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	f, err := os.OpenFile(inUseLock(path), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return f, nil
}

// RestoreResult says what Restore did.
type RestoreResult struct {
	// Replaced is where the database that was replaced now is (path + ".before-restore"), ""
	// when there was none.
	Replaced string
	// Pending lists the migrations of this binary the backup does not have yet: `creditd
	// migrate` applies them before serve starts.
	Pending []string
}

// Restore replaces the SQLite database at path with the backup at from, written by Backup (or
// any copy of a creditd database). It checks the backup first: PRAGMA integrity_check, creditd's
// migrations table, and a schema no newer than this binary's. It refuses while any other
// process has path open (the shared lock every handle holds, see holdInUse), and holds that
// lock exclusively until it is done, so none opens it meanwhile. The database it replaces is
// first checkpointed into one self-contained file, then kept as path.before-restore (a hard
// link), and the backup is copied to a temporary name beside path, synced and renamed over it:
// interrupted at any moment, path is either the old database or the whole backup, never a
// half file, and a write-ahead log of the old database never meets the new one.
//
// Errors: ErrInUse; a backup that is missing, corrupt, not a creditd database or newer than
// this binary; an existing path.before-restore (move it away first); the file system's.
func Restore(ctx context.Context, from, path string) (RestoreResult, error) {
	var res RestoreResult
	if IsPostgres(path) {
		return res, errors.New("creditd restore replaces a SQLite file; restore PostgreSQL with pg_restore (from pg_dump) or from a base backup and its WAL archive")
	}
	path = SQLitePath(path)
	if path == "" {
		return res, fmt.Errorf("database path is empty")
	}
	if err := checkBackup(ctx, from, &res); err != nil {
		return res, err
	}
	lock, err := openLockFile(path)
	if err != nil {
		return res, err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return res, fmt.Errorf("restore %s: %w", path, ErrInUse)
		}
		return res, fmt.Errorf("restore %s: %w", path, err)
	}
	before := path + ".before-restore"
	if _, err := os.Stat(path); err == nil {
		if _, err := os.Lstat(before); err == nil {
			return res, fmt.Errorf("restore %s: %s exists from an earlier restore: move it away, then restore", path, before)
		}
		if err := selfContained(ctx, path); err != nil {
			return res, err
		}
		if err := os.Link(path, before); err != nil {
			return res, fmt.Errorf("restore %s: keep the replaced database: %w", path, err)
		}
		res.Replaced = before
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".restore-*")
	if err != nil {
		return res, fmt.Errorf("restore %s: %w", path, err)
	}
	done := false
	defer func() {
		if !done {
			os.Remove(tmp.Name())
		}
	}()
	src, err := os.Open(from)
	if err != nil {
		tmp.Close()
		return res, fmt.Errorf("restore: %w", err)
	}
	_, err = io.Copy(tmp, src)
	src.Close()
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return res, fmt.Errorf("restore %s: copy the backup: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return res, fmt.Errorf("restore %s: %w", path, err)
	}
	done = true
	return res, syncFile(filepath.Dir(path))
}

// checkBackup refuses a backup that is not a whole creditd database this binary can serve,
// and lists the migrations it lacks in res.
func checkBackup(ctx context.Context, from string, res *RestoreResult) error {
	if _, err := os.Stat(from); err != nil {
		return fmt.Errorf("restore: the backup %s: %w", from, err)
	}
	if err := IntegrityCheck(ctx, from); err != nil {
		return fmt.Errorf("restore: the backup is damaged, nothing was replaced: %w", err)
	}
	raw, err := sql.Open("sqlite3", "file:"+(&url.URL{Path: from}).EscapedPath()+"?mode=ro")
	if err != nil {
		return err
	}
	defer raw.Close()
	db := newDB(raw, dialect.SQLite)
	st, err := db.State(ctx)
	if err != nil {
		return fmt.Errorf("restore: read the backup's schema: %w", err)
	}
	if st.Fresh || len(st.Applied) == 0 {
		return fmt.Errorf("restore: %s is not a creditd database (it has no creditd migrations), nothing was replaced", from)
	}
	if len(st.Unknown) > 0 {
		return fmt.Errorf("restore: the backup's schema is newer than this creditd (it has migration %s, which this binary does not know): restore it with the creditd that made it, or upgrade creditd; nothing was replaced", st.Unknown[len(st.Unknown)-1])
	}
	res.Pending = st.Pending
	return nil
}

// selfContained checkpoints the database at path into its main file and removes its
// write-ahead log, so that the file alone (kept as .before-restore) holds every commit. A
// database that cannot be opened (the damage a restore may be for) keeps its log beside the
// kept copy instead.
func selfContained(ctx context.Context, path string) error {
	raw, err := sql.Open("sqlite3", "file:"+(&url.URL{Path: path}).EscapedPath()+"?mode=rw")
	if err == nil {
		_, err = raw.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)")
		if err == nil {
			// Closing the last connection of a WAL database checkpoints it and deletes the log.
			err = raw.Close()
		} else {
			raw.Close()
		}
	}
	if err == nil {
		if _, serr := os.Stat(path + "-wal"); serr != nil {
			return nil
		}
	}
	// The log could not be folded in: it goes with the kept copy, under the name SQLite looks
	// for beside it, and never stays beside the restored file.
	for _, suffix := range []string{"-wal", "-shm"} {
		if _, serr := os.Stat(path + suffix); serr == nil {
			if rerr := os.Rename(path+suffix, path+".before-restore"+suffix); rerr != nil {
				return fmt.Errorf("restore %s: move its %s aside: %w", path, suffix, rerr)
			}
		}
	}
	return nil
}
