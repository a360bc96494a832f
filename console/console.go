// Package console is the staff console: the admin interface of the specification, in the
// browser, for a store's staff. Staff sign in with an email and a password and then see and
// change only their own store: every page runs as tenant.Staff of that store, the viewer the
// command line uses, so the data layer scopes every query and the timeline shows the staff
// member's name.
//
// The console holds no rule of its own: each page reads through package credit and each form
// calls one of its operations, the same ones REST, GraphQL and the command line call, and shows
// a refusal with the message httpapi.Describe gives it. Pages are rendered on the server with
// html/template from files embedded in the binary, and work without JavaScript; console.js
// only asks for confirmation before irreversible actions and offers to copy a new secret.
//
// It is served on its own listener (creditd serve --admin-addr), never on the API's.
package console

import (
	"context"
	"embed"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/httpapi"
	"github.com/creditd/creditd/ratelimit"
)

//go:embed templates/*.html
var templateFiles embed.FS

//go:embed assets/console.css assets/console.js assets/favicon.svg
var assetFiles embed.FS

// Sign-in attempt limits, unless configured otherwise. Every attempt on an email counts,
// successful or not, so that parallel guesses at one account cannot slip through before a
// failure is recorded. Only failed attempts count against an address: an office, or everyone
// behind one proxy, shares it, and a guessing bot there must not lock the staff out (contract
// §2 as amended 2026-11-27).
const (
	// DefaultAddressAttempts is failed sign-in attempts a minute from one client address.
	DefaultAddressAttempts = 30
	// DefaultAccountAttempts is sign-in attempts for one email per AccountAttemptsPeriod,
	// whether or not an account has that email.
	DefaultAccountAttempts = 10
	// AccountAttemptsPeriod is the period of DefaultAccountAttempts: at most ten attempts in
	// any ten minutes (a sliding window, like the API's limit).
	AccountAttemptsPeriod = 10 * time.Minute
)

// Config configures a Console.
type Config struct {
	// Service is the domain New serves; NewWith takes its Services instead.
	Service *credit.Service
	Logger  *slog.Logger
	// Now is the sign-in limiters' clock; nil means time.Now. Sessions follow the service's
	// clock.
	Now func() time.Time
	// Sessions are the idle timeout and the absolute lifetime of staff sessions.
	Sessions credit.SessionPolicy
	// SecureCookies marks cookies Secure although the console is served over plain HTTP: set
	// it when a TLS-terminating proxy stands in front. Over TLS they are Secure anyway.
	SecureCookies bool
	// AddressLimiter and AccountLimiter limit failed sign-in attempts per client address and
	// sign-in attempts per email; nil means in-memory limiters with the defaults above.
	AddressLimiter ratelimit.Limiter
	AccountLimiter ratelimit.Limiter
	// TrustedProxies are the reverse proxies whose X-Forwarded-For or Forwarded header names
	// the client address (serve --trusted-proxy); none means the TCP peer is the client.
	TrustedProxies httpapi.TrustedProxies
	// Command is how the pages' hints name the program, as serve's own hints do ("creditd",
	// "go run ./cmd/creditd"); "" means creditd. DatabaseFlag is the " --db PATH" a suggested
	// command repeats, "" when the database comes from CREDITD_DB or the default.
	Command      string
	DatabaseFlag string
	// SendWebhookNow makes a webhook delivery at once and records its attempt: serve's
	// webhook worker's SendNow, which `creditd webhook test` uses too. Nil hides the console's
	// "Send a test event" button.
	SendWebhookNow func(context.Context, *credit.WebhookDue) (credit.WebhookAttemptRecord, error)
}

// Console is the staff console's HTTP handler.
type Console struct {
	svc      Services
	log      *slog.Logger
	policy   credit.SessionPolicy
	secure   bool
	byAddr   ratelimit.Limiter
	byEmail  ratelimit.Limiter
	sendNow  func(context.Context, *credit.WebhookDue) (credit.WebhookAttemptRecord, error)
	pages    *pages
	handler  http.Handler
	assetTag string
	command  string
	dbFlag   string
	// patterns are the routes served, for the tests that must cover every one.
	patterns []string
}

// New builds the console over cfg.Service.
func New(cfg Config) *Console { return NewWith(servicesOf(cfg.Service), cfg) }

// NewWith builds the console over the given services (cfg.Service is not used).
func NewWith(s Services, cfg Config) *Console {
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	if s.Now == nil {
		s.Now = time.Now
	}
	c := &Console{svc: s, log: log, policy: cfg.Sessions, secure: cfg.SecureCookies,
		byAddr: cfg.AddressLimiter, byEmail: cfg.AccountLimiter, command: cfg.Command, dbFlag: cfg.DatabaseFlag,
		sendNow: cfg.SendWebhookNow}
	if c.command == "" {
		c.command = "creditd"
	}
	if c.byAddr == nil {
		c.byAddr = ratelimit.NewMemory(DefaultAddressAttempts, time.Minute, cfg.Now)
	}
	if c.byEmail == nil {
		c.byEmail = ratelimit.NewMemory(DefaultAccountAttempts, AccountAttemptsPeriod, cfg.Now)
	}
	c.pages = mustParsePages()
	assets, tag := assetHandler()
	c.assetTag = tag

	mux := http.NewServeMux()
	handle := func(pattern string, h http.Handler) {
		mux.Handle(pattern, h)
		c.patterns = append(c.patterns, pattern)
	}
	handle("GET /assets/", assets)
	handle("GET /login", http.HandlerFunc(c.loginPage))
	handle("POST /login", http.HandlerFunc(c.login))
	handle("POST /logout", c.staffOnly(c.logout))
	handle("GET /{$}", c.staffOnly(c.overview))

	handle("GET /companies", c.staffOnly(c.companies))
	handle("GET /companies/new", c.staffOnly(c.newCompany))
	handle("POST /companies/new", c.staffOnly(c.createCompany))
	handle("GET /companies/{id}", c.staffOnly(c.company))
	handle("POST /companies/{id}/hold", c.staffOnly(c.placeHold))
	handle("POST /companies/{id}/hold/lift", c.staffOnly(c.liftHold))
	handle("POST /companies/{id}/credit-limit", c.staffOnly(c.setCreditLimit))
	handle("POST /companies/{id}/adjustments", c.staffOnly(c.createAdjustment))
	handle("POST /companies/{id}/ledger", c.staffOnly(c.recordLedgerEntry))
	handle("POST /companies/{id}/platform-company-gid", c.staffOnly(c.setCompanyGID))
	handle("GET /companies/{id}/statement", c.staffOnly(c.statement))

	handle("GET /receivables", c.staffOnly(c.receivables))
	handle("GET /collections", c.staffOnly(c.collections))

	handle("GET /applications", c.staffOnly(c.applications))
	handle("GET /applications/{id}", c.staffOnly(c.application))
	handle("POST /applications/{id}/status", c.staffOnly(c.setApplicationStatus))
	// A page's own address takes its forms too, so that a refused form, shown again with its
	// errors, leaves the browser on an address it can reload; a page with several forms tells
	// them apart by a field "form" (forms name their action). The addresses of each action
	// stay for forms of pages served before.
	handle("POST /applications/{id}", c.staffOnly(c.setApplicationStatus))
	handle("POST /companies/{id}", c.staffOnly(c.companyForm))
	handle("POST /settings/api", c.staffOnly(c.settingsForm))
	handle("POST /webhooks/{id}", c.staffOnly(c.webhookForm))
	handle("POST /platform", c.staffOnly(c.platformForm))
	handle("POST /privacy", c.staffOnly(c.erasePerson))

	handle("GET /settings/api", c.staffOnly(c.apiSettings))
	handle("POST /settings/api/keys", c.staffOnly(c.createKey))
	handle("POST /settings/api/keys/{id}/rotate", c.staffOnly(c.rotateKey))
	handle("POST /settings/api/keys/{id}/revoke", c.staffOnly(c.revokeKey))

	handle("GET /settings/reminders", c.staffOnly(c.reminderSettings))
	handle("POST /settings/reminders", c.staffOnly(c.setReminderSchedule))

	handle("GET /webhooks", c.staffOnly(c.webhooks))
	handle("POST /webhooks", c.staffOnly(c.webhooksForm))
	handle("GET /webhooks/{id}", c.staffOnly(c.webhook))
	handle("POST /webhooks/{id}/enable", c.staffOnly(c.setWebhookEnabled(true)))
	handle("POST /webhooks/{id}/disable", c.staffOnly(c.setWebhookEnabled(false)))
	handle("POST /webhooks/{id}/rotate", c.staffOnly(c.rotateWebhook))
	handle("POST /webhooks/{id}/redeliver", c.staffOnly(c.redeliverWebhook))
	handle("POST /webhooks/{id}/test", c.staffOnly(c.testWebhook))

	handle("GET /platform", c.staffOnly(c.platform))
	handle("POST /platform/secret", c.staffOnly(c.rotatePlatformSecret))
	handle("POST /platform/deliveries/{id}/retry", c.staffOnly(c.retryPlatformDelivery))

	handle("GET /privacy", c.staffOnly(c.privacy))
	handle("POST /privacy/erase", c.staffOnly(c.erasePerson))

	c.handler = httpapi.WithClientAddress(cfg.TrustedProxies, httpapi.WithRequestID(c.observe(c.recoverPanics(securityHeaders(c.fallbacks(mux))))))
	return c
}

// hint is a command line for the reader to run, naming the program and its database as serve's
// hints do: stdin (a pipe into it, or ""), the subcommand, then its flags.
func (c *Console) hint(stdin, subcommand, flags string) string {
	return stdin + c.command + " " + subcommand + c.dbFlag + " " + flags
}

// ServeHTTP serves a request.
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) { c.handler.ServeHTTP(w, r) }

// Serve serves the console on l until ctx is cancelled, then shuts down like the API.
func (c *Console) Serve(ctx context.Context, l net.Listener) error { return httpapi.Serve(ctx, l, c) }
