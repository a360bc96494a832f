package database_test

import "github.com/creditd/creditd/credit"

func orderInput(companyID string) credit.LedgerEntryInput {
	return credit.LedgerEntryInput{CompanyID: companyID, Kind: credit.KindOrderPlaced, Amount: "5.00", OrderGID: "gid://platform/Order/1"}
}
