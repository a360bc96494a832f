package credit_test

import (
	"testing"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
	"github.com/creditd/creditd/ent"
	"github.com/creditd/creditd/ent/event"
)

// TestEventsAreNumberedPerStoreWithoutGaps: writes in two stores append events numbered 1, 2,
// 3... in each store, in the writing transaction.
func TestEventsAreNumberedPerStoreWithoutGaps(t *testing.T) {
	env := credittest.NewService(t)
	a := env.MustStore(t, "a", "EUR")
	b := env.MustStore(t, "b", "EUR")
	coA := env.MustCompany(t, a, "ca", "100")
	env.MustCompany(t, b, "cb", "100")
	env.MustRecord(t, credit.LedgerEntryInput{CompanyID: coA.ID, Kind: credit.KindOpeningBalance, Amount: "10"})
	for store, want := range map[string][]string{
		a: {string(credit.EventTypeCompanyCreated), string(credit.EventTypeLedgerEntryCreated)},
		b: {string(credit.EventTypeCompanyCreated)},
	} {
		rows, err := env.DB.Client.Event.Query().Where(event.StoreID(store)).Order(ent.Asc(event.FieldSeq)).All(credittest.Admin())
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != len(want) {
			t.Fatalf("store %s: %d events, want %d", store, len(rows), len(want))
		}
		for i, r := range rows {
			if r.Seq != int64(i+1) || r.Type != want[i] {
				t.Errorf("store %s event %d: seq %d type %s, want %d %s", store, i, r.Seq, r.Type, i+1, want[i])
			}
		}
	}
}
