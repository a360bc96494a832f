package database_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/creditd/creditd/database"
)

// TestDeadlockVictimIsUnavailable: PostgreSQL's deadlock victim is answered as a transient
// outage (503, retry), while a refused statement is not.
func TestDeadlockVictimIsUnavailable(t *testing.T) {
	for code, want := range map[string]bool{"40P01": true, "08006": true, "57P01": true, "23505": false, "42P01": false} {
		err := fmt.Errorf("commit: %w", &pgconn.PgError{Code: code})
		if got := database.IsUnavailable(err); got != want {
			t.Errorf("SQLSTATE %s: unavailable %v, want %v", code, got, want)
		}
	}
	if database.IsUnavailable(errors.New("constraint failed")) {
		t.Error("a plain error is an outage")
	}
}
