package database_test

import (
	"errors"
	"testing"
	"time"

	"github.com/creditd/creditd/credittest"
	"github.com/creditd/creditd/database"
	"github.com/creditd/creditd/ent"
	"github.com/creditd/creditd/ids"
	"github.com/creditd/creditd/tenant"
)

// TestInsertNumberedKeepsRowsInTheViewersStore: events and timeline events are written as SQL
// (InsertNumbered), past ent's TenantMixin hook, so the hook's rule is applied there: a store's
// viewer cannot write a row into another store, nor move another store's counter, and a row
// must name its store. (Without tenant.CheckNewRow in InsertNumbered, the event lands in the
// other store and moves its event_seq.)
func TestInsertNumberedKeepsRowsInTheViewersStore(t *testing.T) {
	t.Parallel()
	env := credittest.New(t)
	a := env.MustStore(t, "A", "EUR")
	b := env.MustStore(t, "B", "EUR")
	coA := env.MustCompany(t, a, "Buyer A", "100").ID
	coB := env.MustCompany(t, b, "Buyer B", "100").ID
	viewerA := credittest.Staff(a)
	type row struct {
		table   string
		columns []string
		values  []any
	}
	event := func(storeID string) row {
		return row{"events", []string{"id", "store_id", "type", "occurred_at", "data"},
			[]any{ids.New("ev"), storeID, "key.created", time.Now().UTC(), `{"object":{}}`}}
	}
	timeline := func(storeID, companyID string) row {
		return row{"timeline_events", []string{"id", "store_id", "company_id", "type", "actor_type", "actor_label", "occurred_at", "data"},
			[]any{ids.New("ev"), storeID, companyID, "hold_placed", "staff", "test", time.Now().UTC(), []byte(`{}`)}}
	}
	insert := func(r row) (int64, error) {
		var seq int64
		err := env.DB.InTx(viewerA, func(tx *ent.Tx) error {
			var err error
			seq, err = env.DB.InsertNumbered(viewerA, tx, r.table, r.columns, r.values)
			return err
		})
		return seq, err
	}
	counters := func() [3]int64 {
		t.Helper()
		ctx := credittest.Admin()
		var out [3]int64
		for i, id := range []string{a, b} {
			st, err := env.DB.Client.Store.Get(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			out[i] = st.EventSeq
		}
		co, err := env.DB.Client.Company.Get(ctx, coB)
		if err != nil {
			t.Fatal(err)
		}
		out[2] = co.TimelineSeq
		return out
	}
	before := counters()

	if _, err := insert(event(b)); !errors.Is(err, tenant.ErrOtherStore) {
		t.Errorf("event in another store: %v, want ErrOtherStore", err)
	}
	if _, err := insert(event("")); err == nil {
		t.Error("event without store_id: written")
	}
	if _, err := insert(timeline(b, coB)); !errors.Is(err, tenant.ErrOtherStore) {
		t.Errorf("timeline event in another store: %v, want ErrOtherStore", err)
	}
	// The viewer's store, another store's company: the company's counter is not the row's.
	if _, err := insert(timeline(a, coB)); !errors.Is(err, database.ErrNoCounter) {
		t.Errorf("timeline event for another store's company: %v, want ErrNoCounter", err)
	}
	if after := counters(); after != before {
		t.Errorf("counters (event_seq A, event_seq B, timeline_seq of B's company) moved: %v, then %v", before, after)
	}
	n, err := env.DB.Client.Event.Query().Count(credittest.Admin())
	if err != nil {
		t.Fatal(err)
	}
	// The viewer's own rows are numbered after the store's and the company's last.
	seq, err := insert(event(a))
	if err != nil || seq != before[0]+1 {
		t.Errorf("event in the viewer's store: seq %d, %v; want %d", seq, err, before[0]+1)
	}
	if seq, err := insert(timeline(a, coA)); err != nil || seq < 1 {
		t.Errorf("timeline event in the viewer's store: seq %d, %v", seq, err)
	}
	m, err := env.DB.Client.Event.Query().Count(credittest.Admin())
	if err != nil {
		t.Fatal(err)
	}
	if m != n+1 {
		t.Errorf("%d events after one write, had %d", m, n)
	}
}
