package graph_test

import (
	"strings"
	"testing"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
)

const storeBehaviourQuery = `{ receivables { dsoDays averageDaysBeyondTerms paidOnTimeShare
  short: averageDaysBeyondTerms(windowDays: 15) shortShare: paidOnTimeShare(windowDays: 15) }
  companies(first: 1) { edges { node { paymentBehaviour { averageDaysBeyondTerms paidOnTimeShare dsoDays } } } } }`

// TestReceivablesPaymentFigures checks Receivables' dsoDays, averageDaysBeyondTerms and
// paidOnTimeShare on a history worked out by hand, equal to its one company's, with another
// store beside it; a window out of range is invalid_parameter naming windowDays.
func TestReceivablesPaymentFigures(t *testing.T) {
	env := credittest.New(t)
	store := env.MustStore(t, "Figures", "EUR")
	key := env.MustKey(t, store, "dash", credit.ScopeReadCredit)
	co := env.MustCompany(t, store, "Payer", "100000").ID
	other := env.MustStore(t, "Other", "EUR")
	otherKey := env.MustKey(t, other, "dash", credit.ScopeReadCredit)
	elsewhere := env.MustCompany(t, other, "Elsewhere", "100000").ID
	// 9000 open in the other store, issued with the history's first orders.
	env.MustOrderEntry(t, elsewhere, credit.KindOrderPlaced, "9000", "9")
	env.MustPaymentHistory(t, co)

	data := query(t, env, key, storeBehaviourQuery)
	r := at(t, data, "receivables")
	// 365 days: (100 × −10 + 300 × 10)/400 = 5.0, 100/400 on time; DSO: 200 open, issued on
	// day 5 back: 4 + 200/200. 15 days: the 300 alone, 10 days late.
	for field, want := range map[string]any{"dsoDays": 5.0, "averageDaysBeyondTerms": 5.0, "paidOnTimeShare": "0.250", "short": 10.0, "shortShare": "0.000"} {
		if got := at(t, r, field); got != want {
			t.Errorf("receivables.%s = %v, want %v", field, got, want)
		}
	}
	b := at(t, at(t, data, "companies", "edges").([]any)[0], "node", "paymentBehaviour")
	for _, f := range []string{"dsoDays", "averageDaysBeyondTerms", "paidOnTimeShare"} {
		if at(t, b, f) != at(t, r, f) {
			t.Errorf("a store of one company: receivables.%s = %v, the company's %v", f, at(t, r, f), at(t, b, f))
		}
	}
	// The other store: 9000 open issued 50 days ago, nothing paid.
	r = at(t, query(t, env, otherKey, `{ receivables { dsoDays averageDaysBeyondTerms paidOnTimeShare } }`), "receivables")
	if at(t, r, "dsoDays") != 50.0 || at(t, r, "averageDaysBeyondTerms") != nil || at(t, r, "paidOnTimeShare") != nil {
		t.Errorf("other store: %v", r)
	}

	res := doGQL(t, env, gqlRequest{Key: key, Query: `{ receivables { paidOnTimeShare(windowDays: 1826) } }`})
	res.wantCodes(t, "invalid_parameter")
	if e := res.Errors[0]; e.Extensions.Param != "windowDays" || !strings.HasPrefix(e.Message, "windowDays ") {
		t.Errorf("windowDays out of range: param %q, message %q", e.Extensions.Param, e.Message)
	}
}
