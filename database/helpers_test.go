package database_test

import (
	"context"
	"time"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/ent"
)

func orderInput(companyID string) credit.LedgerEntryInput {
	return credit.LedgerEntryInput{CompanyID: companyID, Kind: credit.KindOrderPlaced, Amount: "5.00", OrderGID: "gid://platform/Order/1"}
}

// createStore creates a store named name in tx, the write the transaction tests make.
func createStore(ctx context.Context, tx *ent.Tx, name string) error {
	_, err := newStore(ctx, tx, name)
	return err
}

// newStore creates a store named name in tx and returns its ID.
func newStore(ctx context.Context, tx *ent.Tx, name string) (string, error) {
	st, err := tx.Store.Create().SetName(name).SetCurrency("EUR").SetCursorSecret([]byte("0123456789abcdef0123456789abcdef")).
		SetCreatedAt(time.Now()).Save(ctx)
	if err != nil {
		return "", err
	}
	return st.ID, nil
}
