package console_test

import (
	"fmt"
	"net/http"
	"net/netip"
	"testing"

	"github.com/creditd/creditd/console"
	"github.com/creditd/creditd/httpapi"
)

// forwardedFor is a transport that sends every request as a reverse proxy would forward it
// from client: with X-Forwarded-For naming it.
type forwardedFor struct{ client string }

func (f forwardedFor) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("X-Forwarded-For", f.client)
	return http.DefaultTransport.RoundTrip(r)
}

// TestBotBehindTheStaffsProxyCannotLockThemOut is issue 32's console case: behind the proxy
// the console trusts, a guessing bot and the staff share one client address. The bot's 50
// wrong passwords (some on the staff member's own email, fewer than its per-email limit) are
// 401 up to the address's 30 failures a minute and 429 beyond; the staff member's right
// password from the same address then signs in, and the bot is still refused. Another
// address behind the same proxy is not limited by the bot's failures.
func TestBotBehindTheStaffsProxyCannotLockThemOut(t *testing.T) {
	f := newFixture(t, func(c *console.Config) {
		c.TrustedProxies = httpapi.TrustedProxies{netip.MustParsePrefix("127.0.0.1/32")}
	})
	const office = "203.0.113.50"
	bot := f.browser(t)
	bot.client.Transport = forwardedFor{office}
	for i := range 50 {
		email := fmt.Sprintf("admin%d@example.com", i)
		if i%10 == 0 {
			email = "anna@example.com" // five guesses at the staff member's own account
		}
		p := bot.signIn(email, "guess "+fmt.Sprint(i))
		switch {
		case i < console.DefaultAddressAttempts && p.Status != http.StatusUnauthorized:
			t.Fatalf("wrong password %d: %d, want 401", i+1, p.Status)
		case i >= console.DefaultAddressAttempts && (p.Status != http.StatusTooManyRequests || p.Header.Get("Retry-After") == ""):
			t.Fatalf("wrong password %d: %d, Retry-After %q; want 429 with Retry-After", i+1, p.Status, p.Header.Get("Retry-After"))
		}
	}
	staff := f.browser(t)
	staff.client.Transport = forwardedFor{office}
	staff.mustSignIn("anna@example.com", password)
	bot.signIn("anna@example.com", "one more guess").wantStatus(t, http.StatusTooManyRequests)

	elsewhere := f.browser(t)
	elsewhere.client.Transport = forwardedFor{"198.51.100.7"}
	elsewhere.signIn("otto@example.com", "typo").wantStatus(t, http.StatusUnauthorized)
}
