package credit_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/creditd/creditd/credit"
)

// fuzzCurrencies cover every minor-unit precision the service knows, and one it does not.
var fuzzCurrencies = []string{"EUR", "JPY", "KWD", "XXX"}

// FuzzParseAmount checks ParseAmount against an independent reading of contract §3: a plain
// decimal (^-?[0-9]+(\.[0-9]+)?$), at most 15 integer digits once leading zeros are dropped, and
// at most the currency's minor digits. It never panics; it accepts exactly what that reading
// accepts; an accepted amount has the value written and survives formatting; a refusal is
// invalid_amount naming the parameter. Seeds: below and testdata/fuzz/FuzzParseAmount.
func FuzzParseAmount(f *testing.F) {
	for _, s := range []string{
		"1500.00", "1500", "-12.5", "0.01", "007", "0.001", "1.5", "-0", "-0.00", "0", "", "-", ".", "1.", ".5", "+1", " 1", "1 ",
		"1e3", "1E3", "0x10", "1_000", "1,5", "١٢", "１２", "NaN", "Inf", "-Inf", "--1", "1..2", "1.2.3", "\x00", "1\n",
		"999999999999999", "1000000000000000", "-999999999999999.99", "0000000000000000000001", strings.Repeat("9", 400),
		"0." + strings.Repeat("0", 400) + "1", "-" + strings.Repeat("0", 30) + ".5",
	} {
		for i := range fuzzCurrencies {
			f.Add(s, uint8(i))
		}
	}
	f.Fuzz(func(t *testing.T, s string, cur uint8) {
		currency := fuzzCurrencies[int(cur)%len(fuzzCurrencies)]
		digits, _ := credit.MinorDigits(currency) // 0 for an unknown currency, as ParseAmount treats it
		d, err := credit.ParseAmount(s, currency, "amount")
		want := plainAmount(s, int(digits))
		if err != nil {
			var ce *credit.Error
			if !errors.As(err, &ce) || ce.Code != credit.CodeInvalidAmount || ce.Param != "amount" || ce.Message == "" {
				t.Fatalf("ParseAmount(%q, %s): error %#v, want invalid_amount on amount", s, currency, err)
			}
			if want {
				t.Fatalf("ParseAmount(%q, %s) refused a plain amount: %v", s, currency, err)
			}
			return
		}
		if !want {
			t.Fatalf("ParseAmount(%q, %s) = %s, want invalid_amount", s, currency, d)
		}
		exact, err := decimal.NewFromString(s)
		if err != nil || !d.Equal(exact) {
			t.Fatalf("ParseAmount(%q, %s) = %s, not the value written", s, currency, d)
		}
		if currency == "XXX" {
			return // not a store currency: never formatted
		}
		m := credit.NewMoney(d, currency)
		back, err := credit.ParseAmount(m.Amount, currency, "amount")
		if err != nil || !back.Equal(d) {
			t.Fatalf("NewMoney(%s, %s) = %q does not parse back to the same value: %v", d, currency, m.Amount, err)
		}
		if _, frac, _ := strings.Cut(m.Amount, "."); len(frac) != int(digits) {
			t.Fatalf("NewMoney(%s, %s) = %q, want exactly %d decimal places", d, currency, m.Amount, digits)
		}
	})
}

// plainAmount is the contract's rule written without a regular expression or a decimal library.
func plainAmount(s string, minor int) bool {
	s = strings.TrimPrefix(s, "-")
	intPart, frac, hasDot := strings.Cut(s, ".")
	if intPart == "" || (hasDot && frac == "") || !allDigits(intPart) || !allDigits(frac) {
		return false
	}
	return len(strings.TrimLeft(intPart, "0")) <= 15 && len(frac) <= minor
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
