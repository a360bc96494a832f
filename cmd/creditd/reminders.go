package main

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/creditd/creditd/credit"
)

// The reminder schedule and its sweep on the admin side (contract §17): staff set the store's
// schedule (on its audit trail), show it, and run the sweep once as serve does every
// --sweep-interval.

func remindersSetCommand() command {
	return command{summary: "set the store's reminder schedule: --days -3,1,7,14,30 (days from the due date; none for no reminders)", flags: func(fs *flag.FlagSet, opts *credit.Options) func(context.Context, *cmdEnv, []string) error {
		store := fs.String("store", "", "store ID (required)")
		days := fs.String("days", "", "up to 10 offsets in days from an invoice's due date, strictly increasing, each -30..365, comma-separated; none clears (required)")
		staff := fs.String("staff", cliStaff, "the staff member the store's audit trail names")
		return func(ctx context.Context, env *cmdEnv, args []string) error {
			if err := exactlyArgs(args); err != nil {
				return err
			}
			if err := required("store", *store, "days", *days, "staff", *staff); err != nil {
				return err
			}
			parsed, err := credit.ParseReminderDays(*days)
			if err != nil {
				return err
			}
			sctx, err := env.asStaff(ctx, *store, *staff)
			if err != nil {
				return err
			}
			res, err := env.svc.Stores.SetReminderSchedule(sctx, parsed)
			if err != nil {
				return err
			}
			return env.print(res, "reminder schedule: "+scheduleText(res.Days))
		}
	}}
}

func remindersShowCommand() command {
	return command{summary: "show the store's reminder schedule and its changes, newest first", flags: func(fs *flag.FlagSet, opts *credit.Options) func(context.Context, *cmdEnv, []string) error {
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
			res, err := env.svc.Stores.ReminderSchedule(sctx)
			if err != nil {
				return err
			}
			lines := []string{"reminder schedule: " + scheduleText(res.Days)}
			for _, c := range res.Changes {
				lines = append(lines, fmt.Sprintf("  %s  %s: %s (was %s)", c.ChangedAt, c.ChangedBy, scheduleText(c.Days), scheduleText(c.Previous)))
			}
			return env.print(res, strings.Join(lines, "\n"))
		}
	}}
}

// scheduleText writes a schedule as the --days flag takes it.
func scheduleText(days []int) string {
	if len(days) == 0 {
		return "none"
	}
	parts := make([]string, len(days))
	for i, d := range days {
		parts[i] = fmt.Sprint(d)
	}
	return strings.Join(parts, ",")
}

func remindersSweepCommand() command {
	return sweepCommand("emit the reminders due and the promises broken now (serve does this every --sweep-interval)", "what is due",
		func(ctx context.Context, env *cmdEnv, asOf *time.Time) (credit.ReminderSweepResult, error) {
			if asOf == nil {
				return env.svc.Maintenance.SweepReminders(ctx)
			}
			return env.svc.Maintenance.SweepRemindersAsOf(ctx, *asOf)
		},
		func(res credit.ReminderSweepResult) string {
			return fmt.Sprintf("checked %d, reminders %d, promises broken %d", res.Checked, res.Reminders, res.PromisesBroken)
		})
}
