package credit_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"entgo.io/ent/dialect"
	"github.com/shopspring/decimal"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
	"github.com/creditd/creditd/ent"
)

// statementCatcher is a driver that remembers the last query whose text contains a word, with
// its arguments, so that a test can ask the database for the plan of the very statement the
// service ran.
type statementCatcher struct {
	dialect.Driver
	word string
	mu   *sync.Mutex
	last *[2]any
}

func (d statementCatcher) Query(ctx context.Context, query string, args, v any) error {
	if strings.Contains(query, d.word) {
		d.mu.Lock()
		*d.last = [2]any{query, args}
		d.mu.Unlock()
	}
	return d.Driver.Query(ctx, query, args, v)
}

// TestSearchUsesAnIndex searches a store of 20,000 companies for an accented name and asks the
// database how it runs the statement the service sent: on SQLite through the names index
// (the store's range of (store_id, name_key, id), no row read for a name that does not match),
// on PostgreSQL through the trigram index of migration 0010. Each ordering's read is checked
// too, with the search and without.
func TestSearchUsesAnIndex(t *testing.T) {
	t.Parallel()
	env := credittest.NewService(t)
	st := env.MustStore(t, "Many", "EUR")
	ctx := credittest.Admin()
	now := env.Clock.Now()
	var bulk []*ent.CompanyCreate
	for i := range 20000 {
		name := fmt.Sprintf("Großhandel %04d GmbH", i)
		switch i {
		case 1234:
			name = "Café Morgenrot"
		case 12345:
			name = "MORGENROT Bäckerei"
		}
		limit, outstanding := decimal.New(int64(1000+i), 0), decimal.New(int64(i*7%1000), 0)
		k := credit.OrderKeysOf(name, limit, outstanding, credit.DefaultBufferPercent, "EUR")
		bulk = append(bulk, env.DB.Client.Company.Create().SetStoreID(st).SetName(name).SetNameKey(k.Name).
			SetPaymentTermsDays(30).SetCreditLimit(limit).SetOutstanding(outstanding).SetUnappliedCredit(decimal.Zero).
			SetOutstandingKey(k.Outstanding).SetCreditLimitKey(k.CreditLimit).SetAvailableKey(k.Available).
			SetUtilizationKey(k.Utilization).SetCreatedAt(now).SetUpdatedAt(now.Add(time.Duration(i)*time.Second)))
	}
	for i := 0; i < len(bulk); i += 500 {
		if err := env.DB.Client.Company.CreateBulk(bulk[i:min(i+500, len(bulk))]...).Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	// PostgreSQL's autovacuum keeps statistics; creditd never runs ANALYZE on SQLite, whose
	// planner then goes by the indexes' shapes alone.
	if env.DB.Dialect == dialect.Postgres {
		if _, err := env.DB.SQL.ExecContext(ctx, "ANALYZE companies"); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	var last [2]any
	db := env.DB.WithDriver(func(d dialect.Driver) dialect.Driver {
		return statementCatcher{Driver: d, word: "FROM", mu: &mu, last: &last}
	})
	svc := credit.New(db, credit.Options{Now: env.Clock.Now})
	key := ctxKey(st)
	plan := func(p credit.CompanyListParams) (string, []credit.Company) {
		t.Helper()
		page, err := svc.Companies.List(key, p)
		if err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		query, args := last[0].(string), last[1].([]any)
		mu.Unlock()
		tx, err := db.SQL.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback()
		explain := "EXPLAIN QUERY PLAN "
		if db.Dialect == dialect.Postgres {
			explain = "EXPLAIN "
			// A test's table is small enough for PostgreSQL to read it whole whatever the
			// indexes; without that choice the plan shows which index it would use.
			if _, err := tx.ExecContext(ctx, "SET LOCAL enable_seqscan = off"); err != nil {
				t.Fatal(err)
			}
		}
		rows, err := tx.QueryContext(ctx, explain+query, args...)
		if err != nil {
			t.Fatalf("%s: %v", query, err)
		}
		defer rows.Close()
		cols, _ := rows.Columns()
		var lines []string
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			lines = append(lines, fmt.Sprint(vals[len(vals)-1]))
		}
		return strings.Join(lines, "\n"), page.Data
	}
	search := "CAFE"
	for _, q := range []string{"morgenrot", "CAFÉ", "grosshandel 0042"} {
		for _, o := range []credit.CompanyOrder{{}, {Field: credit.OrderOutstanding, Desc: true}, {Field: credit.OrderUtilization}} {
			search = q
			got, found := plan(credit.CompanyListParams{Search: &search, Order: o})
			want := "company_store_id_name_key_id"
			if db.Dialect == dialect.Postgres {
				want = "company_name_key_trgm"
			}
			if !strings.Contains(got, want) {
				t.Errorf("q=%q order=%s: the plan does not use %s:\n%s", q, o, want, got)
			}
			if len(found) == 0 {
				t.Errorf("q=%q: nothing found", q)
			}
			for _, c := range found {
				if !strings.Contains(credit.NameKey(c.Name), credit.NameKey(q)) {
					t.Errorf("q=%q found %q", q, c.Name)
				}
			}
		}
	}
	// Every ordering reads along its own index, from the cursor on: no sort of the store.
	for field, index := range map[string]string{
		credit.OrderName:            "company_store_id_name_key_id",
		credit.OrderOutstanding:     "company_store_id_outstanding_key_id",
		credit.OrderAvailableCredit: "company_store_id_available_key_id",
		credit.OrderCreditLimit:     "company_store_id_credit_limit_key_id",
		credit.OrderUpdatedAt:       "company_store_id_updated_at_id",
	} {
		got, _ := plan(credit.CompanyListParams{Order: credit.CompanyOrder{Field: field, Desc: true}})
		if !strings.Contains(got, index) {
			t.Errorf("order=-%s: the plan does not use %s:\n%s", field, index, got)
		}
	}
}
