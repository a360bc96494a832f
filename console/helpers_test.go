package console_test

import (
	"html"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/creditd/creditd/console"
	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
	"github.com/creditd/creditd/webhook"
)

const password = "correct horse battery"

// consoleEnv is a running creditd (the API under credittest) with the staff console on its own
// test server, sharing the service, database and clock.
type consoleEnv struct {
	*credittest.Env
	Console *console.Console
	URL     string
	Logs    *credittest.LogBuffer
}

// newConsoleFor builds a console over env's service, logging nowhere.
func newConsoleFor(env *credittest.Env) *console.Console {
	return console.New(console.Config{Service: env.Service, Logger: slog.New(slog.NewJSONHandler(io.Discard, nil)), Now: env.Clock.Now})
}

// newConsole starts creditd and the console; adjust may change the console's configuration.
func newConsole(t *testing.T, adjust ...func(*console.Config)) *consoleEnv {
	t.Helper()
	// Webhook endpoints need a master key; the console's tests add endpoints on loopback.
	key, err := webhook.ParseMasterKey(1, webhook.GenerateMasterKey())
	if err != nil {
		t.Fatal(err)
	}
	sealer, err := webhook.NewSealer(key)
	if err != nil {
		t.Fatal(err)
	}
	env := credittest.New(t, credittest.Options{ServiceOptions: func(o *credit.Options) {
		o.WebhookSealer = func() (*webhook.Sealer, error) { return sealer, nil }
		o.AllowPrivateWebhooks = true
	}})
	logs := &credittest.LogBuffer{}
	cfg := console.Config{Service: env.Service, Logger: slog.New(slog.NewJSONHandler(logs, nil)), Now: env.Clock.Now}
	for _, f := range adjust {
		f(&cfg)
	}
	c := console.New(cfg)
	ts := httptest.NewServer(c)
	t.Cleanup(ts.Close)
	return &consoleEnv{Env: env, Console: c, URL: ts.URL, Logs: logs}
}

// browser is a cookie-keeping HTTP client that does not follow redirects, so tests see them.
type browser struct {
	t      *testing.T
	base   string
	client *http.Client
	// csrf is the CSRF token of the last page that carried one.
	csrf string
}

func (e *consoleEnv) browser(t *testing.T) *browser {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	return &browser{t: t, base: e.URL, client: &http.Client{
		Jar:           jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// page is an answer of the console.
type page struct {
	Status   int
	Header   http.Header
	Body     string
	Location string
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

func (b *browser) do(req *http.Request) *page {
	b.t.Helper()
	resp, err := b.client.Do(req)
	if err != nil {
		b.t.Fatalf("%s %s: %v", req.Method, req.URL.Path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	p := &page{Status: resp.StatusCode, Header: resp.Header, Body: string(raw), Location: resp.Header.Get("Location")}
	if m := csrfField.FindStringSubmatch(p.Body); m != nil {
		b.csrf = html.UnescapeString(m[1])
	}
	return p
}

func (b *browser) get(path string) *page {
	b.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, b.base+path, nil)
	return b.do(req)
}

// post submits a form with the CSRF token of the last page, unless values sets csrf itself.
func (b *browser) post(path string, values url.Values) *page {
	b.t.Helper()
	if values == nil {
		values = url.Values{}
	}
	if _, set := values["csrf"]; !set {
		values.Set("csrf", b.csrf)
	}
	req, _ := http.NewRequest(http.MethodPost, b.base+path, strings.NewReader(values.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return b.do(req)
}

// follow GETs the page a redirect points to.
func (b *browser) follow(p *page) *page {
	b.t.Helper()
	if p.Status != http.StatusSeeOther {
		b.t.Fatalf("status %d, want a 303 redirect; body:\n%.2000s", p.Status, p.Body)
	}
	return b.get(p.Location)
}

// signIn signs in through the form and returns the page it leads to.
func (b *browser) signIn(email, pw string) *page {
	b.t.Helper()
	b.get("/login")
	return b.post("/login", url.Values{"email": {email}, "password": {pw}})
}

// mustSignIn signs in and fails the test unless it worked.
func (b *browser) mustSignIn(email, pw string) {
	b.t.Helper()
	p := b.signIn(email, pw)
	if p.Status != http.StatusSeeOther || p.Location != "/" {
		b.t.Fatalf("sign-in: status %d location %q\n%.2000s", p.Status, p.Location, p.Body)
	}
	b.get("/companies")
}

// cookie returns the browser's cookie named name for the console, or "".
func (b *browser) cookie(name string) string {
	u, _ := url.Parse(b.base + "/")
	for _, c := range b.client.Jar.Cookies(u) {
		if c.Name == name {
			return c.Value
		}
	}
	return ""
}

// setCookie plants a cookie, as another site or a shared computer might.
func (b *browser) setCookie(name, value string) {
	u, _ := url.Parse(b.base + "/")
	b.client.Jar.SetCookies(u, []*http.Cookie{{Name: name, Value: value, Path: "/"}})
}

// wantStatus fails the test unless p has status.
func (p *page) wantStatus(t *testing.T, status int) *page {
	t.Helper()
	if p.Status != status {
		t.Fatalf("status %d, want %d; location %q; body:\n%.3000s", p.Status, status, p.Location, p.Body)
	}
	return p
}

// wantText fails the test unless the page's text (HTML-unescaped) contains each of texts.
func (p *page) wantText(t *testing.T, texts ...string) *page {
	t.Helper()
	text := html.UnescapeString(p.Body)
	for _, want := range texts {
		if !strings.Contains(text, want) {
			t.Errorf("the page lacks %q:\n%.4000s", want, p.Body)
		}
	}
	return p
}

// wantNoText fails the test if the page contains any of texts.
func (p *page) wantNoText(t *testing.T, texts ...string) *page {
	t.Helper()
	text := html.UnescapeString(p.Body)
	for _, bad := range texts {
		if strings.Contains(text, bad) {
			t.Errorf("the page contains %q:\n%.4000s", bad, p.Body)
		}
	}
	return p
}

var variableParts = regexp.MustCompile(`(req_[0-9A-Za-z]+|name="csrf" value="[^"]+")`)

// comparable removes what differs between any two answers (request id, CSRF token).
func (p *page) comparable() string { return variableParts.ReplaceAllString(p.Body, "…") }
