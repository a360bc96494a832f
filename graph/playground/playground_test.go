package playground_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/creditd/creditd/credittest"
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
