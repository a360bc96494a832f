package credit_test

import (
	"slices"
	"testing"
	"time"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
)

// TestOrderingsFollowWrites: after adjustments, limit changes (to zero and back, and to the
// same limit) and entries of every sign, every ordering is still the exact order of the
// figures: each write moves the stored keys of exactly the figures it moved (a write sets
// only those).
func TestOrderingsFollowWrites(t *testing.T) {
	t.Parallel()
	env := credittest.NewService(t)
	ctx, ids := orderingFixture(t, env)
	note := "move"
	writes := []struct {
		company      int
		adjust       string // an adjustment's amount, or ""
		limit        string // a new credit limit, or ""
		openingEntry string // a platform entry's amount (opening_balance), or ""
	}{
		{company: 0, limit: "3.00"},                         // Café Morgenrot: 100/3, over its limit
		{company: 1, adjust: "99.00"},                       // cafe morgenrot: 100/3 too, a tie
		{company: 4, limit: "100.00"},                       // Äpfel Bauer: a zero limit no more
		{company: 7, limit: "0"},                            // Nordlicht: a zero limit now
		{company: 9, limit: "5000.00"},                      // Seeblick: the same limit
		{company: 6, adjust: "250.00"},                      // Brauhaus Kessler: from a credit balance to zero
		{company: 12, adjust: "-0.01"},                      // Ybbs: a cent below Alpenblick
		{company: 2, adjust: "0.02", limit: "1000000.00"},   // Zeta Huge: both figures
		{company: 3, openingEntry: "-333333333333333.32"},   // Zeta Huge Less: to zero
		{company: 10, limit: "6000.00", adjust: "-6000.00"}, // Seeblick Zwei: at its limit, then nothing owed
	}
	for _, w := range writes {
		env.Clock.Advance(time.Millisecond)
		id := ids[w.company]
		if w.limit != "" {
			if _, err := env.Service.Companies.SetCreditLimit(ctx, credit.CreditLimitInput{CompanyID: id, Amount: credit.Amount(w.limit)}); err != nil {
				t.Fatalf("limit %s: %v", w.limit, err)
			}
		}
		if w.adjust != "" {
			if _, err := env.Service.Ledger.CreateAdjustment(ctx, credit.AdjustmentInput{CompanyID: id, Amount: credit.Amount(w.adjust), Note: &note}); err != nil {
				t.Fatalf("adjustment %s: %v", w.adjust, err)
			}
		}
		if w.openingEntry != "" {
			env.MustRecord(t, credit.LedgerEntryInput{CompanyID: id, Kind: credit.KindOpeningBalance, Amount: w.openingEntry})
		}
	}
	all := pageAll(t, env, ctx, credit.CompanyListParams{}, nil)
	for _, field := range orderings {
		for _, desc := range []bool{false, true} {
			o := credit.CompanyOrder{Field: field, Desc: desc}
			var got []string
			for _, c := range pageAll(t, env, ctx, credit.CompanyListParams{Order: o}, nil) {
				got = append(got, c.ID)
			}
			if want := sortedWant(all, field, desc); !slices.Equal(got, want) {
				t.Errorf("order=%s:\n got %v\nwant %v", o, names(all, got), names(all, want))
			}
		}
	}
}
