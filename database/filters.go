package database

import (
	"time"

	entsql "entgo.io/ent/dialect/sql"

	"github.com/creditd/creditd/ent/apikey"
	"github.com/creditd/creditd/ent/apikeysecret"
	"github.com/creditd/creditd/ent/company"
	"github.com/creditd/creditd/ent/invoice"
	"github.com/creditd/creditd/ent/invoicereminder"
	"github.com/creditd/creditd/ent/store"
	"github.com/creditd/creditd/ent/webhookdelivery"
	"github.com/creditd/creditd/ent/webhookendpoint"
)

// The conditions the domain names that read another table than the query's own
// (credit.Filters), each a subquery written in the form both databases plan well. Each is
// given to a query's Where; the query's own conditions, the tenant's among them, still apply.

// KeysWithLiveSecret, given to a query of API keys' Where, keeps the key with a secret of hash
// that has not expired by now. It is written as "id IN (subquery)" rather than ent's
// HasSecretsWith, an EXISTS that SQLite evaluates for every key of every store instead of
// looking the hash up once.
func (db *DB) KeysWithLiveSecret(hash string, now time.Time) func(*entsql.Selector) {
	return func(sel *entsql.Selector) {
		t := entsql.Table(apikeysecret.Table)
		secrets := entsql.Select(t.C(apikeysecret.FieldKeyID)).From(t).Where(entsql.And(
			entsql.EQ(t.C(apikeysecret.FieldHash), hash),
			entsql.Or(entsql.IsNull(t.C(apikeysecret.FieldExpiresAt)), entsql.GT(t.C(apikeysecret.FieldExpiresAt), now)),
		))
		sel.Where(entsql.In(sel.C(apikey.FieldID), secrets))
	}
}

// WebhookEndpointsDue, given to a query of webhook endpoints' Where, keeps the endpoints that
// may have a delivery due: their store has events past their cursor, or they have a pending
// delivery whose time has come by now.
func (db *DB) WebhookEndpointsDue(now time.Time) func(*entsql.Selector) {
	return func(sel *entsql.Selector) {
		st, d := entsql.Table(store.Table).As("due_store"), entsql.Table(webhookdelivery.Table).As("due_delivery")
		sel.Where(entsql.Or(
			entsql.Exists(entsql.Select(st.C(store.FieldID)).From(st).Where(entsql.And(
				entsql.ColumnsEQ(st.C(store.FieldID), sel.C(webhookendpoint.FieldStoreID)),
				entsql.ColumnsGT(st.C(store.FieldEventSeq), sel.C(webhookendpoint.FieldCursorSeq)),
			))),
			entsql.Exists(entsql.Select(d.C(webhookdelivery.FieldID)).From(d).Where(entsql.And(
				entsql.ColumnsEQ(d.C(webhookdelivery.FieldEndpointID), sel.C(webhookendpoint.FieldID)),
				entsql.EQ(d.C(webhookdelivery.FieldStatus), webhookdelivery.StatusPending.String()),
				entsql.LTE(d.C(webhookdelivery.FieldNextAttemptAt), now),
			))),
		))
	}
}

// RemindersOfOpenInvoices, given to a query of invoice reminders' Where, keeps the reminders
// of store storeID's invoices that are still open.
func (db *DB) RemindersOfOpenInvoices(storeID string) func(*entsql.Selector) {
	return func(sel *entsql.Selector) {
		t := entsql.Table(invoice.Table)
		sel.Where(entsql.In(sel.C(invoicereminder.FieldInvoiceID), entsql.Select(t.C(invoice.FieldID)).From(t).
			Where(entsql.And(entsql.EQ(t.C(invoice.FieldStoreID), storeID), openIs(t.C(invoice.FieldOpen), true)))))
	}
}

// InvoicesOfOverdueCompanies, given to a query of invoices' Where, keeps the invoices of the companies
// with an open invoice due before now.
func (db *DB) InvoicesOfOverdueCompanies(now time.Time) func(*entsql.Selector) {
	return func(sel *entsql.Selector) {
		t := entsql.Table(invoice.Table).As("due")
		sel.Where(entsql.In(sel.C(invoice.FieldCompanyID), entsql.Select(t.C(invoice.FieldCompanyID)).From(t).
			Where(entsql.And(openIs(t.C(invoice.FieldOpen), true), entsql.LT(t.C(invoice.FieldDueAt), now)))))
	}
}

// ReceivableCompanies, given to a query of companies' Where, keeps the companies with a balance that
// is not zero or an open invoice (whose balance can still be zero when a credit balance meets
// it).
func (db *DB) ReceivableCompanies() func(*entsql.Selector) {
	return func(sel *entsql.Selector) {
		nonZero := db.MoneyIsNotZero(sel.C(company.FieldOutstanding))
		t := entsql.Table(invoice.Table).As("inv_open")
		sel.Where(entsql.Or(nonZero, entsql.In(sel.C(company.FieldID),
			entsql.Select(t.C(invoice.FieldCompanyID)).From(t).Where(openIs(t.C(invoice.FieldOpen), true)))))
	}
}
