package schema_test

import (
	"testing"

	"github.com/creditd/creditd/ent/migrate"
)

// TestEveryTableBelongsToAStore: every table but the stores themselves has the TenantMixin's
// store_id column with its foreign key to stores, the sign that its entity uses the mixin whose
// interceptor and hook scope every query and mutation to the viewer's store. An entity added
// without the mixin would be readable across stores; this fails first.
func TestEveryTableBelongsToAStore(t *testing.T) {
	for _, table := range migrate.Tables {
		if table.Name == "stores" {
			continue
		}
		scoped := false
		for _, fk := range table.ForeignKeys {
			if len(fk.Columns) == 1 && fk.Columns[0].Name == "store_id" && fk.RefTable != nil && fk.RefTable.Name == "stores" {
				scoped = true
			}
		}
		if !scoped {
			t.Errorf("table %s has no store_id referencing stores: give its entity the TenantMixin", table.Name)
		}
	}
	if len(migrate.Tables) < 10 {
		t.Fatalf("only %d tables: the schema did not load", len(migrate.Tables))
	}
}
