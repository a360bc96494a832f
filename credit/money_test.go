package credit

import (
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/shopspring/decimal"
)

func mustDecimal(tb testing.TB, s string) decimal.Decimal {
	tb.Helper()
	d, err := decimal.NewFromString(s)
	if err != nil {
		tb.Fatalf("decimal %q: %v", s, err)
	}
	return d
}

func TestNewMoneyUsesTheCurrencyMinorDigits(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		amount, currency, want string
	}{
		{"1500", "EUR", "1500.00"},
		{"1500.5", "EUR", "1500.50"},
		{"-0.1", "EUR", "-0.10"},
		{"0", "EUR", "0.00"},
		{"1500", "JPY", "1500"},
		{"-42", "JPY", "-42"},
		{"1500", "KWD", "1500.000"},
		{"0.5", "KWD", "0.500"},
		{"-12.345", "KWD", "-12.345"},
		{"999999999999999.99", "EUR", "999999999999999.99"},
		{"123456789012345678901234567890.12", "USD", "123456789012345678901234567890.12"},
	} {
		got := NewMoney(mustDecimal(t, tc.amount), tc.currency)
		if got != (Money{Amount: tc.want, Currency: tc.currency}) {
			t.Errorf("NewMoney(%s, %s) = %+v, want %s", tc.amount, tc.currency, got, tc.want)
		}
	}
}

func TestParseAmount(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in, currency string
		want         string // "" means invalid_amount
	}{
		{"1500.00", "EUR", "1500"},
		{"1500", "EUR", "1500"},
		{"-12.5", "EUR", "-12.5"},
		{"0.01", "EUR", "0.01"},
		{"007", "EUR", "7"},
		{"0.001", "EUR", ""},
		{"1.5", "JPY", ""},
		{"15", "JPY", "15"},
		{"1.234", "KWD", "1.234"},
		{"1.2345", "KWD", ""},
		{"999999999999999", "EUR", "999999999999999"},
		{"1000000000000000", "EUR", ""},
		{"000000000000000000001", "EUR", "1"},
		{"", "EUR", ""},
		{"+1", "EUR", ""},
		{"1e3", "EUR", ""},
		{"1,50", "EUR", ""},
		{" 1", "EUR", ""},
		{"1.", "EUR", ""},
		{".5", "EUR", ""},
		{"--1", "EUR", ""},
		{"NaN", "EUR", ""},
		{"１", "EUR", ""},
	} {
		got, err := ParseAmount(tc.in, tc.currency, "amount")
		if tc.want == "" {
			if CodeOf(err) != CodeInvalidAmount {
				t.Errorf("ParseAmount(%q, %s) = %v, %v; want invalid_amount", tc.in, tc.currency, got, err)
				continue
			}
			var e *Error
			if !errors.As(err, &e) || e.Param != "amount" {
				t.Errorf("ParseAmount(%q) error %v does not name param amount", tc.in, err)
			}
			continue
		}
		if err != nil || !got.Equal(mustDecimal(t, tc.want)) {
			t.Errorf("ParseAmount(%q, %s) = %v, %v; want %s", tc.in, tc.currency, got, err, tc.want)
		}
	}
}

func TestAvailableCredit(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name                  string
		limit, outstanding    string
		buffer                int
		currency, wantFormats string
	}{
		{"buffer of the limit", "1000.00", "0", 5, "EUR", "950.00"},
		{"outstanding is deducted", "1000.00", "300.25", 5, "EUR", "649.75"},
		{"buffer rounds half up to cents", "1000.10", "0", 5, "EUR", "950.09"},       // buffer 50.005 → 50.01
		{"buffer below half a cent rounds down", "1000.08", "0", 5, "EUR", "950.08"}, // buffer 50.004 → 50.00
		{"no buffer", "1000.00", "0", 0, "EUR", "1000.00"},
		{"largest buffer", "1000.00", "0", 50, "EUR", "500.00"},
		{"never negative", "1000.00", "990.00", 5, "EUR", "0.00"},
		{"over the limit", "1000.00", "5000.00", 5, "EUR", "0.00"},
		{"exactly zero", "1000.00", "950.00", 5, "EUR", "0.00"},
		{"credit balance raises it", "1000.00", "-200.00", 5, "EUR", "1150.00"},
		{"zero limit", "0", "0", 5, "EUR", "0.00"},
		{"yen has no minor unit", "100001", "0", 5, "JPY", "95001"}, // buffer 5000.05 → 5000
		{"yen rounds half up", "100010", "0", 5, "JPY", "95009"},    // buffer 5000.5 → 5001
		{"dinar keeps three digits", "1000.5", "0", 5, "KWD", "950.475"},
		{"dinar rounds the buffer to fils", "1000.01", "0", 5, "KWD", "950.009"}, // buffer 50.0005 → 50.001
	} {
		limit, outstanding := mustDecimal(t, tc.limit), mustDecimal(t, tc.outstanding)
		if m := availableMoney(limit, outstanding, tc.buffer, tc.currency); m.Amount != tc.wantFormats {
			t.Errorf("%s: available credit (%s, %s, %d%%) = %s, want %s", tc.name, tc.limit, tc.outstanding, tc.buffer, m.Amount, tc.wantFormats)
		}
		// The decimal fallback, which amounts too large for int64 take, follows the same rule.
		if m := NewMoney(availableCreditDecimal(limit, outstanding, tc.buffer, tc.currency), tc.currency); m.Amount != tc.wantFormats {
			t.Errorf("%s: decimal available credit (%s, %s, %d%%) = %s, want %s", tc.name, tc.limit, tc.outstanding, tc.buffer, m.Amount, tc.wantFormats)
		}
	}
}

func TestMinorDigitsOfKnownCurrencies(t *testing.T) {
	t.Parallel()
	for cur, want := range map[string]int32{"EUR": 2, "USD": 2, "GBP": 2, "JPY": 0, "KRW": 0, "KWD": 3, "BHD": 3} {
		if got, ok := MinorDigits(cur); !ok || got != want {
			t.Errorf("MinorDigits(%s) = %d, %v; want %d", cur, got, ok, want)
		}
	}
	if _, ok := MinorDigits("XXX"); ok {
		t.Error("MinorDigits(XXX) is known; unknown currencies must be refused")
	}
	if _, ok := MinorDigits("eur"); ok {
		t.Error("MinorDigits(eur) is known; codes are upper case")
	}
}

func TestParseTimestamp(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in, want string // want "" means refused
	}{
		{"2026-03-02T09:00:00Z", "2026-03-02T09:00:00.000000Z"},
		{"2026-03-02T09:00:00.5Z", "2026-03-02T09:00:00.500000Z"},
		{"2026-03-02T09:00:00.123456Z", "2026-03-02T09:00:00.123456Z"},
		{"2026-03-02T09:00:00.1234567Z", "2026-03-02T09:00:00.123456Z"},
		{"2026-03-02T11:00:00+02:00", "2026-03-02T09:00:00.000000Z"},
		{"2026-03-02T04:00:00.25-05:00", "2026-03-02T09:00:00.250000Z"},
		{"2026-03-02", ""},
		{"2026-03-02 09:00:00Z", ""},
		{"2026-03-02T09:00:00", ""},
		{"1772442000", ""},
		{"", ""},
		{"yesterday", ""},
		{"2026-13-02T09:00:00Z", ""},
	} {
		got, err := ParseTimestamp(tc.in)
		switch {
		case tc.want == "" && err == nil:
			t.Errorf("ParseTimestamp(%q) = %s, want an error", tc.in, got)
		case tc.want != "" && (err != nil || got.String() != tc.want):
			t.Errorf("ParseTimestamp(%q) = %s, %v; want %s", tc.in, got, err, tc.want)
		}
	}
	if got := At(time.Date(2026, 3, 2, 9, 0, 0, 999, time.FixedZone("x", 3600))).String(); got != "2026-03-02T08:00:00.000000Z" {
		t.Errorf("At drops nanoseconds and converts to UTC: got %s", got)
	}
}

// TestMinorUnitsMatchDecimal holds the int64 fast paths of NewMoney and the available credit
// to the decimal arithmetic they replace, at random and at the edges where int64 minor units
// stop fitting (15 integer digits and 3 decimals is 18 digits; beyond, the decimal fallback).
func TestMinorUnitsMatchDecimal(t *testing.T) {
	t.Parallel()
	decimalMoney := func(d decimal.Decimal, currency string) string {
		digits := minorDigits[currency]
		return d.Round(digits).StringFixed(digits)
	}
	edges := []string{
		"0", "-0", "0.00", "1", "-1", "0.01", "-0.01", "0.005", "-0.005", "0.001", "12.3", "1e3", "1.50e1",
		"999999999999999", "-999999999999999", "999999999999999.999", "-999999999999999.999",
		"999999999999999.99", "1000000000000000", "9999999999999999.99", "99999999999999999.9",
		"999999999999999999", "1000000000000000000", "9223372036854775807", "9223372036854775808",
		"-9223372036854775808", "123456789012345678901234567890.12", "0.000000000000000000001",
	}
	r := rand.New(rand.NewPCG(3, 4))
	for range 3000 {
		digits := r.IntN(19)
		n := r.Int64N(1_000_000_000_000_000_000)
		if r.IntN(2) == 0 {
			n = r.Int64N(100_000)
		}
		edges = append(edges, decimal.New(n, -int32(digits)).String(), decimal.New(-n, -int32(r.IntN(4))).String())
	}
	currencies := []string{"EUR", "JPY", "KWD"}
	for _, a := range edges {
		d := mustDecimal(t, a)
		for _, cur := range currencies {
			if got, want := NewMoney(d, cur).Amount, decimalMoney(d, cur); got != want {
				t.Fatalf("NewMoney(%s, %s) = %s, want %s", a, cur, got, want)
			}
		}
	}
	for range 5000 {
		limit := mustDecimal(t, edges[r.IntN(len(edges))]).Abs()
		outstanding := mustDecimal(t, edges[r.IntN(len(edges))])
		if r.IntN(2) == 0 {
			limit = decimal.New(r.Int64N(1e8), -2)
			outstanding = decimal.New(r.Int64N(2e8)-5e7, -2)
		}
		buffer := r.IntN(101)
		for _, cur := range currencies {
			got := availableMoney(limit, outstanding, buffer, cur).Amount
			want := decimalMoney(availableCreditDecimal(limit, outstanding, buffer, cur), cur)
			if got != want {
				t.Fatalf("available credit of limit %s, outstanding %s, buffer %d%%, %s = %s, want %s", limit, outstanding, buffer, cur, got, want)
			}
		}
	}
}
