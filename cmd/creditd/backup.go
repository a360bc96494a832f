package main

import (
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/database"
)

func backupCommand() command {
	return command{summary: "copy a SQLite database while serve runs (PostgreSQL: pg_dump, pg_basebackup)", noDatabase: true, flags: func(fs *flag.FlagSet, opts *credit.Options) func(context.Context, *cmdEnv, []string) error {
		to := fs.String("to", "", "file to write the copy to (required); replaced atomically")
		return func(ctx context.Context, env *cmdEnv, args []string) error {
			if err := exactlyArgs(args); err != nil {
				return err
			}
			if err := required("to", *to); err != nil {
				return err
			}
			start := time.Now()
			if err := database.Backup(ctx, env.dbPath, *to); err != nil {
				return err
			}
			took := time.Since(start).Round(time.Millisecond)
			return env.print(map[string]string{"status": "copied", "to": *to, "took": took.String()}, fmt.Sprintf("copied the database to %s in %s (integrity check ok)", *to, took))
		}
	}}
}
