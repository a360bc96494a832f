package credit

import (
	"github.com/creditd/creditd/ent/company"
)

// Packed reads. The lists the API serves most read their rows through PackedReads, one
// packed column per row instead of one call into the driver per column (the codec, its SQL
// and the measurements are in database/packed.go). The domain names the columns its views
// read, here and beside the views (companyViewColumns, ledgerViewColumns); the codec maps
// them by name, so their order is free.

// packedCompanyColumns are companyViewColumns and the store's ID.
var packedCompanyColumns = append([]string{company.FieldStoreID}, companyViewColumns...)

// packedKeyedCompanyColumns are packedCompanyColumns and the sort keys, for the orderings
// whose cursors carry a stored key (companyorder.go).
var packedKeyedCompanyColumns = append(append([]string{}, packedCompanyColumns...),
	company.FieldNameKey, company.FieldOutstandingKey, company.FieldCreditLimitKey,
	company.FieldAvailableKey, company.FieldUtilizationKey)
