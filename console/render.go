package console

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/httpapi"
)

// contentSecurityPolicy lets a page load only the console's own stylesheet and script and
// post forms only to the console: no inline script or style, no frames, no other origin.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; " +
	"form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

// page is what the layout renders around a page's own body.
type page struct {
	Title string
	// Section is the navigation entry to mark as current.
	Section string
	// Visit is nil on the sign-in page and on errors before a session was found.
	Visit *header
	// Notice is the result of the last action (POST-redirect-GET), shown once.
	Notice    string
	Body      any
	RequestID string
	AssetTag  string
}

// header is what the layout shows of the signed-in member, and the CSRF token its sign-out
// form carries.
type header struct {
	StaffName string
	Email     string
	StoreName string
	Currency  string
	CSRF      string
}

// pages holds one parsed template per page, each with the layout and the shared snippets.
type pages struct{ byName map[string]*template.Template }

var templateFuncs = template.FuncMap{
	"money":      formatMoney,
	"amount":     formatAmount,
	"when":       formatTime,
	"day":        formatDay,
	"whenPtr":    func(t *credit.Timestamp) string { return formatTimePtr(t) },
	"label":      templateLabel,
	"detail":     eventDetail,
	"terms":      credit.FormatPaymentTerms,
	"actor":      formatActor,
	"deref":      func(s *string) string { return derefString(s) },
	"join":       strings.Join,
	"pathEscape": url.PathEscape,
	"query":      buildQuery,
	"termsField": termsField,
	"days":       formatDays,
	"dayFigure":  formatDayFigure,
	"share":      formatShare,
	"collectionList": func(id, caption, empty string, list credit.CollectionList[credit.CollectionInvoice]) collectionListData {
		return collectionListData{ID: id, Caption: caption, Empty: empty, List: list}
	},
}

func mustParsePages() *pages {
	base := template.Must(template.New("layout.html").Funcs(templateFuncs).ParseFS(templateFiles, "templates/layout.html"))
	entries, err := fs.ReadDir(templateFiles, "templates")
	if err != nil {
		panic("console: templates unreadable: " + err.Error())
	}
	p := &pages{byName: map[string]*template.Template{}}
	for _, e := range entries {
		if e.Name() == "layout.html" {
			continue
		}
		t := template.Must(base.Clone())
		p.byName[e.Name()] = template.Must(t.ParseFS(templateFiles, "templates/"+e.Name()))
	}
	return p
}

// render writes a page with status. The page is rendered into a buffer first, so a template
// error becomes a clean 500 rather than half a page.
func (c *Console) render(w http.ResponseWriter, r *http.Request, status int, name string, p *page) {
	t, ok := c.pages.byName[name]
	if !ok {
		panic("console: no template " + name)
	}
	p.RequestID = httpapi.RequestID(r.Context())
	p.AssetTag = c.assetTag
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, "layout.html", p); err != nil {
		httpapi.Log(r.Context(), httpapi.Describe(err), err, "template", name)
		http.Error(w, "the page could not be rendered; request id "+p.RequestID, http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// pageFor starts a page for a signed-in member.
func pageFor(v *visit, title, section string) *page {
	p := &page{Title: title, Section: section}
	if v != nil {
		p.Visit = &header{StaffName: v.session.StaffName, Email: v.session.Email, StoreName: v.store.Name, Currency: v.store.Currency, CSRF: v.csrf}
	}
	return p
}

// problemBody is the body of an error page.
type problemBody struct {
	Status  int
	Message string
}

// problem renders an error page with a message for people.
func (c *Console) problem(w http.ResponseWriter, r *http.Request, v *visit, status int, message string) {
	p := pageFor(v, http.StatusText(status), "")
	p.Body = problemBody{Status: status, Message: message}
	c.render(w, r, status, "problem.html", p)
}

// fail renders err as an error page with the status and message httpapi.Describe gives it
// (so a not_found is the same page for an unknown ID and another store's), logging what a 5xx
// hides.
func (c *Console) fail(w http.ResponseWriter, r *http.Request, v *visit, err error) {
	p := httpapi.Describe(err)
	httpapi.Log(r.Context(), p, err, "method", r.Method, "route", r.Pattern)
	httpapi.SetErrorHeaders(w, p.Code)
	if p.Code == credit.CodeUnauthenticated {
		w.Header().Del("WWW-Authenticate")
	}
	c.problem(w, r, v, p.Status, sentence(p.Message))
}

// done records an action's result on the session and sends the browser to the page that shows
// it (POST-redirect-GET), so that reloading that page repeats nothing.
func (c *Console) done(w http.ResponseWriter, r *http.Request, v *visit, to, notice string) {
	if err := c.svc.Staff.SetSessionNotice(v.ctx, v.session.ID, notice); err != nil {
		httpapi.Log(r.Context(), httpapi.Describe(err), err, "step", "session notice")
	}
	http.Redirect(w, r, to, http.StatusSeeOther)
}

// failedNotice marks a notice that reports a failure (a webhook test that did not arrive), so
// that the layout shows it as an alert rather than as a success.
const failedNotice = "\u2063failed\u2063" // invisible separators: PostgreSQL text may not hold NUL

// NoticeFailed reports whether the page's notice reports a failure; NoticeText is its text.
func (p *page) NoticeFailed() bool { return strings.HasPrefix(p.Notice, failedNotice) }

// NoticeText is the notice without its mark.
func (p *page) NoticeText() string { return strings.TrimPrefix(p.Notice, failedNotice) }

// takeNotice returns the session's waiting notice and clears it, so it shows once.
func (c *Console) takeNotice(r *http.Request, v *visit) string {
	if v.session.Notice == nil {
		return ""
	}
	if err := c.svc.Staff.SetSessionNotice(v.ctx, v.session.ID, ""); err != nil {
		httpapi.Log(r.Context(), httpapi.Describe(err), err, "step", "session notice")
	}
	return *v.session.Notice
}

// buildQuery encodes name/value pairs as a query string, leaving out empty values.
func buildQuery(pairs ...string) string {
	q := url.Values{}
	for i := 0; i+1 < len(pairs); i += 2 {
		if pairs[i+1] != "" {
			q.Set(pairs[i], pairs[i+1])
		}
	}
	if len(q) == 0 {
		return ""
	}
	return "?" + q.Encode()
}

// assetHandler serves the embedded stylesheet and script with long caching; the layout links
// them with a tag of their content, so a new release is fetched at once.
func assetHandler() (http.Handler, string) {
	type asset struct {
		body        []byte
		contentType string
	}
	files := map[string]asset{}
	sum := sha256.New()
	for _, name := range []string{"console.css", "console.js", "favicon.svg"} {
		body, err := assetFiles.ReadFile("assets/" + name)
		if err != nil {
			panic("console: assets unreadable: " + err.Error())
		}
		sum.Write(body)
		files["/assets/"+name] = asset{body: body, contentType: mime.TypeByExtension(path.Ext(name))}
	}
	tag := hex.EncodeToString(sum.Sum(nil))[:12]
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f, ok := files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", f.contentType)
		w.Header().Set("Cache-Control", "public, max-age=86400")
		http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(f.body))
	}), tag
}

// securityHeaders sets what every answer of the console carries: the Content-Security-Policy,
// no framing, no MIME sniffing, no referrer to other sites, and no caching of pages, which
// show a store's data and, once, a key's secret.
func securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", contentSecurityPolicy)
		h.Set("X-Frame-Options", "DENY")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "same-origin")
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		if !strings.HasPrefix(r.URL.Path, "/assets/") {
			h.Set("Cache-Control", "no-store")
		}
		next.ServeHTTP(w, r)
	})
}

// fallbacks answers a path that serves nothing: the sign-in page without a session (a visitor
// learns nothing about the console's pages), a 404 or 405 page with one.
func (c *Console) fallbacks(mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h, pattern := mux.Handler(r)
		if pattern != "" {
			mux.ServeHTTP(w, r)
			return
		}
		v, ok := c.resume(w, r)
		if !ok {
			return
		}
		probe := &headerProbe{header: http.Header{}}
		h.ServeHTTP(probe, r)
		if probe.status == http.StatusMethodNotAllowed {
			w.Header().Set("Allow", probe.header.Get("Allow"))
			c.problem(w, r, v, http.StatusMethodNotAllowed, "This page cannot be used that way.")
			return
		}
		c.problem(w, r, v, http.StatusNotFound, "There is no such page.")
	})
}

// headerProbe records what ServeMux's own fallback would answer, writing nothing.
type headerProbe struct {
	header http.Header
	status int
}

func (p *headerProbe) Header() http.Header         { return p.header }
func (p *headerProbe) Write(b []byte) (int, error) { return len(b), nil }
func (p *headerProbe) WriteHeader(status int)      { p.status = status }

// requestInfo collects who made a request, for the access log.
type requestInfo struct {
	storeID string
	staffID string
}

type infoKey struct{}

func infoFrom(ctx context.Context) *requestInfo {
	info, _ := ctx.Value(infoKey{}).(*requestInfo)
	return info
}

// statusWriter remembers the status written.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// observe writes one access log line per request, without query strings, form values or
// cookies: no password, secret or personal data reaches the log.
func (c *Console) observe(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		info := &requestInfo{}
		sw := &statusWriter{ResponseWriter: w}
		r = r.WithContext(httpapi.WithLogger(context.WithValue(r.Context(), infoKey{}, info), c.log))
		next.ServeHTTP(sw, r)
		if sw.status == 0 {
			sw.status = http.StatusOK
		}
		level := slog.LevelInfo
		if sw.status >= 500 {
			level = slog.LevelError
		}
		c.log.LogAttrs(r.Context(), level, "console request",
			slog.String("request_id", httpapi.RequestID(r.Context())),
			slog.String("method", r.Method),
			slog.String("route", r.Pattern),
			slog.Int("status", sw.status),
			slog.Duration("duration", time.Since(start)),
			slog.String("store_id", info.storeID),
			slog.String("staff_id", info.staffID),
		)
	})
}

// recoverPanics answers a panic with the 500 page, logging it once.
func (c *Console) recoverPanics(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				c.fail(w, r, nil, fmt.Errorf("panic: %v", p))
			}
		}()
		next.ServeHTTP(w, r)
	})
}
