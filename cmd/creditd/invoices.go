package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"

	"github.com/creditd/creditd/credit"
)

// The invoice writes of the admin side (contract §17): a promise to pay recorded or withdrawn,
// a dispute opened or resolved, each as a member of the store's staff (--staff, else "command
// line"), the same operations as POST/DELETE /v1/invoices/{id}/promise and /dispute.

// invoiceWriteCommand is one invoice write: its flags are --store, --invoice and --staff, plus
// those extra adds; run calls the domain as the staff member.
func invoiceWriteCommand(summary string, extra func(fs *flag.FlagSet) func(ctx context.Context, env *cmdEnv, invoiceID string) (credit.InvoiceResult, error), done func(credit.InvoiceResult) string) command {
	return command{summary: summary, flags: func(fs *flag.FlagSet, opts *credit.Options) func(context.Context, *cmdEnv, []string) error {
		store := fs.String("store", "", "store ID (required)")
		invoiceID := fs.String("invoice", "", "the invoice's ID, inv_... (required)")
		staff := fs.String("staff", cliStaff, "the staff member the timeline names")
		run := extra(fs)
		return func(ctx context.Context, env *cmdEnv, args []string) error {
			if err := exactlyArgs(args); err != nil {
				return err
			}
			if err := required("store", *store, "invoice", *invoiceID, "staff", *staff); err != nil {
				return err
			}
			sctx, err := env.asStaff(ctx, *store, *staff)
			if err != nil {
				return err
			}
			res, err := run(sctx, env, *invoiceID)
			if err != nil {
				return err
			}
			return env.print(res, done(res))
		}
	}}
}

func invoicePromiseCommand() command {
	return invoiceWriteCommand("record the company's promise to pay --invoice by --date (a UTC day, today to 90 days ahead)",
		func(fs *flag.FlagSet) func(context.Context, *cmdEnv, string) (credit.InvoiceResult, error) {
			date := fs.String("date", "", "the day promised, YYYY-MM-DD (required)")
			note := fs.String("note", "", "a note, up to 500 characters")
			return func(ctx context.Context, env *cmdEnv, id string) (credit.InvoiceResult, error) {
				if err := required("date", *date); err != nil {
					return credit.InvoiceResult{}, err
				}
				in := credit.PromiseInput{InvoiceID: id, PromisedFor: *date}
				if *note != "" {
					in.Note = note
				}
				res, err := env.svc.Invoices.RecordPromise(ctx, in)
				// The API's promised_for is this command's --date: say so in its words.
				var ce *credit.Error
				if errors.As(err, &ce) && ce.Param == "promised_for" {
					return res, &credit.Error{Code: ce.Code, Param: "date", Message: "--date" + strings.TrimPrefix(ce.Message, "promised_for")}
				}
				return res, err
			}
		},
		func(res credit.InvoiceResult) string {
			return fmt.Sprintf("%s: promised for %s", res.Invoice.ID, res.Invoice.Promise.PromisedFor)
		})
}

func invoiceWithdrawPromiseCommand() command {
	return invoiceWriteCommand("withdraw --invoice's promise to pay (reminders resume)",
		func(fs *flag.FlagSet) func(context.Context, *cmdEnv, string) (credit.InvoiceResult, error) {
			return func(ctx context.Context, env *cmdEnv, id string) (credit.InvoiceResult, error) {
				return env.svc.Invoices.WithdrawPromise(ctx, id)
			}
		},
		func(res credit.InvoiceResult) string { return fmt.Sprintf("%s: no promise", res.Invoice.ID) })
}

func invoiceDisputeCommand() command {
	return invoiceWriteCommand("open a dispute on --invoice with --reason (no reminders while it is open)",
		func(fs *flag.FlagSet) func(context.Context, *cmdEnv, string) (credit.InvoiceResult, error) {
			reason := fs.String("reason", "", "why the company disputes it, 1 to 500 characters (required)")
			return func(ctx context.Context, env *cmdEnv, id string) (credit.InvoiceResult, error) {
				if err := required("reason", *reason); err != nil {
					return credit.InvoiceResult{}, err
				}
				return env.svc.Invoices.OpenDispute(ctx, credit.DisputeInput{InvoiceID: id, Reason: *reason})
			}
		},
		func(res credit.InvoiceResult) string {
			return fmt.Sprintf("%s: disputed (%s)", res.Invoice.ID, res.Invoice.Dispute.Reason)
		})
}

func invoiceResolveCommand() command {
	return invoiceWriteCommand("resolve --invoice's dispute (reminders resume)",
		func(fs *flag.FlagSet) func(context.Context, *cmdEnv, string) (credit.InvoiceResult, error) {
			return func(ctx context.Context, env *cmdEnv, id string) (credit.InvoiceResult, error) {
				return env.svc.Invoices.ResolveDispute(ctx, id)
			}
		},
		func(res credit.InvoiceResult) string { return fmt.Sprintf("%s: no dispute", res.Invoice.ID) })
}
