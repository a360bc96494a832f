package database

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// lockFile is TryLock on SQLite: an exclusive, non-blocking flock(2) on the file
// <database>-locks/<hash of name>. A flock belongs to the open file, so two processes on the
// database (serve and an overlapping restart of it, or the command line) and two handles in
// one process exclude each other, and it ends when the file is closed: by release, or by the
// kernel when the process dies, so a crash never leaves a lock behind to expire (as a lease
// row would) and nothing in the database is written for it.
func (db *DB) lockFile(name string) (release func(), ok bool, err error) {
	if db.path == "" || db.path == ":memory:" {
		return func() {}, true, nil
	}
	dir := db.path + "-locks"
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, false, fmt.Errorf("lock %s: %w", name, err)
	}
	sum := sha256.Sum256([]byte(name))
	f, err := os.OpenFile(filepath.Join(dir, hex.EncodeToString(sum[:8])), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, false, fmt.Errorf("lock %s: %w", name, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, false, nil
		}
		return nil, false, fmt.Errorf("lock %s: %w", name, err)
	}
	return func() { f.Close() }, true, nil
}
