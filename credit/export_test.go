package credit

import (
	"context"

	"github.com/creditd/creditd/ent"
)

// Exported for the external tests of packed reads.
var (
	ReadCompanies   = readCompanies
	PackedLedger    = packedLedgerEntries
	ParseSQLiteTime = parseSQLiteTime
	ErrRowForm      = errRowForm
)

// PackedCompanies is the packed read of readCompanies.
func PackedCompanies(ctx context.Context, q *ent.CompanyQuery) ([]*ent.Company, error) {
	return packedCompanies(ctx, q, packedCompanyColumns)
}

// PackedKeyedCompanies is the packed read of readKeyedCompanies.
func PackedKeyedCompanies(ctx context.Context, q *ent.CompanyQuery) ([]*ent.Company, error) {
	return packedCompanies(ctx, q, packedKeyedCompanyColumns)
}

// PackedOrPlain is packedOrPlain for the tests.
func PackedOrPlain[T any](packed, plain func() (T, error)) (T, error) {
	return packedOrPlain(packed, plain)
}
