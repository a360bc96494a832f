package playground_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/creditd/creditd/credittest"
	"github.com/creditd/creditd/graph/playground"
)

// TestPlaygroundServed checks the page and its files: served without a key, from the binary,
// the page under a Content-Security-Policy that allows nothing from elsewhere.
func TestPlaygroundServed(t *testing.T) {
	env := credittest.New(t)
	page := env.Get(t, "", "/playground").WantStatus(t, http.StatusOK)
	if ct := page.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
		t.Errorf("Content-Type %q", ct)
	}
	csp := page.Header.Get("Content-Security-Policy")
	if !strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "script-src 'self'") || !strings.Contains(csp, "connect-src 'self'") {
		t.Errorf("Content-Security-Policy %q", csp)
	}
	body := string(page.Body)
	if strings.Contains(body, "https://") || strings.Contains(body, "http://") {
		t.Errorf("the page links elsewhere:\n%s", body)
	}
	for _, asset := range []struct{ path, contentType string }{
		{"/playground/assets/graphiql.min.js", "text/javascript"},
		{"/playground/assets/graphql-ws.min.js", "text/javascript"},
		{"/playground/assets/graphiql.min.css", "text/css"},
		{"/playground/assets/react.production.min.js", "text/javascript"},
		{"/playground/assets/react-dom.production.min.js", "text/javascript"},
		{"/playground/playground.js", "text/javascript"},
	} {
		if !strings.Contains(body, asset.path) {
			t.Errorf("the page does not load %s", asset.path)
		}
		r := env.Get(t, "", asset.path).WantStatus(t, http.StatusOK)
		if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, asset.contentType) || len(r.Body) == 0 {
			t.Errorf("%s: Content-Type %q, %d bytes", asset.path, ct, len(r.Body))
		}
		again := env.Do(t, credittest.Request{Method: http.MethodGet, Path: asset.path, Header: map[string]string{"If-None-Match": r.Header.Get("ETag")}})
		if again.Status != http.StatusNotModified {
			t.Errorf("%s with its ETag: %d, want 304", asset.path, again.Status)
		}
	}
	env.Get(t, "", "/playground/assets/VERSIONS").WantError(t, http.StatusNotFound, "not_found", "")
	env.Get(t, "", "/playground/../server.go").WantStatus(t, http.StatusNotFound)
}

// TestLink checks the playground link that carries a key: the key goes in the fragment, escaped
// so that the page's URLSearchParams reads it back unchanged.
func TestLink(t *testing.T) {
	for _, tc := range []struct {
		base, key, want string
	}{
		{"http://127.0.0.1:8080", "ck_abc123", "http://127.0.0.1:8080/playground#key=ck_abc123"},
		{"http://127.0.0.1:8080/", "ck_abc123", "http://127.0.0.1:8080/playground#key=ck_abc123"},
		{"https://credit.example/api", "ck_abc123", "https://credit.example/api/playground#key=ck_abc123"},
		{"http://127.0.0.1:8080", "a b&c#d=e/f", "http://127.0.0.1:8080/playground#key=a+b%26c%23d%3De%2Ff"},
		{"http://127.0.0.1:8080", "", "http://127.0.0.1:8080/playground"},
	} {
		if got := playground.Link(tc.base, tc.key); got != tc.want {
			t.Errorf("Link(%q, %q) = %q, want %q", tc.base, tc.key, got, tc.want)
		}
	}
}
