package main

import (
	"context"
	"flag"
	"fmt"
	"strings"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/database"
)

func restoreCommand() command {
	return command{summary: "replace a SQLite database with a backup, keeping the replaced one as FILE.before-restore", noDatabase: true, flags: func(fs *flag.FlagSet, opts *credit.Options) func(context.Context, *cmdEnv, []string) error {
		from := fs.String("from", "", "the backup to restore (required), as creditd backup wrote it")
		return func(ctx context.Context, env *cmdEnv, args []string) error {
			if err := exactlyArgs(args); err != nil {
				return err
			}
			if err := required("from", *from); err != nil {
				return err
			}
			res, err := database.Restore(ctx, *from, env.dbPath)
			if err != nil {
				return err
			}
			text := fmt.Sprintf("restored %s from %s (integrity check ok)", env.dbPath, *from)
			if res.Replaced != "" {
				text += "; the replaced database is " + res.Replaced
			}
			if len(res.Pending) > 0 {
				text += fmt.Sprintf("; the backup lacks %d migration(s) of this creditd (%s): run `creditd migrate` before serve", len(res.Pending), strings.Join(res.Pending, ", "))
			}
			return env.print(map[string]any{"status": "restored", "from": *from, "replaced": res.Replaced, "pending_migrations": res.Pending}, text)
		}
	}}
}
