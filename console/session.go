package console

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"math"
	"net/http"
	"strconv"
	"strings"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/httpapi"
	"github.com/creditd/creditd/ids"
	"github.com/creditd/creditd/ratelimit"
)

// Cookies. The session cookie holds the session token, of which the database keeps only the
// SHA-256; the sign-in cookie holds the token the sign-in form must echo, since there is no
// session yet to bind that form's CSRF token to.
const (
	sessionCookie = "creditd_session"
	signInCookie  = "creditd_signin"
)

// signInTokenLen is the number of base62 characters of a sign-in form's token.
const signInTokenLen = 32

// maxFormBytes bounds a form's body; the largest form is a few hundred bytes.
const maxFormBytes = 64 << 10

// visit is a signed-in staff member's request: the context carrying their viewer, their
// session and store, and the CSRF token every form of the page carries.
type visit struct {
	ctx     context.Context
	session credit.StaffSession
	token   string
	store   credit.StoreInfo
	csrf    string
}

// csrfToken is the session's CSRF token: an HMAC of a fixed label keyed with the session
// token. It is bound to the session (a new sign-in gives a new one), needs no storage, and
// reveals nothing about the token, which only the HttpOnly cookie carries.
func csrfToken(sessionToken string) string {
	mac := hmac.New(sha256.New, []byte(sessionToken))
	mac.Write([]byte("creditd console CSRF v1"))
	return base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

// sameToken compares a submitted token with the expected one in constant time.
func sameToken(got, want string) bool {
	return want != "" && subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

// secureCookies reports whether cookies get the Secure attribute: over TLS, or when the console is
// told it stands behind a TLS-terminating proxy.
func (c *Console) secureCookies(r *http.Request) bool { return c.secure || r.TLS != nil }

func (c *Console) setCookie(w http.ResponseWriter, r *http.Request, name, value, path string, maxAge int) {
	http.SetCookie(w, &http.Cookie{
		Name:     name,
		Value:    value,
		Path:     path,
		MaxAge:   maxAge,
		HttpOnly: true,
		Secure:   c.secureCookies(r),
		SameSite: http.SameSiteStrictMode,
	})
}

// staffOnly runs h for a signed-in staff member, under their viewer. Without a live session
// the browser is sent to the sign-in page and nothing else happens; a POST must carry the
// session's CSRF token, or it is refused before anything is read or written.
func (c *Console) staffOnly(h func(http.ResponseWriter, *http.Request, *visit)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v, ok := c.resume(w, r)
		if !ok {
			return
		}
		if r.Method == http.MethodPost {
			r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
			if err := r.ParseForm(); err != nil {
				c.problem(w, r, v, http.StatusBadRequest, "The form could not be read. Reload the page and try again.")
				return
			}
			if !sameToken(r.PostForm.Get("csrf"), v.csrf) {
				c.problem(w, r, v, http.StatusForbidden, "This form has expired or was not sent from this console. Reload the page and try again.")
				return
			}
		}
		h(w, r, v)
	})
}

// resume finds the request's session. Without one it answers with a redirect to the sign-in
// page (or an error page when the database fails) and returns false.
func (c *Console) resume(w http.ResponseWriter, r *http.Request) (*visit, bool) {
	cookie, err := r.Cookie(sessionCookie)
	if err != nil || cookie.Value == "" {
		http.Redirect(w, r, "/login", http.StatusSeeOther)
		return nil, false
	}
	ctx, session, err := c.svc.Staff.ResumeSession(r.Context(), cookie.Value, c.policy)
	if credit.CodeOf(err) == credit.CodeUnauthenticated {
		c.setCookie(w, r, sessionCookie, "", "/", -1)
		http.Redirect(w, r, "/login", http.StatusSeeOther)
		return nil, false
	}
	if err != nil {
		c.fail(w, r, nil, err)
		return nil, false
	}
	store, err := c.svc.Stores.Current(ctx)
	if err != nil {
		c.fail(w, r, nil, err)
		return nil, false
	}
	if info := infoFrom(r.Context()); info != nil {
		info.storeID, info.staffID = session.StoreID, session.StaffID
	}
	return &visit{ctx: ctx, session: session, token: cookie.Value, store: store, csrf: csrfToken(cookie.Value)}, true
}

// signInBody is what the sign-in page shows.
type signInBody struct {
	Email   string
	Error   string
	Info    string
	CSRF    string
	Limited bool
}

// loginPage shows the sign-in form, or sends a signed-in member to the companies.
func (c *Console) loginPage(w http.ResponseWriter, r *http.Request) {
	if cookie, err := r.Cookie(sessionCookie); err == nil && cookie.Value != "" {
		if _, _, err := c.svc.Staff.ResumeSession(r.Context(), cookie.Value, c.policy); err == nil {
			http.Redirect(w, r, "/companies", http.StatusSeeOther)
			return
		}
	}
	body := signInBody{}
	if r.URL.Query().Get("signed_out") != "" {
		body.Info = "You have signed out."
	}
	c.renderSignIn(w, r, http.StatusOK, body)
}

// renderSignIn renders the sign-in page with the token its form must echo: the browser's
// sign-in cookie when it has a well-formed one (so that two tabs, or a page that loads twice,
// do not invalidate each other's form), else a new one.
func (c *Console) renderSignIn(w http.ResponseWriter, r *http.Request, status int, body signInBody) {
	token := ""
	if cookie, err := r.Cookie(signInCookie); err == nil && len(cookie.Value) == signInTokenLen && strings.Trim(cookie.Value, ids.Base62) == "" {
		token = cookie.Value
	} else {
		token = ids.Random(signInTokenLen)
	}
	c.setCookie(w, r, signInCookie, token, "/login", 3600)
	body.CSRF = token
	c.render(w, r, status, "login.html", &page{Title: "Sign in", Body: body})
}

// login checks the sign-in form: its token, the per-email attempt limit (charged on every
// attempt), then the email and password; a failure is charged to the client address, and
// answered 429 once the address is over its limit. A right password is never refused by the
// address's limit, so a bot guessing behind the staff's proxy cannot lock them out. It answers
// an unknown email and a wrong password alike. A successful sign-in ends any session the
// browser had and sets a new session token, so no session id from before sign-in survives it.
func (c *Console) login(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	if err := r.ParseForm(); err != nil {
		c.renderSignIn(w, r, http.StatusBadRequest, signInBody{Error: "The form could not be read. Please try again."})
		return
	}
	email := strings.TrimSpace(r.PostForm.Get("email"))
	password := r.PostForm.Get("password")
	cookie, err := r.Cookie(signInCookie)
	if err != nil || !sameToken(r.PostForm.Get("csrf"), cookie.Value) {
		c.renderSignIn(w, r, http.StatusForbidden, signInBody{Email: email, Error: "The sign-in form had expired. Please sign in again."})
		return
	}
	if retry, limited := c.signInLimited(r, c.byEmail, "console-signin-email:"+accountKey(email)); limited {
		c.refuseSignIn(w, r, email, retry)
		return
	}
	if old, err := r.Cookie(sessionCookie); err == nil && old.Value != "" {
		if err := c.svc.Staff.SignOut(r.Context(), old.Value); err != nil {
			c.fail(w, r, nil, err)
			return
		}
	}
	token, session, err := c.svc.Staff.SignIn(r.Context(), email, password, c.policy)
	if credit.CodeOf(err) == credit.CodeUnauthenticated {
		if retry, limited := c.signInLimited(r, c.byAddr, "console-signin-addr:"+httpapi.ClientAddress(r)); limited {
			c.refuseSignIn(w, r, email, retry)
			return
		}
		c.log.InfoContext(r.Context(), "sign-in refused", "request_id", httpapi.RequestID(r.Context()), "address", httpapi.ClientAddress(r))
		c.renderSignIn(w, r, http.StatusUnauthorized, signInBody{Email: email, Error: sentence(httpapi.Describe(err).Message)})
		return
	}
	if err != nil {
		c.fail(w, r, nil, err)
		return
	}
	c.log.InfoContext(r.Context(), "staff signed in", "request_id", httpapi.RequestID(r.Context()),
		"staff_id", session.StaffID, "store_id", session.StoreID)
	c.setCookie(w, r, signInCookie, "", "/login", -1)
	c.setCookie(w, r, sessionCookie, token, "/", 0)
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

// signInLimited charges one attempt to key and reports whether its limit is spent, with the
// seconds to wait. A limiter that fails lets the attempt through: Argon2id still makes each
// guess slow.
func (c *Console) signInLimited(r *http.Request, limiter ratelimit.Limiter, key string) (int, bool) {
	d, err := limiter.Take(r.Context(), key, 1)
	if err != nil || d.Allowed {
		return 0, false
	}
	return max(1, int(math.Ceil(d.RetryAfter.Seconds()))), true
}

// accountKey is the per-email limit's key of an email, whether or not an account has it.
func accountKey(email string) string {
	account := strings.ToLower(email)
	if len(account) > 320 {
		account = account[:320]
	}
	return account
}

// refuseSignIn answers an attempt over a sign-in limit: 429 with Retry-After, and no session.
func (c *Console) refuseSignIn(w http.ResponseWriter, r *http.Request, email string, retry int) {
	w.Header().Set("Retry-After", strconv.Itoa(retry))
	c.log.InfoContext(r.Context(), "sign-in attempts limited", "request_id", httpapi.RequestID(r.Context()), "address", httpapi.ClientAddress(r))
	c.renderSignIn(w, r, http.StatusTooManyRequests, signInBody{Email: email, Limited: true,
		Error: "Too many sign-in attempts. Please wait " + strconv.Itoa(retry) + " seconds and try again."})
}

// logout ends the session and clears its cookie.
func (c *Console) logout(w http.ResponseWriter, r *http.Request, v *visit) {
	if err := c.svc.Staff.SignOut(r.Context(), v.token); err != nil {
		c.fail(w, r, v, err)
		return
	}
	c.setCookie(w, r, sessionCookie, "", "/", -1)
	http.Redirect(w, r, "/login?signed_out=1", http.StatusSeeOther)
}
