package credit_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/ids"
)

// TestCreateAdjustment: the contract's table for an adjustment through the API (contract §3,
// §4): a signed amount, never zero, a plain decimal with at most the currency's minor digits
// and 15 integer digits, in the company's currency, and a required note of at most 500
// characters; what an accepted one appends (the entry with its balance_after, one
// ledger_entry.created, the timeline event under the key's label) and that a refused one
// appends nothing.
func TestCreateAdjustment(t *testing.T) {
	t.Parallel()
	for _, cur := range []struct {
		currency string
		cases    []adjustmentCase
	}{
		{"EUR", []adjustmentCase{
			{name: "a credit", amount: credit.Amount("-12.5"), shown: "-12.50"},
			{name: "a charge", amount: credit.Amount("12.50"), shown: "12.50"},
			{name: "a cent", amount: credit.Amount("0.01"), shown: "0.01"},
			{name: "15 integer digits", amount: credit.Amount("-999999999999999.99"), shown: "-999999999999999.99"},
			{name: "leading zeros", amount: credit.Amount("-00012.5"), shown: "-12.50"},
			{name: "the currency named", amount: credit.Amount("3"), currency: ptr("EUR"), shown: "3.00"},
			{name: "a note of 500 characters", amount: credit.Amount("1"), note: ptr(strings.Repeat("n", 500)), shown: "1.00"},
			{name: "zero", amount: credit.Amount("0"), code: credit.CodeInvalidAmount, param: "amount"},
			{name: "negative zero with decimals", amount: credit.Amount("-0.00"), code: credit.CodeInvalidAmount, param: "amount"},
			{name: "three decimals", amount: credit.Amount("0.001"), code: credit.CodeInvalidAmount, param: "amount"},
			{name: "three decimals of zeros", amount: credit.Amount("1.000"), code: credit.CodeInvalidAmount, param: "amount"},
			{name: "16 integer digits", amount: credit.Amount("1000000000000000"), code: credit.CodeInvalidAmount, param: "amount"},
			{name: "a decimal comma", amount: credit.Amount("12,50"), code: credit.CodeInvalidAmount, param: "amount"},
			{name: "an exponent", amount: credit.Amount("1e3"), code: credit.CodeInvalidAmount, param: "amount"},
			{name: "a plus sign", amount: credit.Amount("+5.00"), code: credit.CodeInvalidAmount, param: "amount"},
			{name: "a trailing dot", amount: credit.Amount("5."), code: credit.CodeInvalidAmount, param: "amount"},
			{name: "a leading dot", amount: credit.Amount(".5"), code: credit.CodeInvalidAmount, param: "amount"},
			{name: "spaces around", amount: credit.Amount(" 5.00 "), code: credit.CodeInvalidAmount, param: "amount"},
			{name: "missing", amount: credit.AmountInput{}, code: credit.CodeValidationFailed, param: "amount"},
			{name: "empty", amount: credit.Amount(""), code: credit.CodeValidationFailed, param: "amount"},
			{name: "another currency", amount: credit.Amount("5.00"), currency: ptr("USD"), code: credit.CodeCurrencyMismatch, param: "currency"},
			{name: "an empty currency", amount: credit.Amount("5.00"), currency: ptr(""), code: credit.CodeCurrencyMismatch, param: "currency"},
			{name: "no note", amount: credit.Amount("5.00"), note: nilNote, code: credit.CodeValidationFailed, param: "note"},
			{name: "an empty note", amount: credit.Amount("5.00"), note: ptr(""), code: credit.CodeValidationFailed, param: "note"},
			{name: "a blank note", amount: credit.Amount("5.00"), note: ptr("   "), code: credit.CodeValidationFailed, param: "note"},
			{name: "a note of 501 characters", amount: credit.Amount("5.00"), note: ptr(strings.Repeat("n", 501)), code: credit.CodeValidationFailed, param: "note"},
			{name: "a note with a NUL byte", amount: credit.Amount("5.00"), note: ptr("a\x00b"), code: credit.CodeValidationFailed, param: "note"},
			// The amount is checked before the note.
			{name: "zero and no note", amount: credit.Amount("0"), note: nilNote, code: credit.CodeInvalidAmount, param: "amount"},
		}},
		{"JPY", []adjustmentCase{
			{name: "yen", amount: credit.Amount("-1500"), shown: "-1500"},
			{name: "a decimal of yen", amount: credit.Amount("1500.5"), code: credit.CodeInvalidAmount, param: "amount"},
			{name: "a zero decimal of yen", amount: credit.Amount("1500.0"), code: credit.CodeInvalidAmount, param: "amount"},
		}},
		{"KWD", []adjustmentCase{
			{name: "fils", amount: credit.Amount("12.345"), shown: "12.345"},
			{name: "two decimals of dinar", amount: credit.Amount("12.3"), shown: "12.300"},
			{name: "four decimals of dinar", amount: credit.Amount("12.3456"), code: credit.CodeInvalidAmount, param: "amount"},
		}},
	} {
		t.Run(cur.currency, func(t *testing.T) {
			t.Parallel()
			env := newRuleEnv(t, cur.currency)
			key := apiKey(env.store, credit.ScopeWriteCredit)
			co := env.MustCompany(t, env.store, "Buyer", "1000")
			balance := "0"
			for _, tc := range cur.cases {
				note := ptr("goodwill")
				if tc.note == nilNote {
					note = nil
				} else if tc.note != nil {
					note = tc.note
				}
				before := env.company(t, co.ID)
				events, timeline, entries := len(env.feed(t)), len(env.timeline(t, co.ID)), len(env.ledger(t, co.ID))
				env.Clock.Advance(time.Second)
				res, err := env.Service.Ledger.CreateAdjustment(key, credit.AdjustmentInput{CompanyID: co.ID, Amount: tc.amount, Note: note, Currency: tc.currency})
				if tc.code != "" {
					wantError(t, tc.name, err, tc.code, tc.param)
					if after := env.company(t, co.ID); asJSON(after) != asJSON(before) || len(env.feed(t)) != events ||
						len(env.timeline(t, co.ID)) != timeline || len(env.ledger(t, co.ID)) != entries {
						t.Errorf("%s: a refused adjustment left %+v", tc.name, after)
					}
					continue
				}
				if err != nil {
					t.Fatalf("%s: %v", tc.name, err)
				}
				balance = addAmounts(balance, tc.shown)
				e := res.LedgerEntry
				if e.Kind != credit.KindAdjustment || e.Amount != (credit.Money{Amount: tc.shown, Currency: cur.currency}) || e.CompanyID != co.ID ||
					e.PlatformOrderGID != nil || e.Note == nil || *e.Note != *note || !e.OccurredAt.Equal(env.Clock.Now()) ||
					e.BalanceAfter != res.Company.Outstanding || !strings.HasPrefix(e.ID, "le_") {
					t.Errorf("%s: entry %+v", tc.name, e)
				}
				if res.Company.Outstanding.Amount != balance || !res.Company.UpdatedAt.Equal(env.Clock.Now()) {
					t.Errorf("%s: outstanding %s updated %s, want %s", tc.name, res.Company.Outstanding.Amount, res.Company.UpdatedAt, balance)
				}
				if got := env.ledger(t, co.ID); len(got) != entries+1 || asJSON(got[0]) != asJSON(e) {
					t.Errorf("%s: the ledger's newest entry %s, want %s", tc.name, asJSON(got[0]), asJSON(e))
				}
				if got := env.feedTypes(t, events); !slices.Equal(got, []string{string(credit.EventTypeLedgerEntryCreated)}) {
					t.Errorf("%s: events %v", tc.name, got)
				}
				tl := env.timeline(t, co.ID)[timeline:]
				if len(tl) != 1 || tl[0].Type != credit.TimelineAdjustmentCreated || tl[0].Actor != (credit.Actor{Type: "api_key", Label: "ERP sync"}) ||
					tl[0].Data["ledger_entry_id"] != e.ID || tl[0].Data["note"] != *note || asJSON(tl[0].Data["amount"]) != asJSON(e.Amount) {
					t.Errorf("%s: timeline %+v", tc.name, tl)
				}
			}
		})
	}
}

// adjustmentCase is one adjustment of TestCreateAdjustment.
type adjustmentCase struct {
	name     string
	amount   credit.AmountInput
	currency *string
	// note is the adjustment's note: "goodwill" when nil, none when nilNote.
	note  *string
	code  credit.Code // "" for accepted
	param string
	shown string // the accepted amount as the API shows it
}

// nilNote marks an adjustmentCase sent without a note.
var nilNote = ptr("\x00no note")

// addAmounts adds two amounts and formats the sum as the first one's currency would, by
// the ledger's own arithmetic: a decimal sum of the shown amounts, with the longer fraction.
func addAmounts(a, b string) string {
	sum := decimal.RequireFromString(a).Add(decimal.RequireFromString(b))
	_, frac, _ := strings.Cut(b, ".")
	return sum.StringFixed(int32(len(frac)))
}

// TestAdjustmentsNeedWriteCredit: an adjustment needs write_credit; the company must be the
// store's, and an unknown one is not found before the amount is looked at.
func TestAdjustmentsNeedWriteCredit(t *testing.T) {
	t.Parallel()
	env := newRuleEnv(t, "EUR")
	co := env.MustCompany(t, env.store, "Buyer", "1000")
	other := env.MustStore(t, "Other", "EUR")
	for _, tc := range []struct {
		name  string
		ctx   context.Context
		id    string
		code  credit.Code
		words string
	}{
		{"a read-only key", apiKey(env.store, credit.ScopeReadCredit), co.ID, credit.CodeInsufficientScope, "this call needs scope write_credit"},
		{"no viewer", context.Background(), co.ID, credit.CodeUnauthenticated, "authentication required"},
		{"an unknown company", apiKey(env.store, credit.ScopeWriteCredit), ids.New("co"), credit.CodeNotFound, "no such company"},
		{"another store's key", apiKey(other, credit.ScopeWriteCredit), co.ID, credit.CodeNotFound, "no such company"},
	} {
		_, err := env.Service.Ledger.CreateAdjustment(tc.ctx, credit.AdjustmentInput{CompanyID: tc.id, Amount: credit.Amount("0")})
		wantError(t, tc.name, err, tc.code, "")
		if err != nil && !strings.Contains(err.Error(), tc.words) {
			t.Errorf("%s: %q does not say %q", tc.name, err, tc.words)
		}
	}
	if n := len(env.ledger(t, co.ID)); n != 0 {
		t.Errorf("refused adjustments wrote %d entries", n)
	}
}
