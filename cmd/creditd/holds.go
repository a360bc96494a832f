package main

import (
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/ent/company"
	"github.com/creditd/creditd/tenant"
)

func holdPlaceCommand() command {
	return command{summary: "place a manual hold on CO, attributed to --staff", flags: func(fs *flag.FlagSet) func(context.Context, *cmdEnv, []string) error {
		staff := fs.String("staff", "", "the staff member placing the hold (required)")
		note := fs.String("note", "", "why the hold is placed")
		return func(ctx context.Context, env *cmdEnv, args []string) error {
			if err := exactlyArgs(args, "CO"); err != nil {
				return err
			}
			if err := required("staff", *staff); err != nil {
				return err
			}
			sctx, err := staffContext(ctx, env, args[0], *staff)
			if err != nil {
				return err
			}
			in := credit.HoldInput{CompanyID: args[0]}
			if *note != "" {
				in.Note = note
			}
			res, err := env.svc.PlaceHold(sctx, in)
			if err != nil {
				return err
			}
			return env.print(res, fmt.Sprintf("%s is on hold (placed by %s)", res.Company.ID, *staff))
		}
	}}
}

func holdLiftCommand() command {
	return command{summary: "lift CO's hold, attributed to --staff (an overdue hold stays while its invoice is unpaid)", flags: func(fs *flag.FlagSet) func(context.Context, *cmdEnv, []string) error {
		staff := fs.String("staff", "", "the staff member lifting the hold (required)")
		return func(ctx context.Context, env *cmdEnv, args []string) error {
			if err := exactlyArgs(args, "CO"); err != nil {
				return err
			}
			if err := required("staff", *staff); err != nil {
				return err
			}
			sctx, err := staffContext(ctx, env, args[0], *staff)
			if err != nil {
				return err
			}
			res, err := env.svc.LiftHold(sctx, args[0])
			if err != nil {
				return err
			}
			return env.print(res, fmt.Sprintf("%s is %s", res.Company.ID, res.Company.Status))
		}
	}}
}

// staffContext acts as a staff member in the company's store.
func staffContext(ctx context.Context, env *cmdEnv, companyID, staff string) (context.Context, error) {
	st, err := env.db.Client.Company.Query().Where(company.ID(companyID)).Select(company.FieldStoreID).String(tenant.System(ctx))
	if err != nil {
		return nil, credit.Errorf(credit.CodeNotFound, "no such company")
	}
	return tenant.Staff(ctx, st, staff), nil
}

func holdsSweepCommand() command {
	return command{summary: "place and lift overdue holds now (serve does this every --sweep-interval)", flags: func(fs *flag.FlagSet) func(context.Context, *cmdEnv, []string) error {
		now := fs.String("now", "", "RFC 3339 time to sweep as of (default: the current time)")
		return func(ctx context.Context, env *cmdEnv, args []string) error {
			if err := exactlyArgs(args); err != nil {
				return err
			}
			svc := env.svc
			if *now != "" {
				ts, err := credit.ParseTimestamp(*now)
				if err != nil {
					return usagef("--now: %v", err)
				}
				svc = credit.NewService(env.db.Client, env.db.Dialect, credit.Options{Now: func() time.Time { return ts.Time }})
			}
			res, err := svc.SweepHolds(ctx)
			if err != nil {
				return err
			}
			return env.print(res, fmt.Sprintf("checked %d, placed %d, lifted %d", res.Checked, res.Placed, res.Lifted))
		}
	}}
}
