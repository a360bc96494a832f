package graph_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
)

const statementQuery = `query($id: ID!, $from: Date!, $to: Date!) { node(id: $id) { ... on Company { statement(from: $from, to: $to) {
  company { id name platformCompanyGid paymentTerms } store { name currency } from to
  openingBalance { amount currency }
  entries { id kind amount { amount } balanceAfter { amount } occurredAt }
  closingBalance { amount currency }
  totals { invoiced { amount } paid { amount } credited { amount } adjusted { amount } }
  openInvoices { invoiceId platformOrderGid amount { amount } openAmount { amount } issuedAt dueAt daysOverdue }
  aging { current { amount } days1To30 { amount } days31To60 { amount } days61To90 { amount } over90 { amount } total { amount } }
  notInvoiced { amount currency } } } } }`

// TestStatementMatchesREST wants Company.statement to carry the figures of
// GET /v1/companies/{id}/statement, and bad dates refused naming the argument.
func TestStatementMatchesREST(t *testing.T) {
	env := credittest.New(t)
	st := env.MustStore(t, "Statements", "EUR")
	key := env.MustKey(t, st, "erp", credit.ScopeReadCredit)
	c := env.MustCompany(t, st, "Alpenblick", "10000", "NET_5")
	env.MustRecord(t, credit.LedgerEntryInput{CompanyID: c.ID, Kind: credit.KindOpeningBalance, Amount: "15.00"})
	env.Clock.Advance(time.Hour)
	env.MustRecord(t, credit.LedgerEntryInput{CompanyID: c.ID, Kind: credit.KindOrderPlaced, Amount: "200.00", OrderGID: "gid://platform/Order/1"})
	env.Clock.Advance(10 * 24 * time.Hour)
	env.MustRecord(t, credit.LedgerEntryInput{CompanyID: c.ID, Kind: credit.KindPayment, Amount: "-50.00"})
	from, to := "2026-03-01", env.Clock.Now().UTC().Format(time.DateOnly)

	var rest credit.Statement
	env.Get(t, key, credittest.WithQuery("/v1/companies/"+c.ID+"/statement", "from", from, "to", to)).WantStatus(t, 200).Decode(t, &rest)
	data := query(t, env, key, statementQuery, map[string]any{"id": c.ID, "from": from, "to": to})
	s := at(t, data, "node", "statement")
	for _, check := range []struct {
		path []any
		want any
	}{
		{[]any{"company", "id"}, c.ID},
		{[]any{"store", "name"}, rest.Store.Name},
		{[]any{"from"}, rest.From},
		{[]any{"to"}, rest.To},
		{[]any{"openingBalance", "amount"}, rest.OpeningBalance.Amount},
		{[]any{"closingBalance", "amount"}, rest.ClosingBalance.Amount},
		{[]any{"entries", 1, "balanceAfter", "amount"}, rest.Entries[1].BalanceAfter.Amount},
		{[]any{"totals", "paid", "amount"}, rest.Totals.Paid.Amount},
		{[]any{"openInvoices", 0, "invoiceId"}, rest.OpenInvoices[0].ID},
		{[]any{"openInvoices", 0, "openAmount", "amount"}, rest.OpenInvoices[0].OpenAmount.Amount},
		{[]any{"openInvoices", 0, "daysOverdue"}, float64(rest.OpenInvoices[0].DaysOverdue)},
		{[]any{"aging", "days1To30", "amount"}, rest.Aging.Days1To30.Amount},
		{[]any{"aging", "total", "amount"}, rest.Aging.Total.Amount},
		{[]any{"notInvoiced", "amount"}, rest.NotInvoiced.Amount},
	} {
		if got := at(t, s, check.path...); got != check.want {
			t.Errorf("statement %v = %v, REST says %v", check.path, got, check.want)
		}
	}
	if len(at(t, s, "entries").([]any)) != len(rest.Entries) || rest.Aging.Days1To30.Amount != "150.00" || rest.NotInvoiced.Amount != "15.00" {
		b, _ := json.Marshal(rest)
		t.Errorf("figures: %s", b)
	}

	for _, c2 := range []struct{ from, to, param string }{
		{"2026-3-01", to, "from"},
		{from, "tomorrow", "to"},
		{to, from, "from"},
		{from, "2099-01-01", "to"},
	} {
		res := doGQL(t, env, gqlRequest{Key: key, Query: statementQuery, Variables: map[string]any{"id": c.ID, "from": c2.from, "to": c2.to}})
		if len(res.Errors) != 1 || res.Errors[0].Extensions.Code != string(credit.CodeInvalidParameter) || res.Errors[0].Extensions.Param != c2.param {
			t.Errorf("%s..%s: %s, want invalid_parameter naming %s", c2.from, c2.to, res.HTTP.Body, c2.param)
		}
	}
}

// TestStatementsOfAPageAreRefused: a statement is priced as a list of the largest page, so one
// company's fits the complexity bound and a page of companies' statements is refused before
// anything runs.
func TestStatementsOfAPageAreRefused(t *testing.T) {
	env := credittest.New(t)
	st := env.MustStore(t, "Statements", "EUR")
	key := env.MustKey(t, st, "erp", credit.ScopeReadCredit)
	day := env.Clock.Now().UTC().Format(time.DateOnly)
	res := doGQL(t, env, gqlRequest{Key: key, Query: `query($d: Date!) { companies(first: 100) { edges { node { statement(from: $d, to: $d) {
		entries { id amount { amount } balanceAfter { amount } } closingBalance { amount } } } } } }`, Variables: map[string]any{"d": day}})
	if len(res.Errors) != 1 || !strings.Contains(res.Errors[0].Message, "complex") {
		t.Fatalf("a page of statements: %s, want refused for its complexity", res.HTTP.Body)
	}
}
