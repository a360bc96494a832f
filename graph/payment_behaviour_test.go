package graph_test

import (
	"strings"
	"testing"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
)

const behaviourQuery = `query($n: Int!) { companies(first: $n) { edges { node { id
  paymentBehaviour { asOf windowDays invoicesPaid averageDaysToPay averageDaysBeyondTerms paidOnTimeShare
    openOverdue { count amount { amount currency } oldestDaysOverdue } dsoDays rating }
  short: paymentBehaviour(windowDays: 30) { windowDays rating }
} } } }`

// TestPaymentBehaviourBatched checks Company.paymentBehaviour on a page of companies: the
// figures of the domain, the same SQL statements for 5 companies as for 50 (one batch per window
// value), and windowDays out of range refused.
func TestPaymentBehaviourBatched(t *testing.T) {
	log := &sqlLog{}
	env := credittest.New(t, log.Options())
	store := env.MustStore(t, "Behaviour", "EUR")
	key := env.MustKey(t, store, "dash", credit.ScopeReadCredit)
	bulkCompanies(t, env, store, 0, 50)
	pages := map[int][]string{}
	for _, n := range []int{5, 50} {
		query(t, env, key, behaviourQuery, map[string]any{"n": n})
		log.Reset()
		data := query(t, env, key, behaviourQuery, map[string]any{"n": n})
		pages[n] = withoutAuthentication(log.Snapshot())
		edges := at(t, data, "companies", "edges").([]any)
		if len(edges) != n {
			t.Fatalf("%d edges, want %d", len(edges), n)
		}
		// Each bulk company has 4 open invoices due in 10 days and 25, 60 and 95 days ago, and
		// paid nothing: 3 overdue, the oldest 95 days, rated D.
		b := at(t, edges[0], "node", "paymentBehaviour")
		if at(t, b, "windowDays") != float64(365) || at(t, b, "invoicesPaid") != float64(0) || at(t, b, "averageDaysToPay") != nil ||
			at(t, b, "paidOnTimeShare") != nil || at(t, b, "openOverdue", "count") != float64(3) ||
			at(t, b, "openOverdue", "oldestDaysOverdue") != float64(95) || at(t, b, "rating") != "D" ||
			at(t, edges[0], "node", "short", "windowDays") != float64(30) {
			t.Errorf("payment behaviour = %v", b)
		}
	}
	if len(pages[5]) != len(pages[50]) {
		t.Fatalf("payment behaviour: %d SQL statements for 5 companies, %d for 50\n5:\n%s\n50:\n%s",
			len(pages[5]), len(pages[50]), strings.Join(pages[5], "\n"), strings.Join(pages[50], "\n"))
	}
	t.Logf("a page with payment behaviour over two windows: %d statements for 5 and 50 companies", len(pages[50]))

	res := doGQL(t, env, gqlRequest{Key: key, Query: `{ companies(first: 1) { edges { node { paymentBehaviour(windowDays: 0) { rating } } } } }`})
	res.wantCodes(t, "invalid_parameter")
	if e := res.Errors[0]; e.Extensions.Param != "windowDays" || !strings.HasPrefix(e.Message, "windowDays ") {
		t.Errorf("windowDays out of range: param %q, message %q; want the argument's GraphQL name", e.Extensions.Param, e.Message)
	}
}
