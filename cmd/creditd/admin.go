package main

import (
	"context"
	"flag"
	"fmt"
	"strings"

	"github.com/creditd/creditd/credit"
)

func migrateCommand() command {
	return command{summary: "bring the database schema up to date", flags: func(fs *flag.FlagSet, opts *credit.Options) func(context.Context, *cmdEnv, []string) error {
		return func(ctx context.Context, env *cmdEnv, args []string) error {
			if err := exactlyArgs(args); err != nil {
				return err
			}
			// Run has already applied the pending migrations.
			st, err := env.db.State(ctx)
			if err != nil {
				return err
			}
			version := ""
			if len(st.Applied) > 0 {
				version = st.Applied[len(st.Applied)-1]
			}
			return env.print(map[string]string{"status": "up to date", "version": version}, "database schema is up to date at version "+version)
		}
	}, createsDatabase: always}
}

func storeCreateCommand() command {
	return command{summary: "create a store", flags: func(fs *flag.FlagSet, opts *credit.Options) func(context.Context, *cmdEnv, []string) error {
		name := fs.String("name", "", "store name (required)")
		currency := fs.String("currency", "", "ISO 4217 currency of all the store's amounts (required)")
		buffer := fs.Int("buffer-percent", credit.DefaultBufferPercent, "safety buffer, percent of each credit limit (0-50)")
		locale := fs.String("locale", credit.DefaultLocale, "how the store's staff write numbers in the console (en: 10,000.00; de: 10.000,00); set once")
		return func(ctx context.Context, env *cmdEnv, args []string) error {
			if err := exactlyArgs(args); err != nil {
				return err
			}
			if err := required("name", *name, "currency", *currency); err != nil {
				return err
			}
			st, err := env.svc.Stores.Create(ctx, *name, *currency, *buffer, *locale)
			if err != nil {
				return err
			}
			return env.print(st, st.ID)
		}
	}, createsDatabase: always}
}

func storeListCommand() command {
	return command{summary: "list every store, oldest first, with its ID for --store", flags: func(fs *flag.FlagSet, opts *credit.Options) func(context.Context, *cmdEnv, []string) error {
		return func(ctx context.Context, env *cmdEnv, args []string) error {
			if err := exactlyArgs(args); err != nil {
				return err
			}
			stores, err := env.svc.Stores.List(ctx)
			if err != nil {
				return err
			}
			var b strings.Builder
			fmt.Fprintf(&b, "%-25s %-32s %-8s %s", "ID", "NAME", "CURRENCY", "CREATED")
			for _, st := range stores {
				fmt.Fprintf(&b, "\n%-25s %-32s %-8s %s", st.ID, st.Name, st.Currency, st.CreatedAt)
			}
			if len(stores) == 0 {
				b.WriteString("\n(no stores yet: creditd store create --name N --currency EUR makes one)")
			}
			return env.print(map[string]any{"data": stores}, b.String())
		}
	}}
}

func keyCreateCommand() command {
	return command{summary: "create an API key; its secret is shown only now", flags: func(fs *flag.FlagSet, opts *credit.Options) func(context.Context, *cmdEnv, []string) error {
		store := fs.String("store", "", "store ID (required)")
		label := fs.String("label", "", "label shown on the timeline for the key's writes (required)")
		scopes := fs.String("scopes", "", "comma-separated: read_credit,read_applications,write_credit (required)")
		return func(ctx context.Context, env *cmdEnv, args []string) error {
			if err := exactlyArgs(args); err != nil {
				return err
			}
			if err := required("store", *store, "label", *label, "scopes", *scopes); err != nil {
				return err
			}
			list, err := credit.ParseScopes(*scopes)
			if err != nil {
				return err
			}
			sctx, err := env.asStaff(ctx, *store, cliStaff)
			if err != nil {
				return err
			}
			k, err := env.svc.Keys.Create(sctx, *label, list)
			if err != nil {
				return err
			}
			return env.print(k, fmt.Sprintf("%s\n%s\nkeep the secret now: it is not shown again", k.ID, k.Secret))
		}
	}}
}

func keyRotateCommand() command {
	return command{args: "KEY", summary: "issue a new secret for KEY; the old one works for --grace more", flags: func(fs *flag.FlagSet, opts *credit.Options) func(context.Context, *cmdEnv, []string) error {
		grace := fs.Duration("grace", credit.DefaultRotationGrace, "how long the old secret keeps working")
		return func(ctx context.Context, env *cmdEnv, args []string) error {
			if err := notASecret("rotate", args); err != nil {
				return err
			}
			sctx, err := env.staffFor(ctx, args, "KEY")
			if err != nil {
				return err
			}
			k, err := env.svc.Keys.Rotate(sctx, args[0], *grace)
			if err != nil {
				return err
			}
			return env.print(k, fmt.Sprintf("%s\n%s\nthe old secret keeps working for %s", k.ID, k.Secret, *grace))
		}
	}}
}

// notASecret refuses a key's secret (ck_...) where its ID (key_...) belongs: the demo prints only
// secrets, so that is the mistake a new operator makes, and "no such key" would not help.
func notASecret(verb string, args []string) error {
	if len(args) == 1 && strings.HasPrefix(args[0], "ck_") {
		return usagef("key %s takes the key's ID (key_...), not its secret (ck_...): run creditd key list --store ST to see the IDs of a store's keys", verb)
	}
	return nil
}

func keyRevokeCommand() command {
	return command{args: "KEY", summary: "revoke KEY: every secret of it stops at once", flags: func(fs *flag.FlagSet, opts *credit.Options) func(context.Context, *cmdEnv, []string) error {
		return func(ctx context.Context, env *cmdEnv, args []string) error {
			if err := notASecret("revoke", args); err != nil {
				return err
			}
			sctx, err := env.staffFor(ctx, args, "KEY")
			if err != nil {
				return err
			}
			if err := env.svc.Keys.Revoke(sctx, args[0]); err != nil {
				return err
			}
			return env.print(map[string]any{"id": args[0], "revoked": true}, args[0]+" revoked")
		}
	}}
}

func keyListCommand() command {
	return command{summary: "list a store's keys with last use and cleanup suggestions", flags: func(fs *flag.FlagSet, opts *credit.Options) func(context.Context, *cmdEnv, []string) error {
		store := fs.String("store", "", "store ID (required)")
		stale := fs.Duration("stale-after", credit.DefaultStaleAfter, "suggest cleanup for keys unused this long")
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
			keys, err := env.svc.Keys.List(sctx, *stale)
			if err != nil {
				return err
			}
			var b strings.Builder
			fmt.Fprintf(&b, "%-26s %-24s %-44s %-28s %s", "ID", "LABEL", "SCOPES", "LAST USED", "NOTE")
			for _, k := range keys {
				last := "never"
				if k.LastUsedAt != nil {
					last = k.LastUsedAt.String()
				}
				note := ""
				switch {
				case k.RevokedAt != nil:
					note = "revoked"
				case k.CleanupSuggested:
					note = "unused for a long time: consider revoking"
				}
				fmt.Fprintf(&b, "\n%-26s %-24s %-44s %-28s %s", k.ID, k.Label, strings.Join(k.Scopes, ","), last, note)
			}
			return env.print(map[string]any{"data": keys}, b.String())
		}
	}}
}

func companyCreateCommand() command {
	return command{summary: "create a company on credit terms", flags: func(fs *flag.FlagSet, opts *credit.Options) func(context.Context, *cmdEnv, []string) error {
		in := credit.CompanyInput{}
		store := fs.String("store", "", "store ID (required)")
		fs.StringVar(&in.Name, "name", "", "company name (required)")
		fs.StringVar(&in.PlatformCompanyGID, "platform-company-gid", "", "gid://platform/Company/<number> (required)")
		fs.StringVar(&in.PaymentTerms, "payment-terms", "", "NET_<days>, 1 to 365 (required)")
		fs.StringVar(&in.CreditLimit, "credit-limit", "", "credit limit, a decimal string (required)")
		return func(ctx context.Context, env *cmdEnv, args []string) error {
			if err := exactlyArgs(args); err != nil {
				return err
			}
			if err := required("store", *store, "name", in.Name, "platform-company-gid", in.PlatformCompanyGID, "payment-terms", in.PaymentTerms, "credit-limit", in.CreditLimit); err != nil {
				return err
			}
			sctx, err := env.asStaff(ctx, *store, cliStaff)
			if err != nil {
				return err
			}
			c, err := env.svc.Companies.Create(sctx, in)
			if err != nil {
				return err
			}
			return env.print(c, c.ID)
		}
	}}
}

func companySetGIDCommand() command {
	return command{args: "CO", summary: "set or correct CO's platform company GID, attributed to --staff", flags: func(fs *flag.FlagSet, opts *credit.Options) func(context.Context, *cmdEnv, []string) error {
		gid := fs.String("gid", "", "gid://platform/Company/<number> (required; one company of the store has it)")
		staff := fs.String("staff", "", "the staff member making the change (required)")
		return func(ctx context.Context, env *cmdEnv, args []string) error {
			if err := exactlyArgs(args, "CO"); err != nil {
				return err
			}
			if err := required("gid", *gid, "staff", *staff); err != nil {
				return err
			}
			sctx, err := env.asStaff(ctx, args[0], *staff)
			if err != nil {
				return err
			}
			c, err := env.svc.Companies.SetPlatformCompanyGID(sctx, args[0], *gid)
			if err != nil {
				return err
			}
			return env.print(c, fmt.Sprintf("%s has platform company GID %s\nretry its failed deliveries: platform inbox --store ST --status failed, then platform retry PD", c.ID, *gid))
		}
	}}
}

func ledgerRecordCommand() command {
	return command{summary: "append an entry to a company's ledger (orders, payments, refunds, ...)", flags: func(fs *flag.FlagSet, opts *credit.Options) func(context.Context, *cmdEnv, []string) error {
		in := credit.LedgerEntryInput{}
		fs.StringVar(&in.CompanyID, "company", "", "company ID (required)")
		fs.StringVar(&in.Kind, "kind", "", "order_placed, payment, refund, cancellation, adjustment or opening_balance (required)")
		fs.StringVar(&in.Amount, "amount", "", "signed decimal: orders > 0; payments, refunds, cancellations < 0 (required)")
		fs.StringVar(&in.OrderGID, "order", "", "gid://platform/Order/<number>")
		fs.StringVar(&in.Note, "note", "", "note, at most 500 characters")
		occurred := fs.String("occurred-at", "", "RFC 3339 time the entry occurred (default now)")
		staff := fs.String("staff", cliStaff, "the staff member recording the entry, as the ledger and the timeline name them")
		return func(ctx context.Context, env *cmdEnv, args []string) error {
			if err := exactlyArgs(args); err != nil {
				return err
			}
			if err := required("company", in.CompanyID, "kind", in.Kind, "amount", in.Amount); err != nil {
				return err
			}
			var err error
			if in.OccurredAt, err = optionalTimestamp("occurred-at", *occurred); err != nil {
				return err
			}
			sctx, err := env.asStaff(ctx, in.CompanyID, *staff)
			if err != nil {
				return err
			}
			e, c, err := env.svc.Ledger.Record(sctx, in)
			if err != nil {
				return err
			}
			return env.print(map[string]any{"ledger_entry": e, "company": c}, fmt.Sprintf("%s\noutstanding %s %s", e.ID, c.Outstanding.Amount, c.Outstanding.Currency))
		}
	}}
}

func applicationCreateCommand() command {
	return command{summary: "record a wholesale application", flags: func(fs *flag.FlagSet, opts *credit.Options) func(context.Context, *cmdEnv, []string) error {
		in := credit.ApplicationInput{}
		store := fs.String("store", "", "store ID (required)")
		fs.StringVar(&in.BusinessName, "business-name", "", "business name (required)")
		fs.StringVar(&in.VATNumber, "vat-number", "", "VAT number (required)")
		fs.StringVar(&in.VATStatus, "vat-status", "unverified", "valid, invalid, unverified or unavailable")
		fs.StringVar(&in.VATRegistry, "vat-registry", "VIES", "registry short name: VIES, HMRC, ...")
		fs.StringVar(&in.ContactName, "contact-name", "", "contact person's name (required; personal data)")
		fs.StringVar(&in.ContactEmail, "contact-email", "", "contact person's email (required; personal data)")
		submitted := fs.String("submitted-at", "", "RFC 3339 submission time (default now)")
		return func(ctx context.Context, env *cmdEnv, args []string) error {
			if err := exactlyArgs(args); err != nil {
				return err
			}
			if err := required("store", *store, "business-name", in.BusinessName, "vat-number", in.VATNumber, "contact-name", in.ContactName, "contact-email", in.ContactEmail); err != nil {
				return err
			}
			var err error
			if in.SubmittedAt, err = optionalTimestamp("submitted-at", *submitted); err != nil {
				return err
			}
			sctx, err := env.asStaff(ctx, *store, cliStaff)
			if err != nil {
				return err
			}
			a, err := env.svc.Applications.Create(sctx, in)
			if err != nil {
				return err
			}
			return env.print(a, a.ID)
		}
	}}
}

func applicationSetStatusCommand() command {
	return command{args: "APP", summary: "move APP along submitted → in_review → needs_info ↔ in_review → approved | rejected", flags: func(fs *flag.FlagSet, opts *credit.Options) func(context.Context, *cmdEnv, []string) error {
		in := credit.StatusChange{}
		fs.StringVar(&in.Status, "status", "", "new status (required)")
		fs.StringVar(&in.CreditLimit, "credit-limit", "", "approval only: the new company's credit limit")
		fs.StringVar(&in.PaymentTerms, "payment-terms", "", "approval only: the new company's terms, NET_<days>")
		fs.StringVar(&in.PlatformCompanyGID, "platform-company-gid", "", "approval only: the company's GID on the platform; without it the platform's deliveries for the customer fail (unknown_company) until `company set-gid` sets it")
		staff := fs.String("staff", cliStaff, "the staff member making the change, as the new company's timeline names them")
		return func(ctx context.Context, env *cmdEnv, args []string) error {
			if err := exactlyArgs(args, "APP"); err != nil {
				return err
			}
			if err := required("status", in.Status); err != nil {
				return err
			}
			in.ApplicationID = args[0]
			sctx, err := env.asStaff(ctx, in.ApplicationID, *staff)
			if err != nil {
				return err
			}
			a, c, err := env.svc.Applications.SetStatus(sctx, in)
			if err != nil {
				return err
			}
			human := fmt.Sprintf("%s is %s", a.ID, a.Status)
			out := map[string]any{"application": a}
			if c != nil {
				human += "\ncompany " + c.ID + " created"
				out["company"] = c
			}
			return env.print(out, human)
		}
	}}
}

func personEraseCommand() command {
	return command{summary: "erase a person's personal data from a store's applications", flags: func(fs *flag.FlagSet, opts *credit.Options) func(context.Context, *cmdEnv, []string) error {
		store := fs.String("store", "", "store ID (required)")
		email := fs.String("email", "", "the person's email (required)")
		return func(ctx context.Context, env *cmdEnv, args []string) error {
			if err := exactlyArgs(args); err != nil {
				return err
			}
			if err := required("store", *store, "email", *email); err != nil {
				return err
			}
			sctx, err := env.asStaff(ctx, *store, cliStaff)
			if err != nil {
				return err
			}
			n, err := env.svc.Applications.ErasePerson(sctx, *email)
			if err != nil {
				return err
			}
			return env.print(map[string]any{"applications_redacted": n}, fmt.Sprintf("%d application(s) redacted", n))
		}
	}}
}
