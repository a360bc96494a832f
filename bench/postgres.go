package bench

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/shopspring/decimal"
)

// DefaultSchema is the PostgreSQL schema the harness seeds and serves unless told otherwise.
// It is the harness's own: seeding drops and recreates it.
const DefaultSchema = "creditbench"

// schemaMarker starts the comment the harness puts on the schemas it creates. It lets a later
// run recognise its own dataset (the JSON after the marker) and refuse to drop a schema that
// someone else made.
const schemaMarker = "creditbench dataset: "

var schemaName = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)

// SchemaURL returns adminURL with its connections using schema and naming themselves
// applicationName in pg_stat_activity ("" leaves the name out).
func SchemaURL(adminURL, schema, applicationName string) (string, error) {
	if !schemaName.MatchString(schema) {
		return "", fmt.Errorf("bad schema name %q: lower-case letters, digits and _", schema)
	}
	u, err := url.Parse(adminURL)
	if err != nil {
		return "", err
	}
	q := u.Query()
	q.Set("search_path", schema)
	if applicationName != "" {
		q.Set("application_name", applicationName)
	}
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// LoadPostgresDataset returns the dataset seeded earlier with size into schema, read from the
// schema's comment, or ok=false when the schema is missing, holds another size, or was not
// seeded to the end.
func LoadPostgresDataset(ctx context.Context, adminURL, schema string, size Size) (Dataset, bool, error) {
	comment, exists, err := schemaComment(ctx, adminURL, schema)
	if err != nil || !exists {
		return Dataset{}, false, err
	}
	var ds Dataset
	body, ok := strings.CutPrefix(comment, schemaMarker)
	if !ok || json.Unmarshal([]byte(body), &ds) != nil || ds.Size != size || ds.Format != seedFormat {
		return Dataset{}, false, nil
	}
	return ds, true, nil
}

// schemaComment reads the comment on schema, and whether the schema exists.
func schemaComment(ctx context.Context, adminURL, schema string) (comment string, exists bool, err error) {
	db, err := sql.Open("pgx", adminURL)
	if err != nil {
		return "", false, err
	}
	defer db.Close()
	var c sql.NullString
	err = db.QueryRowContext(ctx, "SELECT obj_description(oid, 'pg_namespace') FROM pg_namespace WHERE nspname = $1", schema).Scan(&c)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	return c.String, err == nil, err
}

// SeedPostgres seeds size's data into schema of the PostgreSQL database at adminURL, as Seed
// does into a SQLite file: it drops the schema if an earlier run of the harness made it (and
// refuses to touch one it did not), creates it, gives it creditd's schema through creditd's
// own migrations, and writes the rows with COPY. Foreign keys are dropped while the rows go
// in, because a company's row follows its ledger (its outstanding is the ledger's sum), and
// are added back afterwards, which checks every row against them. The tables are then
// vacuumed and analysed, so the planner has statistics and index-only scans work from the
// first request. The dataset is kept in the schema's comment.
func SeedPostgres(ctx context.Context, adminURL, schema string, size Size) (Dataset, error) {
	start := time.Now()
	dsn, err := SchemaURL(adminURL, schema, "creditbench-seed")
	if err != nil {
		return Dataset{}, err
	}
	comment, exists, err := schemaComment(ctx, adminURL, schema)
	if err != nil {
		return Dataset{}, err
	}
	if exists && !strings.HasPrefix(comment, schemaMarker) {
		return Dataset{}, fmt.Errorf("schema %s exists and was not made by creditbench: choose another schema or drop it yourself", schema)
	}
	admin, err := sql.Open("pgx", adminURL)
	if err != nil {
		return Dataset{}, err
	}
	defer admin.Close()
	ident := pgx.Identifier{schema}.Sanitize()
	for _, stmt := range []string{
		"DROP SCHEMA IF EXISTS " + ident + " CASCADE",
		"CREATE SCHEMA " + ident,
		"COMMENT ON SCHEMA " + ident + " IS '" + schemaMarker + "seeding'",
	} {
		if _, err := admin.ExecContext(ctx, stmt); err != nil {
			return Dataset{}, fmt.Errorf("%s: %w", stmt, err)
		}
	}
	if err := migrate(ctx, dsn); err != nil {
		return Dataset{}, err
	}

	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return Dataset{}, err
	}
	defer conn.Close(ctx)
	// Each COPY commits on its own; the data is written again if seeding fails, so waiting for
	// the WAL flush at every commit would only slow it down.
	if _, err := conn.Exec(ctx, "SET synchronous_commit = off"); err != nil {
		return Dataset{}, err
	}
	restoreKeys, err := dropForeignKeys(ctx, conn, schema)
	if err != nil {
		return Dataset{}, err
	}
	ds, err := newSeeder(ctx, &pgWriter{ctx: ctx, conn: conn}, size).run()
	if err != nil {
		return Dataset{}, err
	}
	if err := restoreKeys(); err != nil {
		return Dataset{}, err
	}
	tables, err := schemaTables(ctx, conn, schema)
	if err != nil {
		return Dataset{}, err
	}
	for _, t := range tables {
		if _, err := conn.Exec(ctx, "VACUUM (ANALYZE) "+pgx.Identifier{t}.Sanitize()); err != nil {
			return Dataset{}, fmt.Errorf("vacuum %s: %w", t, err)
		}
	}
	if err := createKey(ctx, dsn, &ds); err != nil {
		return Dataset{}, err
	}
	ds.Size, ds.Format = size, seedFormat
	ds.SeedSeconds = time.Since(start).Seconds()
	b, err := json.Marshal(ds)
	if err != nil {
		return Dataset{}, err
	}
	// COMMENT takes a literal, not a parameter.
	literal := "'" + strings.ReplaceAll(schemaMarker+string(b), "'", "''") + "'"
	if _, err := admin.ExecContext(ctx, "COMMENT ON SCHEMA "+ident+" IS "+literal); err != nil {
		return Dataset{}, err
	}
	return ds, nil
}

// dropForeignKeys drops the foreign keys of schema's tables and returns a function that adds
// them back with their original definitions.
func dropForeignKeys(ctx context.Context, conn *pgx.Conn, schema string) (restore func() error, err error) {
	rows, err := conn.Query(ctx, `SELECT cl.relname, c.conname, pg_get_constraintdef(c.oid)
		FROM pg_constraint c JOIN pg_class cl ON cl.oid = c.conrelid JOIN pg_namespace n ON n.oid = cl.relnamespace
		WHERE c.contype = 'f' AND n.nspname = $1 ORDER BY 1, 2`, schema)
	if err != nil {
		return nil, err
	}
	type foreignKey struct{ table, name, definition string }
	keys, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (foreignKey, error) {
		var k foreignKey
		return k, r.Scan(&k.table, &k.name, &k.definition)
	})
	if err != nil {
		return nil, err
	}
	for _, k := range keys {
		if _, err := conn.Exec(ctx, "ALTER TABLE "+pgx.Identifier{k.table}.Sanitize()+" DROP CONSTRAINT "+pgx.Identifier{k.name}.Sanitize()); err != nil {
			return nil, err
		}
	}
	return func() error {
		for _, k := range keys {
			if _, err := conn.Exec(ctx, "ALTER TABLE "+pgx.Identifier{k.table}.Sanitize()+" ADD CONSTRAINT "+pgx.Identifier{k.name}.Sanitize()+" "+k.definition); err != nil {
				return fmt.Errorf("foreign key %s of %s: %w", k.name, k.table, err)
			}
		}
		return nil
	}, nil
}

func schemaTables(ctx context.Context, conn *pgx.Conn, schema string) ([]string, error) {
	rows, err := conn.Query(ctx, "SELECT tablename FROM pg_tables WHERE schemaname = $1 ORDER BY 1", schema)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// pgWriter writes rows with COPY, 10,000 rows of a table at a time.
type pgWriter struct {
	ctx  context.Context
	conn *pgx.Conn
}

func (w *pgWriter) batch() int { return 10_000 }

func (w *pgWriter) write(t *table) error {
	width := len(t.columns)
	rows := make([][]any, t.n)
	for i := range rows {
		row := t.args[i*width : (i+1)*width]
		for j, v := range row {
			// COPY's binary format needs the numeric itself, not decimal's text.
			if d, ok := v.(decimal.Decimal); ok {
				row[j] = pgtype.Numeric{Int: d.Coefficient(), Exp: d.Exponent(), Valid: true}
			}
		}
		rows[i] = row
	}
	if _, err := w.conn.CopyFrom(w.ctx, pgx.Identifier{t.name}, t.columns, pgx.CopyFromRows(rows)); err != nil {
		return fmt.Errorf("copy into %s: %w", t.name, err)
	}
	return nil
}

func (w *pgWriter) finish() error { return nil }
