package main

import (
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/creditd/creditd/credit"
)

func holdPlaceCommand() command {
	return command{args: "CO", summary: "place a manual hold on CO, attributed to --staff", flags: func(fs *flag.FlagSet, opts *credit.Options) func(context.Context, *cmdEnv, []string) error {
		staff := fs.String("staff", "", "the staff member placing the hold (required)")
		note := fs.String("note", "", "why the hold is placed")
		return func(ctx context.Context, env *cmdEnv, args []string) error {
			if err := exactlyArgs(args, "CO"); err != nil {
				return err
			}
			if err := required("staff", *staff); err != nil {
				return err
			}
			sctx, err := env.asStaff(ctx, args[0], *staff)
			if err != nil {
				return err
			}
			in := credit.HoldInput{CompanyID: args[0]}
			if *note != "" {
				in.Note = note
			}
			res, err := env.svc.Companies.PlaceHold(sctx, in)
			if err != nil {
				return err
			}
			return env.print(res, fmt.Sprintf("%s is on hold (placed by %s)", res.Company.ID, *staff))
		}
	}}
}

func holdLiftCommand() command {
	return command{args: "CO", summary: "lift CO's hold, attributed to --staff (an overdue hold stays while its invoice is unpaid)", flags: func(fs *flag.FlagSet, opts *credit.Options) func(context.Context, *cmdEnv, []string) error {
		staff := fs.String("staff", "", "the staff member lifting the hold (required)")
		return func(ctx context.Context, env *cmdEnv, args []string) error {
			if err := exactlyArgs(args, "CO"); err != nil {
				return err
			}
			if err := required("staff", *staff); err != nil {
				return err
			}
			sctx, err := env.asStaff(ctx, args[0], *staff)
			if err != nil {
				return err
			}
			res, err := env.svc.Companies.LiftHold(sctx, args[0])
			if err != nil {
				return err
			}
			return env.print(res, fmt.Sprintf("%s is %s", res.Company.ID, res.Company.Status))
		}
	}}
}

func holdsSweepCommand() command {
	return sweepCommand("place and lift overdue holds now (serve does this every --sweep-interval)", "what is overdue",
		func(ctx context.Context, env *cmdEnv, asOf *time.Time) (credit.SweepResult, error) {
			if asOf == nil {
				return env.svc.Maintenance.SweepHolds(ctx)
			}
			return env.svc.Maintenance.SweepHoldsAsOf(ctx, *asOf)
		},
		func(res credit.SweepResult) string {
			return fmt.Sprintf("checked %d, placed %d, lifted %d", res.Checked, res.Placed, res.Lifted)
		})
}

// sweepCommand is a command that runs one of serve's sweeps once, as of --now or the current
// time, and prints its result.
func sweepCommand[R any](summary, decides string, sweep func(ctx context.Context, env *cmdEnv, asOf *time.Time) (R, error), human func(R) string) command {
	return command{summary: summary, flags: func(fs *flag.FlagSet, opts *credit.Options) func(context.Context, *cmdEnv, []string) error {
		var asOf *time.Time
		fs.Func("now", "RFC 3339 time to decide "+decides+" as of (default: the current time); what is written is stamped with the current time all the same", func(v string) error {
			ts, err := credit.ParseTimestamp(v)
			if err != nil {
				return err
			}
			asOf = &ts.Time
			return nil
		})
		return func(ctx context.Context, env *cmdEnv, args []string) error {
			if err := exactlyArgs(args); err != nil {
				return err
			}
			res, err := sweep(ctx, env, asOf)
			if err != nil {
				return err
			}
			return env.print(res, human(res))
		}
	}}
}
