package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/database"
	"github.com/creditd/creditd/delivery"
	"github.com/creditd/creditd/webhook"
)

// webhookKeyEnv names the environment variable that holds the master key sealing webhook
// signing secrets: the standard base64 of 32 random bytes (openssl rand -base64 32).
const webhookKeyEnv = "CREDITD_WEBHOOK_KEY"

// webhookKeyFileSuffix names the key file kept beside a SQLite database when webhookKeyEnv is
// not set: creditd.db gets creditd.db.webhook-key, made on first use, readable by its owner
// only. PostgreSQL deployments (several instances) must share a key through webhookKeyEnv.
const webhookKeyFileSuffix = ".webhook-key"

// webhookSealer returns a function that loads the master key once, when a webhook secret is
// first sealed or opened: from CREDITD_WEBHOOK_KEY, else (SQLite only) from the key file next
// to the database, which it creates if it does not exist yet.
func webhookSealer(dsn string) func() (*webhook.Sealer, error) {
	return sync.OnceValues(func() (*webhook.Sealer, error) {
		encoded := os.Getenv(webhookKeyEnv)
		source := webhookKeyEnv
		if encoded == "" {
			path := database.SQLitePath(dsn)
			if path == "" {
				return nil, fmt.Errorf("%w (on PostgreSQL every instance needs the same key: set it in each one's environment)", credit.ErrNoWebhookKey)
			}
			path += webhookKeyFileSuffix
			source = path
			b, err := os.ReadFile(path)
			if errors.Is(err, fs.ErrNotExist) {
				b = []byte(webhook.GenerateMasterKey() + "\n")
				if err := writeNewFile(path, b); errors.Is(err, fs.ErrExist) {
					b, err = os.ReadFile(path) // another process made it first
					if err != nil {
						return nil, fmt.Errorf("webhook master key file: %v", err)
					}
				} else if err != nil {
					return nil, fmt.Errorf("create the webhook master key file: %v", err)
				}
			} else if err != nil {
				return nil, fmt.Errorf("webhook master key file: %v", err)
			}
			encoded = string(b)
		}
		key, err := webhook.ParseMasterKey(1, encoded)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", source, err)
		}
		return webhook.NewSealer(key)
	})
}

// writeNewFile creates path with b, readable and writable by its owner only, and fails with
// fs.ErrExist when it exists.
func writeNewFile(path string, b []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		os.Remove(path)
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func webhookCreateCommand() command {
	return command{summary: "create a webhook endpoint; its signing secret is shown only now", flags: func(fs *flag.FlagSet, opts *credit.Options) func(context.Context, *cmdEnv, []string) error {
		store := fs.String("store", "", "store ID (required)")
		in := credit.WebhookEndpointInput{}
		fs.StringVar(&in.URL, "url", "", "https:// URL the events are posted to (required)")
		fs.StringVar(&in.Description, "description", "", "what the endpoint is for, at most 500 characters")
		events := fs.String("events", "", "comma-separated event types to send (default every type)")
		fs.BoolVar(&opts.AllowPrivateWebhooks, "allow-private-webhooks", false, "accept http:// and loopback or private addresses (development and tests only; serve needs it too)")
		return func(ctx context.Context, env *cmdEnv, args []string) error {
			if err := exactlyArgs(args); err != nil {
				return err
			}
			if err := required("store", *store, "url", in.URL); err != nil {
				return err
			}
			in.EventTypes = credit.ParseEventTypes(*events)
			sctx, err := env.asStaff(ctx, *store, cliStaff)
			if err != nil {
				return err
			}
			w, err := env.svc.Webhooks.CreateEndpoint(sctx, in)
			var refusal *credit.Error
			if errors.As(err, &refusal) && refusal.Param == "url" && !opts.AllowPrivateWebhooks &&
				(strings.Contains(refusal.Message, "only HTTPS") || strings.Contains(refusal.Message, "not a public internet address")) {
				// The domain's message speaks to API clients and staff; the operator at the
				// command line is the one who can lift it, and is told how.
				hinted := *refusal
				hinted.Message += "; --allow-private-webhooks, given to webhook create and to serve, lifts this for development and tests"
				return &hinted
			}
			if err != nil {
				return err
			}
			return env.print(w, fmt.Sprintf("%s\n%s\nkeep the secret now: it is not shown again", w.ID, w.Secret))
		}
	}}
}

func webhookListCommand() command {
	return command{summary: "list a store's webhook endpoints", flags: func(fs *flag.FlagSet, opts *credit.Options) func(context.Context, *cmdEnv, []string) error {
		store := fs.String("store", "", "store ID (required)")
		return func(ctx context.Context, env *cmdEnv, args []string) error {
			if err := exactlyArgs(args); err != nil {
				return err
			}
			if err := required("store", *store); err != nil {
				return err
			}
			sctx, err := env.asStaff(ctx, *store, cliStaff)
			if err != nil {
				return err
			}
			list, err := env.svc.Webhooks.ListEndpoints(sctx)
			if err != nil {
				return err
			}
			var b strings.Builder
			fmt.Fprintf(&b, "%-25s %-9s %-40s %-30s %-24s %s", "ID", "STATUS", "URL", "EVENTS", "DESCRIPTION", "NOTE")
			for _, w := range list {
				events := "all"
				if len(w.EventTypes) > 0 {
					events = strings.Join(w.EventTypes, ",")
				}
				note := ""
				switch {
				case w.DisabledReason != nil:
					note = *w.DisabledReason
				case w.FailingSince != nil:
					note = "failing since " + w.FailingSince.String()
				}
				description := w.Description
				if description == "" {
					description = "-"
				}
				fmt.Fprintf(&b, "\n%-25s %-9s %-40s %-30s %-24s %s", w.ID, w.Status, w.URL, events, description, note)
			}
			if len(list) == 0 {
				b.WriteString("\n(no webhook endpoints yet: creditd webhook create --store ST --url https://... makes one)")
			}
			return env.print(map[string]any{"data": list}, b.String())
		}
	}}
}

func webhookEnableCommand(enable bool) command {
	summary := "disable webhook endpoint WE: it is sent nothing until enabled again"
	if enable {
		summary = "enable webhook endpoint WE: delivery resumes where it stopped"
	}
	return command{summary: summary, flags: func(fs *flag.FlagSet, opts *credit.Options) func(context.Context, *cmdEnv, []string) error {
		return func(ctx context.Context, env *cmdEnv, args []string) error {
			sctx, err := env.staffFor(ctx, args, "WE")
			if err != nil {
				return err
			}
			w, err := env.svc.Webhooks.SetEndpointEnabled(sctx, args[0], enable)
			if err != nil {
				return err
			}
			return env.print(w, w.ID+" "+w.Status)
		}
	}}
}

func webhookRotateCommand() command {
	return command{summary: "give webhook endpoint WE a new signing secret; the old one also signs for --grace", flags: func(fs *flag.FlagSet, opts *credit.Options) func(context.Context, *cmdEnv, []string) error {
		grace := fs.Duration("grace", credit.DefaultWebhookSecretGrace, "how long the old secret keeps signing beside the new one (0: stop at once)")
		return func(ctx context.Context, env *cmdEnv, args []string) error {
			sctx, err := env.staffFor(ctx, args, "WE")
			if err != nil {
				return err
			}
			w, err := env.svc.Webhooks.RotateSecret(sctx, args[0], *grace)
			if err != nil {
				return err
			}
			return env.print(w, fmt.Sprintf("%s\n%s\nthe old secret also signs for %s", w.ID, w.Secret, *grace))
		}
	}}
}

func webhookDeleteCommand() command {
	return command{summary: "delete webhook endpoint WE with its delivery history", flags: func(fs *flag.FlagSet, opts *credit.Options) func(context.Context, *cmdEnv, []string) error {
		return func(ctx context.Context, env *cmdEnv, args []string) error {
			sctx, err := env.staffFor(ctx, args, "WE")
			if err != nil {
				return err
			}
			if err := env.svc.Webhooks.DeleteEndpoint(sctx, args[0]); err != nil {
				return err
			}
			return env.print(map[string]any{"id": args[0], "deleted": true}, args[0]+" deleted")
		}
	}}
}

func webhookDeliveriesCommand() command {
	return command{summary: "show webhook endpoint WE's pending deliveries and latest attempts", flags: func(fs *flag.FlagSet, opts *credit.Options) func(context.Context, *cmdEnv, []string) error {
		limit := fs.Int("limit", 50, "how many of the latest attempts to show (1-1000)")
		return func(ctx context.Context, env *cmdEnv, args []string) error {
			sctx, err := env.staffFor(ctx, args, "WE")
			if err != nil {
				return err
			}
			r, err := env.svc.Webhooks.Deliveries(sctx, args[0], *limit)
			if err != nil {
				return err
			}
			var b strings.Builder
			fmt.Fprintf(&b, "%s %s %s", r.Endpoint.ID, r.Endpoint.Status, r.Endpoint.URL)
			if r.Endpoint.DisabledReason != nil {
				fmt.Fprintf(&b, " (%s)", *r.Endpoint.DisabledReason)
			}
			if len(r.Pending) > 0 {
				fmt.Fprintf(&b, "\n\npending:\n%-25s %-8s %s", "EVENT", "ATTEMPTS", "NEXT ATTEMPT")
				for _, d := range r.Pending {
					next := "now"
					if d.NextAttemptAt != nil {
						next = d.NextAttemptAt.String()
					}
					fmt.Fprintf(&b, "\n%-25s %-8d %s", d.EventID, d.Attempts, next)
				}
			}
			fmt.Fprintf(&b, "\n\nattempts, newest first:\n%-28s %-25s %-3s %-24s %-6s %-9s %s", "AT", "EVENT", "#", "OUTCOME", "STATUS", "DURATION", "NEXT RETRY")
			for _, a := range r.Attempts {
				status, next := "-", "-"
				if a.StatusCode != nil {
					status = fmt.Sprint(*a.StatusCode)
				}
				if a.NextAttemptAt != nil {
					next = a.NextAttemptAt.String()
				}
				fmt.Fprintf(&b, "\n%-28s %-25s %-3d %-24s %-6s %-9s %s", a.AttemptedAt, a.EventID, a.Attempt, a.Outcome, status, fmt.Sprintf("%dms", a.DurationMS), next)
			}
			if len(r.Attempts) == 0 {
				b.WriteString("\n(no attempts yet)")
			}
			return env.print(r, b.String())
		}
	}}
}

// webhookWorker is the delivery worker of serve, and of the commands that send now (webhook
// test, webhook redeliver): the same client, lock, queue and clock, so that an attempt made
// by a command is made and recorded as serve makes it.
func (e *cmdEnv) webhookWorker(allowPrivate bool, log *slog.Logger, poll time.Duration) *delivery.Worker {
	return delivery.New(delivery.Config{
		Queue:        e.svc.WebhookQueue,
		Lock:         e.db.TryLock,
		Client:       webhook.NewClient(webhook.Options{AllowPrivate: allowPrivate, Now: e.m.Now}),
		Logger:       log,
		PollInterval: poll,
		Now:          e.m.Now,
	})
}

// attemptLine describes an attempt for the operator.
func attemptLine(a credit.WebhookAttempt) string {
	line := fmt.Sprintf("%s attempt %d: %s", a.EventID, a.Attempt, a.Outcome)
	if a.StatusCode != nil {
		line += fmt.Sprintf(" (HTTP %d)", *a.StatusCode)
	}
	line += fmt.Sprintf(" in %dms", a.DurationMS)
	if a.Error != "" {
		line += ": " + a.Error
	}
	if a.NextAttemptAt != nil {
		line += "; next retry " + a.NextAttemptAt.String()
	}
	if a.Outcome == webhook.OutcomeRefusedPrivateAddress {
		line += " (for a receiver on this machine, add --allow-private-webhooks, as to serve)"
	}
	return line
}

func webhookRedeliverCommand() command {
	return command{summary: "send event EV to webhook endpoint --endpoint again now, with a fresh retry schedule", flags: func(fs *flag.FlagSet, opts *credit.Options) func(context.Context, *cmdEnv, []string) error {
		endpoint := fs.String("endpoint", "", "webhook endpoint ID (required)")
		fs.BoolVar(&opts.AllowPrivateWebhooks, "allow-private-webhooks", false, "deliver to http:// and loopback or private addresses (development and tests only, as serve's flag)")
		return func(ctx context.Context, env *cmdEnv, args []string) error {
			if err := exactlyArgs(args, "EV"); err != nil {
				return err
			}
			if err := required("endpoint", *endpoint); err != nil {
				return err
			}
			sctx, err := env.asStaff(ctx, *endpoint, cliStaff)
			if err != nil {
				return err
			}
			// Go now rather than at the next retry: under the endpoint's lock, as serve works on
			// it; the domain says whether the event may go now (in order) and keeps it from
			// serve's worker meanwhile. When a serve instance holds the lock, it sends it.
			worker := env.webhookWorker(opts.AllowPrivateWebhooks, slog.New(slog.DiscardHandler), 0)
			out := struct {
				credit.WebhookDelivery
				Attempt *credit.WebhookAttempt `json:"attempt"`
			}{}
			var due *credit.WebhookDue
			locked, err := worker.WithEndpointLock(ctx, *endpoint, func() error {
				if out.WebhookDelivery, due, err = env.svc.Webhooks.RedeliverNow(sctx, args[0], *endpoint); err != nil || due == nil {
					return err
				}
				rec, err := worker.SendNow(ctx, due)
				if err != nil {
					return err
				}
				out.Attempt = &rec.Attempt
				out.Status, out.Attempts, out.NextAttemptAt, out.UpdatedAt = rec.Status, rec.Attempt.Attempt, rec.Attempt.NextAttemptAt, rec.Attempt.AttemptedAt
				return nil
			})
			if err != nil {
				return err
			}
			var human string
			switch {
			case !locked:
				if out.WebhookDelivery, err = env.svc.Webhooks.Redeliver(sctx, args[0], *endpoint); err != nil {
					return err
				}
				human = fmt.Sprintf("%s queued for %s: the serve instance delivering to it now sends it within seconds", out.EventID, *endpoint)
			case out.Attempt != nil:
				human = attemptLine(*out.Attempt)
			default:
				human = fmt.Sprintf("%s queued for %s, which is disabled or has an earlier event to deliver first: it goes in order after that", out.EventID, *endpoint)
			}
			return env.print(out, human)
		}
	}}
}

func webhookTestCommand() command {
	return command{summary: "send a signed ping to webhook endpoint WE now and show the attempt", flags: func(fs *flag.FlagSet, opts *credit.Options) func(context.Context, *cmdEnv, []string) error {
		fs.BoolVar(&opts.AllowPrivateWebhooks, "allow-private-webhooks", false, "deliver to http:// and loopback or private addresses (development and tests only, as serve's flag)")
		return func(ctx context.Context, env *cmdEnv, args []string) error {
			sctx, err := env.staffFor(ctx, args, "WE")
			if err != nil {
				return err
			}
			due, err := env.svc.Webhooks.Ping(sctx, args[0])
			if err != nil {
				return err
			}
			worker := env.webhookWorker(opts.AllowPrivateWebhooks, slog.New(slog.DiscardHandler), 0)
			rec, err := worker.SendNow(ctx, due)
			if err != nil {
				return err
			}
			return env.print(rec.Attempt, "ping "+attemptLine(rec.Attempt))
		}
	}}
}
