package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"runtime/debug"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/creditd/creditd/console"
	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/database"
	"github.com/creditd/creditd/delivery"
	"github.com/creditd/creditd/demo"
	"github.com/creditd/creditd/graph/playground"
	"github.com/creditd/creditd/httpapi"
	"github.com/creditd/creditd/ratelimit"
	"github.com/creditd/creditd/server"
)

// serveGCPercent is serve's garbage collection target (Go's GOGC) unless the GOGC environment
// variable is set. Go's default, 100, collects whenever the heap has doubled from what is
// live; a server's live heap is small and most of what it allocates dies with its request, so
// collecting half as often saves CPU for some more peak memory (issue 23; README,
// Configuration).
const serveGCPercent = 200

// setServeGC sets serveGCPercent unless GOGC is set in the environment lookup reads.
func setServeGC(lookup func(string) (string, bool)) {
	if _, ok := lookup("GOGC"); !ok {
		debug.SetGCPercent(serveGCPercent)
	}
}

func serveCommand() command {
	return command{
		summary: "run the HTTP API (REST /v1, GraphQL, playground, health and metrics) and, with --admin-addr, the staff console",
		flags: func(fs *flag.FlagSet, opts *credit.Options) func(context.Context, *cmdEnv, []string) error {
			f := declareServeFlags(fs, opts)
			return func(ctx context.Context, env *cmdEnv, args []string) error {
				if err := f.check(args); err != nil {
					return err
				}
				return serve(ctx, env, f)
			}
		},
		createsDatabase: func(fs *flag.FlagSet) bool { return fs.Lookup("demo").Value.String() == "true" },
	}
}

// serveFlags are serve's flags, once parsed. The ones credit.Options holds (the idempotency
// TTL, the event retention, --db-timeout, --allow-private-webhooks) are in opts.
type serveFlags struct {
	opts *credit.Options

	addr, adminAddr, pprofAddr, redisURL string
	demo                                 bool
	addrGiven                            func() bool // whether the command line gave --addr (listenAddr)
	rateLimit, platformRateLimit         int
	walAutoCheckpoint                    int
	sweep, webhookPoll                   time.Duration
	adminIdle, adminLifetime             time.Duration
	adminSecure                          bool
	corsOrigins                          []string
	trustedProxies                       httpapi.TrustedProxies
}

// defaultAddr is where serve listens without --addr: every interface, as a server behind a
// load balancer or in a container must. demoAddr is where serve --demo listens without --addr:
// this machine only, because a demo prints full-access keys and a newcomer's laptop on a café's
// network should not offer them to it.
const (
	defaultAddr = ":8080"
	demoAddr    = "127.0.0.1:8080"
)

// listenAddr is where serve listens: --addr when given, else demoAddr for --demo and
// defaultAddr otherwise.
func (f *serveFlags) listenAddr() string {
	switch {
	case f.addrGiven():
		return f.addr
	case f.demo:
		return demoAddr
	}
	return defaultAddr
}

// declareServeFlags declares serve's flags on fs, for what it returns and opts to hold.
func declareServeFlags(fs *flag.FlagSet, opts *credit.Options) *serveFlags {
	f := &serveFlags{opts: opts}
	fs.StringVar(&f.addr, "addr", defaultAddr, "listen address; with --demo the default is "+demoAddr+", this machine only")
	// --demo picks its own default without overriding an address the user chose (even ":8080").
	f.addrGiven = func() (given bool) {
		fs.Visit(func(fl *flag.Flag) { given = given || fl.Name == "addr" })
		return given
	}
	fs.BoolVar(&f.demo, "demo", false, "seed a demo store, companies, applications and three keys into an empty database")
	fs.IntVar(&f.rateLimit, "rate-limit", server.DefaultRateLimit, "requests per minute per store")
	fs.IntVar(&f.platformRateLimit, "platform-rate-limit", server.DefaultPlatformRateLimit, "the commerce platform's requests per minute per store (POST /platform/...)")
	fs.DurationVar(&opts.IdempotencyTTL, "idempotency-ttl", credit.DefaultIdempotencyTTL, "how long Idempotency-Key results are kept")
	fs.DurationVar(&opts.EventRetention, "event-retention", credit.DefaultEventRetention, "how long events (GET /v1/events, webhooks) are kept; at least 720h")
	fs.DurationVar(&f.sweep, "sweep-interval", time.Minute, "how often overdue holds are swept and expired idempotency keys and events purged")
	fs.StringVar(&f.redisURL, "redis", "", "redis:// URL for a rate limit shared by several instances")
	fs.StringVar(&f.pprofAddr, "pprof", "", "serve Go's pprof profiles on this separate address (off by default; bind it to loopback)")
	fs.StringVar(&f.adminAddr, "admin-addr", "", "serve the staff console on this separate address (off by default)")
	fs.DurationVar(&f.adminIdle, "admin-idle-timeout", credit.DefaultSessionIdleTimeout, "end a staff console session unused for this long")
	fs.DurationVar(&f.adminLifetime, "admin-session-lifetime", credit.DefaultSessionLifetime, "end a staff console session this long after sign-in, however active")
	fs.BoolVar(&opts.AllowPrivateWebhooks, "allow-private-webhooks", false, "deliver webhooks to http:// and loopback or private addresses too (development and tests only: it lets endpoint owners reach internal services)")
	// The same deadline bounds each database read of a subscription (credit.Options.DBTimeout).
	fs.DurationVar(&opts.DBTimeout, "db-timeout", server.DefaultDBTimeout, "the deadline of each request's database work (and PostgreSQL's statement_timeout); past it the answer is 503 unavailable")
	fs.DurationVar(&f.webhookPoll, "webhook-poll-interval", delivery.DefaultPollInterval, "how often the webhook worker looks for due deliveries when idle")
	fs.Func("cors-origin", "allow browser pages on this origin, such as https://dashboard.example.com, to call the API (repeatable; CORS is off without it)", func(v string) error {
		if err := server.CheckCORSOrigin(v); err != nil {
			return err
		}
		f.corsOrigins = append(f.corsOrigins, v)
		return nil
	})
	fs.Func("trusted-proxy", "take the client address from X-Forwarded-For (or Forwarded) of requests whose peer is in this CIDR range, such as 10.0.0.0/8: your load balancers (repeatable; without it the peer is the client)", func(v string) error {
		p, err := httpapi.ParseTrustedProxy(v)
		if err != nil {
			return err
		}
		f.trustedProxies = append(f.trustedProxies, p)
		return nil
	})
	fs.IntVar(&f.walAutoCheckpoint, "wal-autocheckpoint", 1000, "SQLite only: checkpoint the write-ahead log into the database file once it holds this many pages; 0 leaves checkpoints to Litestream run beside serve (see the README's Backups)")
	fs.BoolVar(&f.adminSecure, "admin-secure-cookies", false, "mark the console's cookies Secure: set it when a TLS-terminating proxy serves the console over HTTPS")
	return f
}

// check refuses flag values serve cannot run with, as usage errors, and positional arguments.
func (f *serveFlags) check(args []string) error {
	if err := exactlyArgs(args); err != nil {
		return err
	}
	switch {
	case f.rateLimit < 1:
		return usagef("--rate-limit must be at least 1")
	case f.platformRateLimit < 1:
		return usagef("--platform-rate-limit must be at least 1")
	case f.opts.IdempotencyTTL <= 0 || f.sweep <= 0:
		return usagef("--idempotency-ttl and --sweep-interval must be positive")
	case f.opts.DBTimeout <= 0:
		return usagef("--db-timeout must be positive")
	case f.walAutoCheckpoint < 0:
		return usagef("--wal-autocheckpoint must be 0 (off, for Litestream) or a number of pages")
	case f.webhookPoll <= 0:
		return usagef("--webhook-poll-interval must be positive")
	case f.opts.EventRetention < credit.DefaultEventRetention:
		return usagef("--event-retention must be at least 720h (30 days): integrators are promised a month to catch up")
	case f.adminIdle <= 0 || f.adminLifetime <= 0:
		return usagef("--admin-idle-timeout and --admin-session-lifetime must be positive")
	case f.adminAddr != "" && f.adminAddr == f.listenAddr() && !strings.HasSuffix(f.listenAddr(), ":0"):
		return usagef("--admin-addr must differ from --addr: the staff console never shares the API's listener")
	}
	return nil
}

// serve runs the API, the staff console and the pprof server (each on its listener, when
// asked for) and the background loops (the overdue sweeps, the webhook worker) until ctx ends
// or a server fails. Everything it starts is a task of one group, and it returns only once
// every task has (see tasks for the order they stop in): the database, which Main.Close
// closes after serve returns, outlives them all.
func serve(ctx context.Context, env *cmdEnv, f *serveFlags) error {
	setServeGC(os.LookupEnv)
	log := slog.New(slog.NewJSONHandler(env.m.Stderr, nil))
	slog.SetDefault(log)
	ls, err := openServeListeners(f)
	if err != nil {
		return err
	}
	// Each server closes its own listener; this closes them all when serve fails to start.
	defer ls.close()
	if f.demo {
		if err := seedDemo(ctx, env, "http://"+displayAddr(ls.api.Addr())); err != nil {
			return err
		}
	}
	// Each request's database work ends by --db-timeout; so does each statement of this
	// process on the database's side (PostgreSQL's statement_timeout, SQLite's busy
	// timeout), the webhook worker's and the sweep's included.
	env.db.LimitStatements(f.opts.DBTimeout)
	if database.SQLitePath(env.dbPath) != "" {
		if err := env.db.SetWALAutoCheckpoint(f.walAutoCheckpoint); err != nil {
			return err
		}
	} else if f.walAutoCheckpoint != 1000 {
		return usagef("--wal-autocheckpoint applies to SQLite only: PostgreSQL checkpoints by itself")
	}
	worker := env.webhookWorker(f.opts.AllowPrivateWebhooks, log, f.webhookPoll)
	cfg, closeLimiters, err := f.apiConfig(ctx, env, log)
	if err != nil {
		return err
	}
	defer closeLimiters()
	cfg.Collectors = worker.Collectors()
	api := server.New(cfg)

	// Nothing below fails before wait: every task started is joined.
	t := newTasks(ctx)
	t.loop("sweeps", func(ctx context.Context) { runSweeps(ctx, env, log, f.sweep) })
	// The webhook worker's attempts under way when it stops are cut short, and sent again by
	// the next start.
	t.loop("webhook worker", worker.Run)
	if ls.pprof != nil {
		t.server("pprof", func(ctx context.Context) error { return serveProfiles(ctx, ls.pprof, log) })
	}
	if ls.console != nil {
		startConsole(ctx, t, env, f, log, ls.console, worker)
	}
	t.server("API", func(ctx context.Context) error { return api.Serve(ctx, ls.api) })
	log.Info("listening", "addr", ls.api.Addr().String())
	if env.m.Ready != nil {
		env.m.Ready(ls.api.Addr().String())
	}
	err = t.wait()
	// A write the tasks made last has returned, but the group commit's goroutine that committed
	// it may still be finding its queue empty: serve returns once it has.
	env.db.WaitCommits()
	return err
}

// serveListeners are serve's listeners: the API's, and the console's and pprof's when their
// flags ask for them (else nil).
type serveListeners struct {
	api, console, pprof net.Listener
}

// openServeListeners opens the listeners f asks for, or none: its errors are listen's.
func openServeListeners(f *serveFlags) (*serveListeners, error) {
	ls := &serveListeners{}
	var err error
	if ls.api, err = listen("--addr", f.listenAddr()); err != nil {
		return nil, err
	}
	if f.adminAddr != "" {
		if ls.console, err = listen("--admin-addr", f.adminAddr); err != nil {
			ls.close()
			return nil, err
		}
	}
	if f.pprofAddr != "" {
		if ls.pprof, err = listen("--pprof", f.pprofAddr); err != nil {
			ls.close()
			return nil, err
		}
	}
	return ls, nil
}

// close closes every listener (closing one a server has closed already does nothing).
func (ls *serveListeners) close() {
	for _, l := range []net.Listener{ls.api, ls.console, ls.pprof} {
		if l != nil {
			_ = l.Close()
		}
	}
}

// apiConfig is the API server's configuration, with the Redis rate limiters when --redis is
// set; closeLimiters closes those once the server has stopped. Its error is a usage error: a
// --redis URL it cannot use.
func (f *serveFlags) apiConfig(ctx context.Context, env *cmdEnv, log *slog.Logger) (cfg server.Config, closeLimiters func(), err error) {
	cfg = server.Config{
		Service: env.svc, DB: env.db, Logger: log, Now: env.m.Now,
		RateLimit: f.rateLimit, PlatformRateLimit: f.platformRateLimit,
		CORSOrigins: f.corsOrigins, TrustedProxies: f.trustedProxies,
		DBTimeout: f.opts.DBTimeout,
	}
	if f.redisURL == "" {
		return cfg, func() {}, nil
	}
	rl, err := ratelimit.NewRedis(f.redisURL, f.rateLimit, time.Minute, log)
	if err != nil {
		return cfg, nil, usagef("--redis: %v", err)
	}
	if err := rl.Ping(ctx); err != nil {
		log.Warn("rate limiter: Redis unreachable at start; each instance enforces the limit on its own until it is back", "error", err.Error())
	}
	// The failed-authentication limit is shared too: behind a load balancer a client's
	// failures reach every instance, and 30 a minute is per address, not per address and
	// instance.
	authRL, err := ratelimit.NewRedis(f.redisURL, server.DefaultAuthFailureLimit, time.Minute, log)
	if err != nil {
		rl.Close()
		return cfg, nil, usagef("--redis: %v", err)
	}
	cfg.Limiter, cfg.AuthLimiter = rl, authRL
	return cfg, func() { rl.Close(); authRL.Close() }, nil
}

// startConsole starts the staff console on l as a server of t: it shares the service, the
// database, the logger and the webhook worker with the API and stops with it; if it fails on
// its own, the whole process stops.
func startConsole(ctx context.Context, t *tasks, env *cmdEnv, f *serveFlags, log *slog.Logger, l net.Listener, worker *delivery.Worker) {
	staffConsole := console.New(console.Config{
		Service:        env.svc,
		Logger:         log,
		Now:            env.m.Now,
		Sessions:       credit.SessionPolicy{IdleTimeout: f.adminIdle, Lifetime: f.adminLifetime},
		SecureCookies:  f.adminSecure,
		TrustedProxies: f.trustedProxies,
		Command:        env.m.Self,
		DatabaseFlag:   env.dbFlag(),
		SendWebhookNow: worker.SendNow,
	})
	t.server("staff console", func(ctx context.Context) error {
		if err := staffConsole.Serve(ctx, l); err != nil {
			return fmt.Errorf("staff console: %w", err)
		}
		return nil
	})
	log.Info("staff console listening", "addr", l.Addr().String())
	fmt.Fprintf(env.m.Stdout, "Staff console on http://%s/ (create an account with: %s)\n", displayAddr(l.Addr()), staffCreateHint(ctx, env))
	if env.m.AdminReady != nil {
		env.m.AdminReady(l.Addr().String())
	}
}

// listen opens the listener a flag names. Its failures are the operator's to fix (a mistyped
// address, a port another program holds), so they are usage errors (exit 2) with the fix, never
// an outage: a *net.OpError left in the chain would read as an unreachable database.
func listen(flag, addr string) (net.Listener, error) {
	if _, port, err := net.SplitHostPort(addr); err != nil || port == "" {
		if strings.Trim(addr, "0123456789") == "" && addr != "" {
			return nil, usagef("%s %s: a listen address is [host]:port; write %s :%s for port %s on every interface, or 127.0.0.1:%s for this machine only", flag, addr, flag, addr, addr, addr)
		}
		return nil, usagef("%s %q: a listen address is [host]:port, such as :8080 or 127.0.0.1:8080", flag, addr)
	}
	l, err := net.Listen("tcp", addr)
	if errors.Is(err, syscall.EADDRINUSE) {
		return nil, usagef("%s %s: address already in use: another program, perhaps another creditd, listens there; pick another port, or %s 127.0.0.1:0 for any free port", flag, addr, flag)
	}
	if err != nil {
		return nil, usagef("%s %s: cannot listen there: %v", flag, addr, err)
	}
	return l, nil
}

// serveProfiles serves net/http/pprof on l, never on the API's listener: profiles reveal
// internals and cost CPU, so they are only there when an operator asks with --pprof. It stops
// when ctx ends, at once: a profile being taken is cut short rather than holding up the
// shutdown. A failure is logged, never the process's end: the API does not stop for its
// debugging aid.
func serveProfiles(ctx context.Context, l net.Listener, log *slog.Logger) error {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	stop := context.AfterFunc(ctx, func() { _ = hs.Close() })
	defer stop()
	log.Info("pprof listening", "addr", l.Addr().String())
	if err := hs.Serve(l); !errors.Is(err, http.ErrServerClosed) {
		log.Error("pprof server failed", "error", err.Error())
	}
	return nil
}

func seedDemo(ctx context.Context, env *cmdEnv, base string) error {
	demo, seeded, err := demo.Seed(ctx, env.svc)
	if err != nil {
		return fmt.Errorf("seed demo data: %w", err)
	}
	out := env.m.Stdout
	if !seeded {
		return printExistingStores(ctx, env)
	}
	fmt.Fprintf(out, "Demo store %s seeded. Its API keys (shown only now):\n", demo.StoreID)
	for _, k := range demo.Keys {
		fmt.Fprintf(out, "  %-24s %-48s %s\n", k.Label, k.Secret, strings.Join(k.Scopes, ","))
	}
	fmt.Fprintf(out, "\nTry it:\n  curl -s -H 'Authorization: Bearer %s' %s/v1/companies\n", demo.Keys[len(demo.Keys)-1].Secret, base)
	// The dashboard key (read-only, with applications) in the link's fragment, which never
	// reaches a server: the playground fills its headers with it and loads the schema's docs.
	for _, k := range demo.Keys {
		if slices.Contains(k.Scopes, credit.ScopeReadApplications) && !slices.Contains(k.Scopes, credit.ScopeWriteCredit) {
			fmt.Fprintf(out, "\nPlayground (GraphQL, signed in with the %s key):\n  %s\n", k.Label, playground.Link(base, k.Secret))
		}
	}
	if demo.ShopDomain != "" {
		db := env.dbFlag()
		order := fmt.Sprintf(`{"id": "gid://platform/Order/%d", "company_id": "%s", "payment_terms": {"type": "NET", "due_in_days": 14}, "total": {"amount": "250.00", "currency": "EUR"}, "created_at": "%s"}`,
			env.svc.Now().Unix()%1000000, demoPlatformCompany, env.svc.Now().Format(time.RFC3339))
		fmt.Fprintf(out, "\nThe platform's side (shop %s): put an order on Café Morgenrot:\n  echo '%s' | %s platform send%s --store %s --topic orders/create --file - --url %s\n",
			demo.ShopDomain, order, env.m.Self, db, demo.StoreID, base)
	}
	fmt.Fprintln(out)
	return nil
}

// staffCreateHint is the command line that makes the first console account: for the one
// store when the database has exactly one (the demo's, say), else with ST to fill in.
func staffCreateHint(ctx context.Context, env *cmdEnv) string {
	store := "ST"
	if stores, err := env.svc.Stores.List(ctx); err == nil && len(stores) == 1 {
		store = stores[0].ID
	}
	db := env.dbFlag()
	return fmt.Sprintf("printf '%%s\\n' 'a long passphrase' | %s staff create%s --store %s --name N --email E --password-stdin", env.m.Self, db, store)
}

// demoPlatformCompany is the demo company the printed platform send line orders for.
const demoPlatformCompany = demo.PlatformCompanyGID

// printExistingStores answers a --demo on a database that already has data: the demo's keys
// were printed only when it was seeded, so it names the stores and the exact command line that
// makes a new key for each.
func printExistingStores(ctx context.Context, env *cmdEnv) error {
	stores, err := env.svc.Stores.List(ctx)
	if err != nil {
		return err
	}
	out := env.m.Stdout
	fmt.Fprintln(out, "The database already has data, so no demo was seeded (--demo seeds only an empty database).")
	fmt.Fprintln(out, "A key's secret is shown only when it is made; to make a new key for a store, run the line under it:")
	db := env.dbFlag()
	for _, st := range stores {
		fmt.Fprintf(out, "  %s  %s (%s)\n", st.ID, st.Name, st.Currency)
		fmt.Fprintf(out, "    %s key create%s --store %s --label me --scopes read_credit,read_applications,write_credit\n", env.m.Self, db, st.ID)
	}
	fmt.Fprintln(out)
	return nil
}

// displayAddr turns a listener address into one a curl on this machine can reach.
func displayAddr(a net.Addr) string {
	host, port, err := net.SplitHostPort(a.String())
	if err != nil {
		return a.String()
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "localhost"
	}
	return net.JoinHostPort(host, port)
}

// runSweeps places and lifts overdue holds as invoices fall due, and purges expired
// idempotency records, every interval until ctx ends.
func runSweeps(ctx context.Context, env *cmdEnv, log *slog.Logger, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		sweepOnce(ctx, env, log)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// sweepOnce runs one sweep unless another instance on the same database is running one.
func sweepOnce(ctx context.Context, env *cmdEnv, log *slog.Logger) {
	svc := env.svc
	release, ok, err := env.db.TryLock(ctx, "creditd sweep")
	if err != nil || !ok {
		return
	}
	defer release()
	if env.m != nil && env.m.sweeping != nil {
		env.m.sweeping(ctx)
	}
	res, err := svc.Maintenance.SweepHolds(ctx)
	if err != nil && ctx.Err() == nil {
		log.Error("overdue sweep failed", "error", err.Error())
	} else if res.Placed+res.Lifted > 0 {
		log.Info("overdue sweep", "checked", res.Checked, "placed", res.Placed, "lifted", res.Lifted)
	}
	if res, err := svc.Maintenance.SweepReminders(ctx); err != nil && ctx.Err() == nil {
		log.Error("reminder sweep failed", "error", err.Error())
	} else if res.Reminders+res.PromisesBroken > 0 {
		log.Info("reminder sweep", "reminders", res.Reminders, "promises_broken", res.PromisesBroken)
	}
	if n, err := svc.Maintenance.PurgeIdempotencyRecords(ctx); err != nil && ctx.Err() == nil {
		log.Error("idempotency purge failed", "error", err.Error())
	} else if n > 0 {
		log.Info("idempotency records purged", "count", n)
	}
	if n, err := svc.Maintenance.PurgeEvents(ctx); err != nil && ctx.Err() == nil {
		log.Error("event purge failed", "error", err.Error())
	} else if n > 0 {
		log.Info("events purged", "count", n)
	}
}
