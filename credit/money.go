package credit

import (
	"regexp"
	"strings"

	"github.com/shopspring/decimal"
)

// minorDigits maps ISO 4217 currency codes to their number of minor-unit digits. Currencies not
// listed are refused when a store is created, so every amount has a known precision.
var minorDigits = map[string]int32{
	"AED": 2, "AUD": 2, "BGN": 2, "BHD": 3, "BRL": 2, "CAD": 2, "CHF": 2, "CLP": 0, "CNY": 2,
	"CZK": 2, "DKK": 2, "EUR": 2, "GBP": 2, "HKD": 2, "HUF": 2, "IDR": 2, "ILS": 2, "INR": 2,
	"IQD": 3, "ISK": 0, "JOD": 3, "JPY": 0, "KRW": 0, "KWD": 3, "LYD": 3, "MXN": 2, "MYR": 2,
	"NOK": 2, "NZD": 2, "OMR": 3, "PHP": 2, "PLN": 2, "RON": 2, "SAR": 2, "SEK": 2, "SGD": 2,
	"THB": 2, "TND": 3, "TRY": 2, "TWD": 2, "UAH": 2, "USD": 2, "VND": 0, "ZAR": 2,
}

// MinorDigits returns the currency's number of minor-unit digits, and false for a currency the
// service does not know.
func MinorDigits(currency string) (int32, bool) {
	d, ok := minorDigits[currency]
	return d, ok
}

// Money is an amount as the API shows it: a decimal string with exactly the currency's minor
// digits, and the currency code.
type Money struct {
	Amount   string `json:"amount"`
	Currency string `json:"currency"`
}

// NewMoney formats d in currency, rounding half away from zero to the minor unit (amounts the
// service stores already have at most that many digits, so this only pads).
func NewMoney(d decimal.Decimal, currency string) Money {
	digits := minorDigits[currency]
	if v, ok := minorUnits(d, digits); ok {
		return Money{Amount: formatMinor(v, digits), Currency: currency}
	}
	return Money{Amount: d.Round(digits).StringFixed(digits), Currency: currency}
}

// maxMinorDigits bounds the amounts handled as int64 minor units: below 10^18, so that a sum
// or difference of a few of them cannot overflow.
const maxMinorDigits = 18

// minorUnits returns d as an integer number of minor units (d × 10^digits) when that is exact
// and has at most maxMinorDigits digits: the case of every amount the service stores (15
// integer digits at most, and at most the currency's minor digits). Otherwise it returns
// false, and the caller falls back to decimal arithmetic.
func minorUnits(d decimal.Decimal, digits int32) (int64, bool) {
	// NumDigits checks that the coefficient fits an int64 before CoefficientInt64 reads it;
	// it may overstate by one near a power of ten, which only sends the value to the fallback.
	nd := d.NumDigits()
	if nd > maxMinorDigits {
		return 0, false
	}
	shift := d.Exponent() + digits
	if shift < 0 || int32(nd)+shift > maxMinorDigits {
		return 0, false // more decimals than the currency has (rounding), or too large
	}
	v := d.CoefficientInt64()
	for ; shift > 0; shift-- {
		v *= 10
	}
	return v, true
}

// formatMinor writes v minor units with digits decimals: formatMinor(-5, 2) is "-0.05".
func formatMinor(v int64, digits int32) string {
	var buf [24]byte
	neg := v < 0
	u := uint64(v)
	if neg {
		u = uint64(-v) // |v| < 10^18: no overflow
	}
	i := len(buf)
	for n := int32(0); n < digits; n++ {
		i--
		buf[i] = byte('0' + u%10)
		u /= 10
	}
	if digits > 0 {
		i--
		buf[i] = '.'
	}
	for {
		i--
		buf[i] = byte('0' + u%10)
		u /= 10
		if u == 0 {
			break
		}
	}
	if neg {
		i--
		buf[i] = '-'
	}
	return string(buf[i:])
}

// maxIntegerDigits bounds amounts far beyond any real balance, so sums never lose precision in
// clients that parse amounts as IEEE doubles of the integer part.
const maxIntegerDigits = 15

var plainDecimal = regexp.MustCompile(`^-?[0-9]+(\.[0-9]+)?$`)

// ParseAmount parses a plain decimal string in currency: an optional minus sign, digits, and an
// optional fraction of at most the currency's minor digits; no exponent, no plus sign, no spaces.
//
// Errors: invalid_amount (with param) for anything else, or more than 15 integer digits.
func ParseAmount(s, currency, param string) (decimal.Decimal, error) {
	if !plainDecimal.MatchString(s) {
		return decimal.Decimal{}, ParamErrorf(CodeInvalidAmount, param, "%s must be a decimal string such as \"1500.00\"", param)
	}
	intPart, frac, _ := strings.Cut(strings.TrimPrefix(s, "-"), ".")
	if len(strings.TrimLeft(intPart, "0")) > maxIntegerDigits {
		return decimal.Decimal{}, ParamErrorf(CodeInvalidAmount, param, "%s has more than %d integer digits", param, maxIntegerDigits)
	}
	if digits := minorDigits[currency]; int32(len(frac)) > digits {
		return decimal.Decimal{}, ParamErrorf(CodeInvalidAmount, param, "%s has more than %d decimal places, the minor unit of %s", param, digits, currency)
	}
	d, err := decimal.NewFromString(s)
	if err != nil {
		return decimal.Decimal{}, ParamErrorf(CodeInvalidAmount, param, "%s must be a decimal string such as \"1500.00\"", param)
	}
	return d, nil
}

// availableMoney is what checkout may still spend: the limit minus the outstanding balance
// minus the safety buffer (bufferPercent of the limit, rounded half up to the minor unit),
// never below zero. It is computed in int64 minor units where the amounts fit, else in decimal.
func availableMoney(limit, outstanding decimal.Decimal, bufferPercent int, currency string) Money {
	digits := minorDigits[currency]
	if v, ok := availableMinor(limit, outstanding, bufferPercent, digits); ok {
		return Money{Amount: formatMinor(v, digits), Currency: currency}
	}
	return NewMoney(availableCreditDecimal(limit, outstanding, bufferPercent, currency), currency)
}

// availableMinor is the available credit in minor units, or false when an amount does not fit
// (see minorUnits), the limit is negative or the buffer is not a percentage.
func availableMinor(limit, outstanding decimal.Decimal, bufferPercent int, digits int32) (int64, bool) {
	l, ok := minorUnits(limit, digits)
	if !ok || l < 0 || l >= 1e16 || bufferPercent < 0 || bufferPercent > 100 {
		return 0, false
	}
	o, ok := minorUnits(outstanding, digits)
	if !ok {
		return 0, false
	}
	// The buffer rounded half up (half away from zero, as decimal's Round, for l ≥ 0).
	buffer := (l*int64(bufferPercent) + 50) / 100
	return max(l-o-buffer, 0), true
}

// availableCreditDecimal is the available credit in decimal arithmetic, for any amounts.
func availableCreditDecimal(limit, outstanding decimal.Decimal, bufferPercent int, currency string) decimal.Decimal {
	// Shift(-2) divides by 100 exactly, without Div's long division.
	buffer := limit.Mul(decimal.NewFromInt(int64(bufferPercent))).Shift(-2).Round(minorDigits[currency])
	avail := limit.Sub(outstanding).Sub(buffer)
	if avail.IsNegative() {
		return decimal.Zero
	}
	return avail
}

// AmountInput is an amount as the caller of a write sent it. Text is its decimal text, nil
// when the caller left it out. Err is set instead when the transport found the value unusable
// before the domain saw it (a JSON number where amounts are decimal strings); the domain
// answers it where it checks the amount, after the company lookup, so the order of checks is
// the same whatever the transport.
type AmountInput struct {
	Text *string
	Err  error
}

// Amount returns the AmountInput of a decimal text.
func Amount(text string) AmountInput { return AmountInput{Text: &text} }

// requiredAmount parses a write body's amount in the company's currency, checking the
// optional currency first.
//
// Errors: the transport's error in in.Err, validation_failed (missing), currency_mismatch,
// invalid_amount.
func requiredAmount(in AmountInput, currency *string, companyCurrency string) (decimal.Decimal, error) {
	if in.Err != nil {
		return decimal.Decimal{}, in.Err
	}
	if in.Text == nil {
		return decimal.Decimal{}, ParamErrorf(CodeValidationFailed, "amount", "amount is required")
	}
	if strings.TrimSpace(*in.Text) == "" {
		// Empty is missing (contract §3), not a malformed amount.
		return decimal.Decimal{}, ParamErrorf(CodeValidationFailed, "amount", "amount is required and must not be empty")
	}
	if currency != nil && *currency != companyCurrency {
		return decimal.Decimal{}, ParamErrorf(CodeCurrencyMismatch, "currency", "this company's amounts are in %s, not %q", companyCurrency, *currency)
	}
	return ParseAmount(*in.Text, companyCurrency, "amount")
}

// parseCreditLimit reads a credit limit: a decimal amount of zero or more.
//
// Errors: invalid_amount, limit_below_zero.
func parseCreditLimit(s, currency string) (decimal.Decimal, error) {
	amount, err := ParseAmount(s, currency, "amount")
	if err != nil {
		return decimal.Decimal{}, err
	}
	if amount.IsNegative() {
		return decimal.Decimal{}, errLimitBelowZero
	}
	return amount, nil
}

// errLimitBelowZero is the specification's answer to a negative credit limit.
var errLimitBelowZero = ParamErrorf(CodeLimitBelowZero, "amount", "credit limit must be zero or greater")
