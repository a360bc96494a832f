package credit_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
)

// TestLatestLedgerPagesMatchListLedger: the batched first ledger pages of several companies
// (one packed statement over a range per company, SeqRanges and PackedReads) show what each
// company's own ledger page shows, with fields JSON must escape, exact decimals and times with
// their microseconds. The packed rows themselves are held to ent's plain reads in
// database/packed_test.go. It runs on both databases.
func TestLatestLedgerPagesMatchListLedger(t *testing.T) {
	t.Parallel()
	env := credittest.NewService(t)
	st := env.MustStore(t, "Store", "EUR")
	other := env.MustStore(t, "Other", "EUR")
	env.MustRecord(t, credit.LedgerEntryInput{CompanyID: env.MustCompany(t, other, "Another store's", "1").ID, Kind: credit.KindAdjustment, Amount: "1", Note: "n"})
	at := credit.At(time.Date(2026, 2, 3, 4, 5, 6, 789012000, time.UTC))
	var companies []string
	for c := range 2 {
		co := env.MustCompany(t, st, fmt.Sprint("Buyer ", c), "100000")
		companies = append(companies, co.ID)
		for _, in := range []credit.LedgerEntryInput{
			{Kind: credit.KindOrderPlaced, Amount: "1234.56", OrderGID: "gid://platform/Order/1", Note: `order "1" \ é`},
			{Kind: credit.KindPayment, Amount: "-0.01", Note: "tab\there\nline"},
			{Kind: credit.KindAdjustment, Amount: "7", Note: "seven", OccurredAt: &at},
			{Kind: credit.KindRefund, Amount: "-34.50", OrderGID: "gid://platform/Order/1", Note: "r"},
		} {
			in.CompanyID = co.ID
			env.MustRecord(t, in)
		}
	}
	viewer := credittest.Staff(st)
	limit := 3
	pages, err := env.Service.Ledger.FirstPages(viewer, companies, &limit)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range companies {
		list, err := env.Service.Ledger.List(viewer, id, credit.LedgerListParams{ListParams: credit.ListParams{Limit: &limit}})
		if err != nil {
			t.Fatal(err)
		}
		got, _ := json.Marshal(pages[id].Data)
		want, _ := json.Marshal(list.Data)
		if string(got) != string(want) || len(list.Data) != 3 || !pages[id].HasMore {
			t.Errorf("batched page %s, want %s", got, want)
		}
	}
}
