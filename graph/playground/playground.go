// Package playground serves GraphiQL at /playground, with every asset embedded in the binary
// (scripts/update-playground.sh refreshes them from the npm registry at pinned versions), so
// it works offline and loads nothing from a CDN.
package playground

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"mime"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/creditd/creditd/httpapi"
)

//go:embed index.html playground.js assets/*.js assets/*.css
var files embed.FS

// contentSecurityPolicy lets the page load only its own scripts and talk only to its own
// server. GraphiQL sets inline styles and uses data: URLs for fonts and icons.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; " +
	"img-src 'self' data:; font-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// Link is the address of the playground on the server at baseURL (for example
// "http://127.0.0.1:8080") that opens with key already in the Headers tab, such as
// "http://127.0.0.1:8080/playground#key=ck_...". The key travels in the fragment, which a browser
// never sends to the server, so it stays out of request lines and access logs; the page moves it
// into the Headers tab and removes it from the address bar. With no key, Link is the plain page.
func Link(baseURL, key string) string {
	link := strings.TrimRight(baseURL, "/") + "/playground"
	if key == "" {
		return link
	}
	return link + "#" + url.Values{"key": {key}}.Encode()
}

// file is one served file with its validator.
type file struct {
	body        []byte
	contentType string
	etag        string
}

// Handler serves the playground page at /playground and its files under /playground/.
// It needs no authentication: the page holds no data, and the key typed into it is sent
// only to /graphql.
func Handler() http.Handler {
	routes := map[string]file{}
	err := fs.WalkDir(files, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := files.ReadFile(name)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(body)
		f := file{body: body, contentType: mime.TypeByExtension(path.Ext(name)), etag: `"` + hex.EncodeToString(sum[:16]) + `"`}
		if name == "index.html" {
			routes["/playground"] = f
		} else {
			routes["/playground/"+name] = f
		}
		return nil
	})
	if err != nil {
		panic("playground: embedded files unreadable: " + err.Error())
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f, ok := routes[r.URL.Path]
		if !ok {
			httpapi.NotFoundRoute(w, r)
			return
		}
		h := w.Header()
		h.Set("Content-Type", f.contentType)
		h.Set("ETag", f.etag)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		if strings.HasSuffix(r.URL.Path, ".html") || r.URL.Path == "/playground" {
			h.Set("Content-Security-Policy", contentSecurityPolicy)
			h.Set("Cache-Control", "no-cache")
		} else {
			h.Set("Cache-Control", "public, max-age=86400")
		}
		http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(f.body))
	})
}
