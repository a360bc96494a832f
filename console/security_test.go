package console_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/creditd/creditd/console"
	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
	"github.com/creditd/creditd/ratelimit"
)

// fixture is a store with a staff member, a company, an application and a key, and a second
// store with the same, for the security tests.
type fixture struct {
	*consoleEnv
	store, otherStore     string
	company, otherCompany credit.Company
	app, otherApp         credit.Application
	key, otherKey         credit.IssuedKey
	// endpoints and deliveries map each store's key ID to a webhook endpoint and a failed
	// platform delivery of the same store, for path.
	endpoints, deliveries map[string]string
}

func newFixture(t *testing.T, adjust ...func(*console.Config)) *fixture {
	t.Helper()
	env := newConsole(t, adjust...)
	f := &fixture{consoleEnv: env}
	f.store = env.MustStore(t, "Alpine Wholesale", "EUR")
	f.otherStore = env.MustStore(t, "Other Wholesale", "EUR")
	env.MustStaff(t, f.store, "Anna Berg", "anna@example.com", password)
	env.MustStaff(t, f.otherStore, "Otto Other", "otto@example.com", password)
	f.company = env.MustCompany(t, f.store, "Alpenblick Hotels AG", "25000.00")
	f.otherCompany = env.MustCompany(t, f.otherStore, "Canary Foreign GmbH", "999.00")
	f.app = env.MustApplication(t, f.store, credit.ApplicationInput{BusinessName: "Bergbäckerei Huber"})
	f.otherApp = env.MustApplication(t, f.otherStore, credit.ApplicationInput{BusinessName: "Canary Applicant KG", ContactEmail: "canary@example.com"})
	f.key = env.MustIssuedKey(t, f.store, "ERP", credit.ScopeReadCredit)
	f.otherKey = env.MustIssuedKey(t, f.otherStore, "Canary key", credit.ScopeReadCredit)
	f.endpoints = map[string]string{}
	for st, k := range map[string]string{f.store: f.key.ID, f.otherStore: f.otherKey.ID} {
		we, err := env.Service.Webhooks.CreateEndpoint(credittest.Staff(st), credit.WebhookEndpointInput{URL: "http://127.0.0.1:9/hooks", Description: "Canary hooks of " + st})
		if err != nil {
			t.Fatal(err)
		}
		f.endpoints[k] = we.ID
	}
	f.deliveries = map[string]string{
		f.key.ID:      connectAndFail(t, env.Env, f.store, "alpine.myplatform.com", "alpine-payment-1"),
		f.otherKey.ID: connectAndFail(t, env.Env, f.otherStore, "canary.myplatform.com", "canary-payment-1"),
	}
	return f
}

// path fills a route pattern's {id} with a record of the right kind.
func (f *fixture) path(pattern string, company, app, key string) (method, path string) {
	method, path, _ = strings.Cut(pattern, " ")
	path = strings.TrimSuffix(path, "{$}")
	switch {
	case strings.HasPrefix(path, "/companies/{id}"):
		path = strings.Replace(path, "{id}", company, 1)
	case strings.HasPrefix(path, "/applications/{id}"):
		path = strings.Replace(path, "{id}", app, 1)
	case strings.HasPrefix(path, "/settings/api/keys/{id}"):
		path = strings.Replace(path, "{id}", key, 1)
	case strings.HasPrefix(path, "/webhooks/{id}"):
		// The endpoint of the key's store; an unknown key stands for an unknown endpoint.
		endpoint, ok := f.endpoints[key]
		if !ok {
			endpoint = "we_0000000000000000000000"
		}
		path = strings.Replace(path, "{id}", endpoint, 1)
	case strings.HasPrefix(path, "/platform/deliveries/{id}"):
		delivery, ok := f.deliveries[key]
		if !ok {
			delivery = "pd_0000000000000000000000"
		}
		path = strings.Replace(path, "{id}", delivery, 1)
	}
	return method, path
}

// publicPatterns serve without a session: the sign-in form and the stylesheet and script.
var publicPatterns = map[string]bool{"GET /login": true, "POST /login": true, "GET /assets/": true}

// TestNoPageWithoutSession: every route of the console but the sign-in form and its assets,
// and any path that serves nothing, sends a browser without a session (or with a made-up, an
// expired or a signed-out session) to the sign-in page, shows none of the store's data, and
// changes nothing.
func TestNoPageWithoutSession(t *testing.T) {
	f := newFixture(t)
	signedOut := f.browser(t)
	signedOut.mustSignIn("anna@example.com", password)
	oldToken := signedOut.cookie("creditd_session")
	signedOut.post("/logout", nil).wantStatus(t, http.StatusSeeOther)

	expired := f.browser(t)
	expired.mustSignIn("anna@example.com", password)
	f.Clock.Advance(credit.DefaultSessionIdleTimeout)

	patterns := console.Patterns(f.Console)
	if len(patterns) < 15 {
		t.Fatalf("only %d routes: %v", len(patterns), patterns)
	}
	for _, who := range []struct {
		name   string
		cookie string
	}{
		{"no session", ""},
		{"a made-up session", strings.Repeat("A", 40)},
		{"a signed-out session", oldToken},
		{"a session past its idle timeout", expired.cookie("creditd_session")},
	} {
		for _, pattern := range append(patterns, "GET /no/such/page", "DELETE /companies") {
			if publicPatterns[pattern] {
				continue
			}
			method, path := f.path(pattern, f.company.ID, f.app.ID, f.key.ID)
			var body *strings.Reader
			if method == http.MethodPost {
				body = strings.NewReader(url.Values{"note": {"x"}, "amount": {"1.00"}, "status": {"in_review"}, "label": {"x"},
					"scopes": {"read_credit"}, "email": {"ada@example.com"}, "confirm": {"yes"}, "grace": {"1h"}}.Encode())
			} else {
				body = strings.NewReader("")
			}
			req, _ := http.NewRequest(method, f.URL+path, body)
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			if who.cookie != "" {
				req.AddCookie(&http.Cookie{Name: "creditd_session", Value: who.cookie})
			}
			resp, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
			if err != nil {
				t.Fatal(err)
			}
			raw := make([]byte, 4096)
			n, _ := resp.Body.Read(raw)
			resp.Body.Close()
			if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/login" {
				t.Errorf("%s, %s %s: status %d location %q, want 303 to /login", who.name, method, path, resp.StatusCode, resp.Header.Get("Location"))
			}
			for _, secret := range []string{f.company.Name, "Bergbäckerei", "ERP", "Alpine Wholesale"} {
				if strings.Contains(string(raw[:n]), secret) {
					t.Errorf("%s, %s %s: the answer shows %q", who.name, method, path, secret)
				}
			}
		}
	}
	// Nothing changed: no hold, same limit, the application still submitted, the key alive.
	co, err := f.Service.Companies.Get(credittest.Staff(f.store), f.company.ID)
	if err != nil || co.Hold != nil || co.CreditLimit.Amount != "25000.00" || co.Outstanding.Amount != "0.00" {
		t.Errorf("company after the refused requests: %+v %v", co, err)
	}
	a, err := f.Service.Applications.Get(credittest.Staff(f.store), f.app.ID)
	if err != nil || a.Status != credit.AppSubmitted || a.Contact.Redacted {
		t.Errorf("application after the refused requests: %+v %v", a, err)
	}
	keys, err := f.Service.Keys.List(credittest.Staff(f.store), time.Hour)
	if err != nil || len(keys) != 1 || keys[0].RevokedAt != nil {
		t.Errorf("keys after the refused requests: %+v %v", keys, err)
	}
}

// TestCSRFRefused: a form posted without the session's CSRF token, with a wrong one, or with
// another session's, is refused with 403 and changes nothing; so is a sign-in form without
// the token of its sign-in cookie.
func TestCSRFRefused(t *testing.T) {
	f := newFixture(t)
	anna := f.browser(t)
	anna.mustSignIn("anna@example.com", password)
	other := f.browser(t)
	other.mustSignIn("anna@example.com", password) // the same member in another browser

	for name, token := range map[string]string{
		"no token":                "",
		"a wrong token":           "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
		"another session's token": other.csrf,
		"the token with a byte changed": func() string {
			b := []byte(anna.csrf)
			b[0] ^= 1
			return string(b)
		}(),
	} {
		p := anna.post("/companies/"+f.company.ID+"/hold", url.Values{"csrf": {token}, "note": {"csrf probe"}})
		p.wantStatus(t, http.StatusForbidden).wantText(t, "This form has expired or was not sent from this console")
		_ = name
		p = anna.post("/settings/api/keys/"+f.key.ID+"/revoke", url.Values{"csrf": {token}})
		p.wantStatus(t, http.StatusForbidden)
		p = anna.post("/logout", url.Values{"csrf": {token}})
		p.wantStatus(t, http.StatusForbidden)
	}
	co, _ := f.Service.Companies.Get(credittest.Staff(f.store), f.company.ID)
	if co.Hold != nil {
		t.Fatalf("a refused form placed a hold: %+v", co.Hold)
	}
	keys, _ := f.Service.Keys.List(credittest.Staff(f.store), time.Hour)
	if keys[0].RevokedAt != nil {
		t.Fatal("a refused form revoked the key")
	}
	anna.get("/companies").wantStatus(t, http.StatusOK) // still signed in: logout was refused too

	// The right token works.
	anna.get("/companies/" + f.company.ID)
	anna.post("/companies/"+f.company.ID+"/hold", url.Values{"note": {"with the token"}}).wantStatus(t, http.StatusSeeOther)

	// Sign-in: the form's token must match the sign-in cookie.
	stranger := f.browser(t)
	stranger.get("/login")
	p := stranger.post("/login", url.Values{"csrf": {"forged"}, "email": {"anna@example.com"}, "password": {password}})
	p.wantStatus(t, http.StatusForbidden).wantText(t, "The sign-in form had expired")
	if stranger.cookie("creditd_session") != "" {
		t.Fatal("a sign-in with a forged token set a session")
	}
	noCookie := f.browser(t)
	p = noCookie.post("/login", url.Values{"csrf": {"anything"}, "email": {"anna@example.com"}, "password": {password}})
	p.wantStatus(t, http.StatusForbidden)
	if noCookie.cookie("creditd_session") != "" {
		t.Fatal("a sign-in without the sign-in cookie set a session")
	}
}

// TestNoSessionFixation: a sign-in always sets a new session token, never one the browser
// brought (planted or from an earlier sign-in), and ends the session the browser had. The
// cookie is HttpOnly, SameSite=Strict, Path=/, and Secure when served over TLS or told to.
func TestNoSessionFixation(t *testing.T) {
	f := newFixture(t)
	planted := strings.Repeat("P", 40)
	b := f.browser(t)
	b.setCookie("creditd_session", planted)
	b.get("/login").wantStatus(t, http.StatusOK)
	p := b.post("/login", url.Values{"email": {"anna@example.com"}, "password": {password}})
	p.wantStatus(t, http.StatusSeeOther)
	first := b.cookie("creditd_session")
	if first == "" || first == planted {
		t.Fatalf("session after sign-in %q, planted %q", first, planted)
	}
	var set *http.Cookie
	for _, c := range (&http.Response{Header: p.Header}).Cookies() {
		if c.Name == "creditd_session" {
			set = c
		}
	}
	if set == nil || !set.HttpOnly || set.SameSite != http.SameSiteStrictMode || set.Path != "/" || set.Secure {
		t.Fatalf("session cookie %+v: want HttpOnly, SameSite=Strict, Path=/, not Secure over plain HTTP", set)
	}

	// Signing in again from a browser that has a session ends that session and sets a new one.
	// (A browser with a live session is sent past /login, so the sign-in form comes from a
	// request without it, as after the session's cookie was lost or in another tab's race.)
	fresh, err := http.Get(f.URL + "/login")
	if err != nil {
		t.Fatal(err)
	}
	fresh.Body.Close()
	var signInCookie *http.Cookie
	for _, c := range fresh.Cookies() {
		if c.Name == "creditd_signin" {
			signInCookie = c
		}
	}
	form := url.Values{"email": {"anna@example.com"}, "password": {password}, "csrf": {signInCookie.Value}}
	req, _ := http.NewRequest(http.MethodPost, f.URL+"/login", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.AddCookie(&http.Cookie{Name: signInCookie.Name, Value: signInCookie.Value})
	p = b.do(req) // the jar adds the first session's cookie
	p.wantStatus(t, http.StatusSeeOther)
	second := b.cookie("creditd_session")
	if second == "" || second == first {
		t.Fatalf("second sign-in kept the session token %q", second)
	}
	for name, token := range map[string]string{"planted": planted, "first": first} {
		if _, _, err := f.Service.Staff.ResumeSession(t.Context(), token, credit.SessionPolicy{}); err == nil {
			t.Errorf("the %s session still works after a new sign-in", name)
		}
	}
	if _, _, err := f.Service.Staff.ResumeSession(t.Context(), second, credit.SessionPolicy{}); err != nil {
		t.Errorf("the new session: %v", err)
	}

	// Secure behind a TLS-terminating proxy, and over TLS.
	secure := newFixture(t, func(c *console.Config) { c.SecureCookies = true })
	sb := secure.browser(t)
	sb.get("/login")
	p = sb.post("/login", url.Values{"email": {"anna@example.com"}, "password": {password}})
	if !strings.Contains(p.Header.Get("Set-Cookie"), "Secure") {
		t.Errorf("with SecureCookies the cookie is not Secure: %q", p.Header.Values("Set-Cookie"))
	}
	tls := httptest.NewTLSServer(f.Console)
	defer tls.Close()
	resp, err := tls.Client().Get(tls.URL + "/login")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if !strings.Contains(resp.Header.Get("Set-Cookie"), "Secure") {
		t.Errorf("over TLS the sign-in cookie is not Secure: %q", resp.Header.Values("Set-Cookie"))
	}
}

// TestWrongPasswordGivesNoSession: a wrong password and an unknown email get the same page
// (401, the same message), no session cookie, and no page afterwards.
func TestWrongPasswordGivesNoSession(t *testing.T) {
	f := newFixture(t)
	wrong := f.browser(t)
	p := wrong.signIn("anna@example.com", password+"x")
	p.wantStatus(t, http.StatusUnauthorized).wantText(t, "The email or the password is not correct.")
	if wrong.cookie("creditd_session") != "" {
		t.Fatal("a wrong password set a session cookie")
	}
	for _, c := range (&http.Response{Header: p.Header}).Cookies() {
		if c.Name == "creditd_session" && c.Value != "" {
			t.Fatalf("a wrong password set a session cookie: %+v", c)
		}
	}
	wrong.get("/companies").wantStatus(t, http.StatusSeeOther)

	unknown := f.browser(t)
	q := unknown.signIn("nobody@example.com", password)
	q.wantStatus(t, http.StatusUnauthorized)
	// The same page but for the email typed, which the form keeps.
	if strings.ReplaceAll(p.comparable(), "anna@example.com", "E") != strings.ReplaceAll(q.comparable(), "nobody@example.com", "E") {
		t.Errorf("an unknown email and a wrong password are told apart:\n%s\n---\n%s", p.Body, q.Body)
	}
	if strings.Contains(f.Logs.String(), password) {
		t.Error("the log holds a password")
	}
}

// TestSignInLimiter: sign-in attempts are limited per email (whether the account exists or
// not) and per client address; over the limit even the right password is refused with 429 and
// Retry-After and sets no session, until the limiter's clock has moved on.
func TestSignInLimiter(t *testing.T) {
	f := newFixture(t)
	b := f.browser(t)
	for i := 0; i < console.DefaultAccountAttempts; i++ {
		b.signIn("anna@example.com", "wrong password "+string(rune('a'+i))).wantStatus(t, http.StatusUnauthorized)
	}
	p := b.signIn("anna@example.com", password)
	p.wantStatus(t, http.StatusTooManyRequests).wantText(t, "Too many sign-in attempts")
	if p.Header.Get("Retry-After") == "" || b.cookie("creditd_session") != "" {
		t.Fatalf("limited sign-in: Retry-After %q, session %q", p.Header.Get("Retry-After"), b.cookie("creditd_session"))
	}
	// An unknown email is limited alike.
	for i := 0; i < console.DefaultAccountAttempts; i++ {
		b.signIn("nobody@example.com", "guess").wantStatus(t, http.StatusUnauthorized)
	}
	b.signIn("nobody@example.com", "guess").wantStatus(t, http.StatusTooManyRequests)
	// Another account from the same address is not (the address allows 30 a minute).
	b.mustSignIn("otto@example.com", password)
	// Ten in any ten minutes (a sliding window, like contract §8): nine minutes later still
	// refused; once the first attempt is ten minutes old, one more is allowed and the right
	// password works.
	f.Clock.Advance(9 * time.Minute)
	f.browser(t).signIn("anna@example.com", password).wantStatus(t, http.StatusTooManyRequests)
	f.Clock.Advance(time.Minute)
	b2 := f.browser(t)
	b2.mustSignIn("anna@example.com", password)

	// Per address: with 3 failures a minute, the fourth failure from the address is refused
	// whatever the email, until the first is a minute old; the right password is not
	// (TestBotBehindTheStaffsProxyCannotLockThemOut).
	g := newFixture(t, func(c *console.Config) { c.AddressLimiter = ratelimit.NewMemory(3, time.Minute, c.Now) })
	gb := g.browser(t)
	gb.signIn("a@example.com", "x").wantStatus(t, http.StatusUnauthorized)
	gb.signIn("b@example.com", "x").wantStatus(t, http.StatusUnauthorized)
	gb.signIn("anna@example.com", "x").wantStatus(t, http.StatusUnauthorized)
	gb.signIn("anna@example.com", "y").wantStatus(t, http.StatusTooManyRequests)
	g.Clock.Advance(59 * time.Second)
	gb.signIn("otto@example.com", "x").wantStatus(t, http.StatusTooManyRequests)
	g.Clock.Advance(time.Second)
	gb.signIn("otto@example.com", "x").wantStatus(t, http.StatusUnauthorized)
}

// TestOtherStoresRecordsAreNotFound: a staff member reaching another store's company,
// application or key by URL, to read it or act on it, gets exactly the page an unknown ID gets
// (404), sees none of its data, and changes nothing; the lists show only their own store.
func TestOtherStoresRecordsAreNotFound(t *testing.T) {
	f := newFixture(t)
	b := f.browser(t)
	b.mustSignIn("anna@example.com", password)
	canaries := []string{"Canary", "canary@example.com", f.otherCompany.ID, f.otherApp.ID, f.otherKey.ID, "Other Wholesale"}

	unknownCompany, unknownApp, unknownKey := "co_0000000000000000000000", "app_0000000000000000000000", "key_0000000000000000000000"
	for _, pattern := range console.Patterns(f.Console) {
		if !strings.Contains(pattern, "{id}") {
			continue
		}
		method, foreign := f.path(pattern, f.otherCompany.ID, f.otherApp.ID, f.otherKey.ID)
		_, unknown := f.path(pattern, unknownCompany, unknownApp, unknownKey)
		form := url.Values{"note": {"probe"}, "amount": {"1.00"}, "status": {"in_review"}, "grace": {"1h"}, "kind": {"payment"}}
		var theirs, none *page
		if method == http.MethodGet {
			theirs, none = b.get(foreign), b.get(unknown)
		} else {
			b.get("/companies")
			theirs = b.post(foreign, form)
			b.get("/companies")
			none = b.post(unknown, form)
		}
		theirs.wantStatus(t, http.StatusNotFound).wantNoText(t, canaries...)
		none.wantStatus(t, http.StatusNotFound)
		if strings.ReplaceAll(theirs.comparable(), foreign, "ID") != strings.ReplaceAll(none.comparable(), unknown, "ID") {
			t.Errorf("%s: another store's record and an unknown one answer differently:\n%s\n---\n%s", pattern, theirs.Body, none.Body)
		}
	}
	b.get("/companies").wantStatus(t, http.StatusOK).wantText(t, f.company.Name).wantNoText(t, canaries...)
	b.get("/companies?q=Foreign").wantStatus(t, http.StatusOK).wantText(t, "No company matches").wantNoText(t, canaries...)
	b.get("/applications").wantStatus(t, http.StatusOK).wantText(t, "Bergbäckerei Huber").wantNoText(t, canaries...)
	b.get("/settings/api").wantStatus(t, http.StatusOK).wantText(t, f.key.ID).wantNoText(t, canaries...)
	// The other store's records are as they were.
	other := credittest.Staff(f.otherStore)
	co, _ := f.Service.Companies.Get(other, f.otherCompany.ID)
	if co.Hold != nil || co.CreditLimit.Amount != "999.00" || co.Outstanding.Amount != "0.00" {
		t.Errorf("the other store's company changed: %+v", co)
	}
	a, _ := f.Service.Applications.Get(other, f.otherApp.ID)
	if a.Status != credit.AppSubmitted {
		t.Errorf("the other store's application changed: %+v", a)
	}
	keys, _ := f.Service.Keys.List(other, time.Hour)
	if len(keys) != 1 || keys[0].RevokedAt != nil {
		t.Errorf("the other store's key changed: %+v", keys)
	}
	// Erasure in my store leaves the other store's person alone.
	b.get("/privacy")
	b.post("/privacy/erase", url.Values{"email": {"canary@example.com"}, "confirm": {"yes"}}).wantStatus(t, http.StatusSeeOther)
	if a, _ := f.Service.Applications.Get(other, f.otherApp.ID); a.Contact.Redacted {
		t.Error("an erasure in one store redacted another store's application")
	}
}

// TestPagesCarrySecurityHeaders: every page forbids framing, sniffing, caching and anything
// but the console's own scripts and styles.
func TestPagesCarrySecurityHeaders(t *testing.T) {
	f := newFixture(t)
	b := f.browser(t)
	for _, p := range []*page{b.get("/login"), b.signIn("anna@example.com", password), b.get("/companies"), b.get("/companies/" + f.company.ID)} {
		h := p.Header
		if csp := h.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "script-src 'self'") ||
			!strings.Contains(csp, "frame-ancestors 'none'") || strings.Contains(csp, "unsafe") {
			t.Errorf("Content-Security-Policy %q", csp)
		}
		if h.Get("Cache-Control") != "no-store" || h.Get("X-Frame-Options") != "DENY" || h.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("headers %v", h)
		}
	}
	css := b.get("/assets/console.css")
	css.wantStatus(t, http.StatusOK)
	if !strings.HasPrefix(css.Header.Get("Content-Type"), "text/css") {
		t.Errorf("stylesheet served as %q", css.Header.Get("Content-Type"))
	}
}
