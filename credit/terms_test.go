package credit_test

import (
	"testing"

	"github.com/creditd/creditd/credit"
)

// TestPaymentTerms: the payment terms' code is built from days, read back with its range
// checked (ParsePaymentTerms) or not (PaymentTermsDays, for a form that shows what it was
// sent), built from days a person typed, and shown as people write it.
func TestPaymentTerms(t *testing.T) {
	t.Parallel()
	if got := credit.PaymentTerms(45); got != "NET_45" {
		t.Errorf("PaymentTerms(45) = %q", got)
	}
	for _, tc := range []struct {
		code  string
		days  int
		param string // "" when the code is valid
	}{
		{"NET_1", 1, ""},
		{"NET_30", 30, ""},
		{"NET_365", 365, ""},
		{"NET_0", 0, "terms"},
		{"NET_366", 0, "terms"},
		{"NET_1000", 0, "terms"},
		{"NET_-5", 0, "terms"},
		{"net_30", 0, "terms"},
		{"30", 0, "terms"},
		{"", 0, "terms"},
	} {
		days, err := credit.ParsePaymentTerms(tc.code, "terms")
		if tc.param == "" {
			if err != nil || days != tc.days {
				t.Errorf("ParsePaymentTerms(%q) = %d, %v; want %d", tc.code, days, err, tc.days)
			}
			continue
		}
		wantError(t, "ParsePaymentTerms("+tc.code+")", err, credit.CodeValidationFailed, tc.param)
	}
	for code, want := range map[string]struct {
		days int
		ok   bool
	}{
		"NET_30": {30, true}, "NET_45": {45, true}, "NET_1000": {1000, true}, "NET_": {0, false}, "other": {0, false}, "": {0, false},
	} {
		if days, ok := credit.PaymentTermsDays(code); days != want.days || ok != want.ok {
			t.Errorf("PaymentTermsDays(%q) = %d, %v; want %d, %v", code, days, ok, want.days, want.ok)
		}
	}
	if code, err := credit.PaymentTermsOfDays(" 45 ", "payment_terms"); err != nil || code != "NET_45" {
		t.Errorf("PaymentTermsOfDays(45) = %q, %v", code, err)
	}
	for _, days := range []string{"", "a month", "4.5"} {
		_, err := credit.PaymentTermsOfDays(days, "payment_terms")
		wantError(t, "PaymentTermsOfDays("+days+")", err, credit.CodeValidationFailed, "payment_terms")
	}
	for code, want := range map[string]string{"NET_14": "Net 14", "NET_365": "Net 365", "other": "other"} {
		if got := credit.FormatPaymentTerms(code); got != want {
			t.Errorf("FormatPaymentTerms(%q) = %q, want %q", code, got, want)
		}
	}
}
