package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/ids"
	"github.com/creditd/creditd/server"
)

// The platform connector's admin side (contract §13): connecting a store to its shop,
// rotating the secret, reading and retrying the inbox, and sending a delivery as the platform
// would. Secrets are read from standard input, never from a flag.

// maxPlatformSecretInput bounds what is read from stdin for a platform secret.
const maxPlatformSecretInput = 1024

// platformSecretFromStdin requires --secret-stdin and reads the secret.
func (e *cmdEnv) platformSecretFromStdin(given bool) (string, error) {
	if !given {
		return "", usagef("--secret-stdin is required: the platform secret is read from standard input, never from a flag")
	}
	return e.readStdinLine("--secret-stdin", "platform secret", maxPlatformSecretInput)
}

func platformConnectCommand() command {
	return command{summary: "connect a store to its shop on the commerce platform; the app secret is read from stdin", flags: func(fs *flag.FlagSet, opts *credit.Options) func(context.Context, *cmdEnv, []string) error {
		store := fs.String("store", "", "store ID (required)")
		shop := fs.String("shop-domain", "", "the shop's domain, as the platform sends it in X-Platform-Shop-Domain (required)")
		stdin := fs.Bool("secret-stdin", false, "read the platform's app secret from standard input (required)")
		return func(ctx context.Context, env *cmdEnv, args []string) error {
			if err := exactlyArgs(args); err != nil {
				return err
			}
			if err := required("store", *store, "shop-domain", *shop); err != nil {
				return err
			}
			secret, err := env.platformSecretFromStdin(*stdin)
			if err != nil {
				return err
			}
			sctx, err := env.asStaff(ctx, *store, cliStaff)
			if err != nil {
				return err
			}
			c, err := env.svc.Platform.Connect(sctx, *shop, secret)
			if err != nil {
				return err
			}
			return env.print(c, fmt.Sprintf("%s\nstore %s now takes deliveries of shop %s at POST /platform/webhooks", c.ID, c.StoreID, c.ShopDomain))
		}
	}}
}

func platformRotateCommand() command {
	return command{summary: "replace the store's platform secret (read from stdin); the old one is still accepted for --grace", flags: func(fs *flag.FlagSet, opts *credit.Options) func(context.Context, *cmdEnv, []string) error {
		store := fs.String("store", "", "store ID (required)")
		stdin := fs.Bool("secret-stdin", false, "read the new secret from standard input (required)")
		grace := fs.Duration("grace", credit.DefaultPlatformSecretGrace, "how long the old secret is still accepted (0: not at all)")
		return func(ctx context.Context, env *cmdEnv, args []string) error {
			if err := exactlyArgs(args); err != nil {
				return err
			}
			if err := required("store", *store); err != nil {
				return err
			}
			secret, err := env.platformSecretFromStdin(*stdin)
			if err != nil {
				return err
			}
			sctx, err := env.asStaff(ctx, *store, cliStaff)
			if err != nil {
				return err
			}
			c, err := env.svc.Platform.RotateSecret(sctx, secret, *grace)
			if err != nil {
				return err
			}
			return env.print(c, fmt.Sprintf("%s\nthe old secret is still accepted for %s", c.ID, *grace))
		}
	}}
}

func platformInboxCommand() command {
	return command{summary: "list a store's platform deliveries, newest first", flags: func(fs *flag.FlagSet, opts *credit.Options) func(context.Context, *cmdEnv, []string) error {
		store := fs.String("store", "", "store ID (required)")
		status := fs.String("status", "", "only deliveries in this status: "+strings.Join(credit.InboxStatuses, ", "))
		limit := fs.Int("limit", 50, "at most this many (1-250)")
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
			page, err := env.svc.Inbox.List(sctx, credit.InboxListParams{Status: *status, ListParams: credit.ListParams{Limit: limit}})
			if err != nil {
				return err
			}
			var b strings.Builder
			fmt.Fprintf(&b, "%-25s %-27s %-17s %-10s %-25s %s", "ID", "RECEIVED", "TOPIC", "STATUS", "REASON", "WEBHOOK ID")
			for _, d := range page.Data {
				reason := deref(d.Reason)
				if d.DuplicateOf != nil {
					reason += " of " + *d.DuplicateOf
				}
				fmt.Fprintf(&b, "\n%-25s %-27s %-17s %-10s %-25s %s", d.ID, d.ReceivedAt, d.Topic, d.Status, reason, d.WebhookID)
			}
			return env.print(page, b.String())
		}
	}}
}

func platformRetryCommand() command {
	return command{summary: "apply a failed platform delivery DELIVERY again (once its cause is fixed)", flags: func(fs *flag.FlagSet, opts *credit.Options) func(context.Context, *cmdEnv, []string) error {
		return func(ctx context.Context, env *cmdEnv, args []string) error {
			sctx, err := env.staffFor(ctx, args, "DELIVERY")
			if err != nil {
				return err
			}
			d, err := env.svc.Inbox.Retry(sctx, args[0])
			if err != nil {
				return err
			}
			human := d.ID + " " + d.Status
			if d.Reason != nil {
				human += " (" + *d.Reason + ")"
			}
			return env.print(d, human)
		}
	}}
}

func platformSendCommand() command {
	return command{summary: "sign a body with the store's platform secret and post it to a running creditd as the platform would", flags: func(fs *flag.FlagSet, opts *credit.Options) func(context.Context, *cmdEnv, []string) error {
		store := fs.String("store", "", "store ID (required)")
		topic := fs.String("topic", "", "X-Platform-Topic: orders/create, payments/create, refunds/create or orders/cancelled (required)")
		file := fs.String("file", "", "the JSON body to send (required; - reads standard input)")
		base := fs.String("url", "http://localhost:8080", "base URL of the running creditd")
		webhookID := fs.String("webhook-id", "", "X-Platform-Webhook-Id (default a new one; repeat one to send a retry)")
		return func(ctx context.Context, env *cmdEnv, args []string) error {
			if err := exactlyArgs(args); err != nil {
				return err
			}
			if err := required("store", *store, "topic", *topic, "file", *file); err != nil {
				return err
			}
			var body []byte
			var err error
			if *file == "-" {
				body, err = io.ReadAll(io.LimitReader(env.m.Stdin, 1<<20))
			} else {
				body, err = os.ReadFile(*file)
			}
			if err != nil {
				return usagef("--file: %v", err)
			}
			sctx, err := env.asStaff(ctx, *store, cliStaff)
			if err != nil {
				return err
			}
			secret, conn, err := env.svc.Platform.Secret(sctx)
			if err != nil {
				return err
			}
			if *webhookID == "" {
				*webhookID = "cli-" + ids.Random(16)
			}
			status, resp, err := postPlatform(ctx, strings.TrimRight(*base, "/")+"/platform/webhooks", PlatformRequest{
				ShopDomain: conn.ShopDomain, Secret: secret, Topic: *topic, WebhookID: *webhookID, TriggeredAt: env.svc.Now(), Body: body,
			})
			if err != nil {
				return err
			}
			if status != http.StatusOK {
				return fmt.Errorf("the server answered %d: %s", status, oneLine(string(resp)))
			}
			if env.json {
				_, err = fmt.Fprintln(env.out, strings.TrimSpace(string(resp)))
				return err
			}
			var d credit.InboxDelivery
			if err := json.Unmarshal(resp, &d); err != nil {
				return fmt.Errorf("the server's answer: %v", err)
			}
			human := fmt.Sprintf("%s %s", d.ID, d.Status)
			if d.Reason != nil {
				human += " (" + *d.Reason + ")"
			}
			return env.print(d, human)
		}
	}}
}

// PlatformRequest is one delivery as the platform sends it.
type PlatformRequest struct {
	ShopDomain, Secret, Topic, WebhookID string
	TriggeredAt                          time.Time
	Body                                 []byte
}

// postPlatform posts a delivery signed as the platform signs it and returns the status and
// body of the answer.
func postPlatform(ctx context.Context, url string, p PlatformRequest) (int, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(p.Body))
	if err != nil {
		return 0, nil, usagef("--url: %v", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(server.HeaderPlatformTopic, p.Topic)
	req.Header.Set(server.HeaderPlatformShopDomain, p.ShopDomain)
	req.Header.Set(server.HeaderPlatformWebhookID, p.WebhookID)
	req.Header.Set(server.HeaderPlatformTriggeredAt, p.TriggeredAt.UTC().Format(time.RFC3339))
	req.Header.Set(server.HeaderPlatformHmac, credit.SignPlatformBody(p.Secret, p.Body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, fmt.Errorf("post to %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, b, err
}

// deref is *s, or "" for nil.
func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
