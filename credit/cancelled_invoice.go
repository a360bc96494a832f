package credit

import (
	"entgo.io/ent/dialect/sql"

	"github.com/creditd/creditd/ent/invoice"
	"github.com/creditd/creditd/ent/ledgerentry"
	"github.com/creditd/creditd/ent/predicate"
)

// cancelledInvoice is Filters.CancelledInvoices written with ent's builder, kept only for
// payment_behaviour.go and store_behaviour.go, whose reads issue 38's change is rewriting
// behind Storage: once they take the condition from their storage (s.db.CancelledInvoices()),
// this file goes, and with it this import of ent's SQL builder. The invoice lists already read
// it through Filters (invoiceStatusWhere).
func cancelledInvoice() predicate.Invoice {
	return func(sel *sql.Selector) {
		t := sql.Table(ledgerentry.Table)
		sel.Where(sql.Exists(sql.Select(t.C(ledgerentry.FieldID)).From(t).Where(sql.And(
			sql.ColumnsEQ(t.C(ledgerentry.FieldCompanyID), sel.C(invoice.FieldCompanyID)),
			sql.ColumnsEQ(t.C(ledgerentry.FieldPlatformOrderGid), sel.C(invoice.FieldPlatformOrderGid)),
			sql.EQ(t.C(ledgerentry.FieldKind), KindCancellation),
		))))
	}
}
