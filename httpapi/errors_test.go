package httpapi_test

import (
	"database/sql/driver"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/mattn/go-sqlite3"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/database"
	"github.com/creditd/creditd/httpapi"
)

// TestDescribe holds the one classification every transport and the command line use: a
// domain error keeps its code and says why; an outage is 503 unavailable whatever the driver
// said; anything else is 500 internal_error without its text, which may hold SQL.
func TestDescribe(t *testing.T) {
	secret := "SELECT * FROM api_key_secrets WHERE hash = 'abc'"
	for _, tc := range []struct {
		name   string
		err    error
		code   credit.Code
		status int
	}{
		{"domain error", credit.ParamErrorf(credit.CodeLimitBelowZero, "amount", "credit limit must be zero or greater"), credit.CodeLimitBelowZero, 422},
		{"wrapped domain error", fmt.Errorf("in tx: %w", credit.Errorf(credit.CodeHoldExists, "x")), credit.CodeHoldExists, 409},
		{"transport error", credit.Errorf(httpapi.CodeRequestTooLarge, "x"), httpapi.CodeRequestTooLarge, 413},
		{"dropped connection", fmt.Errorf("query: %w", driver.ErrBadConn), httpapi.CodeUnavailable, 503},
		{"SQLite busy past its timeout", fmt.Errorf("commit: %w", sqlite3.Error{Code: sqlite3.ErrBusy}), httpapi.CodeUnavailable, 503},
		{"failed readiness ping", fmt.Errorf("%w: %v", database.ErrUnavailable, errors.New("dial tcp: refused")), httpapi.CodeUnavailable, 503},
		{"anything else", errors.New(secret), httpapi.CodeInternal, 500},
	} {
		p := httpapi.Describe(tc.err)
		if p.Code != tc.code || p.Status != tc.status || p.Message == "" {
			t.Errorf("%s: %+v, want %s %d", tc.name, p, tc.code, tc.status)
		}
		if strings.Contains(p.Message, "SELECT") {
			t.Errorf("%s: the message shows the error's text: %q", tc.name, p.Message)
		}
	}
	for code, status := range httpapi.Codes() {
		if status < 400 || status > 599 || httpapi.Status(code) != status {
			t.Errorf("code %s has status %d", code, status)
		}
	}
}
