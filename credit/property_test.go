package credit_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
	"github.com/creditd/creditd/ent"
	"github.com/creditd/creditd/ent/ledgerentry"
	"github.com/creditd/creditd/tenant"
)

// TestPropertyOutstandingEqualsLedgerSum runs random sequences of every kind of write, valid
// and invalid, and checks after each step that every company's outstanding balance equals the
// sum of its ledger, that ledger sequence numbers are gapless, and that available credit
// follows its formula.
func TestPropertyOutstandingEqualsLedgerSum(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			t.Parallel()
			runProperty(t, seed, 150)
		})
	}
}

func runProperty(t *testing.T, seed uint64, steps int) {
	env := credittest.NewService(t)
	rng := rand.New(rand.NewPCG(seed, seed*7919))
	svc := env.Service
	var stores []string
	var companies []credit.Company
	keyCtx := map[string]context.Context{}
	for i, cur := range []string{"EUR", "JPY"} {
		st := env.MustStore(t, fmt.Sprintf("store %d", i), cur)
		stores = append(stores, st)
		k := env.MustIssuedKey(t, st, "prop", credit.AllScopes...)
		keyCtx[st] = tenant.APIKey(context.Background(), st, k.ID, "prop", credit.AllScopes)
		for j := 0; j < 3; j++ {
			companies = append(companies, env.MustCompany(t, st, fmt.Sprintf("c%d", j), "1000", fmt.Sprintf("NET_%d", 1+rng.IntN(30))))
		}
	}
	storeOf := func(c credit.Company) string {
		for i, st := range stores {
			if (c.CreditLimit.Currency == "EUR") == (i == 0) {
				return st
			}
		}
		return ""
	}
	orders := map[string][]string{}
	amount := func(c credit.Company, sign int) string {
		cents := int64(1 + rng.IntN(50000))
		d := decimal.New(cents*int64(sign), -2)
		if c.CreditLimit.Currency == "JPY" {
			d = decimal.NewFromInt(cents * int64(sign))
		}
		return d.String()
	}
	for step := 0; step < steps; step++ {
		c := companies[rng.IntN(len(companies))]
		ctx := keyCtx[storeOf(c)]
		var err error
		switch op := rng.IntN(10); op {
		case 0, 1:
			gid := fmt.Sprintf("gid://platform/Order/%d", step)
			_, _, err = svc.Ledger.Record(credittest.Staff(storeOf(c)), credit.LedgerEntryInput{CompanyID: c.ID, Kind: credit.KindOrderPlaced, Amount: amount(c, 1), OrderGID: gid})
			if err == nil {
				orders[c.ID] = append(orders[c.ID], gid)
			}
		case 2:
			in := credit.LedgerEntryInput{CompanyID: c.ID, Kind: credit.KindPayment, Amount: amount(c, -1)}
			if len(orders[c.ID]) > 0 && rng.IntN(2) == 0 {
				in.OrderGID = orders[c.ID][rng.IntN(len(orders[c.ID]))]
			}
			_, _, err = svc.Ledger.Record(credittest.Staff(storeOf(c)), in)
		case 3:
			if len(orders[c.ID]) > 0 {
				kind := []string{credit.KindRefund, credit.KindCancellation}[rng.IntN(2)]
				_, _, err = svc.Ledger.Record(credittest.Staff(storeOf(c)), credit.LedgerEntryInput{CompanyID: c.ID, Kind: kind, Amount: amount(c, -1), OrderGID: orders[c.ID][rng.IntN(len(orders[c.ID]))]})
			}
		case 4:
			a, note := amount(c, 1-2*rng.IntN(2)), "prop"
			if rng.IntN(5) == 0 {
				a = "0" // refused
			}
			_, err = svc.Ledger.CreateAdjustment(ctx, credit.AdjustmentInput{CompanyID: c.ID, Amount: credit.Amount(a), Note: &note})
		case 5:
			a := amount(c, 1-2*rng.IntN(4)/3)
			_, err = svc.Companies.SetCreditLimit(ctx, credit.CreditLimitInput{CompanyID: c.ID, Amount: credit.Amount(a)})
		case 6:
			_, err = svc.Companies.PlaceHold(ctx, credit.HoldInput{CompanyID: c.ID})
		case 7:
			_, err = svc.Companies.LiftHold(ctx, c.ID)
		case 8:
			env.Clock.Advance(time.Duration(rng.IntN(72)) * time.Hour)
			_, err = svc.Maintenance.SweepHolds(context.Background())
		case 9:
			// A write through another store's key never reaches the company.
			other := keyCtx[stores[0]]
			if storeOf(c) == stores[0] {
				other = keyCtx[stores[1]]
			}
			a, note := "1", "cross-store"
			if _, err := svc.Ledger.CreateAdjustment(other, credit.AdjustmentInput{CompanyID: c.ID, Amount: credit.Amount(a), Note: &note}); credit.CodeOf(err) != credit.CodeNotFound {
				t.Fatalf("step %d: cross-store write: %v", step, err)
			}
		}
		if err != nil && credit.CodeOf(err) == "" {
			t.Fatalf("step %d: internal error: %v", step, err)
		}
		checkInvariants(t, env, step)
	}
}

func checkInvariants(t *testing.T, env *credittest.ServiceEnv, step int) {
	t.Helper()
	ctx := credittest.Admin()
	cos, err := env.DB.Client.Company.Query().WithStore().All(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cos {
		entries, err := env.DB.Client.LedgerEntry.Query().Where(ledgerentry.CompanyID(c.ID)).Order(ent.Asc(ledgerentry.FieldSeq)).All(ctx)
		if err != nil {
			t.Fatal(err)
		}
		sum := decimal.Zero
		for i, e := range entries {
			sum = sum.Add(e.Amount)
			if e.Seq != int64(i+1) {
				t.Fatalf("step %d: %s: entry %d has seq %d", step, c.ID, i, e.Seq)
			}
		}
		if !sum.Equal(c.Outstanding) || c.LedgerSeq != int64(len(entries)) {
			t.Fatalf("step %d: %s: outstanding %s, ledger sum %s, seq %d of %d entries", step, c.ID, c.Outstanding, sum, c.LedgerSeq, len(entries))
		}
		view, err := env.Service.Companies.Get(tenant.Staff(context.Background(), c.StoreID, "check"), c.ID)
		if err != nil {
			t.Fatal(err)
		}
		buffer := c.CreditLimit.Mul(decimal.NewFromInt(int64(c.Edges.Store.BufferPercent))).Div(decimal.NewFromInt(100))
		digits, _ := credit.MinorDigits(view.CreditLimit.Currency)
		want := decimal.Max(decimal.Zero, c.CreditLimit.Sub(c.Outstanding).Sub(buffer.Round(digits)))
		if view.AvailableCredit.Amount != credit.NewMoney(want, view.CreditLimit.Currency).Amount {
			t.Fatalf("step %d: %s: available %s, want %s", step, c.ID, view.AvailableCredit.Amount, want)
		}
	}
}
