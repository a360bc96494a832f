package database

import (
	"context"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
	"github.com/jackc/pgx/v5"

	"github.com/creditd/creditd/ent/company"
)

// Plans made for a read's own arguments (PostgreSQL).
//
// pgx keeps each statement prepared on its connection, and after five runs PostgreSQL may
// settle on a generic plan for it: one made without the arguments' values, kept when its
// estimated cost is no worse than that of the plans made for them. The estimate of a generic
// plan takes a store_id or company_id condition to match the average store or company, and
// the stores are anything but average. For "these 50 companies of this store" (a page of
// payment behaviour, the large store with 10,000 companies), the generic plan walks the
// store's 10,000 entries of a (store_id, …) index and compares each with the 50 keys: 42 ms
// where the plan made for the arguments looks the 50 keys up in 0.6 ms; the page's invoice
// read went from 1 to 8 ms the same way (BENCHMARKS.md, "Issue 38, third pass"). Planning
// every statement of every connection for its arguments (plan_cache_mode =
// force_custom_plan) cured those but cost about 100 µs a statement elsewhere (a company's
// GET, an adjustment's nine statements), so only the reads that ask for it are planned so:
// they go as an unnamed statement (pgx's QueryExecModeCacheDescribe, still one round trip),
// which PostgreSQL plans for its arguments each time.

// planEachRunKey is the context key of PlanForArguments.
type planEachRunKey struct{}

// PlanForArguments returns ctx for reads whose best plan depends on their arguments' values:
// each read of the database's ent client made with it (outside a transaction) is planned for
// its own arguments every time it runs, never with a plan the database made for average
// arguments and kept. SQLite always plans so; there ctx is returned as it is.
func (db *DB) PlanForArguments(ctx context.Context) context.Context {
	if db.Dialect != dialect.Postgres {
		return ctx
	}
	return context.WithValue(ctx, planEachRunKey{}, true)
}

// planDriver is the PostgreSQL driver under the ent client: a query whose context
// PlanForArguments made goes as an unnamed statement (see the file's comment); every other
// statement, and everything in a transaction, as the driver sends it.
type planDriver struct{ dialect.Driver }

// Query runs query, planned for its arguments when ctx asks for it.
func (d planDriver) Query(ctx context.Context, query string, args, v any) error {
	if a, ok := args.([]any); ok && len(a) > 0 && ctx.Value(planEachRunKey{}) != nil {
		// pgx reads a QueryExecMode ahead of the arguments as the mode of this one query.
		args = append([]any{pgx.QueryExecModeCacheDescribe}, a...)
	}
	return d.Driver.Query(ctx, query, args, v)
}

// companiesPrimaryKey is SQLite's name for the index of the companies' primary key (a TEXT
// key gets an automatic index, named after its table).
const companiesPrimaryKey = "sqlite_autoindex_companies_1"

// CompaniesByKey, given to a query of companies whose Where names their keys (IDIn), makes
// SQLite look them up by the primary key. Without statistics SQLite takes the tenant's
// store_id = ? for the narrower condition and walks the store's entries of an index led by
// store_id, all 10,000 of the large store for a page of 50 companies (3.0–3.5 ms in the
// sqlite3 shell, 0.2 ms by the keys); "INDEXED BY" names the index to use, and the store's
// condition still filters the rows. PostgreSQL plans such a read for its arguments
// (PlanForArguments); there this does nothing.
func (db *DB) CompaniesByKey() func(*entsql.Selector) {
	return func(sel *entsql.Selector) {
		if db.Dialect != dialect.SQLite {
			return
		}
		// An unquoted table is written as it is; its alias, the table's own name, is what
		// the query's columns are qualified with.
		var b entsql.Builder
		b.SetDialect(dialect.SQLite)
		b.Ident(company.Table).WriteString(" INDEXED BY ").Ident(companiesPrimaryKey)
		sel.From(entsql.Table(b.String()).Unquote().As(company.Table))
	}
}
