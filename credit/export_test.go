package credit

// Exported for the external tests of packed reads.
var (
	ReadCompanies   = readCompanies
	PackedCompanies = packedCompanies
	PackedLedger    = packedLedgerEntries
	ParseSQLiteTime = parseSQLiteTime
	ErrRowForm      = errRowForm
)

// PackedOrPlain is packedOrPlain for the tests.
func PackedOrPlain[T any](packed, plain func() (T, error)) (T, error) {
	return packedOrPlain(packed, plain)
}
