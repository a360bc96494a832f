package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/creditd/creditd/credit"
)

// Staff accounts of the staff console. Passwords are read from standard input, never from a
// flag: a flag's value shows in the shell's history and in the process list.

// maxPasswordInput bounds what is read from stdin for a password: more than any password may be.
const maxPasswordInput = 4 * credit.MaxPasswordLength

// readPassword reads the password from stdin: its first line, without the line break.
//
// Errors: a usage error when stdin is empty or not given.
func (e *cmdEnv) readPassword() (string, error) {
	return e.readStdinLine("--password-stdin", "password", maxPasswordInput)
}

// readStdinLine reads a secret (what) from stdin for flag: its first line, without the line
// break, at most limit bytes.
//
// Errors: a usage error when stdin is empty or not given.
func (e *cmdEnv) readStdinLine(flag, what string, limit int) (string, error) {
	if e.m.Stdin == nil {
		return "", usagef("%s: nothing to read the %s from", flag, what)
	}
	line, err := bufio.NewReaderSize(io.LimitReader(e.m.Stdin, int64(limit)), limit).ReadString('\n')
	if err != nil && err != io.EOF {
		return "", usagef("%s: reading the %s: %v", flag, what, err)
	}
	value := strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r")
	if value == "" {
		return "", usagef("%s: the %s read from stdin is empty", flag, what)
	}
	return value, nil
}

// passwordFromStdin requires --password-stdin and reads the password.
func (e *cmdEnv) passwordFromStdin(given bool) (string, error) {
	if !given {
		return "", usagef("--password-stdin is required: the password is read from standard input, never from a flag")
	}
	return e.readPassword()
}

func staffCreateCommand() command {
	return command{summary: "create a staff console account; the password is read from stdin", flags: func(fs *flag.FlagSet, opts *credit.Options) func(context.Context, *cmdEnv, []string) error {
		store := fs.String("store", "", "store ID (required)")
		name := fs.String("name", "", "the member's name, shown on the timeline for their actions (required)")
		email := fs.String("email", "", "the email they sign in with, unique across all stores (required)")
		stdin := fs.Bool("password-stdin", false, "read the password from standard input (required; at least 12 characters)")
		return func(ctx context.Context, env *cmdEnv, args []string) error {
			if err := exactlyArgs(args); err != nil {
				return err
			}
			if err := required("store", *store, "name", *name, "email", *email); err != nil {
				return err
			}
			password, err := env.passwordFromStdin(*stdin)
			if err != nil {
				return err
			}
			sctx, err := env.asStaff(ctx, *store, cliStaff)
			if err != nil {
				return err
			}
			m, err := env.svc.Staff.Create(sctx, credit.StaffInput{Name: *name, Email: *email, Password: password})
			if err != nil {
				return err
			}
			return env.print(m, fmt.Sprintf("%s\n%s can now sign in to the staff console as %s", m.ID, m.Name, m.Email))
		}
	}}
}

func staffListCommand() command {
	return command{summary: "list a store's staff console accounts", flags: func(fs *flag.FlagSet, opts *credit.Options) func(context.Context, *cmdEnv, []string) error {
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
			list, err := env.svc.Staff.List(sctx)
			if err != nil {
				return err
			}
			var b strings.Builder
			fmt.Fprintf(&b, "%-26s %-24s %-32s %-28s %s", "ID", "NAME", "EMAIL", "CREATED", "STATUS")
			for _, m := range list {
				status := "active"
				if m.DisabledAt != nil {
					status = "disabled " + m.DisabledAt.String()
				}
				fmt.Fprintf(&b, "\n%-26s %-24s %-32s %-28s %s", m.ID, m.Name, m.Email, m.CreatedAt, status)
			}
			return env.print(map[string]any{"data": list}, b.String())
		}
	}}
}

func staffDisableCommand() command {
	return command{summary: "disable staff account ID: it cannot sign in, and its sessions end at once", flags: func(fs *flag.FlagSet, opts *credit.Options) func(context.Context, *cmdEnv, []string) error {
		return func(ctx context.Context, env *cmdEnv, args []string) error {
			sctx, err := env.staffFor(ctx, args, "ID")
			if err != nil {
				return err
			}
			m, err := env.svc.Staff.Disable(sctx, args[0])
			if err != nil {
				return err
			}
			return env.print(m, fmt.Sprintf("%s (%s) is disabled; their sessions have ended", m.ID, m.Email))
		}
	}}
}

func staffResetPasswordCommand() command {
	return command{summary: "set a new password, read from stdin, for staff account ID; its sessions end", flags: func(fs *flag.FlagSet, opts *credit.Options) func(context.Context, *cmdEnv, []string) error {
		stdin := fs.Bool("password-stdin", false, "read the new password from standard input (required; at least 12 characters)")
		return func(ctx context.Context, env *cmdEnv, args []string) error {
			if err := exactlyArgs(args, "ID"); err != nil {
				return err
			}
			password, err := env.passwordFromStdin(*stdin)
			if err != nil {
				return err
			}
			sctx, err := env.asStaff(ctx, args[0], cliStaff)
			if err != nil {
				return err
			}
			if err := env.svc.Staff.ResetPassword(sctx, args[0], password); err != nil {
				return err
			}
			return env.print(map[string]any{"id": args[0], "password_reset": true}, args[0]+": the password is changed; their sessions have ended")
		}
	}}
}
