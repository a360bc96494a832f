package credit_test

import (
	"testing"

	"github.com/creditd/creditd/credit"
)

// TestParseLocalAmount: the plain form in every store, the locale's grouped form in its store,
// and text neither reads unchanged (for ParseAmount's refusal).
func TestParseLocalAmount(t *testing.T) {
	for _, c := range []struct{ text, locale, currency, want string }{
		{"1500.00", "de", "EUR", "1500.00"},
		{"1500.00", "en", "EUR", "1500.00"},
		{"10.000,00", "de", "EUR", "10000.00"},
		{"10 000,50", "fr", "EUR", "10000.50"},
		{"2950,5", "de-AT", "EUR", "2950.5"},
		{"1.500", "de", "EUR", "1500"},
		{"-1.234.567,89", "de", "EUR", "-1234567.89"},
		{"10,000.00", "en", "USD", "10000.00"},
		{"10'000.00", "de-CH", "CHF", "10000.00"},
		{"10.000,00", "en", "EUR", "10.000,00"}, // a decimal-point store does not read it
		{"10,000.00", "de", "EUR", "10,000.00"}, // nor a decimal-comma store this
		{"1.50,0", "de", "EUR", "1.50,0"},       // no grouping rule reads it
		{" 2950 ", "de", "EUR", "2950"},
		{"−25,00", "de", "EUR", "-25.00"},
	} {
		if got := credit.ParseLocalAmount(c.text, c.locale, c.currency); got != c.want {
			t.Errorf("ParseLocalAmount(%q, %s) = %q, want %q", c.text, c.locale, got, c.want)
		}
	}
}
