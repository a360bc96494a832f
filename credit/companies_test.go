package credit_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
)

// Companies on credit terms (contract §4, §5): creating one, its credit limit and the credit
// still available, and the events each change appends.

// TestCreateCompanyChecksItsInput: a company needs a name of 1 to 500 characters, payment
// terms NET_1 to NET_365, a credit limit of zero or more in the store's currency and, when
// given, a platform company GID; only the store's staff create one.
func TestCreateCompanyChecksItsInput(t *testing.T) {
	t.Parallel()
	env := newRuleEnv(t, "EUR")
	valid := credit.CompanyInput{Name: "Buyer GmbH", PaymentTerms: "NET_30", CreditLimit: "1000.00"}
	for _, tc := range []struct {
		name   string
		change func(in *credit.CompanyInput)
		code   credit.Code // "" for accepted
		param  string
		terms  string // the accepted company's terms, limit and name as shown
		limit  string
		shown  string
	}{
		{"valid", func(in *credit.CompanyInput) {}, "", "", "NET_30", "1000.00", "Buyer GmbH"},
		{"name trimmed", func(in *credit.CompanyInput) { in.Name = "  Spaced GmbH \n" }, "", "", "NET_30", "1000.00", "Spaced GmbH"},
		{"name of 500 characters", func(in *credit.CompanyInput) { in.Name = strings.Repeat("é", 500) }, "", "", "NET_30", "1000.00", strings.Repeat("é", 500)},
		{"empty name", func(in *credit.CompanyInput) { in.Name = "" }, credit.CodeValidationFailed, "name", "", "", ""},
		{"blank name", func(in *credit.CompanyInput) { in.Name = " \t " }, credit.CodeValidationFailed, "name", "", "", ""},
		{"name of 501 characters", func(in *credit.CompanyInput) { in.Name = strings.Repeat("n", 501) }, credit.CodeValidationFailed, "name", "", "", ""},
		{"name with a NUL byte", func(in *credit.CompanyInput) { in.Name = "Buyer\x00GmbH" }, credit.CodeValidationFailed, "name", "", "", ""},
		{"a company GID", func(in *credit.CompanyInput) { in.PlatformCompanyGID = "gid://platform/Company/12345678901234567890" }, "", "", "NET_30", "1000.00", "Buyer GmbH"},
		{"an order's GID", func(in *credit.CompanyInput) { in.PlatformCompanyGID = "gid://platform/Order/1" }, credit.CodeValidationFailed, "platform_company_gid", "", "", ""},
		{"a GID without a number", func(in *credit.CompanyInput) { in.PlatformCompanyGID = "gid://platform/Company/" }, credit.CodeValidationFailed, "platform_company_gid", "", "", ""},
		{"a GID of 21 digits", func(in *credit.CompanyInput) { in.PlatformCompanyGID = "gid://platform/Company/123456789012345678901" }, credit.CodeValidationFailed, "platform_company_gid", "", "", ""},
		{"NET_1", func(in *credit.CompanyInput) { in.PaymentTerms = "NET_1" }, "", "", "NET_1", "1000.00", "Buyer GmbH"},
		{"NET_365", func(in *credit.CompanyInput) { in.PaymentTerms = "NET_365" }, "", "", "NET_365", "1000.00", "Buyer GmbH"},
		{"NET_030", func(in *credit.CompanyInput) { in.PaymentTerms = "NET_030" }, "", "", "NET_30", "1000.00", "Buyer GmbH"},
		{"NET_0", func(in *credit.CompanyInput) { in.PaymentTerms = "NET_0" }, credit.CodeValidationFailed, "payment_terms", "", "", ""},
		{"NET_366", func(in *credit.CompanyInput) { in.PaymentTerms = "NET_366" }, credit.CodeValidationFailed, "payment_terms", "", "", ""},
		{"NET_1000", func(in *credit.CompanyInput) { in.PaymentTerms = "NET_1000" }, credit.CodeValidationFailed, "payment_terms", "", "", ""},
		{"net_30", func(in *credit.CompanyInput) { in.PaymentTerms = "net_30" }, credit.CodeValidationFailed, "payment_terms", "", "", ""},
		{"NET30", func(in *credit.CompanyInput) { in.PaymentTerms = "NET30" }, credit.CodeValidationFailed, "payment_terms", "", "", ""},
		{"no terms", func(in *credit.CompanyInput) { in.PaymentTerms = "" }, credit.CodeValidationFailed, "payment_terms", "", "", ""},
		{"a zero limit", func(in *credit.CompanyInput) { in.CreditLimit = "0" }, "", "", "NET_30", "0.00", "Buyer GmbH"},
		{"the largest limit", func(in *credit.CompanyInput) { in.CreditLimit = "999999999999999.99" }, "", "", "NET_30", "999999999999999.99", "Buyer GmbH"},
		{"a negative limit", func(in *credit.CompanyInput) { in.CreditLimit = "-0.01" }, credit.CodeLimitBelowZero, "amount", "", "", ""},
		{"a limit of three decimals", func(in *credit.CompanyInput) { in.CreditLimit = "1000.001" }, credit.CodeInvalidAmount, "amount", "", "", ""},
		{"a limit of 16 integer digits", func(in *credit.CompanyInput) { in.CreditLimit = "1234567890123456" }, credit.CodeInvalidAmount, "amount", "", "", ""},
		{"a limit with an exponent", func(in *credit.CompanyInput) { in.CreditLimit = "1e3" }, credit.CodeInvalidAmount, "amount", "", "", ""},
		// The checks go in the order of the fields: the name before the terms and the limit.
		{"no name and a negative limit", func(in *credit.CompanyInput) { in.Name, in.CreditLimit = "", "-1" }, credit.CodeValidationFailed, "name", "", "", ""},
		{"bad terms and a negative limit", func(in *credit.CompanyInput) { in.PaymentTerms, in.CreditLimit = "NET_0", "-1" }, credit.CodeValidationFailed, "payment_terms", "", "", ""},
	} {
		in := valid
		tc.change(&in)
		events := len(env.feed(t))
		env.Clock.Advance(time.Second)
		c, err := env.Service.Companies.Create(env.staff, in)
		if tc.code != "" {
			wantError(t, tc.name, err, tc.code, tc.param)
			if n := len(env.feed(t)); n != events {
				t.Errorf("%s: a refused company appended %d events", tc.name, n-events)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if c.Name != tc.shown || c.PaymentTerms != tc.terms || c.CreditLimit != (credit.Money{Amount: tc.limit, Currency: "EUR"}) ||
			c.Outstanding.Amount != "0.00" || c.Status != credit.StatusApproved || c.Hold != nil || !c.UpdatedAt.Equal(env.Clock.Now()) {
			t.Errorf("%s: created %+v", tc.name, c)
		}
		if (c.PlatformCompanyGID == nil) != (in.PlatformCompanyGID == "") {
			t.Errorf("%s: platform company GID %v", tc.name, c.PlatformCompanyGID)
		}
		feed := env.feed(t)[events:]
		if len(feed) != 1 || feed[0].Type != credit.EventTypeCompanyCreated {
			t.Fatalf("%s: events %+v, want one company.created", tc.name, feed)
		}
		var data struct {
			Object credit.Company `json:"object"`
		}
		if err := json.Unmarshal(feed[0].Data, &data); err != nil || asJSON(data.Object) != asJSON(c) {
			t.Errorf("%s: company.created's object %s, want %s (%v)", tc.name, asJSON(data.Object), asJSON(c), err)
		}
		if got := env.company(t, c.ID); asJSON(got) != asJSON(c) {
			t.Errorf("%s: read back %s, created %s", tc.name, asJSON(got), asJSON(c))
		}
	}
	for who, ctx := range map[string]context.Context{
		"an API key with every scope": apiKey(env.store, credit.AllScopes...),
		"the system":                  credittest.Admin(),
		"no viewer":                   context.Background(),
	} {
		_, err := env.Service.Companies.Create(ctx, valid)
		if who == "no viewer" {
			wantError(t, who, err, credit.CodeUnauthenticated, "")
			continue
		}
		wantError(t, who, err, credit.CodeInsufficientScope, "")
	}
}

// TestSetCreditLimit: the contract's table for a limit change (amount required, a plain decimal
// of the currency's digits, zero or more; the currency, when given, the company's; a reason of
// at most 500 characters), the available credit that follows, and what a change appends: one
// company.credit_limit_changed and one timeline event; a refused change appends nothing.
func TestSetCreditLimit(t *testing.T) {
	t.Parallel()
	env := newRuleEnv(t, "EUR")
	key := apiKey(env.store, credit.ScopeWriteCredit)
	transportErr := credit.ParamErrorf(credit.CodeInvalidAmount, "amount", "amount must be a string, not a JSON number")
	for _, tc := range []struct {
		name     string
		amount   credit.AmountInput
		currency *string
		reason   *string
		code     credit.Code // "" for accepted
		param    string
		limit    string // the new limit and available credit (outstanding 200.00, buffer 5%)
		avail    string
	}{
		{"a higher limit", credit.Amount("2500"), nil, nil, "", "", "2500.00", "2175.00"},
		{"a reason", credit.Amount("1500.5"), nil, ptr("annual review"), "", "", "1500.50", "1225.47"},
		{"the currency", credit.Amount("2000.00"), ptr("EUR"), nil, "", "", "2000.00", "1700.00"},
		{"leading zeros", credit.Amount("0001200"), nil, nil, "", "", "1200.00", "940.00"},
		{"zero", credit.Amount("0"), nil, nil, "", "", "0.00", "0.00"},
		{"negative zero", credit.Amount("-0.00"), nil, nil, "", "", "0.00", "0.00"},
		{"below the balance", credit.Amount("100.00"), nil, nil, "", "", "100.00", "0.00"},
		{"the largest", credit.Amount("999999999999999.99"), nil, nil, "", "", "999999999999999.99", "949999999999799.99"},
		{"a reason of 500 characters", credit.Amount("1000.01"), nil, ptr(strings.Repeat("r", 500)), "", "", "1000.01", "750.01"},
		{"negative", credit.Amount("-0.01"), nil, nil, credit.CodeLimitBelowZero, "amount", "", ""},
		{"negative with a reason", credit.Amount("-100"), nil, ptr("r"), credit.CodeLimitBelowZero, "amount", "", ""},
		{"three decimals", credit.Amount("1000.001"), nil, nil, credit.CodeInvalidAmount, "amount", "", ""},
		{"16 integer digits", credit.Amount("1234567890123456"), nil, nil, credit.CodeInvalidAmount, "amount", "", ""},
		{"a thousands separator", credit.Amount("1,000.00"), nil, nil, credit.CodeInvalidAmount, "amount", "", ""},
		{"an exponent", credit.Amount("1e3"), nil, nil, credit.CodeInvalidAmount, "amount", "", ""},
		{"a plus sign", credit.Amount("+10"), nil, nil, credit.CodeInvalidAmount, "amount", "", ""},
		{"a space", credit.Amount(" 10"), nil, nil, credit.CodeInvalidAmount, "amount", "", ""},
		{"missing", credit.AmountInput{}, nil, nil, credit.CodeValidationFailed, "amount", "", ""},
		{"empty", credit.Amount(""), nil, nil, credit.CodeValidationFailed, "amount", "", ""},
		{"blank", credit.Amount("  "), nil, nil, credit.CodeValidationFailed, "amount", "", ""},
		{"refused by the transport", credit.AmountInput{Err: transportErr}, nil, nil, credit.CodeInvalidAmount, "amount", "", ""},
		{"another currency", credit.Amount("10"), ptr("USD"), nil, credit.CodeCurrencyMismatch, "currency", "", ""},
		{"the currency in lower case", credit.Amount("10"), ptr("eur"), nil, credit.CodeCurrencyMismatch, "currency", "", ""},
		{"another currency and a malformed amount", credit.Amount("ten"), ptr("USD"), nil, credit.CodeCurrencyMismatch, "currency", "", ""},
		{"another currency and no amount", credit.AmountInput{}, ptr("USD"), nil, credit.CodeValidationFailed, "amount", "", ""},
		{"an empty reason", credit.Amount("10"), nil, ptr(""), credit.CodeValidationFailed, "reason", "", ""},
		{"a reason of 501 characters", credit.Amount("10"), nil, ptr(strings.Repeat("r", 501)), credit.CodeValidationFailed, "reason", "", ""},
		{"a negative limit and an empty reason", credit.Amount("-1"), nil, ptr(""), credit.CodeLimitBelowZero, "amount", "", ""},
	} {
		co := env.MustCompany(t, env.store, tc.name, "1000.00")
		env.MustRecord(t, credit.LedgerEntryInput{CompanyID: co.ID, Kind: credit.KindOpeningBalance, Amount: "200.00"})
		before := env.company(t, co.ID)
		events, timeline := len(env.feed(t)), len(env.timeline(t, co.ID))
		env.Clock.Advance(time.Second)
		res, err := env.Service.Companies.SetCreditLimit(key, credit.CreditLimitInput{CompanyID: co.ID, Amount: tc.amount, Currency: tc.currency, Reason: tc.reason})
		if tc.code != "" {
			wantError(t, tc.name, err, tc.code, tc.param)
			if tc.amount.Err != nil && err != tc.amount.Err {
				t.Errorf("%s: %v, want the transport's own error", tc.name, err)
			}
			if tc.code == credit.CodeLimitBelowZero && err.Error() != "limit_below_zero: credit limit must be zero or greater (amount)" {
				t.Errorf("%s: message %q, want the contract's", tc.name, err)
			}
			if after := env.company(t, co.ID); asJSON(after) != asJSON(before) || len(env.feed(t)) != events || len(env.timeline(t, co.ID)) != timeline {
				t.Errorf("%s: a refused change left %+v", tc.name, after)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if res.PreviousCreditLimit != (credit.Money{Amount: "1000.00", Currency: "EUR"}) || res.Company.CreditLimit.Amount != tc.limit ||
			res.Company.AvailableCredit.Amount != tc.avail || res.Company.Outstanding.Amount != "200.00" || !res.Company.UpdatedAt.Equal(env.Clock.Now()) {
			t.Errorf("%s: %+v, want limit %s and %s available", tc.name, res, tc.limit, tc.avail)
		}
		if got := env.company(t, co.ID); asJSON(got) != asJSON(res.Company) {
			t.Errorf("%s: read back %s, answered %s", tc.name, asJSON(got), asJSON(res.Company))
		}
		feed := env.feed(t)[events:]
		if len(feed) != 1 || feed[0].Type != credit.EventTypeCompanyCreditLimitChanged ||
			!strings.Contains(string(feed[0].Data), `"previous":{"credit_limit":{"amount":"1000.00","currency":"EUR"}}`) {
			t.Errorf("%s: events %+v", tc.name, feed)
		}
		tl := env.timeline(t, co.ID)[timeline:]
		wantReason := any(nil)
		if tc.reason != nil {
			wantReason = *tc.reason
		}
		if len(tl) != 1 || tl[0].Type != credit.TimelineCreditLimitChanged || tl[0].Actor.Label != "ERP sync" || tl[0].Data["reason"] != wantReason ||
			asJSON(tl[0].Data["credit_limit"]) != asJSON(res.Company.CreditLimit) || asJSON(tl[0].Data["previous_credit_limit"]) != asJSON(res.PreviousCreditLimit) {
			t.Errorf("%s: timeline %+v", tc.name, tl)
		}
	}

	// The limit it already has: the same answer, on the timeline, but no event and no new
	// updated_at (contract §11).
	co := env.MustCompany(t, env.store, "Unchanged", "1000.00")
	events, timeline := len(env.feed(t)), len(env.timeline(t, co.ID))
	env.Clock.Advance(time.Second)
	res, err := env.Service.Companies.SetCreditLimit(key, credit.CreditLimitInput{CompanyID: co.ID, Amount: credit.Amount("1000")})
	if err != nil || res.PreviousCreditLimit.Amount != "1000.00" || res.Company.CreditLimit.Amount != "1000.00" || !res.Company.UpdatedAt.Equal(co.UpdatedAt.Time) {
		t.Fatalf("the same limit: %+v %v, want updated_at %s kept", res, err, co.UpdatedAt)
	}
	if n := len(env.feed(t)); n != events {
		t.Errorf("the same limit appended %d events", n-events)
	}
	if got := env.timelineTypes(t, co.ID, timeline); !slices.Equal(got, []string{"credit_limit_changed by ERP sync"}) {
		t.Errorf("the same limit's timeline: %v", got)
	}

	// Who may: write_credit; the store's own companies only.
	_, err = env.Service.Companies.SetCreditLimit(apiKey(env.store, credit.ScopeReadCredit), credit.CreditLimitInput{CompanyID: co.ID, Amount: credit.Amount("1")})
	wantError(t, "a read-only key", err, credit.CodeInsufficientScope, "")
	other := env.MustStore(t, "Other", "EUR")
	_, err = env.Service.Companies.SetCreditLimit(apiKey(other, credit.ScopeWriteCredit), credit.CreditLimitInput{CompanyID: co.ID, Amount: credit.Amount("-1")})
	wantError(t, "another store's key, with a refused amount", err, credit.CodeNotFound, "")
}

// TestAvailableCreditFollowsTheStoreBuffer: available credit is the limit minus what is
// outstanding minus the store's buffer (a percentage of the limit rounded half up to the
// currency's minor unit), never below zero; a store's buffer is 0 to 50 percent.
func TestAvailableCreditFollowsTheStoreBuffer(t *testing.T) {
	t.Parallel()
	env := credittest.NewService(t)
	for _, tc := range []struct {
		buffer                         int
		currency, limit, balance, want string
	}{
		{5, "EUR", "1000.00", "0", "950.00"},
		{0, "EUR", "1000.00", "1000.00", "0.00"},
		{0, "EUR", "1000.00", "999.99", "0.01"},
		{50, "EUR", "1000.00", "0", "500.00"},
		{5, "EUR", "1000.00", "949.99", "0.01"},
		{5, "EUR", "1000.00", "960.00", "0.00"},
		{5, "EUR", "1000.00", "-200.00", "1150.00"},
		{5, "EUR", "0.10", "0", "0.09"}, // a buffer of 0.005 is 0.01
		{5, "EUR", "0.09", "0", "0.09"}, // a buffer of 0.0045 is 0.00
		{5, "EUR", "0", "-50.00", "50.00"},
		{5, "EUR", "999999999999999.99", "0", "949999999999999.99"},
		{5, "JPY", "10", "0", "9"},
		{5, "JPY", "100010", "1", "95008"},
		{5, "KWD", "0.010", "0", "0.009"},
		{7, "KWD", "1000.001", "0.5", "929.501"},
	} {
		st, err := env.Service.Stores.Create(credittest.Admin(), "s", tc.currency, tc.buffer)
		if err != nil {
			t.Fatal(err)
		}
		co := env.MustCompany(t, st.ID, "c", tc.limit)
		if tc.balance != "0" {
			env.MustRecord(t, credit.LedgerEntryInput{CompanyID: co.ID, Kind: credit.KindOpeningBalance, Amount: tc.balance})
		}
		c, err := env.Service.Companies.Get(credittest.Staff(st.ID), co.ID)
		if err != nil || c.AvailableCredit != (credit.Money{Amount: tc.want, Currency: tc.currency}) {
			t.Errorf("%d%% of %s %s, %s outstanding: available %+v %v, want %s", tc.buffer, tc.limit, tc.currency, tc.balance, c.AvailableCredit, err, tc.want)
		}
	}
	for _, tc := range []struct {
		name, currency string
		buffer         int
		param          string
	}{
		{"a negative buffer", "EUR", -1, "buffer_percent"},
		{"a buffer of 51", "EUR", 51, "buffer_percent"},
		{"an unknown currency", "XXX", 5, "currency"},
		{"a currency in lower case", "eur", 5, "currency"},
	} {
		_, err := env.Service.Stores.Create(credittest.Admin(), "s", tc.currency, tc.buffer)
		wantError(t, tc.name, err, credit.CodeValidationFailed, tc.param)
	}
}
