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

func TestFormatLocalAmount(t *testing.T) {
	for _, c := range []struct{ amount, currency, locale, want string }{
		{"1234567.50", "EUR", "de", "1.234.567,50"},
		{"1234567.50", "EUR", "en", "1,234,567.50"},
		{"-1000.00", "EUR", "fr", "-1.000,00"},
		{"-999.99", "USD", "en-US", "-999.99"},
		{"100000", "JPY", "de-CH", "100,000"},
		{"0.000", "KWD", "ar", "0.000"},
	} {
		m := credit.Money{Amount: c.amount, Currency: c.currency}
		got := credit.FormatLocalAmount(m, c.locale)
		if got != c.want {
			t.Errorf("%s in %s = %q, want %q", c.amount, c.locale, got, c.want)
		}
		if back := credit.ParseLocalAmount(got, c.locale, c.currency); back != c.amount {
			t.Errorf("%q read back in %s = %q, want %q", got, c.locale, back, c.amount)
		}
	}
}
